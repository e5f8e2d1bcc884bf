package models

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"coffer/models/civil"
	"coffer/models/importfile"
	"coffer/models/money"
)

// A restore writes a family's records from the reference app's export
// (importfile.Sure) into a family, all or nothing, in one database
// transaction. Every record gets a new id; the file's ids are kept only
// in maps from them to the new ones, by kind. The file is read a line at
// a time, once per step, so that no step needs a record of a later one
// (a transaction its account, a transfer its transactions).

// SourceSureImport is the source of the transactions a restore writes.
const SourceSureImport = "sure_import"

// restoreBatch is how many transactions go to the database in one insert.
const restoreBatch = 1000

// RestoreSummary counts, by kind (the reference's summary keys: accounts,
// transactions, …), what a restore created, what it matched to a record
// the family already had (a category, tag or merchant of the same name, a
// budget of the same month), and what it left out (a record of a kind
// coffer does not keep, a rule coffer cannot run).
type RestoreSummary struct {
	Created map[string]int `json:"created"`
	Matched map[string]int `json:"matched"`
	Skipped map[string]int `json:"skipped"`
	// Scan is what checking the file found (its records by type).
	Scan *importfile.SureScan `json:"-"`
}

// sureKinds maps the file's types to the summary's keys.
var sureKinds = map[string]string{"Account": "accounts", "Balance": "balances", "Category": "categories", "Tag": "tags",
	"Merchant": "merchants", "Transaction": "transactions", "Transfer": "transfers", "RejectedTransfer": "rejected_transfers",
	"Trade": "trades", "Holding": "holdings", "Valuation": "valuations", "Budget": "budgets", "BudgetCategory": "budget_categories",
	"Rule": "rules", "RecurringTransaction": "recurring_transactions", "RecurrenceRule": "recurrence_rules",
	"RecurringOccurrence": "recurring_occurrences", "RecurringAllocation": "recurring_allocations",
	"RecurringPriceChange": "recurring_price_changes", "RecurringMatchRejection": "recurring_match_rejections",
	"Chat": "chats", "Message": "messages"}

// SureKind is the summary key of a type of the file ("Account":
// "accounts"); a type the reference does not write is its own key.
func SureKind(typ string) string {
	if k, ok := sureKinds[typ]; ok {
		return k
	}
	return typ
}

// restore is one restore's state: the new ids by the file's, by kind.
type restore struct {
	tx         *Store
	familyID   uuid.UUID
	ids        map[string]map[string]uuid.UUID
	sum        RestoreSummary
	accounts   map[uuid.UUID]*restoredAccount
	parents    map[uuid.UUID]string // new category: the file's id of its parent
	newBudgets map[uuid.UUID]bool
	names      map[string]map[string]uuid.UUID // the family's categories, tags, merchants by lower(name)

	txs  []Transaction
	tags []TransactionTag
}

type restoredAccount struct {
	balance  money.Amount
	currency string
	opening  bool       // the file dates an opening balance
	valued   bool       // the file values the account on some day
	last     civil.Date // its last transaction's day
}

// RestoreSure restores file (checked first with importfile.ScanSure) into
// the family, in one transaction: any problem writes nothing. A problem
// of the file is a *importfile.SureError.
func (s *Store) RestoreSure(ctx context.Context, familyID uuid.UUID, file []byte) (*RestoreSummary, error) {
	var out *RestoreSummary
	err := s.RunInTx(ctx, func(tx *Store) error {
		var err error
		out, err = tx.restoreInto(ctx, familyID, file)
		return err
	})
	return out, err
}

// restoreInto is RestoreSure inside the caller's database transaction.
func (s *Store) restoreInto(ctx context.Context, familyID uuid.UUID, file []byte) (*RestoreSummary, error) {
	scan, err := importfile.ScanSure(file)
	if err != nil {
		return nil, err
	}
	var out *RestoreSummary
	err = s.RunInTx(ctx, func(tx *Store) error {
		r := &restore{tx: tx, familyID: familyID, ids: map[string]map[string]uuid.UUID{},
			sum:      RestoreSummary{Created: map[string]int{}, Matched: map[string]int{}, Skipped: map[string]int{}},
			accounts: map[uuid.UUID]*restoredAccount{}, parents: map[uuid.UUID]string{}, newBudgets: map[uuid.UUID]bool{}}
		if err := r.run(ctx, file); err != nil {
			return err
		}
		for typ, n := range scan.Counts {
			if !isWritten(typ) {
				r.sum.Skipped[SureKind(typ)] += n
			}
		}
		out = &r.sum
		out.Scan = scan
		return nil
	})
	return out, err
}

func isWritten(typ string) bool {
	for _, t := range importfile.SureTypes {
		if t == typ {
			return true
		}
	}
	return false
}

func only(types ...string) func(string) bool {
	return func(t string) bool {
		for _, x := range types {
			if x == t {
				return true
			}
		}
		return false
	}
}

// run writes the file in three readings: the records that need none
// (accounts, categories, tags, merchants, budgets), those that need them
// (valuations, recurring transactions, transactions), then those that need transactions or name
// other records (transfers, budget categories, rules).
func (r *restore) run(ctx context.Context, file []byte) error {
	if err := r.loadNames(ctx); err != nil {
		return err
	}
	steps := []struct {
		want  func(string) bool
		after func(context.Context) error
	}{
		{only("Account", "Category", "Tag", "Merchant", "Budget"), r.linkParents},
		{only("Balance", "Valuation", "RecurringTransaction", "Transaction"), r.flush},
		{only("Transfer", "RejectedTransfer", "BudgetCategory", "Rule", "Chat"), r.finish},
		{only("Message"), r.countMessages},
	}
	for _, st := range steps {
		err := importfile.EachSure(file, st.want, func(rec importfile.SureRecord) error {
			if err := r.write(ctx, rec); err != nil {
				var p problem
				if errors.As(err, &p) {
					return &importfile.SureError{Line: rec.Line, Reason: rec.Type + ": " + string(p)}
				}
				return fmt.Errorf("models: restore line %d (%s): %w", rec.Line, rec.Type, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := st.after(ctx); err != nil {
			return err
		}
	}
	return nil
}

// loadNames reads the family's categories, tags and merchants by name: a
// restored one of the same name is matched to it (names are unique in a
// family).
func (r *restore) loadNames(ctx context.Context) error {
	r.names = map[string]map[string]uuid.UUID{"Category": {}, "Tag": {}, "Merchant": {}}
	type named struct {
		ID   uuid.UUID `bun:"id"`
		Name string    `bun:"name"`
	}
	for kind, table := range map[string]string{"Category": "categories", "Tag": "tags", "Merchant": "merchants"} {
		var rows []named
		if err := r.tx.db.NewSelect().Table(table).Column("id", "name").Where("family_id = ?", r.familyID).Scan(ctx, &rows); err != nil {
			return dbErr("restore: read "+table, err)
		}
		for _, n := range rows {
			r.names[kind][strings.ToLower(n.Name)] = n.ID
		}
	}
	return nil
}

// mapID records the new id of the file's id of kind.
func (r *restore) mapID(kind, old string, id uuid.UUID) {
	m := r.ids[kind]
	if m == nil {
		m = map[string]uuid.UUID{}
		r.ids[kind] = m
	}
	m[old] = id
}

// id is the new id of a record the file holds (ScanSure checked that
// every reference names one).
func (r *restore) id(kind, old string) uuid.UUID { return r.ids[kind][old] }

func (r *restore) optID(kind string, old *string) *uuid.UUID {
	if old == nil {
		return nil
	}
	id, ok := r.ids[kind][*old]
	if !ok {
		return nil
	}
	return &id
}

func (r *restore) write(ctx context.Context, rec importfile.SureRecord) error {
	switch v := rec.Value.(type) {
	case *importfile.SureAccount:
		return r.account(ctx, v)
	case *importfile.SureCategory:
		return r.category(ctx, v)
	case *importfile.SureTag:
		return r.tag(ctx, v)
	case *importfile.SureMerchant:
		return r.merchant(ctx, v)
	case *importfile.SureBudget:
		return r.budget(ctx, v)
	case *importfile.SureBalance:
		// Balances are derived here (RecalculateBalance), from the
		// opening balance, the valuations and the transactions.
		r.sum.Skipped["balances"]++
		return nil
	case *importfile.SureValuation:
		return r.valuation(ctx, v)
	case *importfile.SureTransaction:
		return r.transaction(ctx, v)
	case *importfile.SureTransfer:
		return r.transfer(ctx, rec.Type, v)
	case *importfile.SureBudgetCategory:
		return r.budgetCategory(ctx, v)
	case *importfile.SureRule:
		return r.rule(ctx, rec.Line, v)
	case *importfile.SureRecurring:
		return r.recurring(ctx, v)
	case *importfile.SureChat:
		return r.chat(ctx, v)
	case *importfile.SureMessage:
		return r.message(ctx, v)
	}
	return nil
}

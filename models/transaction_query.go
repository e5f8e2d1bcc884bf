package models

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"coffer/models/civil"
	"coffer/models/money"
)

// TransactionFilter narrows GET /transactions. Zero values do not filter.
type TransactionFilter struct {
	AccountIDs  []uuid.UUID
	CategoryIDs []uuid.UUID
	MerchantIDs []uuid.UUID
	TagIDs      []uuid.UUID   // any of them
	StartDate   civil.Date    // inclusive
	EndDate     civil.Date    // inclusive
	MinAmount   *money.Amount // on the stored (signed) amount
	MaxAmount   *money.Amount
	AbsAmount   bool   // MinAmount and MaxAmount bound the size of the amount, whichever way it went
	Type        string // "income" (stored negative) or "expense"
	Search      string // in name, notes and merchant name, any case

	// Uncategorized adds the transactions without a category to those of
	// CategoryIDs (alone: only those).
	Uncategorized bool
	// Kinds keeps the transactions of any of these kinds: "income" and
	// "expense" are money in and out that is not a transfer leg,
	// "transfer" a leg of a transfer between the family's accounts.
	Kinds []string
	// Pending keeps only pending (true) or only settled (false) rows.
	Pending *bool
	// WithSplitParents keeps split parents, whose parts stand for them:
	// the screens show a parent with its parts beneath it; any list that
	// is summed (the API, the assistant) shows the parts alone.
	WithSplitParents bool
	// Order is the list order: "" (newest first), "date_asc",
	// "amount_desc" or "amount_asc" (by size, then newest first).
	Order string
}

// Transactions lists a page of the family's transactions, newest first,
// with a total order so that paging never repeats or skips a row.
func (s *Store) Transactions(ctx context.Context, familyID uuid.UUID, f TransactionFilter, p Page) ([]*Transaction, int, error) {
	var txs []*Transaction
	q := s.transactionSelect(&txs, familyID)
	f.apply(q, familyID)
	n, err := p.scanOrdered(ctx, q, f.orderSQL())
	if err != nil {
		return nil, 0, dbErr("list transactions", err)
	}
	if err := s.loadTransactionLinks(ctx, familyID, txs); err != nil {
		return nil, 0, err
	}
	return txs, n, nil
}

// transactionOrderSQL is the list order of transactions, newest first,
// total so that paging never repeats or skips a row; the index
// transactions_family_order_idx holds the family's rows in this order.
const transactionOrderSQL = "t.date DESC, t.created_at DESC, t.id DESC"

// orderSQL is f.Order as SQL; every order ends in the ids, so it is total.
func (f TransactionFilter) orderSQL() string {
	switch f.Order {
	case "date_asc":
		return "t.date ASC, t.created_at ASC, t.id ASC"
	case "amount_desc":
		return "abs(t.amount) DESC, " + transactionOrderSQL
	case "amount_asc":
		return "abs(t.amount) ASC, " + transactionOrderSQL
	}
	return transactionOrderSQL
}

// transferLegSQL holds for a transaction t that is a leg of one of family
// ?'s transfers.
const transferLegSQL = `t.id IN (SELECT tr.inflow_transaction_id FROM transfers tr WHERE tr.family_id = ?
	UNION SELECT tr.outflow_transaction_id FROM transfers tr WHERE tr.family_id = ?)`

// LatestTransactions returns the family's n newest transactions (split
// parts, not their parents), as the first page of Transactions without a
// filter would, without counting
// every row: it reads the first n entries of the list index.
func (s *Store) LatestTransactions(ctx context.Context, familyID uuid.UUID, n int) ([]*Transaction, error) {
	var txs []*Transaction
	if err := s.transactionSelect(&txs, familyID).Where(notSplitParentSQL).OrderExpr(transactionOrderSQL).Limit(int64(n)).Scan(ctx); err != nil {
		return nil, dbErr("latest transactions", err)
	}
	if err := s.loadTransactionLinks(ctx, familyID, txs); err != nil {
		return nil, err
	}
	return txs, nil
}

func (f TransactionFilter) apply(q *bun.SelectQuery, familyID uuid.UUID) {
	if !f.WithSplitParents {
		q.Where(notSplitParentSQL)
	}
	if len(f.AccountIDs) > 0 {
		q.Where("t.account_id IN (?)", bun.List(f.AccountIDs))
	}
	switch {
	case len(f.CategoryIDs) > 0 && f.Uncategorized:
		q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("t.category_id IN (?)", bun.List(f.CategoryIDs)).WhereOr("t.category_id IS NULL")
		})
	case len(f.CategoryIDs) > 0:
		q.Where("t.category_id IN (?)", bun.List(f.CategoryIDs))
	case f.Uncategorized:
		q.Where("t.category_id IS NULL")
	}
	if len(f.Kinds) > 0 {
		q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			for _, k := range f.Kinds {
				switch k {
				case "income":
					q.WhereOr("(t.amount < 0 AND NOT "+transferLegSQL+")", familyID, familyID)
				case "expense":
					q.WhereOr("(t.amount >= 0 AND NOT "+transferLegSQL+")", familyID, familyID)
				case "transfer":
					q.WhereOr(transferLegSQL, familyID, familyID)
				default:
					q.WhereOr("1 = 0")
				}
			}
			return q
		})
	}
	if f.Pending != nil {
		q.Where("t.pending = ?", *f.Pending)
	}
	if len(f.MerchantIDs) > 0 {
		q.Where("t.merchant_id IN (?)", bun.List(f.MerchantIDs))
	}
	if len(f.TagIDs) > 0 {
		q.Where("t.id IN (SELECT tt.transaction_id FROM transaction_tags tt WHERE tt.family_id = ? AND tt.tag_id IN (?))",
			familyID, bun.List(f.TagIDs))
	}
	if f.StartDate != "" {
		q.Where("t.date >= ?", f.StartDate)
	}
	if f.EndDate != "" {
		q.Where("t.date <= ?", f.EndDate)
	}
	amount := "t.amount"
	if f.AbsAmount {
		amount = "abs(t.amount)"
	}
	if f.MinAmount != nil {
		q.Where("? >= ?", bun.Safe(amount), int64(*f.MinAmount))
	}
	if f.MaxAmount != nil {
		q.Where("? <= ?", bun.Safe(amount), int64(*f.MaxAmount))
	}
	switch f.Type {
	case "income":
		q.Where("t.amount < 0")
	case "expense":
		q.Where("t.amount >= 0")
	}
	if f.Search != "" {
		pattern := "%" + escapeLike(strings.ToLower(f.Search)) + "%"
		q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where(`lower(t.name) LIKE ? ESCAPE '\'`, pattern).
				WhereOr(`lower(t.notes) LIKE ? ESCAPE '\'`, pattern).
				WhereOr(`lower(merchant.name) LIKE ? ESCAPE '\'`, pattern)
		})
	}
}

// escapeLike makes % and _ in user text match themselves.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// loadTransactionLinks fills Tags and Transfer of each transaction with one
// query each, whatever the page size.
func (s *Store) loadTransactionLinks(ctx context.Context, familyID uuid.UUID, txs []*Transaction) error {
	if len(txs) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(txs))
	byID := make(map[uuid.UUID]*Transaction, len(txs))
	for i, t := range txs {
		ids[i] = t.ID
		byID[t.ID] = t
		t.Tags = []Tag{}
	}

	var tagRows []struct {
		Tag
		TransactionID uuid.UUID `bun:"transaction_id"`
	}
	err := s.db.NewSelect().
		ColumnExpr("tg.*, tt.transaction_id").
		TableExpr("transaction_tags AS tt").
		Join("JOIN tags AS tg ON tg.id = tt.tag_id AND tg.family_id = tt.family_id").
		Where("tt.family_id = ?", familyID).
		Where("tt.transaction_id IN (?)", bun.List(ids)).
		OrderExpr("lower(tg.name), tg.id").
		Scan(ctx, &tagRows)
	if err != nil {
		return dbErr("load transaction tags", err)
	}
	for _, r := range tagRows {
		t := byID[r.TransactionID]
		t.Tags = append(t.Tags, r.Tag)
	}

	var transfers []Transfer
	err = s.transferSelect(&transfers, familyID).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("tr.inflow_transaction_id IN (?)", bun.List(ids)).
				WhereOr("tr.outflow_transaction_id IN (?)", bun.List(ids))
		}).
		Scan(ctx)
	if err != nil {
		return dbErr("load transaction transfers", err)
	}
	for i := range transfers {
		tr := &transfers[i]
		link := func(other *Transaction) *TransferLink {
			l := &TransferLink{ID: tr.ID, Amount: tr.Inflow.Amount.Abs(), Currency: tr.Inflow.Currency, OtherAccount: other.Account,
				SentAmount: tr.Outflow.Amount.Abs(), SentCurrency: tr.Outflow.Currency}
			l.Rate, _ = tr.ImpliedRate()
			return l
		}
		if t := byID[tr.InflowTransactionID]; t != nil {
			t.Transfer = link(tr.Outflow)
		}
		if t := byID[tr.OutflowTransactionID]; t != nil {
			t.Transfer = link(tr.Inflow)
		}
	}
	return nil
}

// TransactionTotals adds up the income and spending of the transactions
// that f keeps (its Order aside), as positive sums in the family's
// currency. Like the reports it converts a row in another currency at
// its day's rate (a currency without one is not counted) and leaves out
// excluded rows and transfer legs, which move money without earning or
// spending it.
func (s *Store) TransactionTotals(ctx context.Context, familyID uuid.UUID, f TransactionFilter) (*Totals, error) {
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	rows := func(tx *Store) schema.QueryAppender {
		q := tx.db.NewSelect().Model((*Transaction)(nil)).ColumnExpr("t.currency, t.date, t.amount").
			Join("LEFT JOIN merchants AS merchant ON merchant.id = t.merchant_id AND merchant.family_id = t.family_id").
			Where("t.family_id = ?", familyID).
			Where("t.deleted_at IS NULL").
			Where("NOT t.excluded").
			Where("NOT "+transferLegSQL, familyID, familyID)
		f.apply(q, familyID)
		return q
	}
	// The rows in other currencies convert in the same query, at their
	// days' rates (see fxTotals), over the filter's dates or, open, from
	// the family's first rate.
	p, ok, err := s.ratesPeriod(ctx, familyID, fam.Currency, f.StartDate, f.EndDate)
	if err != nil {
		return nil, err
	}
	if !ok {
		p = Period{From: civil.First, To: civil.First} // no rates: a table of none
	}
	return s.fxTotals(ctx, familyID, fam.Currency, p, rows)
}

package models

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
	"coffer/models/recur"
)

// The statuses of an occurrence.
const (
	OccurrencePaid   = "paid"
	OccurrenceMissed = "missed"
)

// RecurringOccurrence is one due date of a recurring transaction and what
// became of it: paid by a transaction (the ingestion pipeline records it
// with the transaction), or missed (the recurring:missed job records it
// once the date and its grace passed). Amount is the amount expected;
// PaidAmount what came.
type RecurringOccurrence struct {
	bun.BaseModel `bun:"table:recurring_occurrences,alias:ro"`

	ID            uuid.UUID     `bun:"id,pk"`
	FamilyID      uuid.UUID     `bun:"family_id"`
	RecurringID   uuid.UUID     `bun:"recurring_transaction_id"`
	DueDate       civil.Date    `bun:"due_date"`
	Amount        money.Amount  `bun:"amount"`
	Currency      string        `bun:"currency"`
	Status        string        `bun:"status"`
	TransactionID *uuid.UUID    `bun:"transaction_id"` // NULL once that transaction is deleted for good
	PaidAmount    *money.Amount `bun:"paid_amount"`
	PaidDate      *civil.Date   `bun:"paid_date"`
	CreatedAt     time.Time     `bun:"created_at"`
	UpdatedAt     time.Time     `bun:"updated_at"`

	Recurring *RecurringTransaction `bun:"rel:belongs-to,join:recurring_transaction_id=id,join:family_id=family_id"`
}

// occurrenceConflict makes a second record of a due date a no-op.
const occurrenceConflict = "CONFLICT (family_id, recurring_transaction_id, due_date) DO NOTHING"

// OccurrenceFilter narrows RecurringOccurrences; zero fields match all.
type OccurrenceFilter struct {
	Status       string
	DueFrom      civil.Date // due on or after
	CreatedAfter time.Time  // recorded after
	Limit        int        // 0: 500
}

// RecurringOccurrences returns the family's occurrences that pass f, with
// their recurring transaction and its account, by due date.
func (s *Store) RecurringOccurrences(ctx context.Context, familyID uuid.UUID, f OccurrenceFilter) ([]RecurringOccurrence, error) {
	out := []RecurringOccurrence{}
	q := s.db.NewSelect().Model(&out).Relation("Recurring").Where("ro.family_id = ?", familyID).
		OrderExpr("ro.due_date, ro.id").Limit(int64(cmp.Or(f.Limit, 500)))
	if f.Status != "" {
		q = q.Where("ro.status = ?", f.Status)
	}
	if f.DueFrom != "" {
		q = q.Where("ro.due_date >= ?", f.DueFrom)
	}
	if !f.CreatedAfter.IsZero() {
		q = q.Where("ro.created_at > ?", f.CreatedAfter)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, dbErr("list recurring occurrences", err)
	}
	return out, s.loadRecurringAccounts(ctx, familyID, out)
}

// loadRecurringAccounts gives each occurrence's recurring transaction its
// account, in one query.
func (s *Store) loadRecurringAccounts(ctx context.Context, familyID uuid.UUID, os []RecurringOccurrence) error {
	var ids []uuid.UUID
	for _, o := range os {
		if r := o.Recurring; r != nil && r.AccountID != nil && !slices.Contains(ids, *r.AccountID) {
			ids = append(ids, *r.AccountID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var accounts []Account
	if err := s.db.NewSelect().Model(&accounts).Where("a.family_id = ?", familyID).Where("a.id IN (?)", bun.List(ids)).
		Scan(ctx); err != nil {
		return dbErr("load recurring accounts", err)
	}
	for i := range os {
		if r := os[i].Recurring; r != nil && r.AccountID != nil {
			for j := range accounts {
				if accounts[j].ID == *r.AccountID {
					r.Account = &accounts[j]
				}
			}
		}
	}
	return nil
}

// activeRecurring is the pipeline's one read for the pay step: the
// family's active recurring transactions, by the list index (family,
// status). Few rows: a household has tens of bills.
func (s *Store) activeRecurring(ctx context.Context, familyID uuid.UUID) ([]RecurringTransaction, error) {
	var out []RecurringTransaction
	err := s.db.NewSelect().Model(&out).Where("rt.family_id = ?", familyID).Where("rt.status = ?", RecurringActive).
		OrderExpr("rt.next_expected_date, rt.id").Scan(ctx)
	return out, dbErr("load active recurring transactions", err)
}

// billOf is r as recur matches and projects it.
func billOf(r *RecurringTransaction) recur.Bill {
	b := recur.Bill{Key: r.MatchKey, Name: r.Name, AccountID: r.AccountID, Currency: r.Currency, Amount: int64(r.Amount),
		Cadence: recur.Cadence(r.Cadence), Day: r.ExpectedDay, Next: r.NextDate.Time()}
	if r.AmountMin != nil && r.AmountMax != nil {
		lo, hi := int64(*r.AmountMin), int64(*r.AmountMax)
		b.Min, b.Max = &lo, &hi
	}
	if r.LastDate != nil {
		last := r.LastDate.Time()
		b.Last = &last
	}
	return b
}

// payment is one occurrence a transaction of the batch pays. A late one
// pays an occurrence before the item's next date, which the missed job
// recorded missed (see recur's Late): if it did, the record turns paid.
type payment struct {
	item *RecurringTransaction
	due  civil.Date
	row  *Transaction
	late bool
}

// bills is a batch's view of the family's active recurring transactions:
// loaded once (see activeRecurring), matched in Go against each row.
type bills struct {
	items []RecurringTransaction
	next  []recur.Bill
}

// loadBills reads the family's active recurring transactions for a batch.
func (s *Store) loadBills(ctx context.Context, familyID uuid.UUID) (*bills, error) {
	items, err := s.activeRecurring(ctx, familyID)
	if err != nil {
		return nil, err
	}
	b := &bills{items: items, next: make([]recur.Bill, len(items))}
	for i := range items {
		b.next[i] = billOf(&items[i])
	}
	return b, nil
}

// payable reports whether a row may pay an occurrence: counted (not
// excluded), not a part of a split, not about to be a transfer's side.
func payable(t *Transaction) bool {
	return !t.Excluded && t.SplitParentID == nil && t.Amount != 0
}

// match decides which of rows pays which occurrence, oldest row first: a
// row pays at most one, each occurrence is paid once, and a paid item
// moves to its following date, which a later row of the batch may pay in
// turn. A row that pays no next occurrence may pay a past one late (see
// recur's Late), once in the batch. It changes nothing stored and works on
// a copy of the schedule, so that it can be asked before the write and
// again inside it.
func (b *bills) match(rows []*Transaction) []payment {
	if b == nil || len(b.items) == 0 || len(rows) == 0 {
		return nil
	}
	order := make([]*Transaction, 0, len(rows))
	for _, t := range rows {
		if payable(t) {
			order = append(order, t)
		}
	}
	slices.SortStableFunc(order, func(x, y *Transaction) int { return cmp.Compare(x.Date, y.Date) })
	next := slices.Clone(b.next)
	var out []payment
	type occurrence struct {
		item int
		due  civil.Date
	}
	lateTaken := map[occurrence]bool{}
rows:
	for _, t := range order {
		x := recur.Txn{Name: t.Name, MerchantID: t.MerchantID, AccountID: t.AccountID, Amount: int64(t.Amount),
			Currency: t.Currency, Date: t.Date.Time()}
		for i := range next {
			if next[i].Matches(&x) {
				out = append(out, payment{item: &b.items[i], due: civil.DateOf(next[i].Next), row: t})
				next[i].Advance()
				continue rows
			}
		}
		// Late against the stored schedule: the occurrences it looks at
		// are the ones the missed job moved the item past.
		for i := range b.next {
			if d, ok := b.next[i].Late(&x); ok && !lateTaken[occurrence{i, civil.DateOf(d)}] {
				lateTaken[occurrence{i, civil.DateOf(d)}] = true
				out = append(out, payment{item: &b.items[i], due: civil.DateOf(d), row: t, late: true})
				break
			}
		}
	}
	return out
}

// matchNew is match over the rows of a batch that were written (created)
// and are not becoming a transfer.
func (b *bills) matchNew(rows []*NewTransaction, created func(*NewTransaction) bool) []payment {
	if b == nil || len(b.items) == 0 {
		return nil
	}
	var ts []*Transaction
	for _, r := range rows {
		if r.transfer == nil && created(r) {
			ts = append(ts, r.Row)
		}
	}
	return b.match(ts)
}

// payOccurrences records each payment and moves its item on, in the
// caller's transaction (the one that wrote the rows): the item's next date
// goes one cadence past the due date paid, its last date, count and, as the
// detector does for a series it found, its amount on a price change. The
// item's update is guarded by the due date it had, so two batches paying
// one occurrence at once record it once.
func (s *Store) payOccurrences(ctx context.Context, familyID uuid.UUID, pays []payment) error {
	now := s.now()
	// Each item is worked on as a copy: a transaction that rolls back (and
	// is tried again) leaves the batch's view of the schedule as it was.
	items := map[uuid.UUID]*RecurringTransaction{}
	stale := map[uuid.UUID]bool{}
	for _, p := range pays {
		r := items[p.item.ID]
		if r == nil {
			c := *p.item
			r = &c
			items[r.ID] = r
		}
		if p.late {
			if err := s.payLate(ctx, familyID, r, p); err != nil {
				return err
			}
			continue
		}
		if stale[r.ID] || r.NextDate != p.due {
			continue
		}
		paid := p.row.Amount
		o := &RecurringOccurrence{ID: NewID(), FamilyID: familyID, RecurringID: r.ID, DueDate: p.due, Amount: r.Amount,
			Currency: r.Currency, Status: OccurrencePaid, TransactionID: &p.row.ID, PaidAmount: &paid, PaidDate: &p.row.Date,
			CreatedAt: now, UpdatedAt: now}
		b := billOf(r)
		b.Advance()
		r.NextDate = civil.DateOf(b.Next)
		if r.LastDate == nil || *r.LastDate < p.row.Date {
			r.LastDate = &p.row.Date
		}
		r.Occurrences++
		cols := []string{"next_expected_date", "last_occurrence_date", "occurrence_count", "updated_at"}
		if !r.Manual && paid != r.Amount {
			was := r.Amount
			r.PreviousAmount, r.Amount = &was, paid
			lo, hi := min(paid, was), max(paid, was)
			if r.AmountMin != nil {
				lo = min(lo, *r.AmountMin)
			}
			if r.AmountMax != nil {
				hi = max(hi, *r.AmountMax)
			}
			r.AmountMin, r.AmountMax = &lo, &hi
			cols = append(cols, "amount", "previous_amount", "expected_amount_min", "expected_amount_max")
		}
		r.UpdatedAt = now
		res, err := s.db.NewUpdate().Model(r).Column(cols...).Where("rt.family_id = ?", familyID).Where("rt.id = ?", r.ID).
			Where("rt.next_expected_date = ?", p.due).Where("rt.status = ?", RecurringActive).Exec(ctx)
		if err != nil {
			return dbErr("advance recurring transaction", err)
		}
		if n, _ := res.RowsAffected(); n == 0 { // another write moved it first
			stale[r.ID] = true
			continue
		}
		if _, err := s.db.NewInsert().Model(o).On(occurrenceConflict).Exec(ctx); err != nil {
			return dbErr("record paid occurrence", err)
		}
	}
	return nil
}

// payLate turns the missed occurrence p pays into a paid one, and counts
// it on r (the batch's copy of its item): the last date and the count
// move, the next date does not, since the missed job moved it already. A
// due date that was not recorded missed (paid already, or never recorded)
// is left alone: the row pays nothing. The guard on the status makes two
// batches paying one occurrence at once pay it once. The price is not
// changed: a late payment may carry a late fee.
func (s *Store) payLate(ctx context.Context, familyID uuid.UUID, r *RecurringTransaction, p payment) error {
	now := s.now()
	paid := p.row.Amount
	o := &RecurringOccurrence{Status: OccurrencePaid, TransactionID: &p.row.ID, PaidAmount: &paid, PaidDate: &p.row.Date, UpdatedAt: now}
	res, err := s.db.NewUpdate().Model(o).Column("status", "transaction_id", "paid_amount", "paid_date", "updated_at").
		Where("ro.family_id = ?", familyID).Where("ro.recurring_transaction_id = ?", r.ID).Where("ro.due_date = ?", p.due).
		Where("ro.status = ?", OccurrenceMissed).Exec(ctx)
	if err != nil {
		return dbErr("pay missed occurrence", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	// In SQL rather than from r: another batch may have counted a payment
	// of this item since r was read.
	if _, err := s.db.NewUpdate().Model((*RecurringTransaction)(nil)).
		Set("occurrence_count = rt.occurrence_count + 1").
		Set("last_occurrence_date = CASE WHEN rt.last_occurrence_date IS NULL OR rt.last_occurrence_date < ? THEN ? ELSE rt.last_occurrence_date END", p.row.Date, p.row.Date).
		Set("updated_at = ?", now).
		Where("rt.family_id = ?", familyID).Where("rt.id = ?", r.ID).Exec(ctx); err != nil {
		return dbErr("count late payment", err)
	}
	if r.LastDate == nil || *r.LastDate < p.row.Date {
		r.LastDate = &p.row.Date
	}
	r.Occurrences++
	return nil
}

// Late reports whether o was paid after its grace ended: a bill the
// missed job recorded missed, paid by a payment that came later. It needs
// o's recurring transaction (for its cadence's grace); without it, any
// payment after the due date is late.
func (o *RecurringOccurrence) Late() bool {
	if o.Status != OccurrencePaid || o.PaidDate == nil {
		return false
	}
	grace := 0
	if o.Recurring != nil {
		grace = recur.Cadence(o.Recurring.Cadence).Grace()
	}
	return o.PaidDate.Time().After(o.DueDate.Time().AddDate(0, 0, grace))
}

// missedKeptDays bounds how far back the missed job records: an item
// whose next date is further behind (one entered by hand with an old
// date, one paused for a year and resumed) is moved on past those dates
// without a record of each.
const missedKeptDays = 366

// MarkMissedRecurring records as missed each occurrence of the family's
// active recurring transactions whose date and grace (recur's Grace: 2
// days weekly, 3 two-weekly, 5 monthly, 7 quarterly, 10 yearly) passed
// with no transaction paying it, and moves the item to its following
// date. It returns how many it recorded. Run again, it records nothing:
// the item has moved on, and a due date is recorded once.
func (s *Store) MarkMissedRecurring(ctx context.Context, familyID uuid.UUID) (int, error) {
	now := s.now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var n int
	err := s.RunInTx(ctx, func(tx *Store) error {
		items, err := tx.activeRecurring(ctx, familyID)
		if err != nil {
			return err
		}
		for i := range items {
			r := &items[i]
			b := billOf(r)
			was := r.NextDate
			var missed []RecurringOccurrence
			for k := 0; k < 10000; k++ {
				if _, hi := b.Window(); !hi.Before(today) {
					break
				}
				if !b.Next.Before(today.AddDate(0, 0, -missedKeptDays)) {
					missed = append(missed, RecurringOccurrence{ID: NewID(), FamilyID: familyID, RecurringID: r.ID,
						DueDate: civil.DateOf(b.Next), Amount: r.Amount, Currency: r.Currency, Status: OccurrenceMissed,
						CreatedAt: now, UpdatedAt: now})
				}
				b.Advance()
			}
			if civil.DateOf(b.Next) == was {
				continue
			}
			r.NextDate, r.UpdatedAt = civil.DateOf(b.Next), now
			res, err := tx.db.NewUpdate().Model(r).Column("next_expected_date", "updated_at").
				Where("rt.family_id = ?", familyID).Where("rt.id = ?", r.ID).Where("rt.next_expected_date = ?", was).Exec(ctx)
			if err != nil {
				return dbErr("move recurring transaction past missed", err)
			}
			if k, _ := res.RowsAffected(); k == 0 || len(missed) == 0 {
				continue
			}
			var ids []uuid.UUID
			if err := tx.db.NewInsert().Model(&missed).On(occurrenceConflict).Returning("id").Scan(ctx, &ids); err != nil {
				return dbErr("record missed occurrences", err)
			}
			n += len(ids)
		}
		return nil
	})
	return n, err
}

// Upcoming is one projected occurrence of a recurring transaction.
type Upcoming struct {
	Item    *RecurringTransaction
	Date    civil.Date
	Overdue bool // its date passed, within its grace, and nothing paid it yet
}

// UpcomingRecurring projects the family's active recurring transactions
// over the days from today to to (both included): each occurrence from the
// item's next date on, by date. An item whose next date has passed but is
// still within its grace shows that date as overdue. At most limit.
func (s *Store) UpcomingRecurring(ctx context.Context, familyID uuid.UUID, to civil.Date, limit int) ([]Upcoming, error) {
	items, err := s.activeRecurring(ctx, familyID)
	if err != nil {
		return nil, err
	}
	if err := s.loadItemAccounts(ctx, familyID, items); err != nil {
		return nil, err
	}
	now := s.now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var out []Upcoming
	for i := range items {
		r := &items[i]
		from := today
		if next := r.NextDate.Time(); next.Before(today) {
			from = next
		}
		for _, d := range recur.Occurrences(recur.Cadence(r.Cadence), r.ExpectedDay, r.NextDate.Time(), from, to.Time(), limit) {
			out = append(out, Upcoming{Item: r, Date: civil.DateOf(d), Overdue: d.Before(today)})
		}
	}
	slices.SortStableFunc(out, func(a, b Upcoming) int {
		return cmp.Or(cmp.Compare(a.Date, b.Date), cmp.Compare(a.Item.Name, b.Item.Name))
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// loadItemAccounts gives each item its account, in one query.
func (s *Store) loadItemAccounts(ctx context.Context, familyID uuid.UUID, items []RecurringTransaction) error {
	os := make([]RecurringOccurrence, len(items))
	for i := range items {
		os[i].Recurring = &items[i]
	}
	return s.loadRecurringAccounts(ctx, familyID, os)
}

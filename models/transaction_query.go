package models

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// TransactionFilter narrows GET /transactions. Zero values do not filter.
type TransactionFilter struct {
	AccountIDs  []uuid.UUID
	CategoryIDs []uuid.UUID
	MerchantIDs []uuid.UUID
	TagIDs      []uuid.UUID // any of them
	StartDate   Date        // inclusive
	EndDate     Date        // inclusive
	MinAmount   *Amount     // on the stored (signed) amount
	MaxAmount   *Amount
	AbsAmount   bool   // MinAmount and MaxAmount bound the size of the amount, whichever way it went
	Type        string // "income" (stored negative) or "expense"
	Search      string // in name, notes and merchant name, any case
}

// Transactions lists a page of the family's transactions, newest first,
// with a total order so that paging never repeats or skips a row.
func (s *Store) Transactions(ctx context.Context, familyID uuid.UUID, f TransactionFilter, p Page) ([]*Transaction, int, error) {
	var txs []*Transaction
	q := s.transactionSelect(&txs, familyID)
	f.apply(q, familyID)
	n, err := p.scan(ctx, q.OrderExpr(transactionOrderSQL))
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

// LatestTransactions returns the family's n newest transactions, as the
// first page of Transactions without a filter would, without counting
// every row: it reads the first n entries of the list index.
func (s *Store) LatestTransactions(ctx context.Context, familyID uuid.UUID, n int) ([]*Transaction, error) {
	var txs []*Transaction
	if err := s.transactionSelect(&txs, familyID).OrderExpr(transactionOrderSQL).Limit(int64(n)).Scan(ctx); err != nil {
		return nil, dbErr("latest transactions", err)
	}
	if err := s.loadTransactionLinks(ctx, familyID, txs); err != nil {
		return nil, err
	}
	return txs, nil
}

func (f TransactionFilter) apply(q *bun.SelectQuery, familyID uuid.UUID) {
	if len(f.AccountIDs) > 0 {
		q.Where("t.account_id IN (?)", bun.List(f.AccountIDs))
	}
	if len(f.CategoryIDs) > 0 {
		q.Where("t.category_id IN (?)", bun.List(f.CategoryIDs))
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
			return &TransferLink{ID: tr.ID, Amount: tr.Outflow.Amount.Abs(), Currency: tr.Outflow.Currency, OtherAccount: other.Account}
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

package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// Reconciliation statuses.
const (
	ReconciliationInProgress = "in_progress"
	ReconciliationFinished   = "finished"
)

// MaxReconcileRows is the most rows one reconciliation screen lists.
const MaxReconcileRows = 1000

// ErrReconciled is the refusal of a write that would change a row a
// finished reconciliation locked; a person unlocks the row first
// (UnlockTransaction). It is an *InvalidError: a 422 in the API.
var ErrReconciled error = &InvalidError{Problems: []string{"Transaction is reconciled; unlock it first"}}

// Reconciliation is one check of an account against its bank statement:
// in progress while a person ticks rows cleared, then kept as a record
// once the cleared balance equals the statement's.
type Reconciliation struct {
	bun.BaseModel `bun:"table:reconciliations,alias:rc"`

	ID            uuid.UUID  `bun:"id,pk"`
	FamilyID      uuid.UUID  `bun:"family_id"`
	AccountID     uuid.UUID  `bun:"account_id"`
	StatementDate civil.Date `bun:"statement_date"`
	// StatementBalance is the statement's ending balance the ledger's way
	// (held for an asset, owed for a liability), in the account's currency.
	StatementBalance money.Amount  `bun:"statement_balance"`
	ClearedBalance   *money.Amount `bun:"cleared_balance"` // set at finish
	UserID           *uuid.UUID    `bun:"user_id"`         // who started it, then who finished it
	Status           string        `bun:"status"`
	CreatedAt        time.Time     `bun:"created_at"`
	FinishedAt       *time.Time    `bun:"finished_at"`
	UpdatedAt        time.Time     `bun:"updated_at"`

	User *User `bun:"rel:belongs-to,join:user_id=id,join:family_id=family_id"`
}

// Reconciled reports whether a finished reconciliation locked the row.
func (t *Transaction) Reconciled() bool { return t.ReconciliationID != nil }

// Reconciliations lists a page of an account's reconciliations, latest
// first, with who did each; another family's account is ErrNotFound.
func (s *Store) Reconciliations(ctx context.Context, familyID, accountID uuid.UUID, p Page) ([]Reconciliation, int, error) {
	if _, err := s.Account(ctx, familyID, accountID); err != nil {
		return nil, 0, err
	}
	out := []Reconciliation{}
	n, err := p.scan(ctx, s.db.NewSelect().Model(&out).Relation("User").
		Where("rc.family_id = ?", familyID).Where("rc.account_id = ?", accountID).
		OrderExpr("rc.created_at DESC, rc.id DESC"))
	return out, n, dbErr("list reconciliations", err)
}

// OpenReconciliation is the account's reconciliation in progress, or
// ErrNotFound when there is none.
func (s *Store) OpenReconciliation(ctx context.Context, familyID, accountID uuid.UUID) (*Reconciliation, error) {
	rc := new(Reconciliation)
	err := s.db.NewSelect().Model(rc).Where("rc.family_id = ?", familyID).Where("rc.account_id = ?", accountID).
		Where("rc.status = ?", ReconciliationInProgress).Scan(ctx)
	if err != nil {
		return nil, dbErr("get open reconciliation", err)
	}
	return rc, nil
}

// StartReconciliation opens a reconciliation of an account of the family
// against a statement, or changes the statement of the one in progress
// (an account has at most one). Another family's account is ErrNotFound.
func (s *Store) StartReconciliation(ctx context.Context, familyID, accountID, userID uuid.UUID, date civil.Date, balance money.Amount) (*Reconciliation, error) {
	var rc *Reconciliation
	err := s.RunInTx(ctx, func(tx *Store) error {
		if _, err := tx.lockAccount(ctx, familyID, accountID); err != nil {
			return err
		}
		now := tx.now()
		open, err := tx.OpenReconciliation(ctx, familyID, accountID)
		switch {
		case errors.Is(err, ErrNotFound):
			rc = &Reconciliation{ID: NewID(), FamilyID: familyID, AccountID: accountID, StatementDate: date,
				StatementBalance: balance, UserID: &userID, Status: ReconciliationInProgress, CreatedAt: now, UpdatedAt: now}
			_, err := tx.db.NewInsert().Model(rc).Exec(ctx)
			return dbErr("create reconciliation", err)
		case err != nil:
			return err
		}
		rc = open
		rc.StatementDate, rc.StatementBalance, rc.UserID, rc.UpdatedAt = date, balance, &userID, now
		return tx.updateOne(ctx, rc, familyID, rc.ID, "update reconciliation", "statement_date", "statement_balance", "user_id")
	})
	return rc, err
}

// CancelReconciliation drops the account's reconciliation in progress;
// the rows keep their ticks, for the next one.
func (s *Store) CancelReconciliation(ctx context.Context, familyID, accountID uuid.UUID) error {
	res, err := s.db.NewDelete().Model((*Reconciliation)(nil)).Where("family_id = ?", familyID).
		Where("account_id = ?", accountID).Where("status = ?", ReconciliationInProgress).Exec(ctx)
	return affectedOne(res, err, "cancel reconciliation")
}

// counted narrows a query on transactions t to the rows an account's
// balance is made of (see movementSQL): its own currency, neither
// deleted nor excluded.
func counted(q *bun.SelectQuery, a *Account) *bun.SelectQuery {
	return q.Where("t.family_id = ?", a.FamilyID).Where("t.account_id = ?", a.ID).Where("t.currency = ?", a.Currency).
		Where("t.deleted_at IS NULL").Where("NOT t.excluded")
}

// ReconcileRows lists the rows a reconciliation still decides: the
// account's counted rows up to the statement date that no finished
// reconciliation holds, cleared or not, oldest first, at most
// MaxReconcileRows; and how many there are in all.
func (s *Store) ReconcileRows(ctx context.Context, rc *Reconciliation) ([]Transaction, int, error) {
	a, err := s.Account(ctx, rc.FamilyID, rc.AccountID)
	if err != nil {
		return nil, 0, err
	}
	rows := []Transaction{}
	q := counted(s.db.NewSelect().Model(&rows).Column("t.id", "t.date", "t.name", "t.amount", "t.currency", "t.cleared", "t.pending"), a).
		Where("t.reconciliation_id IS NULL").Where("t.date <= ?", rc.StatementDate).
		OrderExpr("t.date, t.created_at, t.id")
	n, err := Page{Number: 1, Size: MaxReconcileRows}.scan(ctx, q)
	return rows, n, dbErr("list rows to reconcile", err)
}

// ClearedBalance is the balance the account's cleared rows give on day
// date (see clearedBalance); another family's account is ErrNotFound.
func (s *Store) ClearedBalance(ctx context.Context, familyID, accountID uuid.UUID, date civil.Date) (money.Amount, error) {
	a, err := s.Account(ctx, familyID, accountID)
	if err != nil {
		return 0, err
	}
	return s.clearedBalance(ctx, a, date)
}

// clearedBalance is the one place the cleared balance of a reconciliation
// is worked out: the balance on date (see balanceOn) as the cleared rows
// alone give it. A valuation is the bank's own figure and counts as
// cleared; the rows before it are in it already.
func (s *Store) clearedBalance(ctx context.Context, a *Account, date civil.Date) (money.Amount, error) {
	l, err := s.readLedgerOf(ctx, a, daySumsClearedSQL)
	if err != nil {
		return 0, err
	}
	anchors, err := s.readAnchors(ctx, a.FamilyID, a.ID)
	if err != nil {
		return 0, err
	}
	b := balanceOn(l, anchors, a.OpeningBalance, date)
	if !fits(b) {
		return 0, fmt.Errorf("models: cleared balance of account %s: %w", a.ID, ErrBalanceOverflow)
	}
	return money.Amount(b.Int64()), nil
}

// SetCleared records a person's ticks on a reconciliation screen: of the
// rows shown, those in cleared become cleared and the others not. Every
// id must be a live row of the account (another account's or family's is
// refused, and nothing is written); a row a finished reconciliation
// holds is refused too (ErrReconciled).
func (s *Store) SetCleared(ctx context.Context, familyID, accountID uuid.UUID, shown, cleared []uuid.UUID) error {
	ids := appendNew(appendNew(nil, shown...), cleared...)
	if len(ids) == 0 {
		return nil
	}
	if len(ids) > MaxReconcileRows {
		return Invalid(fmt.Sprintf("Tick at most %d rows at once", MaxReconcileRows))
	}
	on := appendNew(nil, cleared...)
	var off []uuid.UUID
	for _, id := range ids {
		if !slices.Contains(on, id) {
			off = append(off, id)
		}
	}
	return s.RunInTx(ctx, func(tx *Store) error {
		// Ticks and a finish of the same account take turns, so that a
		// finish locks exactly the rows its sum counted.
		if _, err := tx.lockAccount(ctx, familyID, accountID); err != nil {
			return err
		}
		var rows []Transaction
		if err := tx.db.NewSelect().Model(&rows).Column("t.id", "t.reconciliation_id").
			Where("t.family_id = ?", familyID).Where("t.account_id = ?", accountID).
			Where("t.id IN (?)", bun.List(ids)).Where("t.deleted_at IS NULL").Scan(ctx); err != nil {
			return dbErr("check rows to clear", err)
		}
		if len(rows) != len(ids) {
			return Invalid("Some of the rows are not transactions of this account")
		}
		for _, r := range rows {
			if r.Reconciled() {
				return ErrReconciled
			}
		}
		now := tx.now()
		for _, part := range []struct {
			ids []uuid.UUID
			set bool
		}{{on, true}, {off, false}} {
			if len(part.ids) == 0 {
				continue
			}
			if _, err := tx.db.NewUpdate().Model((*Transaction)(nil)).Set("cleared = ?", part.set).Set("updated_at = ?", now).
				Where("family_id = ?", familyID).Where("account_id = ?", accountID).Where("id IN (?)", bun.List(part.ids)).
				Where("cleared <> ?", part.set).Exec(ctx); err != nil {
				return dbErr("set cleared", err)
			}
		}
		return nil
	})
}

// FinishReconciliation ends the account's reconciliation in progress when
// the cleared balance on the statement date equals the statement's: in
// one database transaction it locks every cleared row up to that day
// that no earlier reconciliation holds, and records the cleared balance,
// who finished and when. While the two differ it is an *InvalidError
// saying by how much, and nothing changes.
func (s *Store) FinishReconciliation(ctx context.Context, familyID, accountID, userID uuid.UUID) (*Reconciliation, error) {
	var rc *Reconciliation
	err := s.RunInTx(ctx, func(tx *Store) error {
		a, err := tx.lockAccount(ctx, familyID, accountID)
		if err != nil {
			return err
		}
		rc, err = tx.OpenReconciliation(ctx, familyID, accountID)
		if errors.Is(err, ErrNotFound) {
			return Invalid("No reconciliation of this account is in progress")
		} else if err != nil {
			return err
		}
		cleared, err := tx.clearedBalance(ctx, a, rc.StatementDate)
		if err != nil {
			return err
		}
		if cleared != rc.StatementBalance {
			cur := money.MustCurrency(a.Currency)
			return Invalid(fmt.Sprintf("Not finished: the cleared balance is %s and the statement says %s, %s apart. "+
				"Tick the rows the statement shows until the difference is zero.",
				cleared.Format(cur), rc.StatementBalance.Format(cur), (rc.StatementBalance - cleared).Abs().Format(cur)))
		}
		now := tx.now()
		q := tx.db.NewUpdate().Model((*Transaction)(nil)).Set("reconciliation_id = ?", rc.ID).Set("updated_at = ?", now).
			Where("family_id = ?", familyID).Where("account_id = ?", accountID).Where("currency = ?", a.Currency).
			Where("cleared").Where("reconciliation_id IS NULL").Where("date <= ?", rc.StatementDate).
			Where("deleted_at IS NULL").Where("NOT excluded")
		if _, err := q.Exec(ctx); err != nil {
			return dbErr("lock reconciled rows", err)
		}
		rc.Status, rc.ClearedBalance, rc.FinishedAt, rc.UserID, rc.UpdatedAt = ReconciliationFinished, &cleared, &now, &userID, now
		return tx.updateOne(ctx, rc, familyID, rc.ID, "finish reconciliation", "status", "cleared_balance", "finished_at", "user_id")
	})
	if err != nil {
		return nil, err
	}
	return rc, nil
}

// UnlockTransaction is a person taking a row out of its reconciliation so
// that it can be changed again; it stays cleared. Another family's row is
// ErrNotFound.
func (s *Store) UnlockTransaction(ctx context.Context, familyID, id uuid.UUID) error {
	res, err := s.db.NewUpdate().Model((*Transaction)(nil)).Set("reconciliation_id = NULL").Set("updated_at = ?", s.now()).
		Where("family_id = ?", familyID).Where("id = ?", id).Where("deleted_at IS NULL").Exec(ctx)
	return affectedOne(res, err, "unlock transaction")
}

package models

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"
)

// Tx is a Store bound to one database transaction that its caller ends
// with Commit or Rollback, for a library that drives the transaction
// itself through separate calls (fosite's storage.Transactional). Code of
// ours uses RunInTx.
type Tx struct {
	*Store
	tx     bun.Tx
	parent *Store
}

// Begin starts a transaction. Changes to grants and balances made through
// it are announced (OnAuthChange, OnBalanceChange) after Commit, never
// after Rollback.
func (s *Store) Begin(ctx context.Context) (*Tx, error) {
	if s.after != nil {
		return nil, errors.New("models: begin: already in a transaction")
	}
	tx, err := s.raw.BeginTx(ctx, nil)
	if err != nil {
		return nil, unavailable("begin", dbErr("begin", err))
	}
	// withDB keeps every setting of s (the rules step, its cache, the
	// clock, the sealer); only the handle and the pending change differ.
	in := s.withDB(tx)
	in.after = &afterCommit{}
	return &Tx{Store: in, tx: tx, parent: s}, nil
}

// Commit commits the transaction, then announces its changes to grants
// and balances.
func (t *Tx) Commit(ctx context.Context) error {
	if err := t.tx.Commit(); err != nil {
		return unavailable("commit", dbErr("commit", err))
	}
	t.parent.announce(ctx, t.after)
	return nil
}

// Rollback abandons the transaction; after Commit it does nothing.
func (t *Tx) Rollback() error {
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return dbErr("rollback", err)
	}
	return nil
}

package models

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Statuses a sync may move a connection out of, back to active.
var recoverable = []string{ConnActive, ConnRateLimited, ConnPaymentRequired, ConnRequiresReconnect}

// ConnectionFetched records a usable account set: the connection is active
// again, its rate-limit streak reset and its bank errors replaced. A
// connection disconnected or reconnecting meanwhile is left alone.
func (s *Store) ConnectionFetched(ctx context.Context, c *Connection, providerErrors []ProviderError) error {
	_, err := s.db.NewUpdate().Model((*Connection)(nil)).
		Set("status = ?", ConnActive).Set("status_message = NULL").Set("retry_after = NULL").
		Set("consecutive_rate_limits = 0").Set("provider_errors = ?", jsonList(providerErrors)).Set("updated_at = ?", s.now()).
		Where("family_id = ?", c.FamilyID).Where("id = ?", c.ID).Where("status IN (?)", bun.List(recoverable)).Exec(ctx)
	return dbErr("connection fetched", err)
}

// SetProviderErrors stores the errors of an answer that refused the
// request inside a 200 (a quota message, a credential failure), so that
// the user sees what the Bridge said; the status is ConnectionFetchFailed's.
func (s *Store) SetProviderErrors(ctx context.Context, c *Connection, providerErrors []ProviderError) error {
	_, err := s.db.NewUpdate().Model((*Connection)(nil)).Set("provider_errors = ?", jsonList(providerErrors)).
		Where("family_id = ?", c.FamilyID).Where("id = ?", c.ID).Where("status <> ?", ConnDisconnected).Exec(ctx)
	return dbErr("store provider errors", err)
}

// ConnectionFetchFailed moves a connection to requires_reconnect,
// payment_required or rate_limited (with retry_after), with the message the
// user sees; a rate limit lengthens the streak that doubles the cooldown.
func (s *Store) ConnectionFetchFailed(ctx context.Context, c *Connection, status, message string, retryAfter *time.Time) error {
	q := s.db.NewUpdate().Model((*Connection)(nil)).
		Set("status = ?", status).Set("status_message = ?", message).Set("updated_at = ?", s.now()).
		Where("family_id = ?", c.FamilyID).Where("id = ?", c.ID).Where("status IN (?)", bun.List(recoverable))
	if status == ConnRateLimited {
		q.Set("retry_after = ?", retryAfter).Set("consecutive_rate_limits = consecutive_rate_limits + 1")
	} else {
		q.Set("retry_after = NULL")
	}
	_, err := q.Exec(ctx)
	return dbErr("connection fetch failed", err)
}

// SetServerVersions stores what the connection's /info answered.
func (s *Store) SetServerVersions(ctx context.Context, c *Connection, versions []string) error {
	_, err := s.db.NewUpdate().Model((*Connection)(nil)).Set("server_versions = ?", jsonList(versions)).
		Where("family_id = ?", c.FamilyID).Where("id = ?", c.ID).Exec(ctx)
	return dbErr("set server versions", err)
}

// UpdateConnection writes the user-set columns of a connection.
func (s *Store) UpdateConnection(ctx context.Context, c *Connection, columns ...string) error {
	c.UpdatedAt = s.now()
	res, err := s.db.NewUpdate().Model(c).Column(append(columns, "updated_at")...).
		Where("family_id = ?", c.FamilyID).WherePK().Exec(ctx)
	return affectedOne(res, err, "update connection")
}

// RetryClaim starts a new claim attempt with the kept token of a
// retryable failed claim; anything else is ErrConflict.
func (s *Store) RetryClaim(ctx context.Context, c *Connection) error {
	res, err := s.db.NewUpdate().Model((*Connection)(nil)).
		Set("status = ?", ConnClaiming).Set("status_message = NULL").Set("claim_seq = claim_seq + 1").
		Set("claim_retryable = FALSE").Set("claim_sent_at = NULL").Set("updated_at = ?", s.now()).
		Where("family_id = ?", c.FamilyID).Where("id = ?", c.ID).Where("status = ?", ConnClaimFailed).
		Where("claim_retryable").Where("setup_token_enc IS NOT NULL").Exec(ctx)
	if err != nil {
		return dbErr("retry claim", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrConflict
	}
	c.ClaimSeq++
	c.Status = ConnClaiming
	return nil
}

// ReconnectConnection starts a new claim with a new setup token on an
// existing connection (any state but claiming, else ErrConflict). The old
// access URL stays until the new claim succeeds and replaces it in place:
// same connection, remote accounts and links.
func (s *Store) ReconnectConnection(ctx context.Context, c *Connection, setupToken string) error {
	sealed, err := s.Secrets.Seal(setupToken, connTable, "setup_token_enc", c.ID.String())
	if err != nil {
		return err
	}
	res, err := s.db.NewUpdate().Model((*Connection)(nil)).
		Set("prev_status = CASE WHEN status IN (?) THEN NULL ELSE status END", bun.List([]string{ConnClaimFailed, ConnDisconnected})).
		Set("status = ?", ConnClaiming).Set("status_message = NULL").Set("setup_token_enc = ?", sealed).
		Set("claim_seq = claim_seq + 1").Set("claim_sent_at = NULL").Set("claim_retryable = FALSE").Set("updated_at = ?", s.now()).
		Where("family_id = ?", c.FamilyID).Where("id = ?", c.ID).Where("status <> ?", ConnClaiming).Exec(ctx)
	if err != nil {
		return dbErr("reconnect", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrConflict
	}
	fresh, err := s.Connection(ctx, c.FamilyID, c.ID)
	if err != nil {
		return err
	}
	*c = *fresh
	return nil
}

// ConnectionRef names a connection for the scheduler and the sweeper.
type ConnectionRef struct {
	FamilyID uuid.UUID `bun:"family_id"`
	ID       uuid.UUID `bun:"id"`
	ClaimSeq int       `bun:"claim_seq"`
}

// SchedulableConnections pages (by id, after `after`) through every
// family's connections the daily sync visits: active, payment_required
// (one probe a day), and rate_limited once retry_after has passed. It is
// one of the few cross-family reads and returns ids only.
func (s *Store) SchedulableConnections(ctx context.Context, now time.Time, after uuid.UUID, limit int) ([]ConnectionRef, error) {
	var out []ConnectionRef
	err := s.db.NewSelect().Model((*Connection)(nil)).Column("family_id", "id", "claim_seq").
		Where("(status IN (?) OR (status = ? AND (retry_after IS NULL OR retry_after <= ?)))",
			bun.List([]string{ConnActive, ConnPaymentRequired}), ConnRateLimited, now).
		Where("id > ?", after).OrderExpr("id").Limit(int64(limit)).Scan(ctx, &out)
	return out, dbErr("list schedulable connections", err)
}

// ClaimingConnections lists every connection waiting for its claim, for
// the sweeper to re-queue (ids only).
func (s *Store) ClaimingConnections(ctx context.Context, limit int) ([]ConnectionRef, error) {
	var out []ConnectionRef
	err := s.db.NewSelect().Model((*Connection)(nil)).Column("family_id", "id", "claim_seq").
		Where("status = ?", ConnClaiming).OrderExpr("id").Limit(int64(limit)).Scan(ctx, &out)
	return out, dbErr("list claiming connections", err)
}

// EraseOldSetupTokens destroys the kept tokens of retryable failed claims
// older than before: a token is a credential and is kept at most a day.
func (s *Store) EraseOldSetupTokens(ctx context.Context, before time.Time) (int, error) {
	res, err := s.db.NewUpdate().Model((*Connection)(nil)).
		Set("setup_token_enc = NULL").Set("claim_retryable = FALSE").Set("updated_at = ?", s.now()).
		Where("status = ?", ConnClaimFailed).Where("setup_token_enc IS NOT NULL").Where("updated_at < ?", before).Exec(ctx)
	if err != nil {
		return 0, dbErr("erase old setup tokens", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// jsonList renders a list for a JSON column in a SET clause, the same on
// both dialects.
// jsonList is a list as a JSON array for a json column: [] when empty,
// never null.
func jsonList[T any](v []T) string {
	if v == nil {
		v = []T{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// PurgeConnectionBatch deletes up to limit of the transactions a
// connection imported and returns how many; the purge job calls it until
// it returns 0, so that no transaction holds locks for long.
func (s *Store) PurgeConnectionBatch(ctx context.Context, familyID, connectionID uuid.UUID, limit int) (int, error) {
	ids := s.db.NewSelect().Model((*Transaction)(nil)).Column("id").Where("family_id = ?", familyID).
		Where("provider_connection_id = ?", connectionID).Limit(int64(limit))
	var accounts []uuid.UUID
	_, err := s.db.NewDelete().Model((*Transaction)(nil)).Where("family_id = ?", familyID).Where("id IN (?)", ids).
		Returning("account_id").Exec(ctx, &accounts)
	if err != nil {
		return 0, dbErr("purge imported transactions", err)
	}
	s.balanceChange(ctx, familyID, appendNew(nil, accounts...)...) // an account the user linked stays, with a new balance
	return len(accounts), nil
}

// PurgeConnectionAccounts deletes the remote accounts of a connection and
// the ledger accounts the connection created that hold no transaction any
// more and that no other remote account feeds. An account the user
// already had and linked is never deleted, empty or not.
func (s *Store) PurgeConnectionAccounts(ctx context.Context, familyID, connectionID uuid.UUID) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		var created []uuid.UUID
		if err := tx.db.NewSelect().Model((*ProviderAccount)(nil)).Column("created_account_id").Where("family_id = ?", familyID).
			Where("connection_id = ?", connectionID).Where("created_account_id IS NOT NULL").Scan(ctx, &created); err != nil {
			return dbErr("list created accounts", err)
		}
		if _, err := tx.db.NewDelete().Model((*ProviderAccount)(nil)).Where("family_id = ?", familyID).
			Where("connection_id = ?", connectionID).Exec(ctx); err != nil {
			return dbErr("delete provider accounts", err)
		}
		if len(created) == 0 {
			return nil
		}
		_, err := tx.db.NewDelete().Model((*Account)(nil)).Where("family_id = ?", familyID).Where("id IN (?)", bun.List(created)).
			Where("id NOT IN (SELECT account_id FROM transactions WHERE family_id = ? AND account_id IN (?))", familyID, bun.List(created)).
			Where("id NOT IN (SELECT account_id FROM provider_accounts WHERE family_id = ? AND account_id IN (?))", familyID, bun.List(created)).
			Exec(ctx)
		return dbErr("delete empty accounts", err)
	})
}

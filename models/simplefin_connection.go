package models

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/secret"
)

// Connection states (spec/aggregator.md §4).
const (
	ConnClaiming          = "claiming"
	ConnClaimFailed       = "claim_failed"
	ConnActive            = "active"
	ConnRequiresReconnect = "requires_reconnect"
	ConnPaymentRequired   = "payment_required"
	ConnRateLimited       = "rate_limited"
	ConnDisconnected      = "disconnected"
)

const connTable = "provider_connections"

// Connection is one claimed (or being claimed) SimpleFIN access URL. The
// sealed columns never leave the store in clear except through
// ConnectionSecrets.
type Connection struct {
	bun.BaseModel `bun:"table:provider_connections,alias:pc"`

	ID             uuid.UUID       `bun:"id,pk"`
	FamilyID       uuid.UUID       `bun:"family_id"`
	Provider       string          `bun:"provider"`
	Name           string          `bun:"name"`
	Status         string          `bun:"status"`
	StatusMessage  *string         `bun:"status_message"`
	PrevStatus     *string         `bun:"prev_status"`
	AccessURLEnc   *string         `bun:"access_url_enc"`
	SetupTokenEnc  *string         `bun:"setup_token_enc"`
	ClaimSeq       int             `bun:"claim_seq"`
	ClaimSentAt    *time.Time      `bun:"claim_sent_at"`
	ClaimRetryable bool            `bun:"claim_retryable"`
	IncludePending bool            `bun:"include_pending"`
	LookbackDays   *int            `bun:"lookback_days"`
	RetryAfter     *time.Time      `bun:"retry_after"`
	RateLimits     int             `bun:"consecutive_rate_limits"`
	ServerVersions []string        `bun:"server_versions"`
	ProviderErrors []ProviderError `bun:"provider_errors"`
	LastSyncedAt   *time.Time      `bun:"last_synced_at"`
	CreatedBy      *uuid.UUID      `bun:"created_by"`
	CreatedAt      time.Time       `bun:"created_at"`
	UpdatedAt      time.Time       `bun:"updated_at"`
	DisconnectedAt *time.Time      `bun:"disconnected_at"`
}

// LogValue keeps the sealed columns out of logs.
func (c *Connection) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", c.ID.String()), slog.String("status", c.Status))
}

// CreateConnection stores a new connection in the claiming state with its
// setup token sealed to the row.
func (s *Store) CreateConnection(ctx context.Context, c *Connection, setupToken string) error {
	c.ID = NewID()
	c.Provider = "simplefin"
	c.Status = ConnClaiming
	c.ClaimSeq = 1
	c.IncludePending = true
	c.CreatedAt = s.now()
	c.UpdatedAt = c.CreatedAt
	sealed, err := s.Secrets.Seal(setupToken, connTable, "setup_token_enc", c.ID.String())
	if err != nil {
		return err
	}
	c.SetupTokenEnc = &sealed
	_, err = s.db.NewInsert().Model(c).Exec(ctx)
	return dbErr("create connection", err)
}

// Connection returns one connection of the family.
func (s *Store) Connection(ctx context.Context, familyID, id uuid.UUID) (*Connection, error) {
	c := new(Connection)
	err := s.db.NewSelect().Model(c).Where("pc.family_id = ?", familyID).Where("pc.id = ?", id).Scan(ctx)
	return c, dbErr("get connection", err)
}

// Connections lists a page of the family's connections, oldest first.
func (s *Store) Connections(ctx context.Context, familyID uuid.UUID, p Page) ([]Connection, int, error) {
	cs := []Connection{}
	n, err := p.scan(ctx, s.db.NewSelect().Model(&cs).Where("pc.family_id = ?", familyID).OrderExpr("pc.created_at, pc.id"))
	return cs, n, dbErr("list connections", err)
}

// DisconnectConnection destroys a connection's stored credentials and
// fails its active syncs, in one transaction; what it imported stays. It
// returns the syncs it ended, whose tasks the caller deletes.
func (s *Store) DisconnectConnection(ctx context.Context, familyID, id uuid.UUID) (ended []Sync, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		now := tx.now()
		res, err := tx.db.NewUpdate().Model((*Connection)(nil)).
			Set("status = ?", ConnDisconnected).Set("status_message = NULL").
			Set("access_url_enc = NULL").Set("setup_token_enc = NULL").Set("claim_sent_at = NULL").
			Set("disconnected_at = ?", now).Set("updated_at = ?", now).
			Where("family_id = ?", familyID).Where("id = ?", id).Where("status <> ?", ConnDisconnected).
			Exec(ctx)
		if err := affectedOne(res, err, "disconnect connection"); err != nil {
			return err
		}
		if err := tx.db.NewSelect().Model(&ended).Where("sy.family_id = ?", familyID).Where("sy.connection_id = ?", id).
			Where("sy.status IN (?)", bun.List([]string{SyncPending, SyncRunning})).Scan(ctx); err != nil {
			return dbErr("list active syncs", err)
		}
		_, err = tx.db.NewUpdate().Model((*Sync)(nil)).
			Set("status = ?", SyncFailed).Set("error = ?", "disconnected").Set("finished_at = ?", now).Set("lease_until = NULL").
			Where("family_id = ?", familyID).Where("connection_id = ?", id).Where("status IN (?)", bun.List([]string{SyncPending, SyncRunning})).
			Exec(ctx)
		return dbErr("fail syncs of disconnected connection", err)
	})
	return ended, err
}

// SetupToken opens a connection's sealed setup token.
func (s *Store) SetupToken(c *Connection) (string, error) {
	if c.SetupTokenEnc == nil {
		return "", secret.ErrSealed
	}
	return s.Secrets.Open(*c.SetupTokenEnc, connTable, "setup_token_enc", c.ID.String())
}

// AccessURL opens a connection's sealed access URL.
func (s *Store) AccessURL(c *Connection) (string, error) {
	if c.AccessURLEnc == nil {
		return "", secret.ErrSealed
	}
	return s.Secrets.Open(*c.AccessURLEnc, connTable, "access_url_enc", c.ID.String())
}

// ClaimStep is what the claim job does next with a connection.
type ClaimStep int

// Claim steps.
const (
	ClaimSkip    ClaimStep = iota // not claiming, or another claim sequence
	ClaimSend                     // claim_sent_at is now set: POST once
	ClaimUnclear                  // an earlier run may have POSTed: do not POST again
)

// BeginClaim decides, under a row lock, whether the claim may be sent,
// and records that it is about to be before anything leaves: a claim is
// not idempotent, so a second run must know a first one may have sent it.
func (s *Store) BeginClaim(ctx context.Context, familyID, id uuid.UUID, seq int) (step ClaimStep, c *Connection, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		c = new(Connection)
		q := tx.db.NewSelect().Model(c).Where("pc.family_id = ?", familyID).Where("pc.id = ?", id)
		if tx.Postgres() {
			q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("lock connection", err)
		}
		switch {
		case c.Status != ConnClaiming || c.ClaimSeq != seq:
			step = ClaimSkip
		case c.ClaimSentAt != nil:
			step = ClaimUnclear
		default:
			now := tx.now()
			c.ClaimSentAt = &now
			_, err := tx.db.NewUpdate().Model(c).Column("claim_sent_at").WherePK().Exec(ctx)
			if err != nil {
				return dbErr("mark claim sent", err)
			}
			step = ClaimSend
		}
		return nil
	})
	return step, c, err
}

// ClaimNotSent undoes BeginClaim when the request provably never left, so
// a retry may send it.
func (s *Store) ClaimNotSent(ctx context.Context, c *Connection) error {
	_, err := s.db.NewUpdate().Model((*Connection)(nil)).Set("claim_sent_at = NULL").
		Where("family_id = ?", c.FamilyID).Where("id = ?", c.ID).Where("claim_seq = ?", c.ClaimSeq).Exec(ctx)
	return dbErr("unmark claim", err)
}

// ClaimSucceeded stores the access URL sealed, erases the setup token,
// makes the connection active and inserts its initial sync, in one
// transaction; the caller enqueues the sync after the commit. The server
// versions are cleared: they belong to the old access URL, and the /info
// read that follows a claim only reads them while they are empty.
func (s *Store) ClaimSucceeded(ctx context.Context, c *Connection, accessURL string) (*Sync, error) {
	sealed, err := s.Secrets.Seal(accessURL, connTable, "access_url_enc", c.ID.String())
	if err != nil {
		return nil, err
	}
	var sy *Sync
	err = s.RunInTx(ctx, func(tx *Store) error {
		res, err := tx.db.NewUpdate().Model((*Connection)(nil)).
			Set("status = ?", ConnActive).Set("status_message = NULL").Set("access_url_enc = ?", sealed).
			Set("setup_token_enc = NULL").Set("claim_sent_at = NULL").Set("claim_retryable = FALSE").
			Set("server_versions = ?", jsonList([]string(nil))).Set("prev_status = NULL").Set("retry_after = NULL").Set("consecutive_rate_limits = 0").Set("disconnected_at = NULL").
			Set("updated_at = ?", tx.now()).
			Where("family_id = ?", c.FamilyID).Where("id = ?", c.ID).Where("claim_seq = ?", c.ClaimSeq).Where("status = ?", ConnClaiming).
			Exec(ctx)
		if err := affectedOne(res, err, "claim succeeded"); err != nil {
			return err
		}
		sy, _, err = tx.CreateSync(ctx, &Sync{FamilyID: c.FamilyID, ConnectionID: c.ID, Trigger: TriggerConnect})
		return err
	})
	return sy, err
}

// ClaimFailed records a failed claim with the message the user sees. A
// retryable failure keeps the token (the request never reached the
// Bridge, or the Bridge refused to serve it); otherwise it is erased.
func (s *Store) ClaimFailed(ctx context.Context, c *Connection, message string, retryable bool) error {
	// A failed reconnect goes back to where it was while the old access
	// URL still works; only a first claim ends in claim_failed.
	q := s.db.NewUpdate().Model((*Connection)(nil)).
		Set("status = CASE WHEN access_url_enc IS NOT NULL AND prev_status IS NOT NULL THEN prev_status ELSE ? END", ConnClaimFailed).
		Set("status_message = ?", message).Set("claim_retryable = ?", retryable).
		Set("claim_sent_at = NULL").Set("updated_at = ?", s.now()).
		Where("family_id = ?", c.FamilyID).Where("id = ?", c.ID).Where("claim_seq = ?", c.ClaimSeq).Where("status = ?", ConnClaiming)
	if !retryable {
		q.Set("setup_token_enc = NULL")
	}
	res, err := q.Exec(ctx)
	return affectedOne(res, err, "claim failed")
}

// ProviderError is one partial problem the Bridge reported in its latest
// answer, sanitised: what the user sees on the connection, with the code
// and the bank login or remote account it is about, when known.
type ProviderError struct {
	Message         string `json:"message"`
	Code            string `json:"code,omitempty"`
	RemoteAccountID string `json:"remote_account_id,omitempty"`
	ConnID          string `json:"conn_id,omitempty"`
}

// UnmarshalJSON also reads the bare strings that rows written before
// errors carried their codes hold.
func (e *ProviderError) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*e = ProviderError{Message: s}
		return nil
	}
	type plain ProviderError
	return json.Unmarshal(b, (*plain)(e))
}

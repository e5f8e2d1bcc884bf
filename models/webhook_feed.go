package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The transaction events of webhooks come from the ledger itself, not
// from each door that writes it: the worker reads the family's rows
// changed since it last looked (every write sets updated_at, a delete
// too), after they committed and after the rules filed them. It reads
// back feedOverlap each time, so a row whose write committed late is not
// missed; the deliveries' unique event keys make the overlap free of
// repeats.

// feedOverlap is how far before its cursor the feed reads again.
const feedOverlap = 5 * time.Minute

// WebhookCursor is where a family's transaction feed was read up to.
type WebhookCursor struct {
	bun.BaseModel `bun:"table:webhook_cursors,alias:wc"`

	FamilyID uuid.UUID `bun:"family_id,pk"`
	ReadTo   time.Time `bun:"read_to"`
}

// WebhookFamilies lists the families with an enabled endpoint.
func (s *Store) WebhookFamilies(ctx context.Context) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.db.NewSelect().Model((*WebhookEndpoint)(nil)).ColumnExpr("DISTINCT family_id").Where("enabled").Scan(ctx, &ids)
	return ids, dbErr("webhook families", err)
}

// WebhookCursorOf returns where the family's feed was read up to; a
// family read for the first time starts when its first endpoint was
// registered: webhooks tell of what happens after that.
func (s *Store) WebhookCursorOf(ctx context.Context, familyID uuid.UUID) (*WebhookCursor, error) {
	cur := &WebhookCursor{FamilyID: familyID}
	err := s.db.NewSelect().Model(cur).Where("wc.family_id = ?", familyID).Scan(ctx)
	if err = dbErr("webhook cursor", err); err != ErrNotFound {
		return cur, err
	}
	es, err := s.Webhooks(ctx, familyID)
	if err != nil {
		return nil, err
	}
	cur.ReadTo = s.now()
	if len(es) > 0 {
		cur.ReadTo = es[0].CreatedAt
	}
	return cur, nil
}

// FeedStart is where a read of the feed from cursor c begins: the
// overlap before it.
func (c *WebhookCursor) FeedStart() FeedPosition {
	return FeedPosition{At: c.ReadTo.Add(-feedOverlap)}
}

// FeedPosition is a place in the feed: after the change at At of the
// row ID (uuid.Nil: before every row changed at At).
type FeedPosition struct {
	At time.Time
	ID uuid.UUID
}

// TransactionFeed returns up to limit of the family's transactions
// changed after position p, oldest change first, each with its category,
// merchant and account, deleted ones included.
func (s *Store) TransactionFeed(ctx context.Context, familyID uuid.UUID, p FeedPosition, limit int) ([]Transaction, error) {
	var ts []Transaction
	err := s.db.NewSelect().Model(&ts).Relation("Category").Relation("Merchant").Relation("Account").
		Where("t.family_id = ?", familyID).
		Where("(t.updated_at > ? OR (t.updated_at = ? AND t.id > ?))", p.At, p.At, p.ID).
		OrderExpr("t.updated_at, t.id").Limit(int64(limit)).Scan(ctx)
	return ts, dbErr("transaction feed", err)
}

// TransactionDeletion is a transaction deleted for good, as the trigger of
// transactions kept it for the feed.
type TransactionDeletion struct {
	bun.BaseModel `bun:"table:transaction_deletions,alias:td"`

	FamilyID      uuid.UUID `bun:"family_id,pk"`
	TransactionID uuid.UUID `bun:"transaction_id,pk"`
	AccountID     uuid.UUID `bun:"account_id"`
	DeletedUS     int64     `bun:"deleted_us"`
}

// DeletedAt is when it was deleted.
func (d *TransactionDeletion) DeletedAt() time.Time { return time.UnixMicro(d.DeletedUS).UTC() }

// TransactionDeletions returns the family's transactions deleted for good
// after since, oldest first, and forgets those deleted before it: the feed
// has read them.
func (s *Store) TransactionDeletions(ctx context.Context, familyID uuid.UUID, since time.Time) ([]TransactionDeletion, error) {
	var ds []TransactionDeletion
	err := s.db.NewSelect().Model(&ds).Where("td.family_id = ? AND td.deleted_us > ?", familyID, since.UnixMicro()).
		OrderExpr("td.deleted_us, td.transaction_id").Scan(ctx)
	if err != nil {
		return nil, dbErr("transaction deletions", err)
	}
	_, err = s.db.NewDelete().Model((*TransactionDeletion)(nil)).
		Where("family_id = ? AND deleted_us <= ?", familyID, since.UnixMicro()).Exec(ctx)
	return ds, dbErr("forget transaction deletions", err)
}

// FinishedSyncs returns the family's bank syncs (a connection's whole
// sync, not its per-account parts) that ended after since, oldest first.
func (s *Store) FinishedSyncs(ctx context.Context, familyID uuid.UUID, since time.Time) ([]Sync, error) {
	var ss []Sync
	err := s.db.NewSelect().Model(&ss).Where("sy.family_id = ? AND sy.parent_id IS NULL", familyID).
		Where("sy.status IN (?, ?) AND sy.finished_at > ?", SyncCompleted, SyncFailed, since).
		OrderExpr("sy.finished_at, sy.id").Scan(ctx)
	return ss, dbErr("finished syncs", err)
}

// CompletedImports returns the family's file imports completed after
// since, oldest first.
func (s *Store) CompletedImports(ctx context.Context, familyID uuid.UUID, since time.Time) ([]Import, error) {
	var is []Import
	err := s.db.NewSelect().Model(&is).Where("im.family_id = ? AND im.status = ? AND im.completed_at > ?", familyID, ImportComplete, since).
		OrderExpr("im.completed_at, im.id").Scan(ctx)
	return is, dbErr("completed imports", err)
}

// SaveWebhookCursor stores where the family's feed was read up to.
func (s *Store) SaveWebhookCursor(ctx context.Context, c *WebhookCursor) error {
	_, err := s.db.NewInsert().Model(c).
		On("CONFLICT (family_id) DO UPDATE").Set("read_to = EXCLUDED.read_to").Exec(ctx)
	return dbErr("save webhook cursor", err)
}

package models

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Outbox statuses.
const (
	NotificationPending = "pending"
	NotificationSending = "sending" // claimed by a send until lease_until
	NotificationSent    = "sent"
	NotificationDropped = "dropped" // nobody to send it to any more
)

// Notification is one email decided, in the outbox until it is sent. Its
// (family, user, kind, subject key) is unique: deciding it again is a
// no-op.
type Notification struct {
	bun.BaseModel `bun:"table:notification_outbox,alias:no"`

	ID         uuid.UUID  `bun:"id,pk"`
	FamilyID   uuid.UUID  `bun:"family_id"`
	UserID     uuid.UUID  `bun:"user_id"`
	Kind       string     `bun:"kind"`
	SubjectKey string     `bun:"subject_key"`
	Data       string     `bun:"data"` // the kind's facts, JSON
	Status     string     `bun:"status"`
	Attempts   int        `bun:"attempts"`
	LeaseUntil *time.Time `bun:"lease_until"`
	LastError  *string    `bun:"last_error"`
	SentAt     *time.Time `bun:"sent_at"`
	CreatedAt  time.Time  `bun:"created_at"`
	UpdatedAt  time.Time  `bun:"updated_at"`
}

// NewNotification is a pending email of kind about key for a user, with
// data as its facts.
func NewNotification(familyID, userID uuid.UUID, kind, key string, data any) (Notification, error) {
	b, err := json.Marshal(data)
	return Notification{ID: NewID(), FamilyID: familyID, UserID: userID, Kind: kind, SubjectKey: truncate(key, 255),
		Data: string(b), Status: NotificationPending}, err
}

// QueueNotifications writes the rows not decided before and returns
// those; the others (same user, kind and key) are left as they are.
func (s *Store) QueueNotifications(ctx context.Context, rows []Notification) ([]Notification, error) {
	now := s.now()
	var queued []Notification
	for len(rows) > 0 {
		batch := slices.Clone(rows[:min(len(rows), 500)])
		rows = rows[len(batch):]
		for i := range batch {
			batch[i].CreatedAt, batch[i].UpdatedAt = now, now
		}
		var ids []uuid.UUID
		err := s.db.NewInsert().Model(&batch).On("CONFLICT (family_id, user_id, kind, subject_key) DO NOTHING").
			Returning("id").Scan(ctx, &ids)
		if err != nil {
			return nil, dbErr("queue notifications", err)
		}
		for _, n := range batch {
			if slices.Contains(ids, n.ID) {
				queued = append(queued, n)
			}
		}
	}
	return queued, nil
}

// Notification returns an outbox row of the family.
func (s *Store) Notification(ctx context.Context, familyID, id uuid.UUID) (*Notification, error) {
	n := new(Notification)
	err := s.db.NewSelect().Model(n).Where("no.family_id = ? AND no.id = ?", familyID, id).Scan(ctx)
	return n, dbErr("get notification", err)
}

// Notifications lists the family's outbox, oldest first (tests, screens).
func (s *Store) Notifications(ctx context.Context, familyID uuid.UUID) ([]Notification, error) {
	var ns []Notification
	err := s.db.NewSelect().Model(&ns).Where("no.family_id = ?", familyID).OrderExpr("no.created_at, no.id").Scan(ctx)
	return ns, dbErr("list notifications", err)
}

// ClaimNotification takes a row for one send until now+lease: a pending
// row, or one whose sender's lease ran out (it died). It returns the
// claimed row; or nil and when the live claim of another send ends; or
// nil, nil for a row sent, dropped or gone.
func (s *Store) ClaimNotification(ctx context.Context, familyID, id uuid.UUID, lease time.Duration) (*Notification, *time.Time, error) {
	now := s.now()
	until := now.Add(lease)
	res, err := s.db.NewUpdate().Model((*Notification)(nil)).
		Set("status = ?", NotificationSending).Set("lease_until = ?", until).
		Set("attempts = attempts + 1").Set("updated_at = ?", now).
		Where("family_id = ? AND id = ?", familyID, id).
		Where("(status = ? OR (status = ? AND lease_until < ?))", NotificationPending, NotificationSending, now).Exec(ctx)
	if err != nil {
		return nil, nil, dbErr("claim notification", err)
	}
	n, err := s.Notification(ctx, familyID, id)
	if err == ErrNotFound {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if k, _ := res.RowsAffected(); k == 1 {
		return n, nil, nil
	}
	if n.Status == NotificationSending {
		return nil, n.LeaseUntil, nil
	}
	return nil, nil, nil
}

// MarkNotificationSent records that the server took n.
func (s *Store) MarkNotificationSent(ctx context.Context, n *Notification) error {
	now := s.now()
	_, err := s.db.NewUpdate().Model((*Notification)(nil)).Set("status = ?", NotificationSent).Set("sent_at = ?", now).
		Set("lease_until = NULL").Set("last_error = NULL").Set("updated_at = ?", now).
		Where("family_id = ? AND id = ? AND status = ?", n.FamilyID, n.ID, NotificationSending).Exec(ctx)
	return dbErr("notification sent", err)
}

// ReleaseNotification gives back the claim of a send that failed before
// the server took the message, to be tried again; dropped instead when
// drop (nobody to send it to).
func (s *Store) ReleaseNotification(ctx context.Context, n *Notification, why string, drop bool) error {
	status := NotificationPending
	if drop {
		status = NotificationDropped
	}
	_, err := s.db.NewUpdate().Model((*Notification)(nil)).Set("status = ?", status).Set("lease_until = NULL").
		Set("last_error = ?", truncate(why, 500)).Set("updated_at = ?", s.now()).
		Where("family_id = ? AND id = ? AND status = ? AND lease_until = ?", n.FamilyID, n.ID, NotificationSending, n.LeaseUntil).Exec(ctx)
	return dbErr("release notification", err)
}

// OutboxRef names an outbox row.
type OutboxRef struct {
	FamilyID uuid.UUID `bun:"family_id"`
	ID       uuid.UUID `bun:"id"`
}

// UnsentNotifications lists up to limit rows of every family left unsent
// (pending since before before, or claimed by a send whose lease ran
// out), oldest first: the sweep queues their sends again.
func (s *Store) UnsentNotifications(ctx context.Context, before time.Time, limit int) ([]OutboxRef, error) {
	var refs []OutboxRef
	err := s.db.NewSelect().Model((*Notification)(nil)).Column("family_id", "id").
		Where("(status = ? AND created_at < ?) OR (status = ? AND lease_until < ?)", NotificationPending, before, NotificationSending, s.now()).
		OrderExpr("created_at, id").Limit(int64(limit)).Scan(ctx, &refs)
	return refs, dbErr("unsent notifications", err)
}

// PendingNotifications lists the family's pending rows, to queue their
// sends after the transaction that wrote them committed.
func (s *Store) PendingNotifications(ctx context.Context, familyID uuid.UUID) ([]OutboxRef, error) {
	var refs []OutboxRef
	err := s.db.NewSelect().Model((*Notification)(nil)).Column("family_id", "id").
		Where("family_id = ? AND status = ?", familyID, NotificationPending).OrderExpr("created_at, id").Limit(1000).Scan(ctx, &refs)
	return refs, dbErr("pending notifications", err)
}

// queueWebhookDisabled tells the family's admins that an endpoint was
// switched off, in the transaction that switched it off: once per streak
// of failures (the key holds when it began).
func (s *Store) queueWebhookDisabled(ctx context.Context, familyID, endpointID uuid.UUID) error {
	e, err := s.Webhook(ctx, familyID, endpointID)
	if err != nil {
		return err
	}
	admins, err := s.FamilyAdmins(ctx, familyID)
	if err != nil {
		return err
	}
	key := e.ID.String()
	if e.FailingSince != nil {
		key += ":" + e.FailingSince.UTC().Format(time.RFC3339Nano)
	}
	data := map[string]any{"endpoint_id": e.ID, "url": e.URL, "description": e.Description,
		"reason": e.DisabledReason, "failing_since": e.FailingSince}
	var rows []Notification
	for _, a := range admins {
		n, err := NewNotification(familyID, a.ID, NotifyWebhookDisabled, key, data)
		if err != nil {
			return err
		}
		rows = append(rows, n)
	}
	_, err = s.QueueNotifications(ctx, rows)
	return err
}

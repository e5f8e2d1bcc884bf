package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/money"
)

// The kinds of notification email (issue 29). Those that follow an event
// carry the event's type, so a new event source feeds its kind without a
// change here (bill.missed).
const (
	NotifyBillDue          = EventBillDue
	NotifyBillMissed       = EventBillMissed
	NotifyLargeTransaction = EventTransactionCreated
	NotifyBudgetExceeded   = EventBudgetExceeded
	NotifyConnection       = EventSyncFailed
	NotifyDigest           = "digest.weekly"
	NotifyWebhookDisabled  = "webhook.disabled" // to the family's admins, whatever their choices
)

// DefaultBillDueDays is how many days ahead of a bill a person is told,
// unless they choose otherwise.
const DefaultBillDueDays = 3

// NotificationPreference is what one person asked to be emailed about.
type NotificationPreference struct {
	bun.BaseModel `bun:"table:notification_preferences,alias:np"`

	FamilyID            uuid.UUID    `bun:"family_id,pk"`
	UserID              uuid.UUID    `bun:"user_id,pk"`
	BillDue             bool         `bun:"bill_due"`
	BillDueDays         int          `bun:"bill_due_days"`
	BillMissed          bool         `bun:"bill_missed"`
	LargeTransaction    bool         `bun:"large_transaction"`
	LargeAmount         money.Amount `bun:"large_amount"` // in whatever currency the transaction is
	BudgetExceeded      bool         `bun:"budget_exceeded"`
	ConnectionAttention bool         `bun:"connection_attention"`
	WeeklyDigest        bool         `bun:"weekly_digest"`
	UpdatedAt           time.Time    `bun:"updated_at"`
}

// Wants reports whether the person asked for mail of kind.
func (p *NotificationPreference) Wants(kind string) bool {
	switch kind {
	case NotifyBillDue:
		return p.BillDue
	case NotifyBillMissed:
		return p.BillMissed
	case NotifyLargeTransaction:
		return p.LargeTransaction && p.LargeAmount > 0
	case NotifyBudgetExceeded:
		return p.BudgetExceeded
	case NotifyConnection:
		return p.ConnectionAttention
	case NotifyDigest:
		return p.WeeklyDigest
	}
	return false
}

func (p *NotificationPreference) validate() error {
	var problems []string
	if p.BillDueDays < 1 || p.BillDueDays > 30 {
		problems = append(problems, "Days before a bill must be between 1 and 30")
	}
	if p.LargeAmount < 0 {
		problems = append(problems, "Amount must not be negative")
	}
	if p.LargeTransaction && p.LargeAmount == 0 {
		problems = append(problems, "Amount is required to be told of large transactions")
	}
	if len(problems) > 0 {
		return Invalid(problems...)
	}
	return nil
}

// NotificationPreference returns what the person chose; someone who never
// saved the form gets the defaults: nothing sent.
func (s *Store) NotificationPreference(ctx context.Context, familyID, userID uuid.UUID) (*NotificationPreference, error) {
	p := &NotificationPreference{FamilyID: familyID, UserID: userID, BillDueDays: DefaultBillDueDays}
	err := s.db.NewSelect().Model(p).Where("np.family_id = ? AND np.user_id = ?", familyID, userID).Scan(ctx)
	if err = dbErr("notification preference", err); err == ErrNotFound {
		return p, nil
	}
	return p, err
}

// SaveNotificationPreference stores a person's choices.
func (s *Store) SaveNotificationPreference(ctx context.Context, p *NotificationPreference) error {
	if err := p.validate(); err != nil {
		return err
	}
	p.UpdatedAt = s.now()
	_, err := s.db.NewInsert().Model(p).On("CONFLICT (family_id, user_id) DO UPDATE").
		Set("bill_due = EXCLUDED.bill_due, bill_due_days = EXCLUDED.bill_due_days, bill_missed = EXCLUDED.bill_missed").
		Set("large_transaction = EXCLUDED.large_transaction, large_amount = EXCLUDED.large_amount").
		Set("budget_exceeded = EXCLUDED.budget_exceeded, connection_attention = EXCLUDED.connection_attention").
		Set("weekly_digest = EXCLUDED.weekly_digest, updated_at = EXCLUDED.updated_at").Exec(ctx)
	return dbErr("save notification preference", err)
}

// NotificationPreferences lists the choices of the family's active people
// who asked for anything.
func (s *Store) NotificationPreferences(ctx context.Context, familyID uuid.UUID) ([]NotificationPreference, error) {
	var ps []NotificationPreference
	err := s.db.NewSelect().Model(&ps).Where("np.family_id = ?", familyID).
		Where("np.user_id IN (SELECT u.id FROM users AS u WHERE u.family_id = ? AND u.status = ?)", familyID, UserActive).
		Where("np.bill_due OR np.bill_missed OR np.large_transaction OR np.budget_exceeded OR np.connection_attention OR np.weekly_digest").
		OrderExpr("np.user_id").Scan(ctx)
	return ps, dbErr("notification preferences", err)
}

// NotifyFamilies lists the families where someone asked for mail of one
// of kinds: bill_due, weekly_digest (the periodic ones) or the rest (read
// by the webhook scan).
func (s *Store) NotifyFamilies(ctx context.Context, periodic bool) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	q := s.db.NewSelect().Model((*NotificationPreference)(nil)).ColumnExpr("DISTINCT family_id")
	if periodic {
		q.Where("bill_due OR weekly_digest")
	} else {
		q.Where("bill_missed OR large_transaction OR budget_exceeded OR connection_attention")
	}
	err := q.Scan(ctx, &ids)
	return ids, dbErr("notify families", err)
}

// FamilyAdmins lists the family's active admins.
func (s *Store) FamilyAdmins(ctx context.Context, familyID uuid.UUID) ([]User, error) {
	var us []User
	err := s.db.NewSelect().Model(&us).Where("u.family_id = ?", familyID).Where("u.status = ?", UserActive).
		Where("u.role IN (?, ?)", RoleAdmin, RoleSuperAdmin).OrderExpr("u.created_at, u.id").Scan(ctx)
	return us, dbErr("family admins", err)
}

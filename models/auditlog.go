package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Audit event types.
const (
	EventLogin           = "login"
	EventLoginFailed     = "login_failed"
	EventLogout          = "logout"
	EventLogoutIdP       = "logout_idp"
	EventLink            = "link"
	EventUnlink          = "unlink"
	EventJITCreated      = "jit_account_created"
	EventProviderCreated = "provider_created"
	EventProviderUpdated = "provider_updated"
	EventProviderDeleted = "provider_deleted"
	EventRoleChanged     = "role_changed"
	EventUserSuspended   = "user_suspended"
	EventUserReactivated = "user_reactivated"
	EventUserDeleted     = "user_deleted"
	// The second factor at sign-in: an authenticator app set up or
	// removed, a recovery code spent, a wrong code at sign-in.
	EventSecondFactorEnabled = "second_factor_enabled"
	EventSecondFactorRemoved = "second_factor_removed"
	EventRecoveryCodeUsed    = "recovery_code_used"
	EventSecondFactorFailed  = "second_factor_failed"
)

// AuditEvents lists every event type, in the order screens show them.
var AuditEvents = []string{EventLogin, EventLoginFailed, EventLogout, EventLogoutIdP, EventLink, EventUnlink,
	EventJITCreated, EventProviderCreated, EventProviderUpdated, EventProviderDeleted, EventRoleChanged,
	EventUserSuspended, EventUserReactivated, EventUserDeleted,
	EventSecondFactorEnabled, EventSecondFactorRemoved, EventRecoveryCodeUsed, EventSecondFactorFailed}

// AuditLog is one audit record. Records are written in the transaction of
// the change they describe and never updated. UserID is the acting user;
// it is kept after that user is deleted.
type AuditLog struct {
	bun.BaseModel `bun:"table:sso_audit_logs,alias:al"`

	ID        uuid.UUID      `bun:"id,pk"`
	EventType string         `bun:"event_type"`
	UserID    *uuid.UUID     `bun:"user_id"`
	Provider  *string        `bun:"provider"`
	IP        *string        `bun:"ip"`
	UserAgent *string        `bun:"user_agent"`
	Metadata  map[string]any `bun:"metadata,notnull"`
	CreatedAt time.Time      `bun:"created_at"`

	UserEmail *string `bun:"user_email,scanonly"` // the acting user's email, while the user exists
}

// CreateAuditLog writes a record; its id and time are set here.
func (s *Store) CreateAuditLog(ctx context.Context, a *AuditLog) error {
	a.ID = NewID()
	a.CreatedAt = s.now()
	if a.Metadata == nil {
		a.Metadata = map[string]any{}
	}
	if a.UserAgent != nil && len(*a.UserAgent) > 512 {
		ua := (*a.UserAgent)[:512]
		a.UserAgent = &ua
	}
	_, err := s.db.NewInsert().Model(a).Exec(ctx)
	return dbErr("create audit log", err)
}

// AuditFilter narrows the audit view.
type AuditFilter struct {
	EventType string    // empty: every type
	Since     time.Time // zero: all time
}

func (s *Store) auditSelect(model any, f AuditFilter) *bun.SelectQuery {
	q := s.db.NewSelect().Model(model).
		ColumnExpr("al.*").
		ColumnExpr("u.email AS user_email").
		Join("LEFT JOIN users AS u ON u.id = al.user_id")
	if f.EventType != "" {
		q.Where("al.event_type = ?", f.EventType)
	}
	if !f.Since.IsZero() {
		q.Where("al.created_at >= ?", f.Since)
	}
	return q.OrderExpr("al.created_at DESC, al.id DESC")
}

// AuditLogs lists a page of records, newest first, with their total. The
// audit log spans the whole instance: only super admins read it.
func (s *Store) AuditLogs(ctx context.Context, f AuditFilter, p Page) ([]AuditLog, int, error) {
	logs := []AuditLog{}
	n, err := p.scan(ctx, s.auditSelect(&logs, f))
	return logs, n, dbErr("list audit logs", err)
}

// AuditLogPage lists a page of records, newest first, and whether more
// follow. It counts nothing, so a page costs the same on a million rows as
// on a hundred.
func (s *Store) AuditLogPage(ctx context.Context, f AuditFilter, p Page) ([]AuditLog, bool, error) {
	logs := []AuditLog{}
	err := s.auditSelect(&logs, f).Limit(int64(p.Size + 1)).Offset(int64(p.Number-1) * int64(p.Size)).Scan(ctx)
	if err != nil {
		return nil, false, dbErr("list audit logs", err)
	}
	if len(logs) > p.Size {
		return logs[:p.Size], true, nil
	}
	return logs, false, nil
}

// EachAuditLog calls fn for every record of the filter, newest first,
// reading batch rows at a time by key, so an export of any size holds one
// batch in memory.
func (s *Store) EachAuditLog(ctx context.Context, f AuditFilter, batch int, fn func(*AuditLog) error) error {
	var after *AuditLog
	for {
		logs := []AuditLog{}
		q := s.auditSelect(&logs, f).Limit(int64(batch))
		if after != nil {
			q.Where("(al.created_at < ? OR (al.created_at = ? AND al.id < ?))", after.CreatedAt, after.CreatedAt, after.ID)
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("export audit logs", err)
		}
		for i := range logs {
			if err := fn(&logs[i]); err != nil {
				return err
			}
		}
		if len(logs) < batch {
			return nil
		}
		after = &logs[len(logs)-1]
	}
}

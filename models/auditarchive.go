package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// AuditArchive is one file of archived audit records.
type AuditArchive struct {
	bun.BaseModel `bun:"table:audit_archives,alias:aa"`

	ID             uuid.UUID `bun:"id,pk"`
	FileName       string    `bun:"file_name"`
	RecordCount    int       `bun:"record_count"`
	FirstCreatedAt time.Time `bun:"first_created_at"`
	LastCreatedAt  time.Time `bun:"last_created_at"`
	SHA256         string    `bun:"sha256"`
	WrittenAt      time.Time `bun:"written_at"`
}

// AuditLogsBefore returns up to limit records older than cutoff, oldest
// first: the next batch the retention job moves out of the database.
func (s *Store) AuditLogsBefore(ctx context.Context, cutoff time.Time, limit int) ([]AuditLog, error) {
	logs := []AuditLog{}
	err := s.db.NewSelect().Model(&logs).
		Where("al.created_at < ?", cutoff).
		OrderExpr("al.created_at ASC, al.id ASC").
		Limit(int64(limit)).
		Scan(ctx)
	return logs, dbErr("list old audit logs", err)
}

// ArchiveAuditLogs records an archive file (again, when a rerun rewrote
// the same batch) and deletes exactly the archived records, in one
// transaction.
func (s *Store) ArchiveAuditLogs(ctx context.Context, a *AuditArchive, ids []uuid.UUID) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if a.ID == uuid.Nil {
			a.ID = NewID()
		}
		a.WrittenAt = tx.now()
		_, err := tx.db.NewInsert().Model(a).
			On("CONFLICT (file_name) DO UPDATE").
			Set("record_count = EXCLUDED.record_count, first_created_at = EXCLUDED.first_created_at, " +
				"last_created_at = EXCLUDED.last_created_at, sha256 = EXCLUDED.sha256, written_at = EXCLUDED.written_at").
			Exec(ctx)
		if err != nil {
			return dbErr("record audit archive", err)
		}
		return tx.DeleteAuditLogs(ctx, ids)
	})
}

// DeleteAuditLogs deletes records by id: only the retention job does.
func (s *Store) DeleteAuditLogs(ctx context.Context, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.db.NewDelete().Model((*AuditLog)(nil)).Where("id IN (?)", bun.List(ids)).Exec(ctx)
	return dbErr("delete audit logs", err)
}

// AuditArchivesBefore lists archive files whose newest record is older
// than t: past the tier's archive limit.
func (s *Store) AuditArchivesBefore(ctx context.Context, t time.Time) ([]AuditArchive, error) {
	as := []AuditArchive{}
	err := s.db.NewSelect().Model(&as).Where("aa.last_created_at < ?", t).OrderExpr("aa.last_created_at").Scan(ctx)
	return as, dbErr("list old audit archives", err)
}

// DeleteAuditArchive forgets an archive file whose file is gone.
func (s *Store) DeleteAuditArchive(ctx context.Context, id uuid.UUID) error {
	_, err := s.db.NewDelete().Model((*AuditArchive)(nil)).Where("id = ?", id).Exec(ctx)
	return dbErr("delete audit archive", err)
}

// AuditArchives lists every archive file, oldest first.
func (s *Store) AuditArchives(ctx context.Context) ([]AuditArchive, error) {
	as := []AuditArchive{}
	err := s.db.NewSelect().Model(&as).OrderExpr("aa.first_created_at, aa.file_name").Scan(ctx)
	return as, dbErr("list audit archives", err)
}

// TryLock takes a session-level PostgreSQL advisory lock for the life of
// the returned release function, or reports that another process holds
// it. SQLite runs in one process: the lock is always granted.
func (s *Store) TryLock(ctx context.Context, key int64) (release func(), ok bool, err error) {
	if !s.Postgres() {
		return func() {}, true, nil
	}
	conn, err := s.raw.Conn(ctx)
	if err != nil {
		return nil, false, dbErr("lock", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(?)", key).Scan(&ok); err != nil {
		conn.Close()
		return nil, false, dbErr("lock", err)
	}
	if !ok {
		conn.Close()
		return nil, false, nil
	}
	return func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", key)
		conn.Close()
	}, true, nil
}

package models_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/secret"
)

func TestSessions(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "sess")
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	sess := &models.Session{UserID: f.User.ID, Method: models.MethodPassword}
	token, err := s.CreateSession(ctx, sess, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.SessionByToken(ctx, token, time.Hour)
	if err != nil || got.User == nil || got.User.ID != f.User.ID {
		t.Fatalf("lookup: %v %v", got, err)
	}
	if _, err := s.SessionByToken(ctx, token+"x", time.Hour); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("wrong token: %v", err)
	}
	now = now.Add(2 * time.Hour) // idle too long
	if _, err := s.SessionByToken(ctx, token, time.Hour); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("idle session: %v", err)
	}
	if _, err := s.SessionByToken(ctx, token, 3*time.Hour); err != nil {
		t.Errorf("within idle: %v", err)
	}
	now = now.Add(23 * time.Hour) // past the absolute end
	if _, err := s.SessionByToken(ctx, token, 100*time.Hour); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("expired session: %v", err)
	}
	if err := s.DeleteUserSessions(ctx, f.User.ID, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.CountUserSessions(ctx, f.User.ID); n != 0 {
		t.Errorf("%d sessions left", n)
	}
}

func TestAuditLogs(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "audit")
	base := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	for i, ev := range []string{models.EventLogin, models.EventLoginFailed, models.EventLogin, models.EventLogout} {
		s.Now = func() time.Time { return base.Add(time.Duration(i) * 24 * time.Hour) }
		if err := s.CreateAuditLog(ctx, &models.AuditLog{EventType: ev, UserID: &f.User.ID, Metadata: map[string]any{"method": "password", "n": i}}); err != nil {
			t.Fatal(err)
		}
	}
	logs, total, err := s.AuditLogs(ctx, models.AuditFilter{EventType: models.EventLogin}, models.Page{Number: 1, Size: 50})
	if err != nil || total != 2 || len(logs) != 2 {
		t.Fatalf("by type: %d %d %v", total, len(logs), err)
	}
	if logs[0].UserEmail == nil || *logs[0].UserEmail != f.User.Email || logs[0].Metadata["method"] != "password" {
		t.Errorf("record: %+v", logs[0])
	}
	if !logs[0].CreatedAt.After(logs[1].CreatedAt) {
		t.Error("not newest first")
	}
	_, total, _ = s.AuditLogs(ctx, models.AuditFilter{Since: base.Add(36 * time.Hour)}, models.Page{Number: 1, Size: 50})
	if total != 2 {
		t.Errorf("since: %d", total)
	}
	if err := s.CreateAuditLog(ctx, &models.AuditLog{EventType: "made_up"}); err == nil {
		t.Error("unknown event type stored")
	}
}

// BenchmarkHashPassword measures one argon2id hash at the production cost
// (m = 64 MiB, t = 3, p = 2): slow on purpose.
func BenchmarkHashPassword(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := secret.HashPassword("correct horse battery", secret.DefaultArgon2); err != nil {
			b.Fatal(err)
		}
	}
}

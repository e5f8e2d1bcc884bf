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
	sess := &models.Session{FamilyID: f.User.FamilyID, UserID: f.User.ID, Method: models.MethodPassword}
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
	if err := s.DeleteUserSessions(ctx, f.User.FamilyID, f.User.ID, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.CountUserSessions(ctx, f.User.FamilyID, f.User.ID); n != 0 {
		t.Errorf("%d sessions left", n)
	}
}

// TestUserRowsKeepTheUsersFamily: a session or an identity link is
// written with its user's family and no other: a caller naming another
// family (or none) writes nothing, and a family's queries do not see
// another family's user's rows.
func TestUserRowsKeepTheUsersFamily(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f, other := modelstest.NewFamily(t, s, "own"), modelstest.NewFamily(t, s, "other")
	for _, fam := range []uuid.UUID{other.Family.ID, uuid.Nil} {
		if _, err := s.CreateSession(ctx, &models.Session{FamilyID: fam, UserID: f.User.ID, Method: models.MethodPassword}, time.Hour); err == nil {
			t.Errorf("a session of family %s for another family's user was written", fam)
		}
	}
	p := &models.SSOProvider{Name: "corp", Strategy: models.StrategyOIDC, Label: "Corp", Enabled: true,
		Issuer: ptr("https://idp.example"), ClientID: ptr("coffer"), DefaultRole: models.RoleMember}
	models.NewProviderID(p)
	if err := s.SetProviderSecret(p, models.ColClientSecret, "s3cret"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSSOProvider(ctx, p, models.ProviderChange{ActorID: f.User.ID}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateIdentity(ctx, &models.SSOIdentity{FamilyID: other.Family.ID, UserID: f.User.ID, ProviderID: p.ID, Subject: "s"}); err == nil {
		t.Error("an identity of another family's user was written")
	}
	if _, err := s.CreateSession(ctx, &models.Session{FamilyID: f.Family.ID, UserID: f.User.ID, Method: models.MethodPassword}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateIdentity(ctx, &models.SSOIdentity{FamilyID: f.Family.ID, UserID: f.User.ID, ProviderID: p.ID, Subject: "s"}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.CountUserSessions(ctx, f.Family.ID, f.User.ID); n != 1 {
		t.Errorf("own family: %d sessions, want 1", n)
	}
	if n, _ := s.CountUserSessions(ctx, other.Family.ID, f.User.ID); n != 0 {
		t.Errorf("another family sees %d of the user's sessions", n)
	}
	if ids, _ := s.UserIdentities(ctx, other.Family.ID, f.User.ID); len(ids) != 0 {
		t.Errorf("another family sees %d of the user's identities", len(ids))
	}
	var rows int
	if err := s.DB().NewRaw("SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM sso_identities)").Scan(ctx, &rows); err != nil || rows != 2 {
		t.Errorf("%d rows written (%v), want the session and the identity", rows, err)
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

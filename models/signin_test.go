package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
)

var browser = models.SignIn{IP: ptr("192.0.2.7"), UserAgent: ptr("test-agent"), MaxAge: time.Hour}

// auditEvents lists the instance's audit records, oldest first.
func auditEvents(t *testing.T, s *models.Store) []models.AuditLog {
	t.Helper()
	logs, _, err := s.AuditLogs(context.Background(), models.AuditFilter{}, models.Page{Number: 1, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(logs)-1; i < j; i, j = i+1, j-1 {
		logs[i], logs[j] = logs[j], logs[i]
	}
	return logs
}

// lastEvent is the newest audit record.
func lastEvent(t *testing.T, s *models.Store) models.AuditLog {
	t.Helper()
	logs := auditEvents(t, s)
	if len(logs) == 0 {
		t.Fatal("no audit record")
	}
	return logs[len(logs)-1]
}

func eventTypes(logs []models.AuditLog) string {
	var out []string
	for _, l := range logs {
		out = append(out, l.EventType)
	}
	return strings.Join(out, ",")
}

// familiesNamed counts the families of a name, to see what a refused
// write left behind.
func familiesNamed(t *testing.T, s *models.Store, name string) int {
	t.Helper()
	n, err := s.DB().NewSelect().Model((*models.Family)(nil)).Where("name = ?", name).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func TestLoginWithPassword(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "login")
	for _, tt := range []struct {
		name       string
		override   bool
		newHash    *string
		wantMethod string
	}{
		{"password", false, nil, models.MethodPassword},
		{"override with a rehash", true, ptr("$argon2id$rehashed"), models.MethodOverride},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before, err := s.UserByID(ctx, f.User.ID)
			if err != nil {
				t.Fatal(err)
			}
			token, err := s.LoginWithPassword(ctx, f.User, tt.override, tt.newHash, browser)
			if err != nil {
				t.Fatal(err)
			}
			sess, err := s.SessionByToken(ctx, token, time.Hour)
			if err != nil || sess.Method != tt.wantMethod || models.Str(sess.IP) != "192.0.2.7" || models.Str(sess.UserAgent) != "test-agent" {
				t.Fatalf("session = %+v, %v", sess, err)
			}
			if got := sess.ExpiresAt.Sub(sess.CreatedAt); got != time.Hour {
				t.Errorf("session lives %v, want 1h", got)
			}
			after := sess.User
			if after.LastLoginAt == nil {
				t.Error("login time not recorded")
			}
			wantHash := before.PasswordHash
			if tt.newHash != nil {
				wantHash = tt.newHash
			}
			if models.Str(after.PasswordHash) != models.Str(wantHash) {
				t.Errorf("password hash = %q, want %q", models.Str(after.PasswordHash), models.Str(wantHash))
			}
			last := lastEvent(t, s)
			if last.EventType != models.EventLogin || last.Metadata["method"] != "password" ||
				last.Metadata["override"] != tt.override || last.Metadata["role"] != models.RoleAdmin ||
				*last.UserID != f.User.ID || models.Str(last.IP) != "192.0.2.7" {
				t.Errorf("login record = %+v", last)
			}
		})
	}
	// Nothing is written for a user that is gone.
	gone := &models.User{ID: uuid.New(), Role: models.RoleMember}
	if _, err := s.LoginWithPassword(ctx, gone, false, nil, browser); err == nil {
		t.Fatal("a login of an unknown user was recorded")
	}
	if n, _ := s.CountUserSessions(ctx, gone.ID); n != 0 {
		t.Errorf("%d sessions left for the unknown user", n)
	}
}

func TestRegisterFamily(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	taken := modelstest.NewFamily(t, s, "taken")
	for _, tt := range []struct {
		name, family, email string
		wantErr             error
	}{
		{"new family", "Registered", "new@example.com", nil},
		{"email in use, any case", "Duplicate", strings.ToUpper(taken.User.Email), models.ErrConflict},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &models.Family{Name: tt.family, Currency: "EUR"}
			u := &models.User{Email: tt.email, Role: models.RoleAdmin, PasswordHash: ptr("$argon2id$hash")}
			token, err := s.RegisterFamily(ctx, f, u, browser)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if n := familiesNamed(t, s, tt.family); n != 0 {
					t.Errorf("%d families left by a refused registration", n)
				}
				return
			}
			sess, err := s.SessionByToken(ctx, token, time.Hour)
			if err != nil || sess.Method != models.MethodPassword || sess.User.FamilyID != f.ID || sess.User.Role != models.RoleAdmin {
				t.Fatalf("session = %+v, %v", sess, err)
			}
			if got, err := s.Family(ctx, f.ID); err != nil || got.Currency != "EUR" {
				t.Fatalf("family = %+v, %v", got, err)
			}
			last := lastEvent(t, s)
			if last.EventType != models.EventLogin || last.Metadata["registration"] != true || *last.UserID != u.ID {
				t.Errorf("login record = %+v", last)
			}
		})
	}
}

func TestCreateFamilyWithUser(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	taken := modelstest.NewFamily(t, s, "first")
	for _, tt := range []struct {
		name, email, role, wantRole string
		wantErr                     error
	}{
		{"a member administers the new family", "m@example.com", models.RoleMember, models.RoleAdmin, nil},
		{"a super admin stays one", "sa@example.com", models.RoleSuperAdmin, models.RoleSuperAdmin, nil},
		{"email in use", taken.User.Email, models.RoleMember, "", models.ErrConflict},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &models.Family{Name: "family of " + tt.email, Currency: "USD"}
			u := &models.User{Email: tt.email, Role: tt.role}
			err := s.CreateFamilyWithUser(ctx, f, u)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if n := familiesNamed(t, s, f.Name); n != 0 {
					t.Errorf("%d families left by a refused create", n)
				}
				return
			}
			got, err := s.User(ctx, f.ID, u.ID)
			if err != nil || got.Role != tt.wantRole {
				t.Fatalf("user = %+v, %v; want role %s", got, err, tt.wantRole)
			}
		})
	}
}

func TestCreateUserInFamily(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "join")
	for _, tt := range []struct {
		name, email string
		familyID    uuid.UUID
		wantErr     error
	}{
		{"joins as asked", "joiner@example.com", f.Family.ID, nil},
		{"no such family", "lost@example.com", uuid.New(), models.ErrNotFound},
		{"email in use", strings.ToUpper(f.User.Email), f.Family.ID, models.ErrConflict},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := &models.User{Email: tt.email, Role: models.RoleMember}
			err := s.CreateUserInFamily(ctx, tt.familyID, u)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			if got, err := s.User(ctx, f.Family.ID, u.ID); err != nil || got.Role != models.RoleMember {
				t.Fatalf("user = %+v, %v", got, err)
			}
		})
	}
	if _, err := s.UserByEmail(ctx, "lost@example.com"); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("the user of a missing family was stored: %v", err)
	}
}

func TestResetPassword(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "reset")
	for _, tt := range []struct {
		name     string
		keepOne  bool
		wantLeft int
	}{
		{"ends every session", false, 0},
		{"keeps the caller's session", true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.DeleteUserSessions(ctx, f.User.ID, uuid.Nil); err != nil {
				t.Fatal(err)
			}
			var ids []uuid.UUID
			for range 3 {
				sess := &models.Session{UserID: f.User.ID, Method: models.MethodPassword}
				if _, err := s.CreateSession(ctx, sess, time.Hour); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, sess.ID)
			}
			keep := uuid.Nil
			if tt.keepOne {
				keep = ids[1]
			}
			hash := "$argon2id$" + tt.name
			if err := s.ResetPassword(ctx, f.User.ID, hash, keep); err != nil {
				t.Fatal(err)
			}
			if n, _ := s.CountUserSessions(ctx, f.User.ID); n != tt.wantLeft {
				t.Errorf("%d sessions left, want %d", n, tt.wantLeft)
			}
			if u, _ := s.UserByID(ctx, f.User.ID); models.Str(u.PasswordHash) != hash {
				t.Errorf("hash = %q", models.Str(u.PasswordHash))
			}
		})
	}
	if err := s.ResetPassword(ctx, uuid.New(), "$argon2id$x", uuid.Nil); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("unknown user: %v", err)
	}
}

func TestCreateAPIKeyByEmail(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "keys")
	for _, tt := range []struct {
		name, email string
		wantErr     error
	}{
		{"any letter case", strings.ToUpper(f.User.Email), nil},
		{"no such user", "nobody@example.com", models.ErrNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := &models.APIKey{Name: "cli", Scope: models.ScopeRead}
			key, u, err := s.CreateAPIKeyByEmail(ctx, tt.email, k)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			if u.ID != f.User.ID || u.Email != f.User.Email {
				t.Errorf("user = %+v", u)
			}
			got, err := s.APIKeyBySecret(ctx, key)
			if err != nil || got.ID != k.ID || got.FamilyID != f.Family.ID || got.UserID != f.User.ID || got.Writable() {
				t.Fatalf("key = %+v, %v", got, err)
			}
		})
	}
}

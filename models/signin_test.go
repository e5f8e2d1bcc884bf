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
	if n, _ := s.CountUserSessions(ctx, gone.FamilyID, gone.ID); n != 0 {
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

func TestAddUser(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	taken := modelstest.NewFamily(t, s, "First")
	for _, tt := range []struct {
		name, email, role, family, wantRole string
		join                                uuid.UUID
		wantErr                             error
	}{
		{"a member administers the new family", "m@example.com", models.RoleMember, "m family", models.RoleAdmin, uuid.Nil, nil},
		{"a super admin stays one", "sa@example.com", models.RoleSuperAdmin, "sa family", models.RoleSuperAdmin, uuid.Nil, nil},
		{"email in use", taken.User.Email, models.RoleMember, "other family", "", uuid.Nil, models.ErrConflict},
		{"family name taken in another case", "second@example.com", models.RoleMember, " FIRST ", "", uuid.Nil, models.ErrConflict},
		{"joins as asked", "joiner@example.com", models.RoleMember, "", models.RoleMember, taken.Family.ID, nil},
		{"no such family", "lost@example.com", models.RoleMember, "", "", uuid.New(), models.ErrNotFound},
		{"email in use on join", strings.ToUpper(taken.User.Email), models.RoleMember, "", "", taken.Family.ID, models.ErrConflict},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &models.Family{Name: tt.family, Currency: "USD"}
			u := &models.User{Email: tt.email, Role: tt.role}
			err := s.AddUser(ctx, u, tt.join, f)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if _, err := s.UserByEmail(ctx, tt.email); !strings.EqualFold(tt.email, taken.User.Email) && !errors.Is(err, models.ErrNotFound) {
					t.Errorf("a refused add stored its user: %v", err)
				}
				if n := familiesNamed(t, s, f.Name); tt.family != "" && n != 0 {
					t.Errorf("%d families left by a refused add", n)
				}
				return
			}
			got, err := s.User(ctx, u.FamilyID, u.ID)
			if err != nil || got.Role != tt.wantRole {
				t.Fatalf("user = %+v, %v; want role %s", got, err, tt.wantRole)
			}
		})
	}
	var exists *models.FamilyExistsError
	if err := s.AddUser(ctx, &models.User{Email: "x@example.com"}, uuid.Nil, &models.Family{Name: "first", Currency: "USD"}); !errors.As(err, &exists) || exists.Family.ID != taken.Family.ID {
		t.Errorf("taken name: %v, want the existing family named", err)
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
			if err := s.DeleteUserSessions(ctx, f.User.FamilyID, f.User.ID, uuid.Nil); err != nil {
				t.Fatal(err)
			}
			var ids []uuid.UUID
			for range 3 {
				sess := &models.Session{FamilyID: f.User.FamilyID, UserID: f.User.ID, Method: models.MethodPassword}
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
			if n, _ := s.CountUserSessions(ctx, f.User.FamilyID, f.User.ID); n != tt.wantLeft {
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

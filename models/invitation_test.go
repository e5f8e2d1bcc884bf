package models_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"coffer/models"
	"coffer/models/modelstest"
)

func TestInvitations(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	a := modelstest.NewFamily(t, s, "alpha")
	b := modelstest.NewFamily(t, s, "beta")
	fam, admin := a.Family.ID, a.User.ID
	member := &models.User{FamilyID: fam, Email: "member@example.com", Role: models.RoleMember}
	must(t, s.CreateUser(ctx, member))

	var inv *models.InvalidError
	for name, c := range map[string]struct {
		inviter    *models.User
		email      string
		role       string
		wantForbid bool
		wantNotFnd bool
		wantInv    bool
	}{
		"a member":                  {inviter: member, email: "x@example.com", wantForbid: true},
		"another family's admin":    {inviter: b.User, email: "x@example.com", wantNotFnd: true},
		"a bad address":             {inviter: a.User, email: "not an address", wantInv: true},
		"an unknown role":           {inviter: a.User, email: "x@example.com", role: "super_admin", wantInv: true},
		"a member of the household": {inviter: a.User, email: "MEMBER@example.com", wantInv: true},
	} {
		_, _, err := s.CreateInvitation(ctx, fam, c.inviter.ID, c.email, c.role)
		switch {
		case c.wantForbid && !errors.Is(err, models.ErrForbidden),
			c.wantNotFnd && !errors.Is(err, models.ErrNotFound),
			c.wantInv && !errors.As(err, &inv):
			t.Errorf("%s: err = %v", name, err)
		}
	}

	first, oldToken, err := s.CreateInvitation(ctx, fam, admin, " New@Example.com ", "")
	must(t, err)
	second, token, err := s.CreateInvitation(ctx, fam, admin, "new@example.com", "")
	must(t, err)
	if first.Role != models.RoleMember || second.ExpiresAt != now.Add(7*24*time.Hour) || len(token) < 40 || second.TokenHash == token {
		t.Fatalf("invitation %+v", second)
	}
	if _, err := s.InvitationByToken(ctx, oldToken); !errors.Is(err, models.ErrInvitationRevoked) {
		t.Errorf("the first link after inviting again: %v", err)
	}
	pending, err := s.Invitations(ctx, fam)
	must(t, err)
	if len(pending) != 1 || pending[0].ID != second.ID {
		t.Fatalf("pending %+v", pending)
	}
	if others, err := s.Invitations(ctx, b.Family.ID); err != nil || len(others) != 0 {
		t.Errorf("another family's list: %v %v", others, err)
	}
	got, err := s.InvitationByToken(ctx, token)
	must(t, err)
	if got.ID != second.ID || got.FamilyName == nil || *got.FamilyName != "alpha" || got.Status(now) != models.InvitationPending {
		t.Errorf("by token %+v", got)
	}
	if _, err := s.InvitationByToken(ctx, "nope"); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("unknown token: %v", err)
	}

	// Concurrent accepts of one token make one user.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	users := make([]*models.User, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := "New"
			users[i] = &models.User{FirstName: &first}
			errs[i] = s.AcceptInvitation(ctx, token, users[i])
		}()
	}
	wg.Wait()
	var joined *models.User
	for i, err := range errs {
		switch {
		case err == nil && joined == nil:
			joined = users[i]
		case !errors.Is(err, models.ErrInvitationUsed):
			t.Errorf("accept %d: %v", i, err)
		}
	}
	if joined == nil {
		t.Fatal("nobody joined")
	}
	u, err := s.User(ctx, fam, joined.ID)
	must(t, err)
	if u.Email != "new@example.com" || u.Role != models.RoleMember || *u.FirstName != "New" {
		t.Errorf("new user %+v", u)
	}
	if err := s.AcceptInvitation(ctx, token, &models.User{}); !errors.Is(err, models.ErrInvitationUsed) {
		t.Errorf("accepting again: %v", err)
	}
	if got, err := s.InvitationByToken(ctx, token); !errors.Is(err, models.ErrInvitationUsed) || got.AcceptedUserID == nil || *got.AcceptedUserID != u.ID {
		t.Errorf("used invitation %+v %v", got, err)
	}

	// Expired, revoked, and an address that joined another family.
	_, expiring, err := s.CreateInvitation(ctx, fam, admin, "late@example.com", models.RoleAdmin)
	must(t, err)
	revoked, revokedToken, err := s.CreateInvitation(ctx, fam, admin, "gone@example.com", "")
	must(t, err)
	must(t, s.RevokeInvitation(ctx, fam, revoked.ID))
	if err := s.RevokeInvitation(ctx, fam, revoked.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("revoking twice: %v", err)
	}
	taken, takenToken, err := s.CreateInvitation(ctx, fam, admin, "taken@example.com", "")
	must(t, err)
	if err := s.RevokeInvitation(ctx, b.Family.ID, taken.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("another family revoking: %v", err)
	}
	must(t, s.CreateUser(ctx, &models.User{FamilyID: b.Family.ID, Email: "Taken@example.com"}))
	if err := s.AcceptInvitation(ctx, takenToken, &models.User{}); !errors.Is(err, models.ErrEmailTaken) {
		t.Errorf("address in another family: %v", err)
	}
	if _, err := s.InvitationByToken(ctx, takenToken); err != nil {
		t.Errorf("a refused accept used the invitation up: %v", err)
	}
	if err := s.AcceptInvitation(ctx, revokedToken, &models.User{}); !errors.Is(err, models.ErrInvitationRevoked) {
		t.Errorf("revoked: %v", err)
	}
	now = now.Add(7*24*time.Hour + time.Second)
	if err := s.AcceptInvitation(ctx, expiring, &models.User{}); !errors.Is(err, models.ErrInvitationExpired) {
		t.Errorf("expired: %v", err)
	}
	if pending, err := s.Invitations(ctx, fam); err != nil || len(pending) != 0 {
		t.Errorf("pending after expiry: %+v %v", pending, err)
	}
}

func TestFamilies(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	a := modelstest.NewFamily(t, s, "Zeta")
	b := modelstest.NewFamily(t, s, "alpha")
	must(t, s.CreateUser(ctx, &models.User{FamilyID: a.Family.ID, Email: "second@example.com"}))
	fs, err := s.Families(ctx)
	must(t, err)
	if len(fs) != 2 || fs[0].ID != b.Family.ID || fs[0].MembersCount != 1 || fs[1].MembersCount != 2 {
		t.Errorf("families %+v", fs)
	}
}

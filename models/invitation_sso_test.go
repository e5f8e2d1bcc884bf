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

func TestAcceptInvitationSSO(t *testing.T) {
	x := newSSOFixture(t)
	s, ctx := x.s, context.Background()
	fam, admin := x.family.Family.ID, x.family.User.ID
	other := modelstest.NewFamily(t, s, "other")
	invite := func(t *testing.T, email string) *models.Invitation {
		t.Helper()
		inv, _, err := s.CreateInvitation(ctx, fam, admin, email, models.RoleMember)
		must(t, err)
		return inv
	}
	acceptedBy := func(t *testing.T, inv *models.Invitation, u *models.User) {
		t.Helper()
		got, err := s.Invitation(ctx, fam, inv.ID)
		if !errors.Is(err, models.ErrInvitationUsed) || got.AcceptedUserID == nil || *got.AcceptedUserID != u.ID {
			t.Errorf("invitation after the join: %+v %v", got, err)
		}
	}

	t.Run("someone new joins with the invited role", func(t *testing.T) {
		inv := invite(t, "Newcomer@IDP.example")
		in := x.signIn(x.mapped, "newcomer", "Admins") // the mappings would make an admin
		n := len(auditEvents(t, s))
		u := &models.User{FirstName: ptr("Ada")}
		token, err := s.AcceptInvitationSSO(ctx, in, fam, inv.ID, u, nil)
		must(t, err)
		got := checkSSOSession(t, s, token, in)
		if got.FamilyID != fam || got.Role != models.RoleMember || got.Email != "Newcomer@IDP.example" || got.PasswordHash != nil {
			t.Fatalf("joined user %+v", got)
		}
		events := newEvents(t, s, n)
		if eventTypes(events) != "jit_account_created,login" {
			t.Fatalf("records = %q", eventTypes(events))
		}
		jit, login := events[0], events[1]
		if jit.Metadata["family_id"] != fam.String() || jit.Metadata["role"] != models.RoleMember ||
			jit.Metadata["invitation_id"] != inv.ID.String() || login.Metadata["invitation_id"] != inv.ID.String() ||
			jit.Metadata["identity_id"] != login.Metadata["identity_id"] || models.Str(jit.Provider) != "mapped" {
			t.Errorf("records %+v / %+v", jit.Metadata, login.Metadata)
		}
		acceptedBy(t, inv, u)
		if _, err := s.AcceptInvitationSSO(ctx, x.signIn(x.mapped, "newcomer"), fam, inv.ID, &models.User{}, nil); !errors.Is(err, models.ErrInvitationUsed) {
			t.Errorf("accepting again: %v", err)
		}

		// The next sign-in through the provider applies its mappings.
		known, err := s.IdentityBySubject(ctx, x.mapped.ID, "newcomer")
		must(t, err)
		if _, err := s.LoginWithSSO(ctx, in, got, known); err != nil {
			t.Fatal(err)
		}
		if again, _ := s.UserByID(ctx, u.ID); again.Role != models.RoleAdmin {
			t.Errorf("role at the next sign-in = %s", again.Role)
		}
	})

	t.Run("a member signs in through the link", func(t *testing.T) {
		m := x.member(t, "known")
		must(t, s.LinkIdentity(ctx, x.signIn(x.plain, "known"), m))
		known, err := s.IdentityBySubject(ctx, x.plain.ID, "known")
		must(t, err)
		inv := invite(t, "known@idp.example")
		n := len(auditEvents(t, s))
		in := x.signIn(x.plain, "known")
		token, err := s.AcceptInvitationSSO(ctx, in, fam, inv.ID, m, known)
		must(t, err)
		if got := checkSSOSession(t, s, token, in); got.ID != m.ID {
			t.Errorf("signed in as %+v", got)
		}
		if events := newEvents(t, s, n); eventTypes(events) != "login" || events[0].Metadata["invitation_id"] != inv.ID.String() {
			t.Errorf("records = %q", eventTypes(events))
		}
		acceptedBy(t, inv, m)
	})

	t.Run("refusals change nothing", func(t *testing.T) {
		elsewhere := &models.User{FamilyID: other.Family.ID, Email: "elsewhere@idp.example"}
		must(t, s.CreateUser(ctx, elsewhere))
		must(t, s.LinkIdentity(ctx, x.signIn(x.plain, "elsewhere"), elsewhere))
		elsewhereIdent, err := s.IdentityBySubject(ctx, x.plain.ID, "elsewhere")
		must(t, err)
		revoked := invite(t, "revoked@idp.example")
		must(t, s.RevokeInvitation(ctx, fam, revoked.ID))
		unverified := x.signIn(x.plain, "unverified")
		unverified.Identity.EmailVerified = false
		for _, c := range []struct {
			name  string
			email string // invited just before, when set
			inv   *models.Invitation
			in    models.SSOSignIn
			u     *models.User
			known *models.SSOIdentity
			want  error
		}{
			{"another address", "invited@idp.example", nil, x.signIn(x.plain, "intruder"), &models.User{}, nil, models.ErrInvitationEmail},
			{"an unverified address", "unverified@idp.example", nil, unverified, &models.User{}, nil, models.ErrInvitationEmail},
			{"an address of another family", "elsewhere@idp.example", nil, x.signIn(x.mapped, "elsewhere"), &models.User{}, nil, models.ErrEmailTaken},
			{"an identity of another family", "elsewhere@idp.example", nil, x.signIn(x.plain, "elsewhere"), elsewhere, elsewhereIdent, models.ErrEmailTaken},
			{"a revoked invitation", "", revoked, x.signIn(x.plain, "revoked"), &models.User{}, nil, models.ErrInvitationRevoked},
			{"another family's invitation id", "", &models.Invitation{ID: revoked.ID, FamilyID: other.Family.ID}, x.signIn(x.plain, "revoked"), &models.User{}, nil, models.ErrNotFound},
		} {
			if c.email != "" {
				c.inv = invite(t, c.email)
			}
			n := len(auditEvents(t, s))
			before, beforeErr := s.Invitation(ctx, c.inv.FamilyID, c.inv.ID)
			if _, err := s.AcceptInvitationSSO(ctx, c.in, c.inv.FamilyID, c.inv.ID, c.u, c.known); !errors.Is(err, c.want) {
				t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
			}
			after, afterErr := s.Invitation(ctx, c.inv.FamilyID, c.inv.ID)
			used := func(inv *models.Invitation) bool { return inv != nil && inv.AcceptedAt != nil }
			if events := newEvents(t, s, n); len(events) != 0 || !errors.Is(afterErr, beforeErr) || used(before) != used(after) {
				t.Errorf("%s changed something: %q, %v → %v", c.name, eventTypes(events), beforeErr, afterErr)
			}
			if _, err := s.IdentityBySubject(ctx, c.in.Provider.ID, c.in.Identity.Subject); c.known == nil && !errors.Is(err, models.ErrNotFound) {
				t.Errorf("%s linked an identity: %v", c.name, err)
			}
		}
	})

	t.Run("two concurrent accepts join once", func(t *testing.T) {
		inv := invite(t, "racer@idp.example")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = s.AcceptInvitationSSO(ctx, x.signIn(x.plain, "racer"), fam, inv.ID, &models.User{}, nil)
			})
		}
		wg.Wait()
		joined := 0
		for i, err := range errs {
			switch {
			case err == nil:
				joined++
			case !errors.Is(err, models.ErrInvitationUsed):
				t.Errorf("accept %d: %v", i, err)
			}
		}
		if joined != 1 {
			t.Errorf("%d joins", joined)
		}
	})

	t.Run("an address that joined meanwhile", func(t *testing.T) {
		inv := invite(t, "meanwhile@idp.example")
		m := &models.User{FamilyID: fam, Email: "meanwhile@idp.example"}
		must(t, s.CreateUser(ctx, m))
		if err := s.CloseInvitationForMember(ctx, fam, inv.ID, x.signIn(x.plain, "meanwhile").Identity, other.User); !errors.Is(err, models.ErrEmailTaken) {
			t.Errorf("a user of another family: %v", err)
		}
		if err := s.CloseInvitationForMember(ctx, fam, inv.ID, x.signIn(x.plain, "intruder").Identity, m); !errors.Is(err, models.ErrInvitationEmail) {
			t.Errorf("another address: %v", err)
		}
		must(t, s.CloseInvitationForMember(ctx, fam, inv.ID, x.signIn(x.plain, "meanwhile").Identity, m))
		acceptedBy(t, inv, m)
		if idents, _ := s.UserIdentities(ctx, m.FamilyID, m.ID); len(idents) != 0 {
			t.Errorf("an identity was linked without proof: %+v", idents)
		}
	})

	t.Run("an expired invitation", func(t *testing.T) {
		inv := invite(t, "late@idp.example")
		later := time.Now().Add(models.InvitationTTL + time.Minute)
		s.Now = func() time.Time { return later }
		t.Cleanup(func() { s.Now = time.Now })
		if _, err := s.AcceptInvitationSSO(ctx, x.signIn(x.plain, "late"), fam, inv.ID, &models.User{}, nil); !errors.Is(err, models.ErrInvitationExpired) {
			t.Errorf("expired: %v", err)
		}
	})
}

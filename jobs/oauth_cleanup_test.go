package jobs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestOAuthCleanup: the cleanup deletes the codes, challenges and tokens
// whose time is over, of every family, keeps the live ones, and a second
// run changes nothing.
func TestOAuthCleanup(t *testing.T) {
	h, store, _ := newHandlers(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	h.Now = func() time.Time { return now }
	cl := &models.OAuthClient{ID: "cofc_cleanup_" + models.NewID().String()[:8], Name: "Cleanup", RedirectURIs: []string{"http://127.0.0.1/cb"}, Scope: "read"}
	if err := store.CreateOAuthClient(ctx, cl); err != nil {
		t.Fatal(err)
	}
	type row struct {
		kind string // code, pkce, access, refresh
		sig  string
		live bool
	}
	var rows []row
	for _, name := range []string{"a", "b"} {
		f := modelstest.NewFamily(t, store, "cleanup-"+name)
		for _, live := range []bool{true, false} {
			exp := now.Add(-time.Minute)
			if live {
				exp = now.Add(time.Minute)
			}
			req := models.OAuthRequest{ID: models.NewID().String(), RequestedAt: now}
			sig := func(kind string) string { return kind + "-" + models.NewID().String() }
			c := &models.OAuthCode{Signature: sig("code"), RequestID: req.ID, ClientID: cl.ID, FamilyID: f.Family.ID, UserID: f.User.ID, Request: req, ExpiresAt: exp}
			p := &models.OAuthPKCE{Signature: c.Signature, ClientID: cl.ID, FamilyID: f.Family.ID, UserID: f.User.ID, Request: req, ExpiresAt: exp}
			if err := store.CreateOAuthCode(ctx, c); err != nil {
				t.Fatal(err)
			}
			if err := store.CreateOAuthPKCE(ctx, p); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, row{"code", c.Signature, live}, row{"pkce", p.Signature, live})
			for _, kind := range []string{models.TokenAccess, models.TokenRefresh} {
				tok := &models.OAuthToken{Signature: sig(kind), Kind: kind, RequestID: req.ID, ClientID: cl.ID, FamilyID: f.Family.ID,
					UserID: f.User.ID, Scope: "read", Request: req, ExpiresAt: exp}
				if err := store.CreateOAuthToken(ctx, tok); err != nil {
					t.Fatal(err)
				}
				rows = append(rows, row{kind, tok.Signature, live})
			}
		}
	}
	for range 2 {
		if err := h.OAuthCleanup(ctx, asynq.NewTask(jobs.TypeOAuthCleanup, nil)); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			var err error
			switch r.kind {
			case "code":
				_, err = store.OAuthCodeBySignature(ctx, r.sig)
			case "pkce":
				_, err = store.OAuthPKCEBySignature(ctx, r.sig)
			default:
				_, err = store.OAuthTokenBySignature(ctx, r.kind, r.sig)
			}
			switch {
			case r.live && err != nil:
				t.Errorf("live %s deleted: %v", r.kind, err)
			case !r.live && !errors.Is(err, models.ErrNotFound):
				t.Errorf("expired %s kept: %v", r.kind, err)
			}
		}
	}
}

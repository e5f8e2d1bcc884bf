package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/secret"
)

// TestOAuthCleanupSurvivesWorkerKill deletes expired OAuth codes,
// challenges and tokens of two families, and kills the worker after the
// codes went. A fresh worker finishes: every expired row is gone, every
// live one kept.
func TestOAuthCleanupSurvivesWorkerKill(t *testing.T) {
	r := newKillRig(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	cl := &models.OAuthClient{ID: "cofc_kill_" + models.NewID().String()[:8], Name: "Kill", RedirectURIs: []string{"http://127.0.0.1/cb"}, Scope: "read"}
	if err := r.store.CreateOAuthClient(ctx, cl); err != nil {
		t.Fatal(err)
	}
	type row struct {
		kind, sig string
		live      bool
	}
	var rows []row
	for _, name := range []string{"a", "b"} {
		f := modelstest.NewFamily(t, r.store, "oauth-kill-"+name)
		for i := range 20 {
			live := i%2 == 0
			exp := now.Add(-time.Hour)
			if live {
				exp = now.Add(time.Hour)
			}
			req := models.OAuthRequest{ID: models.NewID().String(), RequestedAt: now}
			sig := func(kind string) string { return kind + "-" + models.NewID().String() }
			c := &models.OAuthCode{Signature: sig("code"), RequestID: req.ID, ClientID: cl.ID, FamilyID: f.Family.ID, UserID: f.User.ID, Request: req, ExpiresAt: exp}
			p := &models.OAuthPKCE{Signature: c.Signature, ClientID: cl.ID, FamilyID: f.Family.ID, UserID: f.User.ID, Request: req, ExpiresAt: exp}
			if err := r.store.CreateOAuthCode(ctx, c); err != nil {
				t.Fatal(err)
			}
			if err := r.store.CreateOAuthPKCE(ctx, p); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, row{"code", c.Signature, live}, row{"pkce", p.Signature, live})
			for _, kind := range []string{models.TokenAccess, models.TokenRefresh} {
				tok := &models.OAuthToken{Signature: sig(kind), Kind: kind, RequestID: req.ID, ClientID: cl.ID, FamilyID: f.Family.ID,
					UserID: f.User.ID, Scope: "read", Request: req, ExpiresAt: exp}
				if err := r.store.CreateOAuthToken(ctx, tok); err != nil {
					t.Fatal(err)
				}
				rows = append(rows, row{kind, tok.Signature, live})
			}
		}
	}

	k := newKiller(jobs.HookOAuthCleanStep, 1)
	var id string
	r.kill(t, r.options(r.handlers(nil, k.hook), nil), k, func() { id = r.enqueue(t, jobs.NewOAuthCleanupTask()) })
	// Killed after the codes: an expired code is gone, an expired token
	// still there.
	expiredCode, expiredToken := rows[4], rows[6]
	if _, err := r.store.OAuthCodeBySignature(ctx, expiredCode.sig); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("killed after the codes, an expired code is there: %v", err)
	}
	if _, err := r.store.OAuthTokenBySignature(ctx, expiredToken.kind, expiredToken.sig); err != nil {
		t.Fatalf("killed after the codes, an expired token is gone: %v", err)
	}
	runWorker(t, r.options(r.handlers(nil, nil), nil))
	r.waitGone(t, jobs.QueueLow, id)
	for _, row := range rows {
		var err error
		switch row.kind {
		case "code":
			_, err = r.store.OAuthCodeBySignature(ctx, row.sig)
		case "pkce":
			_, err = r.store.OAuthPKCEBySignature(ctx, row.sig)
		default:
			_, err = r.store.OAuthTokenBySignature(ctx, row.kind, row.sig)
		}
		switch {
		case row.live && err != nil:
			t.Errorf("live %s deleted: %v", row.kind, err)
		case !row.live && !errors.Is(err, models.ErrNotFound):
			t.Errorf("expired %s kept: %v", row.kind, err)
		}
	}
}

// TestSecretsBackfillSurvivesWorkerKill seals 30 plaintext provider
// secrets and re-seals 10 of a rotated-out key, and kills the worker after
// the seventh write committed. A fresh worker finishes: every secret is
// sealed with the current key exactly once (it opens to the original, not
// to a sealed value).
func TestSecretsBackfillSurvivesWorkerKill(t *testing.T) {
	r := newKillRig(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, r.store, "secrets-kill")
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	var err error
	if r.store.Secrets, err = secret.NewSealer(oldKey); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range 40 {
		p := &models.SSOProvider{Name: fmt.Sprintf("p%d", i), Strategy: models.StrategyOAuth, Label: "P", DefaultRole: models.RoleMember}
		models.NewProviderID(p)
		secret := fmt.Sprintf("secret-%d", i)
		if i < 30 {
			p.ClientSecretEnc = &secret // as older versions stored it
		} else if err := r.store.SetProviderSecret(p, models.ColClientSecret, secret); err != nil {
			t.Fatal(err)
		}
		if err := r.store.CreateSSOProvider(ctx, p, models.ProviderChange{ActorID: f.User.ID}); err != nil {
			t.Fatal(err)
		}
		want[p.Name] = secret
	}
	// Rotate: the new key seals, the old one only opens.
	if r.store.Secrets, err = secret.NewSealer(newKey, oldKey); err != nil {
		t.Fatal(err)
	}

	// The backfill is row by row inside models: the kill is at its writes.
	k := newKiller("secrets:sealed", 7)
	writes := &killQuery{k: k, match: func(q string) bool {
		return strings.HasPrefix(q, `UPDATE "sso_providers" SET "client_secret_enc"`)
	}}
	// Every worker queues the backfill as it starts.
	r.kill(t, r.options(r.handlers(hookedStore(r.store, writes), nil), nil), k, func() {})
	runWorker(t, r.options(r.handlers(nil, nil), nil))
	r.waitGone(t, jobs.QueueLow, jobs.TypeSecretsBackfill)

	ps, err := r.store.SSOProviders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(want) {
		t.Fatalf("%d providers, want %d", len(ps), len(want))
	}
	for _, p := range ps {
		stored := models.Str(p.ClientSecretEnc)
		secret, err := r.store.ProviderSecret(&p, models.ColClientSecret)
		if !r.store.Secrets.Current(stored) || err != nil || secret != want[p.Name] {
			t.Errorf("%s: current %t, opens to %q (%v), want %q", p.Name, r.store.Secrets.Current(stored), secret, err, want[p.Name])
		}
	}
}

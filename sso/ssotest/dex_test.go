package ssotest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// rp is a relying party made of the real client libraries, as sso uses
// them: go-oidc for discovery and ID tokens, x/oauth2 for the code flow.
type rp struct {
	provider *oidc.Provider
	config   oauth2.Config
	verifier *oidc.IDTokenVerifier
}

func newRP(t *testing.T, issuer, clientID, secret, redirect string, scopes ...string) *rp {
	t.Helper()
	p, err := oidc.NewProvider(context.Background(), issuer)
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	return &rp{
		provider: p,
		config:   oauth2.Config{ClientID: clientID, ClientSecret: secret, RedirectURL: redirect, Endpoint: p.Endpoint(), Scopes: scopes},
		verifier: p.Verifier(&oidc.Config{ClientID: clientID}),
	}
}

// flow is one sign-in's secrets, kept by the relying party.
type flow struct{ state, nonce, verifier string }

func newFlow() flow {
	return flow{state: random(16), nonce: random(16), verifier: oauth2.GenerateVerifier()}
}

func (r *rp) authURL(f flow) string {
	return r.config.AuthCodeURL(f.state, oauth2.S256ChallengeOption(f.verifier), oidc.Nonce(f.nonce))
}

var errNonce = errors.New("nonce differs from the one sent")

// finish checks the callback's state, exchanges the code and verifies the
// ID token and its nonce, as the callback handler does.
func (r *rp) finish(t *testing.T, f flow, callback *url.URL) (*oidc.IDToken, *oauth2.Token, error) {
	t.Helper()
	q := callback.Query()
	if q.Get("state") != f.state {
		t.Fatalf("callback state = %q, want %q (callback %s)", q.Get("state"), f.state, callback)
	}
	if q.Get("code") == "" {
		t.Fatalf("callback has no code: %s", callback)
	}
	ctx := context.Background()
	tok, err := r.config.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.verifier))
	if err != nil {
		return nil, nil, err
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := r.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, tok, err
	}
	if idt.Nonce != f.nonce {
		return nil, tok, errNonce
	}
	return idt, tok, nil
}

// claimsOf finishes the flow, which must succeed, and decodes the ID
// token's claims into v.
func (r *rp) claimsOf(t *testing.T, f flow, callback *url.URL, v any) *oidc.IDToken {
	t.Helper()
	idt, _, err := r.finish(t, f, callback)
	if err != nil {
		t.Fatal(err)
	}
	if err := idt.Claims(v); err != nil {
		t.Fatal(err)
	}
	return idt
}

// userinfo reads the userinfo endpoint with tok, which must succeed, and
// decodes its claims into v.
func (r *rp) userinfo(t *testing.T, tok *oauth2.Token, v any) *oidc.UserInfo {
	t.Helper()
	ui, err := r.provider.UserInfo(context.Background(), oauth2.StaticTokenSource(tok))
	if err != nil {
		t.Fatal(err)
	}
	if err := ui.Claims(v); err != nil {
		t.Fatal(err)
	}
	return ui
}

type claims struct {
	Email         string   `json:"email"`
	EmailVerified bool     `json:"email_verified"`
	Name          string   `json:"name"`
	Groups        []string `json:"groups"`
}

func TestDex(t *testing.T) {
	const redirect = "http://127.0.0.1:1/auth/dex/callback" // never requested
	dex := StartDex(t, DexOptions{RedirectURIs: []string{redirect}})
	ctx := context.Background()
	withGroups := newRP(t, dex.Issuer, dex.ClientID, dex.ClientSecret, redirect, oidc.ScopeOpenID, "email", "profile", "groups")

	t.Run("code, PKCE and nonce through the login form, groups with the groups scope", func(t *testing.T) {
		f := newFlow()
		cb, err := dex.Login(ctx, withGroups.authURL(f), "alice@example.com", "alice-password")
		if err != nil {
			t.Fatal(err)
		}
		var c claims
		idt := withGroups.claimsOf(t, f, cb, &c)
		if idt.Subject != dex.Subject("alice-id") || c.Email != "alice@example.com" || !c.EmailVerified || c.Name != "Alice Admin" {
			t.Errorf("sub %q, claims %+v; want sub %q, alice's verified email and name", idt.Subject, c, dex.Subject("alice-id"))
		}
		if !slices.Equal(c.Groups, []string{"admins", "staff"}) {
			t.Errorf("groups = %q, want [admins staff]", c.Groups)
		}
	})

	t.Run("no groups without the groups scope", func(t *testing.T) {
		r := newRP(t, dex.Issuer, dex.ClientID, dex.ClientSecret, redirect, oidc.ScopeOpenID, "email", "profile")
		f := newFlow()
		cb, err := dex.Login(ctx, r.authURL(f), "alice@example.com", "alice-password")
		if err != nil {
			t.Fatal(err)
		}
		var c claims
		r.claimsOf(t, f, cb, &c)
		if c.Groups != nil {
			t.Errorf("groups = %q, want none", c.Groups)
		}
	})

	t.Run("the unverified user's email_verified is false", func(t *testing.T) {
		f := newFlow()
		cb, err := dex.Login(ctx, withGroups.authURL(f), "eve@example.com", "eve-password")
		if err != nil {
			t.Fatal(err)
		}
		var c map[string]any
		withGroups.claimsOf(t, f, cb, &c)
		if c["email_verified"] != false || c["email"] != "eve@example.com" {
			t.Errorf("claims = %v, want eve's email with email_verified false", c)
		}
	})

	t.Run("userinfo, as the generic OAuth 2.0 strategy reads it", func(t *testing.T) {
		r := newRP(t, dex.Issuer, dex.ClientID, dex.ClientSecret, redirect, oidc.ScopeOpenID, "email", "profile", "groups")
		r.config.Endpoint = oauth2.Endpoint{AuthURL: dex.AuthURL, TokenURL: dex.TokenURL, AuthStyle: oauth2.AuthStyleInHeader}
		f := newFlow()
		cb, err := dex.Login(ctx, r.authURL(f), "bob@example.com", "bob-password")
		if err != nil {
			t.Fatal(err)
		}
		_, tok, err := r.finish(t, f, cb)
		if err != nil {
			t.Fatal(err)
		}
		var c claims
		ui := r.userinfo(t, tok, &c)
		if ui.Subject != dex.Subject("bob-id") || c.Email != "bob@example.com" || !slices.Equal(c.Groups, []string{"staff"}) {
			t.Errorf("userinfo sub %q, claims %+v; want bob in staff", ui.Subject, c)
		}
		if dex.UserinfoURL != r.provider.UserInfoEndpoint() {
			t.Errorf("UserinfoURL = %q, discovery says %q", dex.UserinfoURL, r.provider.UserInfoEndpoint())
		}
	})

	t.Run("a wrong PKCE verifier is refused", func(t *testing.T) {
		f := newFlow()
		cb, err := dex.Login(ctx, withGroups.authURL(f), "bob@example.com", "bob-password")
		if err != nil {
			t.Fatal(err)
		}
		f.verifier = oauth2.GenerateVerifier()
		var re *oauth2.RetrieveError
		if _, _, err := withGroups.finish(t, f, cb); !errors.As(err, &re) || re.Response.StatusCode != http.StatusBadRequest {
			t.Errorf("exchange with another verifier: %v, want a 400 from the token endpoint", err)
		}
	})

	t.Run("a wrong password is refused", func(t *testing.T) {
		_, err := dex.Login(ctx, withGroups.authURL(newFlow()), "alice@example.com", "wrong")
		if !errors.Is(err, ErrLoginRefused) {
			t.Errorf("err = %v, want ErrLoginRefused", err)
		}
	})
}

package sso

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"coffer/models"
)

// OAuth is the relying party of an OpenID Connect or a plain OAuth 2.0
// provider: authorization code with PKCE (and a nonce for OIDC).
type OAuth struct {
	p          *models.SSOProvider
	o          Options
	config     oauth2.Config
	oidc       *oidc.Provider // nil for plain OAuth 2.0
	verifier   *oidc.IDTokenVerifier
	endSession string
	names      map[string]string // custom_mappings: claim names
	groups     bool              // the groups claim is read
}

// NewOAuth builds the relying party of p. For OIDC it reads the discovery
// document, which must name p's issuer exactly. names are the rules'
// custom_mappings.
func NewOAuth(ctx context.Context, p *models.SSOProvider, clientSecret string, names map[string]string, o Options) (*OAuth, error) {
	a := &OAuth{p: p, o: o, names: names}
	scopes := strings.Fields(models.Str(p.Scopes))
	a.groups = slices.Contains(scopes, "groups") || p.Strategy == models.StrategyOAuth
	a.config = oauth2.Config{
		ClientID:     models.Str(p.ClientID),
		ClientSecret: clientSecret,
		RedirectURL:  o.BaseURL + "/auth/" + p.Name + "/callback",
		Scopes:       scopes,
	}
	style := oauth2.AuthStyleInParams
	if models.Str(p.TokenAuthMethod) == models.AuthBasic {
		style = oauth2.AuthStyleInHeader
	}
	if p.Strategy == models.StrategyOAuth {
		a.config.Endpoint = oauth2.Endpoint{AuthURL: models.Str(p.AuthorizationURL), TokenURL: models.Str(p.TokenURL), AuthStyle: style}
		return a, nil
	}
	var err error
	a.oidc, err = oidc.NewProvider(a.client(ctx), models.Str(p.Issuer))
	if err != nil {
		return nil, fmt.Errorf("sso: %s: discovery: %w", p.Name, err)
	}
	a.config.Endpoint = a.oidc.Endpoint()
	a.config.Endpoint.AuthStyle = style
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := a.oidc.Claims(&extra); err == nil {
		a.endSession = extra.EndSession
	}
	// The key set outlives this request, so it fetches with a context of
	// its own; only advertised asymmetric algorithms are accepted (go-oidc
	// drops none and HMAC from the advertised list).
	a.verifier = a.oidc.VerifierContext(a.client(context.Background()), &oidc.Config{ClientID: a.config.ClientID, Now: o.now})
	return a, nil
}

func (a *OAuth) client(ctx context.Context) context.Context {
	if a.o.HTTPClient == nil {
		return ctx
	}
	return context.WithValue(oidc.ClientContext(ctx, a.o.HTTPClient), oauth2.HTTPClient, a.o.HTTPClient)
}

// AuthURL is where the browser goes to sign in.
func (a *OAuth) AuthURL(state, nonce, pkceVerifier string) string {
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(pkceVerifier)}
	if a.oidc != nil {
		opts = append(opts, oidc.Nonce(nonce))
	}
	if prompt := models.Str(a.p.Prompt); prompt != "" {
		opts = append(opts, oauth2.SetAuthURLParam("prompt", prompt))
	}
	return a.config.AuthCodeURL(state, opts...)
}

// EndSessionURL is the OIDC end-session redirect for RP-initiated logout,
// "" when the provider advertises none.
func (a *OAuth) EndSessionURL(idToken, state, postLogout string) string {
	if a.endSession == "" || idToken == "" {
		return ""
	}
	q := []string{"id_token_hint=" + url.QueryEscape(idToken), "client_id=" + url.QueryEscape(a.config.ClientID),
		"state=" + url.QueryEscape(state), "post_logout_redirect_uri=" + url.QueryEscape(postLogout)}
	sep := "?"
	if strings.Contains(a.endSession, "?") {
		sep = "&"
	}
	return a.endSession + sep + strings.Join(q, "&")
}

// Callback exchanges the code and returns the verified identity. nonce is
// the one sealed in this browser's state cookie.
func (a *OAuth) Callback(ctx context.Context, code, pkceVerifier, nonce string) (*Identity, error) {
	ctx = a.client(ctx)
	tok, err := a.config.Exchange(ctx, code, oauth2.VerifierOption(pkceVerifier))
	if err != nil {
		f := fail(ReasonTokenExchangeFailed, "token exchange failed")
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil {
			f.Status = re.Response.StatusCode
			f.Detail = fmt.Sprintf("token endpoint answered HTTP %d", f.Status)
		}
		return nil, f
	}
	if a.oidc == nil {
		return a.fromUserinfo(ctx, tok)
	}
	return a.fromIDToken(ctx, tok, nonce)
}

func (a *OAuth) fromIDToken(ctx context.Context, tok *oauth2.Token, nonce string) (*Identity, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, fail(ReasonIDTokenInvalid, "no id_token in the token response")
	}
	idt, err := a.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, fail(ReasonIDTokenInvalid, "%s", shortErr(err))
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 || nonce == "" {
		return nil, fail(ReasonNonceMismatch, "nonce differs from the one sent")
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return nil, fail(ReasonIDTokenInvalid, "at_hash mismatch")
		}
	}
	claims := map[string]any{}
	if err := decodeClaims(idt.Claims, &claims); err != nil {
		return nil, fail(ReasonIDTokenInvalid, "claims: %s", shortErr(err))
	}
	_, hasEmail := claims[a.name("email")]
	_, hasGroups := claims[a.name("groups")]
	if !hasEmail || (a.groups && !hasGroups) {
		ui, err := a.oidc.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return nil, fail(ReasonUserinfoInvalid, "%s", shortErr(err))
		}
		if ui.Subject != idt.Subject {
			return nil, fail(ReasonUserinfoInvalid, "userinfo sub differs from the ID token's")
		}
		extra := map[string]any{}
		if err := decodeClaims(ui.Claims, &extra); err != nil {
			return nil, fail(ReasonUserinfoInvalid, "userinfo: %s", shortErr(err))
		}
		for k, v := range extra {
			if _, ok := claims[k]; !ok {
				claims[k] = v
			}
		}
	}
	id := a.identity(claims)
	id.Subject = idt.Subject
	id.Issuer = idt.Issuer
	id.IDToken = raw
	return id, nil
}

func (a *OAuth) fromUserinfo(ctx context.Context, tok *oauth2.Token) (*Identity, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, models.Str(a.p.UserinfoURL), nil)
	if err != nil {
		return nil, fail(ReasonUserinfoInvalid, "bad userinfo URL")
	}
	req.Header.Set("Accept", "application/json")
	tok.SetAuthHeader(req)
	client := a.o.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fail(ReasonUserinfoInvalid, "%s", shortErr(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, &Failure{Reason: ReasonUserinfoInvalid, Detail: fmt.Sprintf("userinfo answered HTTP %d", resp.StatusCode), Status: resp.StatusCode}
	}
	claims := map[string]any{}
	if err := decodeClaims(func(v any) error { return json.Unmarshal(body, v) }, &claims); err != nil {
		return nil, fail(ReasonUserinfoInvalid, "userinfo is not a JSON object")
	}
	id := a.identity(claims)
	id.Subject = claimString(claims[a.name("subject")])
	if _, ok := a.names["subject"]; !ok && id.Subject == "" {
		id.Subject = claimString(claims["id"])
	}
	if id.Subject == "" {
		return nil, fail(ReasonUserinfoInvalid, "userinfo has no subject")
	}
	return id, nil
}

// identity reads the claims the service uses, through custom_mappings.
func (a *OAuth) identity(claims map[string]any) *Identity {
	id := &Identity{
		Email:         strings.ToLower(strings.TrimSpace(claimString(claims[a.name("email")]))),
		EmailVerified: claimTrue(claims[a.name("email_verified")]),
		FirstName:     claimString(claims[a.name("first_name")]),
		LastName:      claimString(claims[a.name("last_name")]),
		Claims:        claims,
	}
	if id.FirstName == "" && id.LastName == "" {
		id.FirstName, id.LastName, _ = strings.Cut(claimString(claims[a.name("name")]), " ")
	}
	if a.groups {
		var present bool
		id.Groups, present = models.GroupsFromClaim(claims[a.name("groups")])
		id.GroupsMissing = !present
	} else {
		id.GroupsMissing = true
	}
	return id
}

// defaultClaim are the standard claim names; custom_mappings override.
var defaultClaim = map[string]string{
	"subject": "sub", "email": "email", "email_verified": "email_verified", "first_name": "given_name",
	"last_name": "family_name", "name": "name", "groups": "groups",
}

func (a *OAuth) name(key string) string {
	if n, ok := a.names[key]; ok && n != "" {
		return n
	}
	return defaultClaim[key]
}

// decodeClaims decodes with numbers kept as json.Number, so that a numeric
// subject reads as its decimal digits.
func decodeClaims(claims func(any) error, dst *map[string]any) error {
	var raw json.RawMessage
	if err := claims(&raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil || *dst == nil {
		return errors.New("not a JSON object")
	}
	return nil
}

func claimString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}

func claimTrue(v any) bool { return v == true || v == "true" }

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

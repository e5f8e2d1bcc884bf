package ssotest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	q := r.Form
	a := Authorization{
		Query: q, ClientID: q.Get("client_id"), RedirectURI: q.Get("redirect_uri"), State: q.Get("state"),
		Nonce: q.Get("nonce"), Scope: q.Get("scope"), CodeChallenge: q.Get("code_challenge"),
		CodeChallengeMethod: q.Get("code_challenge_method"),
	}
	p.mu.Lock()
	p.authorizations = append(p.authorizations, a)
	b, user := p.behaviour, p.user
	p.mu.Unlock()

	// An unknown client or a bad redirect URI is shown, never redirected to
	// (RFC 6749 §4.1.2.1).
	back, err := url.Parse(a.RedirectURI)
	if a.ClientID != p.ClientID || err != nil || (back.Scheme != "http" && back.Scheme != "https") || back.Host == "" {
		http.Error(w, "unknown client or bad redirect_uri", http.StatusBadRequest)
		return
	}
	answer := url.Values{}
	switch {
	case b.AuthorizeError != "":
		answer.Set("error", b.AuthorizeError)
	case q.Get("response_type") != "code":
		answer.Set("error", "unsupported_response_type")
	case a.CodeChallenge == "" || a.CodeChallengeMethod != "S256":
		answer.Set("error", "invalid_request")
		answer.Set("error_description", "PKCE with S256 is required")
	default:
		code := random(24)
		p.mu.Lock()
		p.codes[code] = &grant{auth: a, user: user}
		p.mu.Unlock()
		answer.Set("code", code)
	}
	if a.State != "" {
		answer.Set("state", a.State)
	}
	query := back.Query()
	for k, v := range answer {
		query[k] = v
	}
	back.RawQuery = query.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	tr := TokenRequest{GrantType: r.PostForm.Get("grant_type")}
	id, secret, basic := r.BasicAuth()
	if basic {
		// RFC 6749 §2.3.1: both are form-encoded before the base64.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	_, post := r.PostForm["client_secret"]
	switch {
	case basic && post:
		tr.AuthMethod = "both"
	case basic:
		tr.AuthMethod = "client_secret_basic"
	case post:
		tr.AuthMethod = "client_secret_post"
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	default:
		tr.AuthMethod = "none"
	}
	p.mu.Lock()
	b := p.behaviour
	p.mu.Unlock()
	status, body := p.exchange(r.PostForm, tr, id, secret, b)
	tr.Status = status
	if e, ok := body["error"].(string); ok {
		tr.Error = e
	}
	p.mu.Lock()
	p.tokenRequests = append(p.tokenRequests, tr)
	p.mu.Unlock()
	if status == http.StatusUnauthorized && basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
	}
	writeJSON(w, status, body)
}

// exchange checks a token request and answers its status and body.
func (p *Provider) exchange(form url.Values, tr TokenRequest, id, secret string, b Behaviour) (int, map[string]any) {
	refuse := func(status int, code string) (int, map[string]any) {
		return status, map[string]any{"error": code}
	}
	switch {
	case tr.AuthMethod == "both":
		return refuse(http.StatusBadRequest, "invalid_request") // RFC 6749 §2.3: one method only
	case tr.AuthMethod == "none",
		subtle.ConstantTimeCompare([]byte(id), []byte(p.ClientID)) != 1,
		subtle.ConstantTimeCompare([]byte(secret), []byte(p.ClientSecret)) != 1:
		return refuse(http.StatusUnauthorized, "invalid_client")
	case b.TokenStatus != 0:
		if b.TokenStatus >= 500 {
			return refuse(b.TokenStatus, "server_error")
		}
		return refuse(b.TokenStatus, "invalid_grant")
	case tr.GrantType != "authorization_code":
		return refuse(http.StatusBadRequest, "unsupported_grant_type")
	}
	code := form.Get("code")
	p.mu.Lock()
	g := p.codes[code]
	delete(p.codes, code) // a code is good for one try
	p.mu.Unlock()
	if g == nil || form.Get("redirect_uri") != g.auth.RedirectURI || (form.Has("client_id") && form.Get("client_id") != p.ClientID) {
		return refuse(http.StatusBadRequest, "invalid_grant")
	}
	sum := sha256.Sum256([]byte(form.Get("code_verifier")))
	if form.Get("code_verifier") == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != g.auth.CodeChallenge {
		return refuse(http.StatusBadRequest, "invalid_grant")
	}

	access := random(24)
	p.mu.Lock()
	p.tokens[access] = g.user
	p.mu.Unlock()
	body := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "scope": g.auth.Scope}
	if slices.Contains(strings.Fields(g.auth.Scope), "openid") && !b.NoIDToken {
		raw, err := p.idToken(g, b, access)
		if err != nil {
			return refuse(http.StatusInternalServerError, "server_error")
		}
		body["id_token"] = raw
	}
	return http.StatusOK, body
}

func tokenError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]any{"error": code})
}

// idToken makes the ID token of g, as b says.
func (p *Provider) idToken(g *grant, b Behaviour, accessToken string) (string, error) {
	claims := userClaims(g.user, b.GroupsIn == GroupsInIDToken || b.GroupsIn == GroupsInBoth)
	for _, k := range b.IDTokenOmit {
		delete(claims, k)
	}
	iat := b.IssuedAt
	if iat.IsZero() {
		iat = time.Now()
	}
	exp := b.Expires
	if exp.IsZero() {
		exp = iat.Add(time.Hour)
	}
	claims["iss"] = p.Issuer
	if b.Issuer != "" {
		claims["iss"] = b.Issuer
	}
	switch len(b.Audience) {
	case 0:
		claims["aud"] = p.ClientID
	case 1:
		claims["aud"] = b.Audience[0]
	default:
		claims["aud"] = b.Audience
	}
	claims["iat"], claims["exp"], claims["auth_time"] = iat.Unix(), exp.Unix(), iat.Unix()
	switch {
	case b.NoNonce:
	case b.Nonce != "":
		claims["nonce"] = b.Nonce
	case g.auth.Nonce != "":
		claims["nonce"] = g.auth.Nonce
	}
	// at_hash: the left half of the access token's SHA-256 (RS256 and HS256).
	sum := sha256.Sum256([]byte(accessToken))
	claims["at_hash"] = base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2])
	return p.SignIDToken(claims, b.Signing)
}

// SignIDToken signs claims as an ID token the way s says, for tests that
// need a token without a flow (an id_token_hint, a crafted token).
func (p *Provider) SignIDToken(claims map[string]any, s Signing) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	var key jose.SigningKey
	switch s {
	case SignRS256:
		key = jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: p.key, KeyID: p.kid}}
	case SignUnadvertised:
		other, err := p.otherKey()
		if err != nil {
			return "", err
		}
		key = jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: other, KeyID: p.kid}}
	case SignHS256:
		key = jose.SigningKey{Algorithm: jose.HS256, Key: []byte(p.ClientSecret)}
	case SignNone:
		header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
		return header + "." + base64.RawURLEncoding.EncodeToString(payload) + ".", nil
	default:
		return "", fmt.Errorf("ssotest: unknown signing %d", s)
	}
	signer, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

func (p *Provider) otherKey() (*rsa.PrivateKey, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.other == nil {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		p.other = key
	}
	return p.other, nil
}

// userClaims are u's claims, with or without groups, Extra applied last.
func userClaims(u User, groups bool) map[string]any {
	c := map[string]any{"sub": u.Subject}
	if u.Email != "" {
		c["email"] = u.Email
		c["email_verified"] = u.EmailVerified
	}
	for k, v := range map[string]string{"name": u.Name, "given_name": u.GivenName, "family_name": u.FamilyName} {
		if v != "" {
			c[k] = v
		}
	}
	if groups && u.Groups != nil {
		c["groups"] = u.Groups
	}
	for k, v := range u.Extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func (p *Provider) userinfo(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	p.mu.Lock()
	p.userinfoCalls++
	user, known := p.tokens[token]
	b := p.behaviour
	p.mu.Unlock()
	if !ok || !known {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "invalid token", http.StatusUnauthorized)
		return
	}
	if overridden(w, b.UserinfoBody, b.UserinfoStatus) {
		return
	}
	claims := userClaims(user, b.GroupsIn == GroupsInUserinfo || b.GroupsIn == GroupsInBoth)
	if b.UserinfoSubject != "" {
		claims["sub"] = b.UserinfoSubject
	}
	writeJSON(w, http.StatusOK, claims)
}

// endSession records an RP-initiated logout and sends the browser back to
// post_logout_redirect_uri with the state, if one was given.
func (p *Provider) endSession(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.endSessions = append(p.endSessions, maps.Clone(r.Form))
	p.mu.Unlock()
	back, err := url.Parse(r.Form.Get("post_logout_redirect_uri"))
	if err != nil || back.Host == "" {
		_, _ = io.WriteString(w, "signed out")
		return
	}
	if state := r.Form.Get("state"); state != "" {
		q := back.Query()
		q.Set("state", state)
		back.RawQuery = q.Encode()
	}
	http.Redirect(w, r, back.String(), http.StatusFound)
}

package signin

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/ory/fosite"

	"coffer/models"
)

// authStorage is fosite's storage on models.Store: clients, codes, PKCE
// challenges and tokens, each under its HMAC signature. It is
// transactional (fosite's storage.Transactional): fosite begins a
// transaction around the writes of one token request (a code's exchange,
// a refresh's rotation, a reuse's revocation), and every method runs in
// the transaction its context carries.
type authStorage struct {
	store *models.Store
}

// txKey is the context key of the transaction BeginTX started.
type txKey struct{}

// st is the store of ctx's transaction, or the plain store.
func (s *authStorage) st(ctx context.Context) *models.Store {
	if tx, ok := ctx.Value(txKey{}).(*models.Tx); ok {
		return tx.Store
	}
	return s.store
}

// BeginTX starts the transaction of one token request.
func (s *authStorage) BeginTX(ctx context.Context) (context.Context, error) {
	tx, err := s.store.Begin(ctx)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, txKey{}, tx), nil
}

// Commit commits the transaction of ctx.
func (s *authStorage) Commit(ctx context.Context) error {
	tx, ok := ctx.Value(txKey{}).(*models.Tx)
	if !ok {
		return errors.New("signin: commit without a transaction")
	}
	return tx.Commit(ctx)
}

// Rollback abandons the transaction of ctx.
func (s *authStorage) Rollback(ctx context.Context) error {
	tx, ok := ctx.Value(txKey{}).(*models.Tx)
	if !ok {
		return errors.New("signin: rollback without a transaction")
	}
	return tx.Rollback()
}

// keptForm are the parameters of an authorization that its exchange reads
// back; nothing else of a request is stored.
var keptForm = []string{"redirect_uri", "code_challenge", "code_challenge_method", "response_type"}

// GetClient loads a client.
func (s *authStorage) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	if id == "" || len(id) > 64 {
		return nil, fosite.ErrNotFound
	}
	c, err := s.st(ctx).OAuthClient(ctx, id)
	if isNotFound(err) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return fositeClient(c), nil
}

func fositeClient(c *models.OAuthClient) *fosite.DefaultClient {
	return &fosite.DefaultClient{
		ID: c.ID, RedirectURIs: c.RedirectURIs, Public: true,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		Scopes: strings.Fields(c.Scope),
	}
}

// ClientAssertionJWTValid: no client authenticates with a JWT; every
// client is public.
func (s *authStorage) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT: see ClientAssertionJWTValid.
func (s *authStorage) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

// kept is what models keeps of a fosite request.
func kept(r fosite.Requester) (models.OAuthRequest, uuid.UUID, uuid.UUID, error) {
	sess, ok := r.GetSession().(*grantSession)
	if !ok || sess == nil {
		return models.OAuthRequest{}, uuid.Nil, uuid.Nil, errors.New("signin: oauth request without a grant session")
	}
	userID, err := uuid.Parse(sess.Subject)
	if err != nil {
		return models.OAuthRequest{}, uuid.Nil, uuid.Nil, errors.New("signin: oauth session without a user")
	}
	form := map[string][]string{}
	for _, k := range keptForm {
		if v := r.GetRequestForm().Get(k); v != "" {
			form[k] = []string{v}
		}
	}
	exp := map[string]time.Time{}
	for _, t := range []fosite.TokenType{fosite.AccessToken, fosite.RefreshToken, fosite.AuthorizeCode} {
		if e := sess.GetExpiresAt(t); !e.IsZero() {
			exp[string(t)] = e
		}
	}
	return models.OAuthRequest{
		ID: r.GetID(), RequestedAt: r.GetRequestedAt(),
		Scopes: r.GetRequestedScopes(), GrantedScopes: r.GetGrantedScopes(),
		Audience: r.GetRequestedAudience(), GrantedAudience: r.GetGrantedAudience(),
		Form: form, ExpiresAt: exp,
	}, userID, sess.FamilyID, nil
}

// restore rebuilds the fosite request of a stored one.
func (s *authStorage) restore(ctx context.Context, clientID string, userID, familyID uuid.UUID, k models.OAuthRequest) (fosite.Requester, error) {
	c, err := s.GetClient(ctx, clientID)
	if err != nil {
		return nil, err
	}
	sess := &grantSession{FamilyID: familyID}
	sess.Subject = userID.String()
	for t, e := range k.ExpiresAt {
		sess.SetExpiresAt(fosite.TokenType(t), e)
	}
	r := fosite.NewRequest()
	r.ID, r.RequestedAt, r.Client, r.Session = k.ID, k.RequestedAt, c, sess
	r.RequestedScope, r.GrantedScope = k.Scopes, k.GrantedScopes
	r.RequestedAudience, r.GrantedAudience = k.Audience, k.GrantedAudience
	r.Form = url.Values(k.Form)
	if r.Form == nil {
		r.Form = url.Values{}
	}
	return r, nil
}

// CreateAuthorizeCodeSession stores a new code.
func (s *authStorage) CreateAuthorizeCodeSession(ctx context.Context, sig string, r fosite.Requester) error {
	k, userID, familyID, err := kept(r)
	if err != nil {
		return err
	}
	return s.st(ctx).CreateOAuthCode(ctx, &models.OAuthCode{Signature: sig, RequestID: r.GetID(), ClientID: r.GetClient().GetID(),
		FamilyID: familyID, UserID: userID, Request: k, ExpiresAt: expiry(r, fosite.AuthorizeCode, codeLifespan)})
}

// GetAuthorizeCodeSession finds a code; a used one comes back with
// ErrInvalidatedAuthorizeCode, which makes fosite revoke its tokens.
func (s *authStorage) GetAuthorizeCodeSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	c, err := s.st(ctx).OAuthCodeBySignature(ctx, sig)
	if isNotFound(err) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r, err := s.restore(ctx, c.ClientID, c.UserID, c.FamilyID, c.Request)
	if err != nil {
		return nil, err
	}
	if !c.Active {
		return r, fosite.ErrInvalidatedAuthorizeCode
	}
	return r, nil
}

// InvalidateAuthorizeCodeSession marks a code used.
func (s *authStorage) InvalidateAuthorizeCodeSession(ctx context.Context, sig string) error {
	if err := s.st(ctx).UseOAuthCode(ctx, sig); isNotFound(err) {
		return fosite.ErrInvalidatedAuthorizeCode
	} else if err != nil {
		return err
	}
	return nil
}

// CreatePKCERequestSession stores a code's challenge.
func (s *authStorage) CreatePKCERequestSession(ctx context.Context, sig string, r fosite.Requester) error {
	k, userID, familyID, err := kept(r)
	if err != nil {
		return err
	}
	return s.st(ctx).CreateOAuthPKCE(ctx, &models.OAuthPKCE{Signature: sig, ClientID: r.GetClient().GetID(),
		FamilyID: familyID, UserID: userID, Request: k, ExpiresAt: expiry(r, fosite.AuthorizeCode, codeLifespan)})
}

// GetPKCERequestSession finds a code's challenge.
func (s *authStorage) GetPKCERequestSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	p, err := s.st(ctx).OAuthPKCEBySignature(ctx, sig)
	if isNotFound(err) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return s.restore(ctx, p.ClientID, p.UserID, p.FamilyID, p.Request)
}

// DeletePKCERequestSession forgets a challenge.
func (s *authStorage) DeletePKCERequestSession(ctx context.Context, sig string) error {
	return s.st(ctx).DeleteOAuthPKCE(ctx, sig)
}

func (s *authStorage) createToken(ctx context.Context, kind, sig string, r fosite.Requester, ttl time.Duration) error {
	k, userID, familyID, err := kept(r)
	if err != nil {
		return err
	}
	tt := fosite.AccessToken
	if kind == models.TokenRefresh {
		tt = fosite.RefreshToken
	}
	return s.st(ctx).CreateOAuthToken(ctx, &models.OAuthToken{Signature: sig, Kind: kind, RequestID: r.GetID(),
		ClientID: r.GetClient().GetID(), FamilyID: familyID, UserID: userID, Scope: grantedScope(r.GetGrantedScopes()),
		Request: k, ExpiresAt: expiry(r, tt, ttl)})
}

func (s *authStorage) getToken(ctx context.Context, kind, sig string) (fosite.Requester, error) {
	t, err := s.st(ctx).OAuthTokenBySignature(ctx, kind, sig)
	if isNotFound(err) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r, err := s.restore(ctx, t.ClientID, t.UserID, t.FamilyID, t.Request)
	if err != nil {
		return nil, err
	}
	if !t.Active {
		return r, fosite.ErrInactiveToken
	}
	if t.User == nil || t.User.Status != models.UserActive {
		return nil, fosite.ErrNotFound
	}
	return r, nil
}

// CreateAccessTokenSession stores an access token.
func (s *authStorage) CreateAccessTokenSession(ctx context.Context, sig string, r fosite.Requester) error {
	return s.createToken(ctx, models.TokenAccess, sig, r, time.Hour)
}

// GetAccessTokenSession finds an access token.
func (s *authStorage) GetAccessTokenSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	return s.getToken(ctx, models.TokenAccess, sig)
}

// DeleteAccessTokenSession forgets an access token.
func (s *authStorage) DeleteAccessTokenSession(ctx context.Context, sig string) error {
	return s.st(ctx).DeleteOAuthToken(ctx, models.TokenAccess, sig)
}

// CreateRefreshTokenSession stores a refresh token.
func (s *authStorage) CreateRefreshTokenSession(ctx context.Context, sig, _ string, r fosite.Requester) error {
	return s.createToken(ctx, models.TokenRefresh, sig, r, 30*24*time.Hour)
}

// GetRefreshTokenSession finds a refresh token; a rotated one comes back
// with ErrInactiveToken, which makes fosite revoke the grant.
func (s *authStorage) GetRefreshTokenSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	return s.getToken(ctx, models.TokenRefresh, sig)
}

// DeleteRefreshTokenSession forgets a refresh token.
func (s *authStorage) DeleteRefreshTokenSession(ctx context.Context, sig string) error {
	return s.st(ctx).DeleteOAuthToken(ctx, models.TokenRefresh, sig)
}

// RotateRefreshToken retires the refresh token just used (kept, inactive,
// to recognise a replay) and the grant's access tokens. Of two refreshes
// with one token at once, the second finds it used and fails, and its
// transaction rolls back.
func (s *authStorage) RotateRefreshToken(ctx context.Context, requestID, sig string) error {
	if err := s.st(ctx).RotateOAuthGrant(ctx, requestID, sig); isNotFound(err) {
		return fosite.ErrSerializationFailure
	} else if err != nil {
		return err
	}
	return nil
}

// RevokeRefreshToken retires every refresh token of a grant.
func (s *authStorage) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.st(ctx).DeactivateOAuthTokens(ctx, models.TokenRefresh, requestID)
}

// RevokeAccessToken forgets every access token of a grant.
func (s *authStorage) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.st(ctx).DeleteGrantOAuthTokens(ctx, models.TokenAccess, requestID)
}

// expiry is when a token of the request ends: the session's time when
// fosite set one, else the lifespan from now.
func expiry(r fosite.Requester, t fosite.TokenType, ttl time.Duration) time.Time {
	if e := r.GetSession().GetExpiresAt(t); !e.IsZero() {
		return e
	}
	return time.Now().UTC().Add(ttl)
}

// grantedScope is the one scope a grant holds: read_write when it was
// granted, else read.
func grantedScope(granted []string) string {
	for _, s := range granted {
		if s == models.ScopeReadWrite {
			return models.ScopeReadWrite
		}
	}
	return models.ScopeRead
}

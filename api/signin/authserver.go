package signin

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/google/uuid"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/pkce"
	"github.com/ory/fosite/token/hmac"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

// The OAuth authorization server (issue 13): fosite does the protocol
// (codes, PKCE, rotation, reuse detection, revocation); this file builds
// it on our storage and turns its net/http answers into fiber's.

const (
	// mobileClientID is the server's own client for the mobile app's
	// sign-in endpoints, which issue tokens without a redirect.
	mobileClientID = "coffer-mobile"
	// codeLifespan bounds the wait between consent and the exchange.
	codeLifespan = 10 * time.Minute
	// The per-IP limits of the token endpoint (the seed's) and of dynamic
	// client registration, counted in Redis so that every web process
	// shares them.
	tokenLimitPerMinute  = 10
	registerLimitPerHour = 10
	// The per-IP limits of the sign-in doors that hash a password before
	// anyone is signed in: a new family (form and app share it) and an
	// accepted invitation.
	signupLimitPerHour     = 10
	invitationLimitPerHour = 20
	accessTokenPrefix      = "ory_at_"
	maxPresentedTokenBytes = 512
)

// AuthServerOptions configure the OAuth authorization server.
type AuthServerOptions struct {
	// AccessTokenTTL is how long an access token works; a client then
	// uses its refresh token.
	AccessTokenTTL time.Duration `env:"OAUTH_ACCESS_TOKEN_TTL" default:"1h"`
	// RefreshTokenTTL is how long a grant lasts unused: each refresh
	// issues a new refresh token with this lifetime.
	RefreshTokenTTL time.Duration `env:"OAUTH_REFRESH_TOKEN_TTL" default:"720h"`
}

// authServer is fosite, composed on our storage, with what the handlers
// need of it.
type authServer struct {
	provider fosite.OAuth2Provider
	strategy *oauth2.HMACSHAStrategy
	config   *fosite.Config
	storage  *authStorage
	issuer   string
}

// newAuthServer composes fosite for the authorization code grant with
// mandatory S256 PKCE, refresh tokens and revocation. secret (the form
// secret) is hashed into the HMAC key that signs codes and tokens.
func newAuthServer(store *models.Store, o AuthServerOptions, issuer string, secret []byte) *authServer {
	if o.AccessTokenTTL <= 0 {
		o.AccessTokenTTL = time.Hour
	}
	if o.RefreshTokenTTL <= 0 {
		o.RefreshTokenTTL = 30 * 24 * time.Hour
	}
	key := sha256.Sum256(append([]byte("coffer oauth tokens\x00"), secret...))
	cfg := &fosite.Config{
		AccessTokenLifespan:            o.AccessTokenTTL,
		RefreshTokenLifespan:           o.RefreshTokenTTL,
		AuthorizeCodeLifespan:          codeLifespan,
		GlobalSecret:                   key[:],
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		// Every grant gets a refresh token; there is no offline scope.
		RefreshTokenScopes: []string{},
		TokenURL:           issuer + "/oauth/token",
		AccessTokenIssuer:  issuer,
	}
	// fosite fills these defaults in on first use, unguarded: set here,
	// two first requests at once do not race on them.
	cfg.AudienceMatchingStrategy = fosite.DefaultAudienceMatchingStrategy
	cfg.ClientSecretsHasher = &fosite.BCrypt{Config: cfg}
	cfg.JWKSFetcherStrategy = fosite.NewDefaultJWKSFetcherStrategy()
	st := &authStorage{store: store}
	strategy := oauth2.NewHMACSHAStrategy(&hmac.HMACStrategy{Config: cfg}, cfg)
	// The four handlers we use, registered as fosite/compose.Compose would:
	// compose itself imports every handler fosite offers (OpenID Connect,
	// PAR, JWT assertions, verifiable credentials), and every package's
	// init runs in every coffer process, the worker's too (issue 16).
	handlers := []any{
		&oauth2.AuthorizeExplicitGrantHandler{
			AccessTokenStrategy: strategy, RefreshTokenStrategy: strategy, AuthorizeCodeStrategy: strategy,
			CoreStorage: st, TokenRevocationStorage: st, Config: cfg,
		},
		&oauth2.RefreshTokenGrantHandler{
			AccessTokenStrategy: strategy, RefreshTokenStrategy: strategy, TokenRevocationStorage: st, Config: cfg,
		},
		&oauth2.TokenRevocationHandler{
			TokenRevocationStorage: st, AccessTokenStrategy: strategy, RefreshTokenStrategy: strategy,
		},
		&pkce.Handler{AuthorizeCodeStrategy: strategy, Storage: st, Config: cfg},
	}
	for _, h := range handlers {
		if a, ok := h.(fosite.AuthorizeEndpointHandler); ok {
			cfg.AuthorizeEndpointHandlers.Append(a)
		}
		if t, ok := h.(fosite.TokenEndpointHandler); ok {
			cfg.TokenEndpointHandlers.Append(t)
		}
		if i, ok := h.(fosite.TokenIntrospector); ok {
			cfg.TokenIntrospectionHandlers.Append(i)
		}
		if r, ok := h.(fosite.RevocationHandler); ok {
			cfg.RevocationHandlers.Append(r)
		}
	}
	provider := fosite.NewOAuth2Provider(st, cfg)
	return &authServer{provider: provider, strategy: strategy, config: cfg, storage: st, issuer: issuer}
}

// grantSession is fosite's session with the family the user belongs to.
type grantSession struct {
	fosite.DefaultSession
	FamilyID uuid.UUID `json:"family_id"`
}

func newGrantSession(u *models.User) *grantSession {
	s := &grantSession{}
	if u != nil {
		s.Subject, s.FamilyID = u.ID.String(), u.FamilyID
	}
	return s
}

// Clone is what fosite copies a session with.
func (s *grantSession) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	if d, ok := s.DefaultSession.Clone().(*fosite.DefaultSession); ok && d != nil {
		c.DefaultSession = *d
	}
	return &c
}

// Bearer turns an access token into the principal of an API key (user,
// family, scope), or models.ErrNotFound. It is the one check of bearer
// tokens, for /api/v1 and for whatever else accepts them (/mcp); the
// caller caches the principal (see rest.Handler.APIKey) and records its
// use.
func (h *Handler) Bearer(ctx context.Context, token string) (*models.APIKey, error) {
	if len(token) > maxPresentedTokenBytes || !strings.HasPrefix(token, accessTokenPrefix) {
		return nil, models.ErrNotFound
	}
	a := h.auth
	sig := a.strategy.AccessTokenSignature(ctx, token)
	k, err := h.store.APIKeyByAccessToken(ctx, sig)
	if err != nil {
		return nil, err
	}
	// The row was found by the signature; checking the token's own HMAC
	// too keeps a forged token with a leaked signature out.
	if err := a.strategy.Enigma.Validate(ctx, strings.TrimPrefix(token, accessTokenPrefix)); err != nil {
		return nil, models.ErrNotFound
	}
	return k, nil
}

// metadata is the RFC 8414 document of the authorization server.
func (h *Handler) metadata(c *fiber.Ctx) error {
	iss := h.auth.issuer
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.JSON(fiber.Map{
		"issuer":                                     iss,
		"authorization_endpoint":                     iss + "/oauth/authorize",
		"token_endpoint":                             iss + "/oauth/token",
		"revocation_endpoint":                        iss + "/oauth/revoke",
		"registration_endpoint":                      iss + "/oauth/register",
		"scopes_supported":                           []string{models.ScopeRead, models.ScopeReadWrite},
		"response_types_supported":                   []string{"code"},
		"grant_types_supported":                      []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":           []string{"S256"},
		"token_endpoint_auth_methods_supported":      []string{"none"},
		"revocation_endpoint_auth_methods_supported": []string{"none"},
		"service_documentation":                      iss + "/api/docs",
	})
}

// resourceMetadata is the RFC 9728 document of the protected resource
// /mcp, at /.well-known/oauth-protected-resource/mcp and (for clients
// that look there first) without the suffix: an MCP client finds the
// authorization server through it. /api/v1 takes the same tokens.
func (h *Handler) resourceMetadata(c *fiber.Ctx) error {
	iss := h.auth.issuer
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.JSON(fiber.Map{
		"resource":                 iss + "/mcp",
		"authorization_servers":    []string{iss},
		"scopes_supported":         []string{models.ScopeRead, models.ScopeReadWrite},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "coffer",
		"resource_documentation":   iss + "/api/docs",
	})
}

// ResourceMetadataURL is the address of the RFC 9728 document of /mcp,
// which the MCP server's 401 names.
func (h *Handler) ResourceMetadataURL() string {
	return h.auth.issuer + "/.well-known/oauth-protected-resource/mcp"
}

// httpRequest is the request as net/http sees it, for fosite.
func httpRequest(c *fiber.Ctx) (*http.Request, error) {
	r, err := adaptor.ConvertRequest(c, true)
	if err != nil {
		return nil, httperr.BadRequest("The request could not be read.")
	}
	return r.WithContext(c.UserContext()), nil
}

// sendRecorded copies what fosite wrote. An OAuth error body keeps its
// RFC 6749 fields and gains the message every coffer error has.
func sendRecorded(c *fiber.Ctx, r *web.Recorder) error {
	r.CopyHeaders(c)
	body := r.Body.Bytes()
	if r.Status >= 400 && strings.HasPrefix(r.Header().Get("Content-Type"), "application/json") {
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			if _, ok := m["message"]; !ok {
				m["message"] = oauthMessage(m)
			}
			if out, err := json.Marshal(m); err == nil {
				body = out
			}
		}
	}
	return c.Status(r.Status).Send(body)
}

func oauthMessage(m map[string]any) string {
	if d, _ := m["error_description"].(string); d != "" {
		return d
	}
	return "The OAuth request was refused."
}

// oauthError is an RFC 6749 error answer written by us rather than fosite.
func oauthError(c *fiber.Ctx, status int, code, description string) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(status).JSON(fiber.Map{"error": code, "error_description": description, "message": description})
}

// isNotFound reports a storage miss in fosite's terms.
func isNotFound(err error) bool { return errors.Is(err, models.ErrNotFound) }

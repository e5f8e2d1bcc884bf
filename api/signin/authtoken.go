package signin

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

// token is the token endpoint (RFC 6749 §3.2): the authorization_code and
// refresh_token grants, 10 requests a minute per IP.
func (h *Handler) token(c *fiber.Ctx) error {
	return h.tokenEndpoint(c, func(ctx context.Context, w http.ResponseWriter, r *http.Request) {
		p := h.auth.provider
		ar, err := p.NewAccessRequest(ctx, r, newGrantSession(nil))
		if err != nil {
			p.WriteAccessError(ctx, w, ar, err)
			return
		}
		resp, err := p.NewAccessResponse(ctx, ar)
		if err != nil {
			p.WriteAccessError(ctx, w, ar, err)
			return
		}
		p.WriteAccessResponse(ctx, w, ar, resp)
	})
}

// revoke is RFC 7009: an access or refresh token given back ends its
// whole grant. Unknown tokens are a success, as the RFC says.
func (h *Handler) revoke(c *fiber.Ctx) error {
	return h.tokenEndpoint(c, func(ctx context.Context, w http.ResponseWriter, r *http.Request) {
		h.auth.provider.WriteRevocationResponse(ctx, w, h.auth.provider.NewRevocationRequest(ctx, r))
	})
}

// tokenEndpoint is what the token and revocation endpoints share: their
// rate limit per IP, the request as net/http's for the OAuth library
// (serve), and sending what serve wrote.
func (h *Handler) tokenEndpoint(c *fiber.Ctx, serve func(ctx context.Context, w http.ResponseWriter, r *http.Request)) error {
	if err := h.limitIP(c, "token", tokenLimitPerMinute, time.Minute); err != nil {
		return err
	}
	r, err := httpRequest(c)
	if err != nil {
		return err
	}
	rec := web.NewRecorder()
	serve(c.UserContext(), rec, r)
	return sendRecorded(c, rec)
}

// limitIP counts a request of this IP in a fixed window in Redis and
// refuses it past limit with 429 and Retry-After. Every unauthenticated
// POST that costs more than a lookup passes one, before its work.
func (h *Handler) limitIP(c *fiber.Ctx, what string, limit int, window time.Duration) error {
	now := h.now()
	start := now.Truncate(window)
	key := fmt.Sprintf("rl:signin:%s:%s:%d", what, web.ClientIP(c), start.Unix())
	n, err := web.CountWindow(c.UserContext(), h.redis, key, window+time.Minute)
	if err != nil {
		return signInUnavailable(err)
	}
	if n > int64(limit) {
		wait := max(int(start.Add(window).Sub(now).Seconds()+0.999), 1)
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(wait))
		return &httperr.Error{Status: fiber.StatusTooManyRequests, Code: "rate_limited",
			Message: fmt.Sprintf("Too many requests from your address; try again in %d minutes.", (wait+59)/60)}
	}
	return nil
}

// registration is the RFC 7591 client metadata we read and answer.
type registration struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// register is dynamic client registration (RFC 7591) for public clients:
// no secret, PKCE at every authorization.
func (h *Handler) register(c *fiber.Ctx) error {
	if err := h.limitIP(c, "register", registerLimitPerHour, time.Hour); err != nil {
		return err
	}
	var in registration
	if err := json.Unmarshal(c.Body(), &in); err != nil {
		return oauthError(c, fiber.StatusBadRequest, "invalid_client_metadata", "The body must be a JSON object of client metadata.")
	}
	if msg := checkRegistration(&in); msg != "" {
		code := "invalid_client_metadata"
		if strings.HasPrefix(msg, "redirect_uris") {
			code = "invalid_redirect_uri"
		}
		return oauthError(c, fiber.StatusBadRequest, code, msg)
	}
	var raw [18]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return err
	}
	cl := &models.OAuthClient{ID: "cofc_" + base64.RawURLEncoding.EncodeToString(raw[:]), Name: in.ClientName,
		RedirectURIs: in.RedirectURIs, Scope: models.ScopeRead + " " + models.ScopeReadWrite}
	if err := h.store.CreateOAuthClient(c.UserContext(), cl); err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{
		"client_id": cl.ID, "client_id_issued_at": cl.CreatedAt.Unix(), "client_name": cl.Name,
		"redirect_uris": cl.RedirectURIs, "grant_types": []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"}, "token_endpoint_auth_method": "none", "scope": cl.Scope,
	})
}

// checkRegistration fills defaults and returns what is wrong, or "".
func checkRegistration(in *registration) string {
	in.ClientName = strings.TrimSpace(in.ClientName)
	if in.ClientName == "" {
		in.ClientName = "Unnamed app"
	}
	if !utf8.ValidString(in.ClientName) || utf8.RuneCountInString(in.ClientName) > 100 || web.HasUnsafe(in.ClientName) {
		return "client_name must be at most 100 printable characters, without control or bidirectional-formatting characters."
	}
	if in.TokenEndpointAuthMethod != "" && in.TokenEndpointAuthMethod != "none" {
		return "token_endpoint_auth_method must be none: only public clients, with PKCE, are registered."
	}
	for _, g := range in.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return "grant_types may hold only authorization_code and refresh_token."
		}
	}
	for _, t := range in.ResponseTypes {
		if t != "code" {
			return "response_types may hold only code."
		}
	}
	for _, s := range strings.Fields(in.Scope) {
		if !models.ValidScope(s) {
			return "scope may hold only read and read_write."
		}
	}
	if len(in.RedirectURIs) == 0 || len(in.RedirectURIs) > 10 {
		return "redirect_uris must list 1 to 10 URIs."
	}
	for _, u := range in.RedirectURIs {
		if msg := checkRedirectURI(u); msg != "" {
			return "redirect_uris: " + msg
		}
	}
	return ""
}

// checkRedirectURI accepts https, http on a loopback address (RFC 8252
// §7.3, any port at use) and private-use schemes of native apps (§7.1).
func checkRedirectURI(raw string) string {
	if len(raw) > 2000 || web.HasUnsafe(raw) {
		return "a URI is too long or holds control characters."
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Fragment != "" || u.User != nil {
		return fmt.Sprintf("%q must be an absolute URI without a fragment or user info.", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		if u.Host == "" {
			return fmt.Sprintf("%q has no host.", raw)
		}
	case "http":
		h := u.Hostname()
		if h != "127.0.0.1" && h != "::1" && h != "localhost" {
			return fmt.Sprintf("%q: http is accepted only on the loopback address (127.0.0.1 or [::1]).", raw)
		}
	case "javascript", "data", "file", "vbscript", "about", "blob", "ftp", "ws", "wss":
		return fmt.Sprintf("%q uses a scheme that cannot receive a code.", raw)
	default:
		if !strings.Contains(u.Scheme, ".") && len(u.Scheme) < 3 {
			return fmt.Sprintf("%q: a native app's scheme should be its reversed domain name (RFC 8252 §7.1).", raw)
		}
	}
	return ""
}

package signin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
	"coffer/sso"
)

// The mobile app's single sign-on (issue 13, part 3), as the reference
// app does it (we-promise/sure SessionsController#mobile_sso_start and
// Api::V1::AuthController#sso_exchange): the app opens
// GET /auth/mobile/<provider>?device_id=…&device_name=…&device_type=…
// in the system browser; the ordinary sign-in at the provider follows;
// the browser is sent to the app's callback with a one-time code (or
// error and message), and the app trades the code for tokens at
// POST /api/v1/auth/sso_exchange. The code, not the tokens, travels in
// the URL: another app claiming the same scheme learns only a code that
// is short-lived and single use.
//
// PKCE (RFC 7636, S256 only) binds the code to the app that started the
// sign-in: the app sends code_challenge=BASE64URL(SHA256(verifier)) and
// code_challenge_method=S256 to /auth/mobile/<provider>, and the
// code_verifier with the code to the exchange, so another app that
// reads the callback holds a code it cannot trade. The reference app
// sends no challenge; a start without one is refused at the app
// (pkce_required) unless SSOOptions.MobilePKCERequired is off
// (MOBILE_SSO_PKCE=optional), when its code stays a bearer code.

const (
	// mobileCallback is the app's callback URL, registered by the app
	// for its own scheme. It is the only place a code is sent: the app
	// does not name it (a request that does must name exactly this one),
	// so the sign-in cannot be turned into an open redirect or a code
	// sent elsewhere.
	mobileCallback = "sureapp://oauth/callback"
	// mobileCodeLife bounds the wait between the browser's return to the
	// app and the app's exchange.
	mobileCodeLife = 5 * time.Minute
	// localMobileSSO marks a request that finishes the app's sign-in, so
	// that its refusals are sent to the app rather than shown.
	localMobileSSO = "mobile_sso"
	// reasonAccountNotLinked: the app's sign-in found no account linked
	// to the identity.
	reasonAccountNotLinked = "account_not_linked"
)

// pkceChallenge is an S256 challenge: the unpadded base64url of 32 bytes.
var pkceChallenge = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// pkceVerifier is a code_verifier as RFC 7636 section 4.1 allows it.
var pkceVerifier = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// pkceMatches reports whether verifier is the one challenge was made from.
func pkceMatches(verifier, challenge string) bool {
	if !pkceVerifier.MatchString(verifier) {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}

// mobileSSOGrant is what a one-time code stands for, kept in Redis under
// the code's SHA-256 until it is exchanged. The tokens are made at the
// exchange, so none rests in Redis.
type mobileSSOGrant struct {
	UserID   uuid.UUID     `json:"user_id"`
	FamilyID uuid.UUID     `json:"family_id"`
	Device   *mobileDevice `json:"device"` // with the app's code_challenge, if it sent one
	// ExpiresAt (Unix seconds, by the handler's clock) ends the code even
	// if Redis has not forgotten it yet.
	ExpiresAt int64 `json:"expires_at"`
}

func mobileCodeKey(code string) string {
	sum := sha256.Sum256([]byte(code))
	return "mobile_sso:" + hex.EncodeToString(sum[:])
}

// mobileSSORedirect sends the browser to the app's callback.
func mobileSSORedirect(c *fiber.Ctx, q url.Values) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(mobileCallback+"?"+q.Encode(), fiber.StatusFound)
}

// startMobileSSO is GET /auth/mobile/:name: the provider's sign-in, for
// the app.
func (h *Handler) startMobileSSO(c *fiber.Ctx) error {
	if cb := c.Query("redirect_uri"); cb != "" && cb != mobileCallback {
		return httperr.BadRequest("redirect_uri must be the app's registered callback, " + mobileCallback + ".")
	}
	d := &mobileDevice{DeviceID: c.Query("device_id"), DeviceName: c.Query("device_name"), DeviceType: c.Query("device_type"),
		OSVersion: c.Query("os_version"), AppVersion: c.Query("app_version")}
	e, err := h.enabledProvider(c)
	if err != nil {
		var he *httperr.Error
		if errors.As(err, &he) && he.Status == fiber.StatusNotFound {
			return mobileSSORedirect(c, url.Values{"error": {"invalid_provider"}, "message": {"SSO provider not configured"}})
		}
		return err
	}
	if !d.valid() {
		return mobileSSORedirect(c, url.Values{"error": {"missing_device_info"}, "message": {"Device information is required"}})
	}
	switch challenge, method := c.Query("code_challenge"), c.Query("code_challenge_method"); {
	case challenge == "" && method == "" && !h.sso.MobilePKCERequired:
		// The reference app's request: a bearer code, as the operator chose.
	case challenge == "":
		return mobileSSORedirect(c, url.Values{"error": {"pkce_required"},
			"message": {"This server requires PKCE: the app must send code_challenge with code_challenge_method=S256. Please update the app."}})
	case method != "S256":
		return mobileSSORedirect(c, url.Values{"error": {"invalid_request"}, "message": {"code_challenge_method must be S256."}})
	case !pkceChallenge.MatchString(challenge):
		return mobileSSORedirect(c, url.Values{"error": {"invalid_request"},
			"message": {"code_challenge must be the unpadded base64url SHA-256 of the code_verifier (43 characters)."}})
	default:
		d.CodeChallenge = challenge
	}
	return h.beginSSO(c, e, flow{ReturnTo: "/", Intent: intentLogin, Mobile: d})
}

// finishMobileSSO ends the app's sign-in of a known identity: the login
// is recorded as a web sign-in's is, and the browser goes back to the
// app with a one-time code for its tokens.
func (h *Handler) finishMobileSSO(c *fiber.Ctx, e *sso.Entry, id *sso.Identity, u *models.User, known *models.SSOIdentity, d *mobileDevice) error {
	ctx := c.UserContext()
	if err := h.store.LoginAppWithSSO(ctx, h.ssoSignIn(c, e, id), u, known, deviceMeta(d)); err != nil {
		return err
	}
	code, err := randomToken()
	if err != nil {
		return err
	}
	grant, err := json.Marshal(mobileSSOGrant{UserID: u.ID, FamilyID: u.FamilyID, Device: d,
		ExpiresAt: h.now().Add(mobileCodeLife).Unix()})
	if err != nil {
		return err
	}
	if err := h.redis.Set(ctx, mobileCodeKey(code), grant, mobileCodeLife).Err(); err != nil {
		return signInUnavailable(err)
	}
	return mobileSSORedirect(c, url.Values{"code": {code}})
}

// mobileSSOExchange is POST /api/v1/auth/sso_exchange: a one-time code
// (and the code_verifier of the challenge the sign-in started with) for
// the tokens and user of the reference's answer. A wrong or missing
// verifier leaves the code to the app that holds the right one; the
// code is deleted before tokens are made, and of two exchanges only the
// one whose delete removed it goes on.
func (h *Handler) mobileSSOExchange(c *fiber.Ctx) error {
	if err := h.limitIP(c, "token", tokenLimitPerMinute, time.Minute); err != nil {
		return err
	}
	refuseAs := func(code, msg string) error {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.Status(fiber.StatusUnauthorized).JSON(fiber.Map{"error": code, "message": msg})
	}
	refuse := func(msg string) error { return refuseAs("invalid_or_expired_code", msg) }
	var in struct {
		Code     string `json:"code"`
		Verifier string `json:"code_verifier"`
	}
	if err := json.Unmarshal(c.Body(), &in); err != nil {
		in.Code, in.Verifier = c.FormValue("code"), c.FormValue("code_verifier")
	}
	if in.Code == "" {
		return refuse("Authorization code is required")
	}
	if len(in.Code) > 128 {
		return refuse("Authorization code is invalid or expired")
	}
	ctx := c.UserContext()
	key := mobileCodeKey(in.Code)
	raw, err := h.redis.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return refuse("Authorization code is invalid or expired")
	}
	if err != nil {
		return signInUnavailable(err)
	}
	var g mobileSSOGrant
	if err := json.Unmarshal(raw, &g); err != nil || g.ExpiresAt == 0 || !h.now().Before(time.Unix(g.ExpiresAt, 0)) {
		if err := h.redis.Del(ctx, key).Err(); err != nil {
			return signInUnavailable(err)
		}
		return refuse("Authorization code is invalid or expired")
	}
	if g.Device != nil && g.Device.CodeChallenge != "" {
		switch {
		case in.Verifier == "":
			return refuseAs("invalid_code_verifier", "code_verifier is required: this sign-in was started with a code_challenge.")
		case !pkceMatches(in.Verifier, g.Device.CodeChallenge):
			return refuseAs("invalid_code_verifier", "code_verifier does not match the sign-in's code_challenge.")
		}
	}
	n, err := h.redis.Del(ctx, key).Result()
	if err != nil {
		return signInUnavailable(err)
	}
	if n == 0 { // another exchange took it meanwhile
		return refuse("Authorization code is invalid or expired")
	}
	u, err := h.store.User(ctx, g.FamilyID, g.UserID)
	if errors.Is(err, models.ErrNotFound) {
		return refuse("Authorization code is invalid or expired")
	}
	if err != nil {
		return err
	}
	if u.Status != models.UserActive {
		// Suspended between the sign-in and the exchange.
		return refuse("Your account has been suspended.")
	}
	t, err := h.issueMobileTokens(ctx, u)
	if err != nil {
		return err
	}
	t.User = web.AppUserOf(u)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(t)
}

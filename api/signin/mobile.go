package signin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/ory/fosite"

	"coffer/api/web"
	"coffer/models"
)

// The mobile app's sign-in (issue 13, part 3), with the request and answer
// shapes of the reference app (we-promise/sure mobile/lib/services/
// auth_service.dart). The app shows a refused request's error field to
// the person as it is, so that field holds a sentence, not a code.

// mobileDevice is the device block every request of the app carries.
type mobileDevice struct {
	DeviceID   string `json:"device_id"`
	DeviceName string `json:"device_name"`
	DeviceType string `json:"device_type"`
	OSVersion  string `json:"os_version"`
	AppVersion string `json:"app_version"`
	// CodeChallenge is the PKCE S256 challenge the app's single sign-on
	// started with; the exchange needs its verifier. Empty elsewhere.
	CodeChallenge string `json:"code_challenge,omitempty"`
}

func (d *mobileDevice) valid() bool {
	if d == nil {
		return false
	}
	for _, v := range []string{d.DeviceID, d.DeviceName, d.DeviceType, d.OSVersion, d.AppVersion} {
		if strings.TrimSpace(v) == "" || len(v) > 255 || web.HasControl(v) {
			return false
		}
	}
	return d.DeviceType == "ios" || d.DeviceType == "android" || d.DeviceType == "web"
}

type mobileLogin struct {
	Email    string        `json:"email"`
	Password string        `json:"password"`
	OTPCode  string        `json:"otp_code"`
	Device   *mobileDevice `json:"device"`
}

// mobileRefusal answers with the sentence in error, as the app reads it.
func mobileRefusal(c *fiber.Ctx, status int, msg string) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(status).JSON(fiber.Map{"error": msg, "message": msg})
}

// mobileTokens are the tokens of the app, in the reference's shape.
type mobileTokens struct {
	AccessToken  string       `json:"access_token"`
	RefreshToken string       `json:"refresh_token"`
	TokenType    string       `json:"token_type"`
	ExpiresIn    int64        `json:"expires_in"`
	CreatedAt    int64        `json:"created_at"`
	User         *web.AppUser `json:"user,omitempty"`
}

// mobileLogin is POST /api/v1/auth/login: the password sign-in of
// POST /sessions (local login setting, admin override, lockout counted
// before the password is checked, login audit rows), answered with tokens.
func (h *Handler) mobileLogin(c *fiber.Ctx) error {
	ctx := c.UserContext()
	var in mobileLogin
	if err := json.Unmarshal(c.Body(), &in); err != nil {
		return mobileRefusal(c, fiber.StatusBadRequest, "The request body must be a JSON object.")
	}
	login, no, err := h.checkPassword(c, strings.TrimSpace(in.Email), in.Password, fiber.StatusUnauthorized, "Invalid email or password")
	if err != nil {
		return err
	}
	if no != nil {
		rec := h.auditRecord(c, models.EventLoginFailed, no.userID, map[string]any{"reason": no.reason, "method": "password", "client": mobileClientID})
		if err := h.writeFailure(c, rec); err != nil {
			return err
		}
		return mobileRefusal(c, no.status, no.msg)
	}
	method, err := h.appSecondFactor(c, login.user, in.OTPCode)
	if err != nil || method == "-" {
		return err
	}
	if !in.Device.valid() {
		return mobileRefusal(c, fiber.StatusBadRequest, "Device information is required")
	}
	u := login.user
	meta := deviceMeta(in.Device)
	if method != "" {
		meta["second_factor"] = method
	}
	if err := h.store.RecordAppLogin(ctx, u, login.override, login.newHash, h.signIn(c), meta); err != nil {
		return err
	}
	t, err := h.issueMobileTokens(ctx, u)
	if err != nil {
		return err
	}
	t.User = web.AppUserOf(u)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(t)
}

type mobileSignup struct {
	User *struct {
		Email     string `json:"email"`
		Password  string `json:"password"`
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
	} `json:"user"`
	Device     *mobileDevice `json:"device"`
	InviteCode string        `json:"invite_code"`
}

// mobileSignup is POST /api/v1/auth/signup: a new family with its first
// user, as /registrations makes, when sign-up is open; 201 with tokens.
func (h *Handler) mobileSignup(c *fiber.Ctx) error {
	ctx := c.UserContext()
	var in mobileSignup
	if err := json.Unmarshal(c.Body(), &in); err != nil || in.User == nil {
		return mobileRefusal(c, fiber.StatusBadRequest, "The request body must be a JSON object with user and device.")
	}
	if !h.web.LocalLogin {
		return mobileRefusal(c, fiber.StatusForbidden, "Password sign-in is disabled. Use single sign-on.")
	}
	if !h.web.SignupEnabled {
		return mobileRefusal(c, fiber.StatusForbidden, "Sign-up is closed. Ask an administrator for an invitation.")
	}
	email := strings.TrimSpace(in.User.Email)
	var problems []string
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 320 {
		problems = append(problems, "Email must be an email address.")
	}
	if p := passwordProblem(in.User.Password); p != "" {
		problems = append(problems, p)
	}
	first, last := strings.TrimSpace(in.User.FirstName), strings.TrimSpace(in.User.LastName)
	if len(first) > maxName || len(last) > maxName || web.HasControl(first) || web.HasControl(last) {
		problems = append(problems, "Names must be at most 255 characters.")
	}
	if len(problems) > 0 {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(fiber.Map{"error": strings.Join(problems, " "), "message": strings.Join(problems, " "), "errors": problems})
	}
	if !in.Device.valid() {
		return mobileRefusal(c, fiber.StatusBadRequest, "Device information is required")
	}
	if err := h.limitIP(c, "signup", signupLimitPerHour, time.Hour); err != nil {
		return err
	}
	hash, err := h.hash.Hash(ctx, in.User.Password)
	if err != nil {
		return err
	}
	name := first
	if name == "" {
		name = strings.SplitN(email, "@", 2)[0]
	}
	f := &models.Family{Name: name + "'s family", Currency: "USD"}
	u := &models.User{Email: email, Role: models.RoleAdmin, PasswordHash: &hash, FirstName: nonEmpty(first), LastName: nonEmpty(last)}
	err = h.store.RegisterAppFamily(ctx, f, u, h.signIn(c), deviceMeta(in.Device))
	if errors.Is(err, models.ErrConflict) {
		msg := "An account with this email already exists. Sign in, or reset its password."
		return c.Status(fiber.StatusUnprocessableEntity).JSON(fiber.Map{"error": msg, "message": msg, "errors": []string{msg}})
	}
	if err != nil {
		return err
	}
	t, err := h.issueMobileTokens(ctx, u)
	if err != nil {
		return err
	}
	t.User = web.AppUserOf(u)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusCreated).JSON(t)
}

type mobileRefresh struct {
	RefreshToken string        `json:"refresh_token"`
	Device       *mobileDevice `json:"device"`
}

// mobileRefresh is POST /api/v1/auth/refresh: fosite's refresh_token
// grant for the mobile client, so the token rotates and a replayed one
// revokes its grant, as at /oauth/token.
func (h *Handler) mobileRefresh(c *fiber.Ctx) error {
	if err := h.limitIP(c, "token", tokenLimitPerMinute, time.Minute); err != nil {
		return err
	}
	var in mobileRefresh
	if err := json.Unmarshal(c.Body(), &in); err != nil {
		return mobileRefusal(c, fiber.StatusBadRequest, "The request body must be a JSON object.")
	}
	if in.RefreshToken == "" {
		return mobileRefusal(c, fiber.StatusBadRequest, "Refresh token is required")
	}
	if len(in.RefreshToken) > maxPresentedTokenBytes {
		return mobileRefusal(c, fiber.StatusUnauthorized, "Invalid refresh token")
	}
	ctx := c.UserContext()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {in.RefreshToken}, "client_id": {mobileClientID}}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, h.auth.issuer+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	p := h.auth.provider
	ar, err := p.NewAccessRequest(ctx, r, newGrantSession(nil))
	if err != nil {
		return h.refusedRefresh(c, err)
	}
	resp, err := p.NewAccessResponse(ctx, ar)
	if err != nil {
		return h.refusedRefresh(c, err)
	}
	rt, _ := resp.GetExtra("refresh_token").(string)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(mobileTokens{AccessToken: resp.GetAccessToken(), RefreshToken: rt, TokenType: "Bearer",
		ExpiresIn: int64(h.auth.config.AccessTokenLifespan.Seconds()), CreatedAt: h.now().Unix()})
}

func (h *Handler) refusedRefresh(c *fiber.Ctx, err error) error {
	rfc := fosite.ErrorToRFC6749Error(err)
	if rfc.CodeField >= 500 {
		return err
	}
	return mobileRefusal(c, fiber.StatusUnauthorized, "Invalid refresh token")
}

// issueMobileTokens makes a read_write grant of the mobile client for u:
// fosite's strategy makes the tokens and our storage keeps them, so that
// they refresh and revoke like any other grant.
func (h *Handler) issueMobileTokens(ctx context.Context, u *models.User) (*mobileTokens, error) {
	a := h.auth
	cl := &models.OAuthClient{ID: mobileClientID, Name: "Mobile app", FirstParty: true,
		Scope: models.ScopeRead + " " + models.ScopeReadWrite}
	if err := h.store.EnsureOAuthClient(ctx, cl); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	sess := newGrantSession(u)
	sess.SetExpiresAt(fosite.AccessToken, now.Add(a.config.AccessTokenLifespan).Round(time.Second))
	sess.SetExpiresAt(fosite.RefreshToken, now.Add(a.config.RefreshTokenLifespan).Round(time.Second))
	req := fosite.NewAccessRequest(sess)
	req.Client = fositeClient(cl)
	req.RequestedAt = now
	req.GrantTypes = fosite.Arguments{"password"}
	req.SetRequestedScopes(fosite.Arguments{models.ScopeReadWrite})
	req.GrantScope(models.ScopeReadWrite)
	at, atSig, err := a.strategy.GenerateAccessToken(ctx, req)
	if err != nil {
		return nil, err
	}
	rt, rtSig, err := a.strategy.GenerateRefreshToken(ctx, req)
	if err != nil {
		return nil, err
	}
	// Both tokens or neither, as fosite stores them at /oauth/token.
	tx, err := a.storage.BeginTX(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.storage.CreateAccessTokenSession(tx, atSig, req); err != nil {
		return nil, errors.Join(err, a.storage.Rollback(tx))
	}
	if err := a.storage.CreateRefreshTokenSession(tx, rtSig, atSig, req); err != nil {
		return nil, errors.Join(err, a.storage.Rollback(tx))
	}
	if err := a.storage.Commit(tx); err != nil {
		return nil, err
	}
	return &mobileTokens{AccessToken: at, RefreshToken: rt, TokenType: "Bearer",
		ExpiresIn: int64(a.config.AccessTokenLifespan.Seconds()), CreatedAt: now.Unix()}, nil
}

func deviceMeta(d *mobileDevice) map[string]any {
	if d == nil {
		return map[string]any{"client": mobileClientID}
	}
	return map[string]any{"client": mobileClientID, "device_type": d.DeviceType, "device_name": web.Clip(d.DeviceName, 255)}
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

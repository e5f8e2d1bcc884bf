package signin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
	"coffer/models/money"
	"coffer/models/secret"
)

const (
	msgLocalOff      = "Password sign-in is disabled. Use single sign-on."
	resetTTL         = time.Hour
	ssoPasswordGrace = 10 * time.Minute
	// msgPasswordChanged says what a password change kept: this browser's
	// session and the API keys.
	msgPasswordChanged = "Your password was changed. This browser stays signed in; your other sessions and every app sign-in (the mobile app, connected apps) were ended. API keys keep working."
)

// localOff answers the password routes while local login is disabled.
func (h *Handler) localOff(c *fiber.Ctx) error {
	if h.web.LocalLogin {
		return c.Next()
	}
	return &httperr.Error{Status: fiber.StatusForbidden, Code: "forbidden", Message: msgLocalOff}
}

// signupOpen refuses the creation of new families when sign-up is closed;
// people then join by invitation.
func (h *Handler) signupOpen(c *fiber.Ctx) error {
	if h.web.SignupEnabled {
		return c.Next()
	}
	return &httperr.Error{Status: fiber.StatusForbidden, Code: "forbidden",
		Message: "Sign-up is closed here. Ask a member of your household for an invitation."}
}

func passwordProblem(pw string) string {
	if len(pw) < secret.MinPasswordLen || len(pw) > secret.MaxPasswordLen {
		return "The password must be 12 to 256 characters long."
	}
	return ""
}

type registerData struct{ Family, Currency, Email string }

func (h *Handler) newRegistration(c *fiber.Ctx) error {
	return h.pages.Render(c, fiber.StatusOK, "register", web.Page{Title: "Create an account", Data: registerData{Currency: "USD"}})
}

// createRegistration makes a new family with its first user as admin and
// signs them in.
func (h *Handler) createRegistration(c *fiber.Ctx) error {
	ctx := c.UserContext()
	d := registerData{
		Family:   strings.Clone(strings.TrimSpace(c.FormValue("family"))),
		Currency: strings.Clone(strings.ToUpper(strings.TrimSpace(c.FormValue("currency")))),
		Email:    strings.Clone(strings.TrimSpace(c.FormValue("email"))),
	}
	password := c.FormValue("password")
	var problems []string
	if d.Family == "" || len(d.Family) > maxName || strings.ContainsRune(d.Family, 0) {
		problems = append(problems, "Family name must be 1 to 255 characters.")
	}
	cur, ok := money.LookupCurrency(d.Currency)
	if !ok {
		problems = append(problems, "Currency must be an ISO 4217 code such as USD.")
	}
	if a, err := mail.ParseAddress(d.Email); err != nil || a.Address != d.Email || len(d.Email) > 320 {
		problems = append(problems, "Email must be an email address.")
	}
	if p := passwordProblem(password); p != "" {
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		return h.pages.Render(c, fiber.StatusUnprocessableEntity, "register", web.Page{Title: "Create an account", Error: strings.Join(problems, " "), Data: d})
	}
	if err := h.limitIP(c, "signup", signupLimitPerHour, time.Hour); err != nil {
		return err
	}
	hash, err := h.hash.Hash(ctx, password)
	if err != nil {
		return err
	}
	f := &models.Family{Name: d.Family, Currency: cur.Code}
	u := &models.User{Email: d.Email, Role: models.RoleAdmin, PasswordHash: &hash}
	token, err := h.store.RegisterFamily(ctx, f, u, h.signIn(c))
	if errors.Is(err, models.ErrConflict) {
		return h.pages.Render(c, fiber.StatusUnprocessableEntity, "register", web.Page{Title: "Create an account",
			Error: "An account with this email already exists. Sign in, or reset its password.", Data: d})
	}
	if err != nil {
		return err
	}
	h.site.SetSessionCookie(c, token)
	return h.site.Redirect(c, "/", "Welcome to coffer.")
}

func (h *Handler) forgotPassword(c *fiber.Ctx) error {
	return h.pages.Render(c, fiber.StatusOK, "password_forgot", web.Page{Title: "Reset your password"})
}

func resetKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "pwreset:" + hex.EncodeToString(sum[:])
}

// sendPasswordReset mails a one-time link; the answer is the same whether
// the email exists or not.
func (h *Handler) sendPasswordReset(c *fiber.Ctx) error {
	ctx := c.UserContext()
	const done = "If an account exists for that email, we sent it a link to choose a new password. The link works once, for an hour."
	n, err := web.CountWindow(ctx, h.redis, "rl:pwreset:"+web.ClientIP(c), 15*time.Minute)
	if err != nil {
		return signInUnavailable(err)
	}
	if n > 5 {
		return &httperr.Error{Status: fiber.StatusTooManyRequests, Code: "rate_limited", Message: "Too many reset requests. Try again later."}
	}
	email := strings.Clone(strings.TrimSpace(c.FormValue("email")))
	if email == "" || len(email) > 320 || web.HasControl(email) {
		return h.site.Redirect(c, "/sessions/new", done)
	}
	u, err := h.store.UserByEmail(ctx, email)
	if errors.Is(err, models.ErrNotFound) || (err == nil && u.Status != models.UserActive) {
		return h.site.Redirect(c, "/sessions/new", done)
	}
	if err != nil {
		return err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	if err := h.redis.Set(ctx, resetKey(token), u.ID.String(), resetTTL).Err(); err != nil {
		return signInUnavailable(err)
	}
	body := "Someone asked to reset the password of your coffer account.\r\n\r\n" +
		"Choose a new password here (the link works once, for an hour):\r\n" + h.web.Origin + "/password/reset?token=" + token +
		"\r\n\r\nIf it was not you, ignore this email: your password stays as it is.\r\n"
	// Sent in the background: waiting for SMTP would tell, by the time the
	// answer takes, that the email has an account.
	to, userID := u.Email, u.ID
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.mail.Send(ctx, to, "Reset your coffer password", body); err != nil {
			h.log.Error("password reset mail not sent", "user_id", userID, "error", err)
		}
	}()
	return h.site.Redirect(c, "/sessions/new", done)
}

type resetData struct{ Token string }

func (h *Handler) resetPasswordForm(c *fiber.Ctx) error {
	token := strings.Clone(c.Query("token"))
	if n, err := h.redis.Exists(c.UserContext(), resetKey(token)).Result(); err != nil {
		return signInUnavailable(err)
	} else if n == 0 || token == "" {
		return h.site.Redirect(c, "/password/forgot", "That reset link has expired or was already used. Ask for a new one.")
	}
	return h.pages.Render(c, fiber.StatusOK, "password_reset", web.Page{Title: "Choose a new password", Data: resetData{Token: token}})
}

// resetPassword sets a new password with a reset token, which works once,
// and ends every session of the user.
func (h *Handler) resetPassword(c *fiber.Ctx) error {
	ctx := c.UserContext()
	token := strings.Clone(c.FormValue("token"))
	password := c.FormValue("password")
	if p := passwordProblem(password); p != "" {
		return h.pages.Render(c, fiber.StatusUnprocessableEntity, "password_reset", web.Page{Title: "Choose a new password", Error: p, Data: resetData{Token: token}})
	}
	id, err := h.redis.GetDel(ctx, resetKey(token)).Result()
	if errors.Is(err, redis.Nil) || token == "" {
		return h.site.Redirect(c, "/password/forgot", "That reset link has expired or was already used. Ask for a new one.")
	}
	if err != nil {
		return signInUnavailable(err)
	}
	userID, err := uuid.Parse(id)
	if err != nil {
		return err
	}
	if err := h.setPassword(c, userID, password, uuid.Nil); err != nil {
		return err
	}
	return h.site.Redirect(c, "/sessions/new", "Your password was changed. Every session and app sign-in (the mobile app, connected apps) was ended; API keys keep working. Sign in with the new password.")
}

// setPassword stores a new password and ends the user's sessions but keep.
func (h *Handler) setPassword(c *fiber.Ctx, userID uuid.UUID, password string, keep uuid.UUID) error {
	hash, err := h.hash.Hash(c.UserContext(), password)
	if err != nil {
		return err
	}
	return h.store.ResetPassword(c.UserContext(), userID, hash, keep)
}

type securityData struct {
	LocalLogin  bool
	HasPassword bool
	Sessions    []sessionRow
	Identities  []identityRow
	CanUnlink   bool // some identity may be unlinked
	Connectable []*models.SSOProvider
	// The second factor: set up, its recovery codes left, and whether the
	// family requires one.
	TOTP           bool
	RecoveryLeft   int
	Required       bool
	Passkeys       []models.UserPasskey
	PasskeysUsable bool // APP_URL is a name WebAuthn can use
}

// identityRow is a connected account and whether the user keeps a way to
// sign in without it.
type identityRow struct {
	models.SSOIdentity
	CanUnlink bool
}

func (h *Handler) security(c *fiber.Ctx) error {
	return h.securityPage(c, fiber.StatusOK, "")
}

func (h *Handler) securityPage(c *fiber.Ctx, status int, msg string) error {
	ctx := c.UserContext()
	s := web.SessionOf(c)
	sessions, err := h.store.UserSessions(ctx, s.FamilyID, s.UserID)
	if err != nil {
		return err
	}
	u, err := h.store.UserByID(ctx, s.UserID)
	if err != nil {
		return err
	}
	idents, err := h.store.UserIdentities(ctx, u.FamilyID, u.ID)
	if err != nil {
		return err
	}
	enabled, err := h.sso.Registry.Enabled(ctx)
	if err != nil {
		return err
	}
	d := securityData{LocalLogin: h.web.LocalLogin, HasPassword: u.PasswordHash != nil}
	if err := h.secondFactorRows(ctx, u, &d); err != nil {
		return err
	}
	for _, o := range sessions {
		d.Sessions = append(d.Sessions, newSessionRow(o, s.ID))
	}
	linked, usable := map[string]bool{}, 0
	for _, i := range idents {
		linked[i.Provider.Name] = true
		if i.Provider.Enabled {
			usable++
		}
	}
	// The rule of models.UnlinkIdentity: another identity at an enabled
	// provider, or a password that may be used, must remain.
	for _, i := range idents {
		others := usable
		if i.Provider.Enabled {
			others--
		}
		row := identityRow{SSOIdentity: i, CanUnlink: others > 0 || h.site.MayUsePassword(u)}
		d.CanUnlink = d.CanUnlink || row.CanUnlink
		d.Identities = append(d.Identities, row)
	}
	for _, e := range enabled {
		if !linked[e.Provider.Name] {
			d.Connectable = append(d.Connectable, e.Provider)
		}
	}
	return h.pages.Render(c, status, "security", web.Page{Title: "Security", Error: msg, Data: d})
}

// changePassword needs the current password; a user without one (signed
// up through single sign-on) may set one only just after such a sign-in.
func (h *Handler) changePassword(c *fiber.Ctx) error {
	ctx := c.UserContext()
	s := web.SessionOf(c)
	u, err := h.store.UserByID(ctx, s.UserID)
	if err != nil {
		return err
	}
	current, next := c.FormValue("current_password"), c.FormValue("new_password")
	if u.PasswordHash != nil {
		// Each guess counts toward the sign-in lockout of the email and
		// the address before the password is checked, as at the sign-in
		// form.
		wait, err := h.claimAttempt(ctx, u.Email, web.ClientIP(c))
		if err != nil {
			return err
		}
		if wait > 0 {
			c.Set(fiber.HeaderRetryAfter, fmt.Sprint(int(wait.Seconds()+0.999)))
			return h.securityPage(c, fiber.StatusTooManyRequests,
				fmt.Sprintf("Too many wrong passwords. Try again in %d minutes.", int(wait.Minutes()+0.999)))
		}
		ok := false
		if len(current) <= secret.MaxPasswordLen {
			ok, _, err = h.hash.Check(ctx, *u.PasswordHash, current)
			if err != nil && !errors.Is(err, secret.ErrBadHash) {
				return err
			}
		}
		if !ok {
			return h.securityPage(c, fiber.StatusUnprocessableEntity, "Your current password is not correct.")
		}
		if err := h.releaseAttempt(ctx, u.Email, web.ClientIP(c)); err != nil {
			return err
		}
	} else if s.Method != models.MethodSSO || h.now().Sub(s.CreatedAt) > ssoPasswordGrace {
		return h.securityPage(c, fiber.StatusForbidden, "Sign in with single sign-on again, then set a password within 10 minutes.")
	}
	if p := passwordProblem(next); p != "" {
		return h.securityPage(c, fiber.StatusUnprocessableEntity, p)
	}
	if err := h.setPassword(c, u.ID, next, s.ID); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/security", msgPasswordChanged)
}

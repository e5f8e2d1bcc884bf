package signin

import (
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/web"
	"coffer/models"
)

// The second step of a password sign-in: after the password, a person
// with an authenticator app types a code (or a recovery code); a person
// whose family requires one and who has none sets one up. Between the
// two steps the browser holds a sealed, short-lived cookie naming who
// passed the password; no web process keeps anything, and no session
// exists until the second step passes.

const (
	cookieMFAPending = "mfa_pending"
	mfaPath          = "/sessions"
	mfaLife          = 10 * time.Minute // the cookie's own life is ssoStateLife, the same
)

// mfaPending is who passed the password step and what their session will
// be.
type mfaPending struct {
	UserID   uuid.UUID `json:"u"`
	Override bool      `json:"o,omitempty"`
	NewHash  *string   `json:"h,omitempty"` // the password hashed at today's cost, saved at the end
	ReturnTo string    `json:"r"`
	Enrol    bool      `json:"e,omitempty"` // the family requires a second factor the person lacks
	IssuedAt int64     `json:"t"`
}

type twoFactorData struct {
	Errors  map[string]string
	Passkey passkeyOptions // the passkey form, when the person has one
	HasApp  bool           // an authenticator app is set up (else only recovery codes take the code field)
}

// askSecondFactor returns where a right password goes before the session
// starts ("" when no second step applies), having set the pending
// cookie.
func (h *Handler) askSecondFactor(c *fiber.Ctx, login *passwordLogin, returnTo string) (string, error) {
	ctx := c.UserContext()
	u := login.user
	t, err := h.userTOTP(ctx, u)
	if err != nil {
		return "", err
	}
	p := mfaPending{UserID: u.ID, Override: login.override, NewHash: login.newHash, ReturnTo: returnTo, IssuedAt: h.now().Unix()}
	next := "/sessions/two_factor"
	has, err := h.store.HasSecondFactor(ctx, u.FamilyID, u.ID)
	if err != nil {
		return "", err
	}
	if t == nil && !has {
		fam, err := h.store.Family(ctx, u.FamilyID)
		if err != nil {
			return "", err
		}
		if !fam.RequireSecondFactor {
			return "", nil
		}
		p.Enrol, next = true, "/sessions/two_factor/setup"
	}
	v, err := h.sealCookie(cookieMFAPending, p)
	if err != nil {
		return "", err
	}
	h.setShortCookie(c, cookieMFAPending, v, mfaPath)
	return next, nil
}

var errNoPending = errors.New("signin: no second step in progress")

// pending reads the pending cookie and its user, still active.
func (h *Handler) pending(c *fiber.Ctx) (*mfaPending, *models.User, error) {
	var p mfaPending
	if err := h.openCookie(cookieMFAPending, c.Cookies(cookieMFAPending), &p); err != nil ||
		h.now().Sub(time.Unix(p.IssuedAt, 0)) > mfaLife {
		return nil, nil, errNoPending
	}
	u, err := h.store.UserByID(c.UserContext(), p.UserID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil, errNoPending
	}
	if err != nil {
		return nil, nil, err
	}
	if u.Status != models.UserActive {
		return nil, nil, errNoPending
	}
	return &p, u, nil
}

// startAgain answers a second step without a (valid) pending cookie.
func (h *Handler) startAgain(c *fiber.Ctx, err error) error {
	if !errors.Is(err, errNoPending) {
		return err
	}
	h.clearCookie(c, cookieMFAPending, mfaPath)
	return h.site.Redirect(c, "/sessions/new", "Your sign-in took too long. Sign in again.")
}

// twoFactorPage renders the second step of u: the code form and, for a
// person with a passkey, a fresh passkey ceremony.
func (h *Handler) twoFactorPage(c *fiber.Ctx, u *models.User, status int, msg string, d twoFactorData) error {
	var err error
	if d.Passkey, err = h.passkeySignIn(c.UserContext(), u); err != nil {
		return err
	}
	t, err := h.userTOTP(c.UserContext(), u)
	if err != nil {
		return err
	}
	d.HasApp = t != nil
	return h.pages.Render(c, status, "two_factor", web.Page{Title: "Two-step verification", Error: msg, Data: d})
}

// twoFactor asks for the code.
func (h *Handler) twoFactor(c *fiber.Ctx) error {
	p, u, err := h.pending(c)
	if err != nil {
		return h.startAgain(c, err)
	}
	if p.Enrol {
		return c.Redirect("/sessions/two_factor/setup", fiber.StatusFound)
	}
	return h.twoFactorPage(c, u, fiber.StatusOK, "", twoFactorData{})
}

// checkTwoFactor checks the code. Each try is counted toward the lockout
// of the email and the address before the code is checked, as a password
// is; a right code gives the try back and starts the session.
func (h *Handler) checkTwoFactor(c *fiber.Ctx) error {
	ctx := c.UserContext()
	p, u, err := h.pending(c)
	if err != nil {
		return h.startAgain(c, err)
	}
	t, err := h.userTOTP(ctx, u)
	if err != nil {
		return err
	}
	if p.Enrol {
		return h.startAgain(c, errNoPending)
	}
	wait, err := h.claimAttempt(ctx, u.Email, web.ClientIP(c))
	if err != nil {
		return err
	}
	if wait > 0 {
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(int(wait.Seconds()+0.999)))
		return h.twoFactorPage(c, u, fiber.StatusTooManyRequests,
			fmt.Sprintf("Too many failed sign-in attempts. Try again in %d minutes.", int(wait.Minutes()+0.999)), twoFactorData{})
	}
	method, err := h.checkFactor(c, u, t, c.FormValue("code"))
	if err != nil {
		return err
	}
	if method == "" {
		if err := h.auditBadCode(c, u, "sign_in"); err != nil {
			return err
		}
		return h.twoFactorPage(c, u, fiber.StatusUnprocessableEntity, "",
			twoFactorData{Errors: map[string]string{"code": "That code is not right, or was used already. Type the code your app shows now."}})
	}
	if err := h.releaseAttempt(ctx, u.Email, web.ClientIP(c)); err != nil {
		return err
	}
	token, err := h.finishSignIn(c, p, u, method)
	if err != nil {
		return err
	}
	return h.beginSession(c, token, p.ReturnTo)
}

// finishSignIn starts the session of a sign-in whose second step passed.
func (h *Handler) finishSignIn(c *fiber.Ctx, p *mfaPending, u *models.User, method string) (string, error) {
	in := h.signIn(c)
	in.SecondFactor = method
	token, err := h.store.LoginWithPassword(c.UserContext(), u, p.Override, p.NewHash, in)
	if err != nil {
		return "", err
	}
	h.clearCookie(c, cookieMFAPending, mfaPath)
	return token, nil
}

// twoFactorSetup is the setup a family's requirement sends a person to
// right after their password, before any session exists.
func (h *Handler) twoFactorSetup(c *fiber.Ctx) error {
	p, u, err := h.pending(c)
	if err != nil {
		return h.startAgain(c, err)
	}
	if !p.Enrol {
		return c.Redirect("/sessions/two_factor", fiber.StatusFound)
	}
	e, sealed, err := h.newEnrolment(u)
	if err != nil {
		return err
	}
	return h.setupPage(c, fiber.StatusOK, u, sealed, e, setupData{Action: "/sessions/two_factor/setup", Required: true})
}

// confirmTwoFactorSetup stores the app the first code confirmed, starts
// the session and shows the recovery codes once.
func (h *Handler) confirmTwoFactorSetup(c *fiber.Ctx) error {
	p, u, err := h.pending(c)
	if err != nil {
		return h.startAgain(c, err)
	}
	if !p.Enrol {
		return c.Redirect("/sessions/two_factor", fiber.StatusFound)
	}
	codes, err := h.confirmEnrolment(c, u, setupData{Action: "/sessions/two_factor/setup", Required: true})
	if errors.Is(err, models.ErrConflict) {
		return h.startAgain(c, errNoPending)
	}
	if err != nil || codes == nil {
		return err
	}
	token, err := h.finishSignIn(c, p, u, factorTOTP)
	if err != nil {
		return err
	}
	h.site.SetSessionCookie(c, token)
	return h.recoveryPage(c, codes, p.ReturnTo)
}

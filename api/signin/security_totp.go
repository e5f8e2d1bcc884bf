package signin

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/secret"
)

// Setting up and removing an authenticator app on /settings/security. The
// secret of a setup in progress travels sealed in the form (bound to the
// person), so no web process keeps it and nothing is stored before the
// first code confirms it.

const (
	fieldEnrol = "totp_enrol" // the sealed secret of a setup in progress
	enrolLife  = 15 * time.Minute
)

// totpEnrol is the sealed content of a setup in progress.
type totpEnrol struct {
	UserID   uuid.UUID `json:"u"`
	Secret   string    `json:"s"`
	IssuedAt int64     `json:"t"`
}

// setupData is the setup screen: the QR code, the secret to type, and the
// form that confirms it with a first code.
type setupData struct {
	Action   string        // where the form posts
	QR       template.HTML // an inline SVG
	Secret   string        // grouped by four
	Sealed   string
	Errors   map[string]string // "code": why the code was refused
	Required bool              // the family requires it before sign-in completes
}

// recoveryData shows the recovery codes, once.
type recoveryData struct {
	Codes    []string
	Continue string
}

// newEnrolment makes a new secret for u, sealed for the setup form.
func (h *Handler) newEnrolment(u *models.User) (*totpEnrol, string, error) {
	k, err := totp.Generate(totp.GenerateOpts{Issuer: "Coffer", AccountName: u.Email, Period: totpPeriod})
	if err != nil {
		return nil, "", err
	}
	e := &totpEnrol{UserID: u.ID, Secret: k.Secret(), IssuedAt: h.now().Unix()}
	sealed, err := h.sealCookie(fieldEnrol, e)
	return e, sealed, err
}

// setupPage renders the setup of the sealed enrolment e.
func (h *Handler) setupPage(c *fiber.Ctx, status int, u *models.User, sealed string, e *totpEnrol, d setupData) error {
	k, err := otp.NewKeyFromURL((&url.URL{Scheme: "otpauth", Host: "totp", Path: "/Coffer:" + u.Email,
		RawQuery: url.Values{"secret": {e.Secret}, "issuer": {"Coffer"}, "period": {"30"}, "digits": {"6"}, "algorithm": {"SHA1"}}.Encode()}).String())
	if err != nil {
		return err
	}
	if d.QR, err = qrSVG(k); err != nil {
		return err
	}
	d.Secret, d.Sealed = groupSecret(e.Secret), sealed
	return h.pages.Render(c, status, "totp_setup", web.Page{Title: "Set up an authenticator app", Data: d})
}

// confirmEnrolment checks the setup form of u: the sealed secret (made
// for u, not too old) and the first code. On success it stores the
// secret and ten recovery codes and returns the codes; on a wrong code it
// re-renders the form and returns nil codes.
func (h *Handler) confirmEnrolment(c *fiber.Ctx, u *models.User, d setupData) ([]string, error) {
	sealed := c.FormValue(fieldEnrol)
	var e totpEnrol
	if err := h.openCookie(fieldEnrol, sealed, &e); err != nil || e.UserID != u.ID ||
		h.now().Sub(time.Unix(e.IssuedAt, 0)) > enrolLife {
		fresh, s, err := h.newEnrolment(u)
		if err != nil {
			return nil, err
		}
		d.Errors = map[string]string{"code": "This setup expired. Scan the new QR code and type its first code."}
		return nil, h.setupPage(c, fiber.StatusUnprocessableEntity, u, s, fresh, d)
	}
	sealed = strings.Clone(sealed)
	step, ok := totpStep(e.Secret, c.FormValue("code"), h.now())
	if !ok {
		d.Errors = map[string]string{"code": "That code is not right. Type the six digits your app shows now."}
		return nil, h.setupPage(c, fiber.StatusUnprocessableEntity, u, sealed, &e, d)
	}
	codes, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	hashes := make([]string, len(codes))
	for i, code := range codes {
		hashes[i] = h.recoveryHash(u.ID, code)
	}
	rec := h.auditRecord(c, models.EventSecondFactorEnabled, &u.ID, map[string]any{"method": factorTOTP})
	if err := h.store.EnableTOTP(c.UserContext(), u, e.Secret, step, hashes, rec); err != nil {
		return nil, err
	}
	return codes, nil
}

// newTOTP is the setup screen of a signed-in person.
func (h *Handler) newTOTP(c *fiber.Ctx) error {
	u, err := h.store.UserByID(c.UserContext(), web.SessionOf(c).UserID)
	if err != nil {
		return err
	}
	t, err := h.userTOTP(c.UserContext(), u)
	if err != nil {
		return err
	}
	if t != nil {
		return h.site.Redirect(c, "/settings/security", "An authenticator app is already set up. Remove it first to set up another.")
	}
	e, sealed, err := h.newEnrolment(u)
	if err != nil {
		return err
	}
	return h.setupPage(c, fiber.StatusOK, u, sealed, e, setupData{Action: "/settings/security/totp"})
}

// createTOTP confirms the setup with a first code and shows the recovery
// codes, once.
func (h *Handler) createTOTP(c *fiber.Ctx) error {
	u, err := h.store.UserByID(c.UserContext(), web.SessionOf(c).UserID)
	if err != nil {
		return err
	}
	codes, err := h.confirmEnrolment(c, u, setupData{Action: "/settings/security/totp"})
	if errors.Is(err, models.ErrConflict) {
		return h.site.Redirect(c, "/settings/security", "An authenticator app is already set up.")
	}
	if err != nil || codes == nil {
		return err
	}
	return h.recoveryPage(c, codes, "/settings/security")
}

func (h *Handler) recoveryPage(c *fiber.Ctx, codes []string, next string) error {
	return h.recoveryPageFor(c, codes, next, "Your authenticator app is set up.")
}

// recoveryPageFor shows new recovery codes, once, under flash.
func (h *Handler) recoveryPageFor(c *fiber.Ctx, codes []string, next, flash string) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return h.pages.Render(c, fiber.StatusOK, "recovery_codes", web.Page{Title: "Your recovery codes",
		Flash: flash, Data: recoveryData{Codes: codes, Continue: web.SafeReturnTo(next)}})
}

// removeTOTP removes the person's authenticator app once they proved it
// is them again: their password, or a current code (or a recovery code).
// Each try counts toward the sign-in lockout.
func (h *Handler) removeTOTP(c *fiber.Ctx) error {
	ctx := c.UserContext()
	s := web.SessionOf(c)
	u, err := h.store.UserByID(ctx, s.UserID)
	if err != nil {
		return err
	}
	t, err := h.userTOTP(ctx, u)
	if err != nil {
		return err
	}
	if t == nil {
		return h.site.Redirect(c, "/settings/security", "No authenticator app is set up.")
	}
	if ok, err := h.confirmItIsYou(c, u, "remove"); err != nil || !ok {
		return err
	}
	rec := h.auditRecord(c, models.EventSecondFactorRemoved, &u.ID, map[string]any{"method": factorTOTP})
	if err := h.store.RemoveTOTP(ctx, u.FamilyID, u.ID, rec); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/security", "Your authenticator app was removed; sign-in asks for your password only.")
}

// confirmItIsYou checks the form's "confirm" field before a second factor
// is removed: the person's password, or a current code or recovery code.
// Each try counts toward the sign-in lockout. When it does not pass it
// has answered with the security screen and reports false.
func (h *Handler) confirmItIsYou(c *fiber.Ctx, u *models.User, where string) (bool, error) {
	ctx := c.UserContext()
	t, err := h.userTOTP(ctx, u)
	if err != nil {
		return false, err
	}
	proof := c.FormValue("confirm")
	wait, err := h.claimAttempt(ctx, u.Email, web.ClientIP(c))
	if err != nil {
		return false, err
	}
	if wait > 0 {
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(int(wait.Seconds()+0.999)))
		return false, h.securityPage(c, fiber.StatusTooManyRequests,
			fmt.Sprintf("Too many wrong tries. Try again in %d minutes.", int(wait.Minutes()+0.999)))
	}
	ok := false
	if looksLikeTOTP(proof) || u.PasswordHash == nil {
		method, err := h.checkFactor(c, u, t, proof)
		if err != nil {
			return false, err
		}
		ok = method != ""
	} else if len(proof) <= secret.MaxPasswordLen {
		ok, _, err = h.hash.Check(ctx, *u.PasswordHash, proof)
		if err != nil && !errors.Is(err, secret.ErrBadHash) {
			return false, err
		}
	}
	if !ok {
		if err := h.auditBadCode(c, u, where); err != nil {
			return false, err
		}
		return false, h.securityPage(c, fiber.StatusUnprocessableEntity, "That is not your password or a current code.")
	}
	return true, h.releaseAttempt(ctx, u.Email, web.ClientIP(c))
}

// secondFactorRows fills the security screen's second-factor card.
func (h *Handler) secondFactorRows(ctx context.Context, u *models.User, d *securityData) error {
	t, err := h.userTOTP(ctx, u)
	if err != nil {
		return err
	}
	if t != nil {
		d.TOTP = true
		if d.RecoveryLeft, err = h.store.RecoveryCodesLeft(ctx, u.FamilyID, u.ID); err != nil {
			return err
		}
	}
	if d.Passkeys, err = h.store.UserPasskeys(ctx, u.FamilyID, u.ID); err != nil {
		return err
	}
	if !d.TOTP && len(d.Passkeys) > 0 {
		if d.RecoveryLeft, err = h.store.RecoveryCodesLeft(ctx, u.FamilyID, u.ID); err != nil {
			return err
		}
	}
	d.PasskeysUsable = h.passkeys != nil
	fam, err := h.store.Family(ctx, u.FamilyID)
	if err != nil {
		return err
	}
	d.Required = fam.RequireSecondFactor
	return nil
}

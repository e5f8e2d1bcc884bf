package signin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/web"
	"coffer/models"
)

// Passkeys (WebAuthn) as a second factor: a person registers one on
// /settings/security and, after their password, signs in by touching it.
// The ceremony's challenge travels sealed in the page's form (bound to the
// person, as the TOTP setup's secret does), and is spent in Redis when
// used, so that no web process keeps it and an answer cannot be replayed.
// A browser without JavaScript cannot use a passkey at all; the pages say
// so, and an authenticator app or a recovery code remains.

const (
	fieldPasskeySession = "passkey_session" // the sealed ceremony
	factorPasskey       = "passkey"
	passkeyLife         = 5 * time.Minute
	maxPasskeyName      = 100
	maxPasskeyAnswer    = 64 << 10 // a credential's JSON is a few kilobytes
)

// newPasskeys is the relying party of APP_URL's origin; nil when passkeys
// cannot work there: an address rather than a name (WebAuthn needs a
// domain; "localhost" is one).
func newPasskeys(origin string) (*webauthn.WebAuthn, error) {
	u, err := url.Parse(origin)
	if err != nil || u.Hostname() == "" || net.ParseIP(u.Hostname()) != nil {
		return nil, nil
	}
	return webauthn.New(&webauthn.Config{
		RPID: u.Hostname(), RPDisplayName: "Coffer", RPOrigins: []string{strings.TrimSuffix(origin, "/")},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: passkeyLife},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: passkeyLife},
		},
	})
}

// passkeyUser is a person as the WebAuthn library sees them: the user
// handle is their id, never their email.
type passkeyUser struct {
	u     *models.User
	keys  []models.UserPasskey
	creds []webauthn.Credential
}

func (p *passkeyUser) WebAuthnID() []byte                         { return p.u.ID[:] }
func (p *passkeyUser) WebAuthnName() string                       { return p.u.Email }
func (p *passkeyUser) WebAuthnDisplayName() string                { return p.u.Email }
func (p *passkeyUser) WebAuthnCredentials() []webauthn.Credential { return p.creds }

// loadPasskeys returns u with their passkeys.
func (h *Handler) loadPasskeys(ctx context.Context, u *models.User) (*passkeyUser, error) {
	keys, err := h.store.UserPasskeys(ctx, u.FamilyID, u.ID)
	if err != nil {
		return nil, err
	}
	p := &passkeyUser{u: u, keys: keys}
	for _, k := range keys {
		var cred webauthn.Credential
		if err := json.Unmarshal([]byte(k.Credential), &cred); err != nil {
			return nil, fmt.Errorf("passkey %s: %w", k.ID, err)
		}
		p.creds = append(p.creds, cred)
	}
	return p, nil
}

// passkeyCeremony is the sealed content of a ceremony in progress.
type passkeyCeremony struct {
	UserID  uuid.UUID            `json:"u"`
	Session webauthn.SessionData `json:"s"`
}

// sealCeremony seals s for u, for the form that ends the ceremony.
func (h *Handler) sealCeremony(u *models.User, s *webauthn.SessionData) (string, error) {
	return h.sealCookie(fieldPasskeySession, passkeyCeremony{UserID: u.ID, Session: *s})
}

// openCeremony opens the form's ceremony: made for u, not expired, and
// not used before (spent here, once, across every web process).
func (h *Handler) openCeremony(c *fiber.Ctx, u *models.User) (*webauthn.SessionData, bool, error) {
	var cer passkeyCeremony
	if err := h.openCookie(fieldPasskeySession, c.FormValue(fieldPasskeySession), &cer); err != nil ||
		cer.UserID != u.ID || h.now().After(cer.Session.Expires) {
		return nil, false, nil
	}
	fresh, err := h.redis.SetNX(c.UserContext(), "coffer:passkey:challenge:"+cer.Session.Challenge, 1, passkeyLife+time.Minute).Result()
	if err != nil || !fresh {
		return nil, false, err
	}
	return &cer.Session, true, nil
}

// passkeyOptions is what a passkey form carries for the script: the
// options as JSON, and the sealed ceremony.
type passkeyOptions struct {
	Options string
	Sealed  string
}

func ceremonyOptions(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// passkeyNewData is the page that registers a passkey.
type passkeyNewData struct {
	passkeyOptions
	Name   string
	Errors map[string]string
}

// newPasskey is the page that registers a passkey: a name, and a button
// the script turns into the browser's own prompt.
func (h *Handler) newPasskey(c *fiber.Ctx) error {
	u, err := h.store.UserByID(c.UserContext(), web.SessionOf(c).UserID)
	if err != nil {
		return err
	}
	return h.passkeyNewPage(c, fiber.StatusOK, u, passkeyNewData{Name: "Passkey"})
}

func (h *Handler) passkeyNewPage(c *fiber.Ctx, status int, u *models.User, d passkeyNewData) error {
	if h.passkeys == nil {
		return h.site.Redirect(c, "/settings/security", "Passkeys need the app to be reached by a name (APP_URL), not an address.")
	}
	p, err := h.loadPasskeys(c.UserContext(), u)
	if err != nil {
		return err
	}
	creation, s, err := h.passkeys.BeginRegistration(p,
		webauthn.WithExclusions(webauthn.Credentials(p.creds).CredentialDescriptors()),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementPreferred, UserVerification: protocol.VerificationPreferred}))
	if err != nil {
		return err
	}
	if d.Options, err = ceremonyOptions(creation); err != nil {
		return err
	}
	if d.Sealed, err = h.sealCeremony(u, s); err != nil {
		return err
	}
	return h.pages.Render(c, status, "passkey_new", web.Page{Title: "Add a passkey", Data: d})
}

// createPasskey ends a registration: it checks the browser's answer
// against the ceremony and stores the passkey. A person's first second
// factor comes with ten recovery codes, shown once.
func (h *Handler) createPasskey(c *fiber.Ctx) error {
	ctx := c.UserContext()
	u, err := h.store.UserByID(ctx, web.SessionOf(c).UserID)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(c.FormValue("name"))
	d := passkeyNewData{Name: name}
	switch {
	case name == "":
		d.Errors = map[string]string{"name": "Give the passkey a name, such as the device it is on."}
	case len([]rune(name)) > maxPasskeyName:
		d.Errors = map[string]string{"name": fmt.Sprintf("A name has at most %d characters.", maxPasskeyName)}
	}
	answer := c.FormValue("credential")
	if d.Errors == nil && (answer == "" || len(answer) > maxPasskeyAnswer) {
		d.Errors = map[string]string{"name": "Your browser did not create a passkey. Passkeys need JavaScript; try again, or set up an authenticator app."}
	}
	if d.Errors != nil {
		return h.passkeyNewPage(c, fiber.StatusUnprocessableEntity, u, d)
	}
	session, ok, err := h.openCeremony(c, u)
	if err != nil {
		return err
	}
	if !ok {
		d.Errors = map[string]string{"name": "This page expired. Try again."}
		return h.passkeyNewPage(c, fiber.StatusUnprocessableEntity, u, d)
	}
	p, err := h.loadPasskeys(ctx, u)
	if err != nil {
		return err
	}
	var cred *webauthn.Credential
	parsed, err := protocol.ParseCredentialCreationResponseBytes([]byte(answer))
	if err == nil {
		cred, err = h.passkeys.CreateCredential(p, *session, parsed)
	}
	if err != nil {
		h.log.Info("passkey registration refused", "user", u.ID, "error", err)
		d.Errors = map[string]string{"name": "The passkey could not be checked. Try again."}
		return h.passkeyNewPage(c, fiber.StatusUnprocessableEntity, u, d)
	}
	stored, err := json.Marshal(cred)
	if err != nil {
		return err
	}
	has, err := h.store.HasSecondFactor(ctx, u.FamilyID, u.ID)
	if err != nil {
		return err
	}
	var codes, hashes []string
	if !has {
		if codes, err = newRecoveryCodes(); err != nil {
			return err
		}
		for _, code := range codes {
			hashes = append(hashes, h.recoveryHash(u.ID, code))
		}
	}
	k := &models.UserPasskey{UserID: u.ID, FamilyID: u.FamilyID, Name: name,
		CredentialID: base64.RawURLEncoding.EncodeToString(cred.ID), Credential: string(stored)}
	rec := h.auditRecord(c, models.EventSecondFactorEnabled, &u.ID, map[string]any{"method": factorPasskey, "name": name})
	switch err := h.store.AddPasskey(ctx, k, hashes, rec); {
	case errors.Is(err, models.ErrConflict):
		return h.site.Redirect(c, "/settings/security", "That passkey is registered already.")
	case err != nil:
		var inv *models.InvalidError
		if errors.As(err, &inv) {
			return h.site.Redirect(c, "/settings/security", strings.Join(inv.Problems, " "))
		}
		return err
	}
	if codes != nil {
		return h.recoveryPageFor(c, codes, "/settings/security", "Your passkey is set up.")
	}
	return h.site.Redirect(c, "/settings/security", "Your passkey "+name+" is set up.")
}

// removePasskey removes one of the person's passkeys once they proved it
// is them again, as removing the authenticator app asks.
func (h *Handler) removePasskey(c *fiber.Ctx) error {
	ctx := c.UserContext()
	u, err := h.store.UserByID(ctx, web.SessionOf(c).UserID)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return h.site.Redirect(c, "/settings/security", "No such passkey.")
	}
	if ok, err := h.confirmItIsYou(c, u, "remove_passkey"); err != nil || !ok {
		return err
	}
	rec := h.auditRecord(c, models.EventSecondFactorRemoved, &u.ID, map[string]any{"method": factorPasskey, "passkey_id": id.String()})
	if err := h.store.RemovePasskey(ctx, u.FamilyID, u.ID, id, rec); errors.Is(err, models.ErrNotFound) {
		return h.site.Redirect(c, "/settings/security", "No such passkey.")
	} else if err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/security", "The passkey was removed.")
}

// passkeySignIn is the passkey form of the second step: the assertion
// options for the person's passkeys, sealed with the ceremony. Zero when
// they have none.
func (h *Handler) passkeySignIn(ctx context.Context, u *models.User) (passkeyOptions, error) {
	if h.passkeys == nil {
		return passkeyOptions{}, nil
	}
	p, err := h.loadPasskeys(ctx, u)
	if err != nil || len(p.creds) == 0 {
		return passkeyOptions{}, err
	}
	assertion, s, err := h.passkeys.BeginLogin(p, webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		return passkeyOptions{}, err
	}
	var o passkeyOptions
	if o.Options, err = ceremonyOptions(assertion); err != nil {
		return o, err
	}
	o.Sealed, err = h.sealCeremony(u, s)
	return o, err
}

// checkPasskey is the second step by passkey: the browser's signed answer
// to the sealed challenge. Each try counts toward the lockout, as a code
// does; a right one starts the session.
func (h *Handler) checkPasskey(c *fiber.Ctx) error {
	ctx := c.UserContext()
	p, u, err := h.pending(c)
	if err != nil {
		return h.startAgain(c, err)
	}
	if p.Enrol || h.passkeys == nil {
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
	key, err := h.verifyPasskey(c, u)
	if err != nil {
		return err
	}
	if key == nil {
		if err := h.auditBadCode(c, u, "sign_in_passkey"); err != nil {
			return err
		}
		return h.twoFactorPage(c, u, fiber.StatusUnprocessableEntity, "That passkey could not be checked. Try again, or type a code.", twoFactorData{})
	}
	if err := h.releaseAttempt(ctx, u.Email, web.ClientIP(c)); err != nil {
		return err
	}
	token, err := h.finishSignIn(c, p, u, factorPasskey)
	if err != nil {
		return err
	}
	return h.beginSession(c, token, p.ReturnTo)
}

// verifyPasskey checks the form's assertion for u and stores the
// passkey's new sign counter; nil when it does not pass (a cloned
// authenticator, whose counter went back, does not).
func (h *Handler) verifyPasskey(c *fiber.Ctx, u *models.User) (*models.UserPasskey, error) {
	answer := c.FormValue("assertion")
	if answer == "" || len(answer) > maxPasskeyAnswer {
		return nil, nil
	}
	session, ok, err := h.openCeremony(c, u)
	if err != nil || !ok {
		return nil, err
	}
	pu, err := h.loadPasskeys(c.UserContext(), u)
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(answer))
	if err != nil {
		return nil, nil
	}
	cred, err := h.passkeys.ValidateLogin(pu, *session, parsed)
	if err != nil || cred.Authenticator.CloneWarning {
		h.log.Info("passkey sign-in refused", "user", u.ID, "error", err)
		return nil, nil
	}
	id := base64.RawURLEncoding.EncodeToString(cred.ID)
	for i := range pu.keys {
		k := &pu.keys[i]
		if k.CredentialID != id {
			continue
		}
		stored, err := json.Marshal(cred)
		if err != nil {
			return nil, err
		}
		k.Credential = string(stored)
		return k, h.store.UsePasskey(c.UserContext(), k)
	}
	return nil, nil
}

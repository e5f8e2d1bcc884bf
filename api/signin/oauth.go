package signin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
	"coffer/sso"
)

// Messages of single sign-on (spec/sso.md §6).
const (
	msgUnknownMethod  = "Unknown sign-in method."
	msgMethodDisabled = "This sign-in method is disabled."
	msgSSOUnavailable = "This sign-in method is unavailable. Contact an administrator."
	msgStateInvalid   = "Sign-in expired or invalid. Please start again."
)

// startSSO sends the browser to the provider (GET /auth/:name).
func (h *Handler) startSSO(c *fiber.Ctx) error {
	e, err := h.enabledProvider(c)
	if err != nil {
		return err
	}
	return h.beginSSO(c, e, flow{ReturnTo: web.SafeReturnTo(c.Query("return_to")), Intent: intentLogin})
}

// enabledProvider is the enabled provider the path's :name names; any
// other name is a 404.
func (h *Handler) enabledProvider(c *fiber.Ctx) (*sso.Entry, error) {
	e, err := h.sso.Registry.ByName(c.UserContext(), c.Params("name"))
	if errors.Is(err, models.ErrNotFound) || (err == nil && !e.Provider.Enabled) {
		return nil, &httperr.Error{Status: fiber.StatusNotFound, Code: "not_found", Message: msgUnknownMethod}
	}
	return e, err
}

// beginSSO starts a login, a link or a join at provider e.
func (h *Handler) beginSSO(c *fiber.Ctx, e *sso.Entry, f flow) error {
	if e.Provider.Strategy == models.StrategySAML {
		return h.beginSAML(c, e, f)
	}
	rp, err := h.sso.Registry.OAuth(c.UserContext(), e)
	if err != nil {
		return h.ssoRefused(c, e, fiber.StatusServiceUnavailable, sso.ReasonProviderUnavailable, msgSSOUnavailable, "relying party unavailable", nil)
	}
	st := ssoState{ProviderID: e.Provider.ID, flow: f, IssuedAt: h.now().Unix()}
	for _, dst := range []*string{&st.State, &st.Nonce, &st.Verifier} {
		if *dst, err = randomToken(); err != nil {
			return err
		}
	}
	sealed, err := h.sealCookie(cookieSSOState, st)
	if err != nil {
		return err
	}
	h.setShortCookie(c, cookieSSOState, sealed, "/auth")
	return c.Redirect(rp.AuthURL(st.State, st.Nonce, st.Verifier), fiber.StatusFound)
}

var idpErrorCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// ssoCallback finishes an OIDC or OAuth 2.0 sign-in (spec/sso.md §6.2).
func (h *Handler) ssoCallback(c *fiber.Ctx) error {
	ctx := c.UserContext()
	e, err := h.sso.Registry.ByName(ctx, c.Params("name"))
	if errors.Is(err, models.ErrNotFound) || (err == nil && e.Provider.Strategy == models.StrategySAML) {
		return &httperr.Error{Status: fiber.StatusNotFound, Code: "not_found", Message: msgUnknownMethod}
	}
	if err != nil {
		return err
	}
	cookie := c.Cookies(cookieSSOState)
	h.clearCookie(c, cookieSSOState, "/auth")
	var started ssoState
	if h.openCookie(cookieSSOState, cookie, &started) == nil && started.Mobile != nil {
		// Refusals of the mobile app's sign-in go back to the app.
		c.Locals(localMobileSSO, true)
	}
	if !e.Provider.Enabled {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonProviderUnavailable, msgMethodDisabled, "provider disabled", nil)
	}
	if code := c.Query("error"); code != "" {
		meta := map[string]any{}
		if idpErrorCode.MatchString(code) {
			meta["code"] = code
		}
		return h.ssoRefusedMeta(c, e, fiber.StatusBadRequest, sso.ReasonIdPError,
			fmt.Sprintf("Sign-in was cancelled or refused by %s.", e.Provider.Label), meta, nil)
	}
	var st ssoState
	if err := h.checkState(c, e, cookie, &st); err != nil {
		var ae *httperr.Error
		if errors.As(err, &ae) {
			return err
		}
		return h.ssoRefused(c, e, fiber.StatusBadRequest, sso.ReasonStateInvalid, msgStateInvalid, err.Error(), nil)
	}
	rp, err := h.sso.Registry.OAuth(ctx, e)
	if err != nil {
		return h.ssoRefused(c, e, fiber.StatusServiceUnavailable, sso.ReasonProviderUnavailable, msgSSOUnavailable, "relying party unavailable", nil)
	}
	id, err := rp.Callback(ctx, c.Query("code"), st.Verifier, st.Nonce)
	var f *sso.Failure
	if errors.As(err, &f) {
		msg := fmt.Sprintf("The sign-in response from %s could not be accepted.", e.Provider.Label)
		status := fiber.StatusBadRequest
		if f.Reason == sso.ReasonTokenExchangeFailed {
			msg, status = fmt.Sprintf("%s is not responding correctly. Try again later.", e.Provider.Label), fiber.StatusBadGateway
		}
		meta := map[string]any{"detail": f.Detail}
		if f.Status != 0 {
			meta["status"] = f.Status
		}
		return h.ssoRefusedMeta(c, e, status, f.Reason, msg, meta, nil)
	}
	if err != nil {
		return err
	}
	return h.resolveIdentity(c, e, id, st.flow)
}

// checkState opens the state cookie and checks it against the callback:
// fresh, for this provider, the same state (constant time), and never used
// before; the state is then marked used in Redis, so a replayed callback
// fails even on another web process.
func (h *Handler) checkState(c *fiber.Ctx, e *sso.Entry, cookie string, st *ssoState) error {
	if cookie == "" {
		return errors.New("no state cookie")
	}
	if err := h.openCookie(cookieSSOState, cookie, st); err != nil {
		return errors.New("state cookie does not open")
	}
	age := h.now().Sub(time.Unix(st.IssuedAt, 0))
	switch {
	case age > ssoStateLife || age < -time.Minute:
		return errors.New("state expired")
	case st.ProviderID != e.Provider.ID:
		return errors.New("state of another provider")
	case st.State == "" || subtle.ConstantTimeCompare([]byte(st.State), []byte(c.Query("state"))) != 1:
		return errors.New("state differs")
	}
	sum := sha256.Sum256([]byte(st.State))
	ok, err := h.redis.SetNX(c.UserContext(), "sso:state:used:"+hex.EncodeToString(sum[:]), 1, 15*time.Minute).Result()
	if err != nil {
		return signInUnavailable(err)
	}
	if !ok {
		return errors.New("state already used")
	}
	st.ReturnTo = web.SafeReturnTo(st.ReturnTo)
	return nil
}

// ssoRefused audits a refused sign-in and shows the login page with msg.
func (h *Handler) ssoRefused(c *fiber.Ctx, e *sso.Entry, status int, reason, msg, detail string, userID *uuid.UUID) error {
	meta := map[string]any{}
	if detail != "" {
		meta["detail"] = detail
	}
	return h.ssoRefusedMeta(c, e, status, reason, msg, meta, userID)
}

func (h *Handler) ssoRefusedMeta(c *fiber.Ctx, e *sso.Entry, status int, reason, msg string, meta map[string]any, userID *uuid.UUID) error {
	meta["reason"], meta["method"] = reason, "sso"
	rec := h.auditRecord(c, models.EventLoginFailed, userID, meta)
	name := e.Provider.Name
	rec.Provider = &name
	if err := h.writeFailure(c, rec); err != nil {
		return err
	}
	if mobile, _ := c.Locals(localMobileSSO).(bool); mobile {
		return mobileSSORedirect(c, url.Values{"error": {reason}, "message": {msg}})
	}
	return h.loginPage(c, status, msg, loginData{ReturnTo: "/"})
}

package signin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
	"coffer/sso"
)

const (
	samlBodyLimit    = 512 << 10
	cookieSAMLLogout = "saml_logout"
)

// samlRequest is what a SAML sign-in keeps in Redis between the
// AuthnRequest and the IdP's answer, under the request id.
type samlRequest struct {
	ProviderID uuid.UUID      `json:"provider_id"`
	ReturnTo   string         `json:"return_to"`
	Intent     string         `json:"intent"`
	LinkUser   *uuid.UUID     `json:"link_user,omitempty"`
	Invitation *invitationRef `json:"invitation,omitempty"`
	Mobile     *mobileDevice  `json:"mobile,omitempty"`
	BindHash   string         `json:"bind_hash"` // SHA-256 of this browser's saml_bind cookie
}

func (r *samlRequest) flow() flow {
	return flow{ReturnTo: r.ReturnTo, Intent: r.Intent, LinkUser: r.LinkUser, Invitation: r.Invitation, Mobile: r.Mobile}
}

func bindHash(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

// samlCookie sets a cookie of the SAML flow. The ACS is a cross-site POST
// from the IdP, so on https the bind cookie must be SameSite=None to come
// back with it; on loopback http (no Secure) Lax is all a browser allows.
func (h *Handler) samlCookie(c *fiber.Ctx, name, value string) {
	sameSite := "Lax"
	if h.web.SecureCookies {
		sameSite = "None"
	}
	c.Cookie(&fiber.Cookie{Name: name, Value: value, Path: "/auth/saml", HTTPOnly: true, SameSite: sameSite,
		Secure: h.web.SecureCookies, MaxAge: int(ssoStateLife.Seconds())})
}

// beginSAML sends the browser to the IdP with an AuthnRequest whose id is
// kept in Redis, bound to this browser by the saml_bind cookie.
func (h *Handler) beginSAML(c *fiber.Ctx, e *sso.Entry, f flow) error {
	rp, err := h.sso.Registry.SAML(e)
	if err != nil {
		return h.ssoRefused(c, e, fiber.StatusServiceUnavailable, sso.ReasonProviderUnavailable, msgSSOUnavailable, "service provider unavailable", nil)
	}
	bind, err := randomToken()
	if err != nil {
		return err
	}
	target, reqID, err := rp.AuthnRequest("")
	if err != nil {
		return err
	}
	rec, err := json.Marshal(samlRequest{ProviderID: e.Provider.ID, ReturnTo: f.ReturnTo, Intent: f.Intent, LinkUser: f.LinkUser,
		Invitation: f.Invitation, Mobile: f.Mobile, BindHash: bindHash(bind)})
	if err != nil {
		return err
	}
	if err := h.redis.Set(c.UserContext(), "saml:req:"+reqID, rec, ssoStateLife).Err(); err != nil {
		return signInUnavailable(err)
	}
	h.samlCookie(c, cookieSAMLBind, bind)
	return c.Redirect(target, fiber.StatusFound)
}

// samlProvider resolves the :id of a SAML path; anything else is a 404.
func (h *Handler) samlProvider(c *fiber.Ctx) (*sso.Entry, error) {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return nil, &httperr.Error{Status: fiber.StatusNotFound, Code: "not_found", Message: msgUnknownMethod}
	}
	e, err := h.sso.Registry.ByID(c.UserContext(), id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && e.Provider.Strategy != models.StrategySAML) {
		return nil, &httperr.Error{Status: fiber.StatusNotFound, Code: "not_found", Message: msgUnknownMethod}
	}
	return e, err
}

// samlMetadata serves the SP metadata an IdP registers us with.
func (h *Handler) samlMetadata(c *fiber.Ctx) error {
	e, err := h.samlProvider(c)
	if err != nil {
		return err
	}
	rp, err := h.sso.Registry.SAML(e)
	if err != nil {
		return &httperr.Error{Status: fiber.StatusServiceUnavailable, Code: "service_unavailable", Message: msgSSOUnavailable}
	}
	md, err := rp.Metadata()
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/samlmetadata+xml")
	return c.Send(md)
}

// samlACS is the assertion consumer service (spec/sso.md §6.3).
func (h *Handler) samlACS(c *fiber.Ctx) error {
	ctx := c.UserContext()
	e, err := h.samlProvider(c)
	if err != nil {
		return err
	}
	if !e.Provider.Enabled {
		return h.ssoRefused(c, e, fiber.StatusForbidden, sso.ReasonProviderUnavailable, msgMethodDisabled, "provider disabled", nil)
	}
	if len(c.Body()) > samlBodyLimit {
		return &httperr.Error{Status: fiber.StatusRequestEntityTooLarge, Code: "payload_too_large", Message: "The sign-in response is too large."}
	}
	bind := c.Cookies(cookieSAMLBind)
	h.samlCookie(c, cookieSAMLBind, "")
	raw := c.FormValue("SAMLResponse")
	if c.FormValue("SAMLRequest") != "" {
		return h.loginPage(c, fiber.StatusBadRequest, "Single logout from the identity provider is not supported; you are still signed in here.", loginData{ReturnTo: "/"})
	}
	// The request id the response claims to answer is read before it is
	// verified, only to find the request to verify it against.
	inResponseTo, err := sso.InResponseTo(raw)
	if err != nil || raw == "" {
		return h.samlRejected(c, e, sso.ReasonSAMLInvalid, "malformed base64 or XML")
	}
	req := samlRequest{Intent: intentLogin, ReturnTo: "/"}
	if inResponseTo != "" {
		rec, err := h.redis.GetDel(ctx, "saml:req:"+inResponseTo).Bytes()
		if err != nil && !errors.Is(err, redis.Nil) {
			return signInUnavailable(err)
		}
		switch {
		case len(rec) == 0 || json.Unmarshal(rec, &req) != nil:
			return h.samlRejected(c, e, sso.ReasonSAMLInvalid, "unknown or used InResponseTo")
		case req.ProviderID != e.Provider.ID:
			return h.samlRejected(c, e, sso.ReasonSAMLInvalid, "request of another provider")
		case bind == "" || subtle.ConstantTimeCompare([]byte(bindHash(bind)), []byte(req.BindHash)) != 1:
			return h.samlRejected(c, e, sso.ReasonSAMLInvalid, "saml_bind cookie does not match the request")
		}
		if req.Mobile != nil {
			c.Locals(localMobileSSO, true) // refusals from here on go back to the app
		}
	} else if !e.Provider.AllowIdPInitiated {
		return h.samlRejected(c, e, sso.ReasonSAMLUnsolicited, "no InResponseTo")
	} else {
		req.ReturnTo = web.SafeReturnTo(c.FormValue("RelayState"))
	}
	rp, err := h.sso.Registry.SAML(e)
	if err != nil {
		return h.ssoRefused(c, e, fiber.StatusServiceUnavailable, sso.ReasonProviderUnavailable, msgSSOUnavailable, "service provider unavailable", nil)
	}
	id, assertion, err := rp.ParseResponse(raw, inResponseTo)
	var f *sso.Failure
	if errors.As(err, &f) {
		return h.samlRejected(c, e, f.Reason, f.Detail)
	}
	if err != nil {
		return err
	}
	// An assertion is accepted once, on any web instance, for as long as
	// it would be valid.
	ttl := max(time.Until(assertion.NotOnOrAfter)+h.sso.Registry.Options().SAMLSkew, 5*time.Minute)
	fresh, err := h.redis.SetNX(ctx, fmt.Sprintf("saml:assertion:%s:%s", e.Provider.ID, assertion.ID), 1, ttl).Result()
	if err != nil {
		return signInUnavailable(err)
	}
	if !fresh {
		return h.samlRejected(c, e, sso.ReasonSAMLReplay, "assertion id seen before")
	}
	return h.resolveIdentity(c, e, id, req.flow())
}

// samlRejected audits a refused SAML response; the page gives the record
// id as a reference, the cause stays in the audit metadata.
func (h *Handler) samlRejected(c *fiber.Ctx, e *sso.Entry, reason, detail string) error {
	rec := h.ssoAudit(c, e, models.EventLoginFailed, nil, map[string]any{"reason": reason, "method": "sso", "detail": detail})
	if err := h.writeFailure(c, rec); err != nil {
		return err
	}
	msg := fmt.Sprintf("The sign-in response from %s could not be accepted.", e.Provider.Label)
	if rec.ID != uuid.Nil {
		msg += " Reference: " + rec.ID.String()
	}
	return h.loginPage(c, fiber.StatusBadRequest, msg, loginData{ReturnTo: "/"})
}

// samlLogoutTarget starts SP-initiated single logout: a LogoutRequest for
// the session's NameID, its id kept for the IdP's answer. "" when the
// provider has no SLO URL.
func (h *Handler) samlLogoutTarget(c *fiber.Ctx, e *sso.Entry, s *models.Session) string {
	if models.Str(e.Provider.IdPSLOURL) == "" || s.SAMLNameID == nil {
		return ""
	}
	rp, err := h.sso.Registry.SAML(e)
	if err != nil {
		return ""
	}
	target, reqID, err := rp.LogoutRequest(*s.SAMLNameID, models.Str(s.SAMLSessionIndex), "")
	if err != nil {
		h.log.Warn("sso: SAML logout request", "provider", e.Provider.Name, "err", err)
		return ""
	}
	if err := h.redis.Set(c.UserContext(), "saml:logout:"+reqID, e.Provider.ID.String(), ssoStateLife).Err(); err != nil {
		return ""
	}
	h.samlCookie(c, cookieSAMLLogout, reqID)
	return target
}

// samlLogout receives the IdP's LogoutResponse after an SP-initiated
// logout. The session ended before the redirect; this only reports
// whether the IdP confirmed.
func (h *Handler) samlLogout(c *fiber.Ctx) error {
	e, err := h.samlProvider(c)
	if err != nil {
		return err
	}
	if c.Query("SAMLRequest") != "" {
		return h.loginPage(c, fiber.StatusBadRequest, "Single logout from the identity provider is not supported; you are still signed in here.", loginData{ReturnTo: "/"})
	}
	reqID := c.Cookies(cookieSAMLLogout)
	h.samlCookie(c, cookieSAMLLogout, "")
	confirmed := false
	if reqID != "" && len(reqID) < 200 {
		owner, err := h.redis.GetDel(c.UserContext(), "saml:logout:"+reqID).Result()
		if err == nil && owner == e.Provider.ID.String() {
			if rp, err := h.sso.Registry.SAML(e); err == nil {
				confirmed = rp.ValidateLogoutResponse(string(c.Request().URI().QueryString()), reqID) == nil
			}
		}
	}
	if confirmed {
		return h.site.Redirect(c, "/sessions/new", "You have signed out.")
	}
	return h.site.Redirect(c, "/sessions/new", "You have signed out. The identity provider did not confirm.")
}

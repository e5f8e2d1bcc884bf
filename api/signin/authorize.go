package signin

import (
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/ory/fosite"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

// consentData is what the consent screen shows and sends back.
type consentData struct {
	App    string
	Scope  string
	Writes bool
	Host   string // where the answer goes: a web host, or a native app's whole redirect URI
	Native bool   // Host is a private-use scheme's URI, whose "host" means nothing
	Params []consentParam
}

type consentParam struct{ Name, Value string }

// authorizeParams are the authorization request's parameters that the
// consent form carries back.
var authorizeParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method"}

// authorize shows the consent screen of an authorization request, after
// sign-in when there is no session. A request fosite refuses goes back to
// the app with the error, or, when its redirect URI cannot be trusted, is
// answered here.
func (h *Handler) authorize(c *fiber.Ctx) error {
	ar, err := h.authorizeRequest(c)
	if err != nil || ar == nil {
		return err
	}
	if web.SessionOf(c) == nil {
		return c.Redirect("/sessions/new?return_to="+url.QueryEscape(c.OriginalURL()), fiber.StatusFound)
	}
	cl, err := h.store.OAuthClient(c.UserContext(), ar.GetClient().GetID())
	if err != nil {
		return err
	}
	scope := requestedScope(ar.GetRequestedScopes())
	d := consentData{App: web.Plain(cl.Name), Scope: scope, Writes: scope == models.ScopeReadWrite}
	// Any app may claim a private-use scheme and name a "host" in it
	// (evil://accounts.google.com/), so only https and loopback http are
	// shown by host; any other URI is shown whole.
	switch redirect := ar.GetRedirectURI(); strings.ToLower(redirect.Scheme) {
	case "https", "http":
		d.Host = redirect.Host
	default:
		d.Host, d.Native = web.Plain(redirect.String()), true
	}
	form := ar.GetRequestForm()
	for _, p := range authorizeParams {
		if v := form.Get(p); v != "" {
			d.Params = append(d.Params, consentParam{Name: p, Value: strings.Clone(v)})
		}
	}
	c.Set("X-Frame-Options", "DENY") // no clickjacking of the Allow button
	return h.pages.Render(c, fiber.StatusOK, "consent", web.Page{Title: "Allow " + d.App + "?", Data: d})
}

// decideAuthorization is the consent form's answer: Allow issues a code
// to the app's redirect URI, Deny sends access_denied there.
func (h *Handler) decideAuthorization(c *fiber.Ctx) error {
	ar, err := h.authorizeRequest(c)
	if err != nil || ar == nil {
		return err
	}
	s := web.SessionOf(c)
	if s == nil {
		return httperr.Forbidden("Sign in first.")
	}
	ctx := c.UserContext()
	rec := web.NewRecorder()
	if c.FormValue("decision") != "allow" {
		h.auth.provider.WriteAuthorizeError(ctx, rec, ar, fosite.ErrAccessDenied.WithHint("The person denied the request."))
		return sendRecorded(c, rec)
	}
	ar.GrantScope(requestedScope(ar.GetRequestedScopes()))
	resp, err := h.auth.provider.NewAuthorizeResponse(ctx, ar, newGrantSession(s.User))
	if err != nil {
		h.auth.provider.WriteAuthorizeError(ctx, rec, ar, err)
		return sendRecorded(c, rec)
	}
	h.auth.provider.WriteAuthorizeResponse(ctx, rec, ar, resp)
	return sendRecorded(c, rec)
}

// authorizeRequest parses and checks an authorization request. When it
// is refused, the answer is written (or returned as an error) and the
// request is nil. PKCE with S256 is checked here, before consent, so that
// nobody is asked about a request that cannot succeed.
func (h *Handler) authorizeRequest(c *fiber.Ctx) (fosite.AuthorizeRequester, error) {
	r, err := httpRequest(c)
	if err != nil {
		return nil, err
	}
	ctx := c.UserContext()
	ar, err := h.auth.provider.NewAuthorizeRequest(ctx, r)
	if err == nil {
		form := ar.GetRequestForm()
		switch {
		case form.Get("code_challenge") == "":
			err = fosite.ErrInvalidRequest.WithHint("PKCE is required: send code_challenge and code_challenge_method=S256.")
		case form.Get("code_challenge_method") != "S256":
			err = fosite.ErrInvalidRequest.WithHint("code_challenge_method must be S256.")
		case !ar.GetResponseTypes().ExactOne("code"):
			err = fosite.ErrUnsupportedResponseType.WithHint("Only response_type=code is supported.")
		}
	}
	if err == nil {
		return ar, nil
	}
	if ar == nil || !ar.IsRedirectURIValid() {
		rfc := fosite.ErrorToRFC6749Error(err)
		msg := "The app's sign-in request is not valid"
		if rfc.ErrorField == fosite.ErrInvalidClient.ErrorField {
			msg = "The app asking for access is not registered here."
		} else if rfc.HintField != "" {
			msg += ": " + rfc.HintField
		}
		return nil, &httperr.Error{Status: fiber.StatusBadRequest, Code: "invalid_request", Message: msg}
	}
	rec := web.NewRecorder()
	h.auth.provider.WriteAuthorizeError(ctx, rec, ar, err)
	return nil, sendRecorded(c, rec)
}

// requestedScope is the one scope a request gets: read_write when it asks
// for it, else read (also when it asks for none).
func requestedScope(requested fosite.Arguments) string {
	if slices.Contains(requested, models.ScopeReadWrite) {
		return models.ScopeReadWrite
	}
	return models.ScopeRead
}

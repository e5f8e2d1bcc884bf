// Package signin is how people get in and out: the password sign-in and
// sign-out, registration, password reset and change, and single sign-on
// (OIDC, OAuth 2.0, SAML) with identity linking. It turns a verified
// identity from sso into a session; it keeps no state between requests
// outside PostgreSQL, Redis and sealed cookies.
package signin

import (
	"embed"
	"log/slog"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"coffer/api/web"
	"coffer/jobs/mail"
	"coffer/models"
	"coffer/sso"
)

//go:embed templates/*.html
var templates embed.FS

// maxName is the longest family name registration takes.
const maxName = 255

// Options configure sign-in.
type Options struct {
	Store  *models.Store
	Redis  redis.UniversalClient // lockout counters, SSO state and pending links
	Logger *slog.Logger
	Clock  func() time.Time
	Mail   *mail.Mailer
	SSO    SSOOptions
	OAuth  AuthServerOptions
}

// SSOOptions configure single sign-on.
type SSOOptions struct {
	Registry       *sso.Registry
	StateKey       []byte   // 32 bytes: seals the sso_state cookie
	JITMode        string   // JITCreateAndLink or JITLinkOnly
	AllowedDomains []string // ALLOWED_OIDC_DOMAINS, lowercased, without @
	// ProvidersFile is the provider file of yaml mode, whose providers the
	// screens show read-only; "" in db mode.
	ProvidersFile string
	// MobilePKCERequired refuses an app's single sign-on that sends no
	// PKCE code_challenge (MOBILE_SSO_PKCE=required); off, such
	// a sign-in ends with a bearer code, as the reference app expects.
	MobilePKCERequired bool
}

// Handler serves sign-in; handlers are its methods.
type Handler struct {
	site  *web.Site
	pages web.Pages
	store *models.Store
	redis redis.UniversalClient
	log   *slog.Logger
	now   func() time.Time
	web   web.Options
	sso   SSOOptions
	mail  *mail.Mailer
	auth  *authServer
	hash  *web.Hasher // every password hash and check, within the process's memory bound
	// passkeys is the WebAuthn relying party of APP_URL; nil where APP_URL
	// is an address, which WebAuthn cannot name.
	passkeys *webauthn.WebAuthn

	dummyOnce sync.Once
	dummyHash string // checked for unknown emails, so they take as long as known ones; made on first use
}

// New parses the sign-in templates and returns their handler.
func New(site *web.Site, o Options) (*Handler, error) {
	pages, err := site.Parse(templates, nil, "login", "register", "password_forgot", "password_reset", "security", "link", "invitation",
		"consent", "authorized_apps", "totp_setup", "recovery_codes", "two_factor", "passkey_new")
	if err != nil {
		return nil, err
	}
	passkeys, err := newPasskeys(site.Options().Origin)
	if err != nil {
		return nil, err
	}
	issuer := o.SSO.Registry.Options().BaseURL
	return &Handler{
		site: site, pages: pages, store: o.Store, redis: o.Redis, log: o.Logger, now: o.Clock,
		web: site.Options(), sso: o.SSO, mail: o.Mail, hash: site.Hasher(),
		auth:     newAuthServer(o.Store, o.OAuth, issuer, site.Options().Secret),
		passkeys: passkeys,
	}, nil
}

// Routes mounts sign-in; screen wraps each with the session and CSRF.
// The SAML ACS is a cross-site POST from the identity provider: it
// carries no CSRF token and is protected by the signature, InResponseTo
// and the saml_bind cookie instead.
func (h *Handler) Routes(app fiber.Router, screen func(...fiber.Handler) []fiber.Handler) {
	signedIn := h.site.SignedIn
	app.Get("/invitations/:token", screen(h.showInvitation)...)
	app.Post("/invitations/:token", screen(h.acceptInvitation)...)
	app.Post("/invitations/:token/sso/:name", screen(h.startInvitationSSO)...)
	app.Get("/sessions/new", screen(h.newSession)...)
	app.Post("/sessions", screen(h.createSession)...)
	app.Post("/sessions/logout", screen(h.deleteSession)...)
	app.Get("/sessions/two_factor", screen(h.twoFactor)...)
	app.Post("/sessions/two_factor", screen(h.checkTwoFactor)...)
	app.Post("/sessions/two_factor/passkey", screen(h.checkPasskey)...)
	app.Get("/sessions/two_factor/setup", screen(h.twoFactorSetup)...)
	app.Post("/sessions/two_factor/setup", screen(h.confirmTwoFactorSetup)...)
	app.Delete("/sessions/logout", screen(h.deleteSession)...)
	app.Get("/registrations/new", screen(h.localOff, h.signupOpen, h.newRegistration)...)
	app.Post("/registrations", screen(h.localOff, h.signupOpen, h.createRegistration)...)
	app.Get("/password/forgot", screen(h.localOff, h.forgotPassword)...)
	app.Post("/password/forgot", screen(h.localOff, h.sendPasswordReset)...)
	app.Get("/password/reset", screen(h.localOff, h.resetPasswordForm)...)
	app.Post("/password/reset", screen(h.localOff, h.resetPassword)...)
	app.Get("/settings/security", screen(signedIn, h.security)...)
	app.Post("/settings/security/password", screen(signedIn, h.localOff, h.changePassword)...)
	app.Get("/settings/security/totp/new", screen(signedIn, h.newTOTP)...)
	app.Post("/settings/security/totp", screen(signedIn, h.createTOTP)...)
	app.Post("/settings/security/totp/remove", screen(signedIn, h.removeTOTP)...)
	app.Get("/settings/security/passkeys/new", screen(signedIn, h.newPasskey)...)
	app.Post("/settings/security/passkeys", screen(signedIn, h.createPasskey)...)
	app.Post("/settings/security/passkeys/:id/remove", screen(signedIn, h.removePasskey)...)
	app.Post("/settings/security/sessions/others/end", screen(signedIn, h.endOtherSessions)...)
	app.Post("/settings/security/sessions/:id/end", screen(signedIn, h.endSession)...)
	app.Post("/settings/security/connect/:name", screen(signedIn, h.connectProvider)...)
	app.Post("/settings/security/identities/:id/unlink", screen(signedIn, h.unlinkIdentity)...)
	app.Get("/auth/saml/:id/metadata", h.samlMetadata)
	app.Post("/auth/saml/:id/callback", h.site.LoadSession, h.site.CSRFExempt, h.samlACS)
	app.Get("/auth/saml/:id/logout", screen(h.samlLogout)...)
	app.Get("/auth/link", screen(h.linkPage)...)
	app.Post("/auth/link", screen(h.confirmLink)...)
	// The OAuth authorization server: the consent screen is a screen; the
	// protocol endpoints are for apps (no session, no CSRF, OAuth errors).
	app.Get("/.well-known/oauth-authorization-server", h.metadata)
	app.Get("/.well-known/oauth-protected-resource", h.resourceMetadata)
	app.Get("/.well-known/oauth-protected-resource/mcp", h.resourceMetadata)
	app.Get("/oauth/authorize", screen(h.authorize)...)
	app.Post("/oauth/authorize", screen(h.decideAuthorization)...)
	app.Post("/oauth/token", h.token)
	app.Post("/oauth/revoke", h.revoke)
	app.Post("/oauth/register", h.register)
	app.Get("/settings/authorized_apps", screen(signedIn, h.authorizedApps)...)
	app.Post("/settings/authorized_apps/revoke", screen(signedIn, h.revokeAuthorizedApp)...)
	app.Get("/auth/:name", screen(h.startSSO)...)
	app.Get("/auth/:name/callback", screen(h.ssoCallback)...)
	// After the callback: a provider named "mobile" keeps its callback.
	app.Get("/auth/mobile/:name", screen(h.startMobileSSO)...)
}

// AppRoutes mounts the mobile app's sign-in on /api/v1/auth: JSON in and
// out, no key and no session; the answers carry tokens.
func (h *Handler) AppRoutes(auth fiber.Router) {
	auth.Post("/login", h.mobileLogin)
	auth.Post("/signup", h.mobileSignup)
	auth.Post("/refresh", h.mobileRefresh)
	auth.Post("/sso_exchange", h.mobileSSOExchange)
}

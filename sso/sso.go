// Package sso holds the relying parties of single sign-on: OpenID Connect
// and OAuth 2.0 (oauth.go) and SAML 2.0 (saml.go), built from the
// providers an administrator configured (models.SSOProvider). Each returns
// a verified Identity; what happens to it (linking, JIT, sessions) is
// api's business. It also validates provider settings and computes roles
// from group mappings and rules.
package sso

import (
	"fmt"
	"net/http"
	"time"

	"coffer/models"
)

// Identity is what a provider asserted about a person, after every check
// of the protocol passed. It is the store's type, so that a sign-in is
// recorded from exactly what sso/ verified.
type Identity = models.VerifiedIdentity

// Failure is a refused sign-in. Reason is the login_failed reason of the
// audit log; Detail is a short cause for the audit metadata, never a
// secret or token; Status is the HTTP status of an upstream answer, when
// one caused it.
type Failure struct {
	Reason string
	Detail string
	Status int
}

func (f *Failure) Error() string {
	if f.Detail == "" {
		return "sso: " + f.Reason
	}
	return "sso: " + f.Reason + ": " + f.Detail
}

func fail(reason, format string, args ...any) *Failure {
	return &Failure{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// Reasons of a refused sign-in (spec/sso.md §11.1).
const (
	ReasonStateInvalid        = "state_invalid"
	ReasonIdPError            = "idp_error"
	ReasonTokenExchangeFailed = "token_exchange_failed"
	ReasonIDTokenInvalid      = "id_token_invalid"
	ReasonNonceMismatch       = "nonce_mismatch"
	ReasonIssuerMismatch      = "issuer_mismatch"
	ReasonUserinfoInvalid     = "userinfo_invalid"
	ReasonEmailUnverified     = "email_unverified"
	ReasonJITDisabled         = "jit_disabled"
	ReasonDomainNotAllowed    = "domain_not_allowed"
	ReasonLinkPasswordFailed  = "link_password_failed"
	ReasonLinkedElsewhere     = "identity_linked_elsewhere"
	ReasonProviderUnavailable = "provider_unavailable"
	ReasonSAMLInvalid         = "saml_invalid"
	ReasonSAMLReplay          = "saml_replay"
	ReasonSAMLUnsolicited     = "saml_unsolicited"
	ReasonSuspended           = "suspended"
	// A sign-in started from an invitation: the invitation is used,
	// expired, revoked or unknown, or the address has an account in
	// another family / the provider verified another address.
	ReasonInvitationUnusable = "invitation_unusable"
	ReasonInvitationEmail    = "invitation_email_mismatch"
)

// Options are the settings every relying party shares.
type Options struct {
	BaseURL    string       // APP_URL, no trailing slash
	HTTPClient *http.Client // discovery, JWKS, token, userinfo, metadata; its timeout is SSO_HTTP_TIMEOUT
	Now        func() time.Time
	SAMLSkew   time.Duration // tolerance on NotBefore / NotOnOrAfter
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

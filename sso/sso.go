// Package sso will hold the OIDC, OAuth 2.0 and SAML relying parties behind
// one Provider interface, returning a verified identity to api. It is
// empty until single sign-on lands.
package sso

// Package ssotest runs the identity providers the SSO tests sign in
// against, on loopback: the real Dex (StartDex) and a small in-process
// OpenID Connect / OAuth 2.0 provider that can be told to misbehave
// (NewProvider). Tests import it; the service never does.
package ssotest

import (
	"crypto/rand"
	"encoding/base64"
)

// random returns n random bytes, base64url without padding.
func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

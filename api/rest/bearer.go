package rest

import (
	"crypto/sha256"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
)

// credential is what a request authenticates with: an API key or an OAuth
// access token.
type credential struct {
	secret string
	bearer bool
	// metadataURL is the protected resource's metadata (RFC 9728) that a
	// refusal names; empty for /api/v1.
	metadataURL string
}

// credentialOf reads X-Api-Key, else an Authorization: Bearer header (RFC
// 6750 §2.1; the scheme in any letter case).
func credentialOf(c *fiber.Ctx) credential {
	if key := c.Get(headerAPIKey); key != "" {
		return credential{secret: key}
	}
	auth := c.Get(fiber.HeaderAuthorization)
	if len(auth) < 7 || !strings.EqualFold(auth[:7], "bearer ") {
		return credential{}
	}
	return credential{secret: strings.TrimSpace(auth[7:]), bearer: true}
}

// hash is the credential's name in the cache. A token is hashed apart
// from keys, so that a key sent as a bearer token is never taken for one.
func (cr credential) hash() [sha256.Size]byte {
	if cr.bearer {
		return sha256.Sum256([]byte("bearer\x00" + cr.secret))
	}
	return sha256.Sum256([]byte(cr.secret))
}

// refuse is the 401 of a missing or refused credential; a bearer token's
// carries the challenge of RFC 6750 §3. On a resource with metadata
// every refusal carries a challenge naming it (RFC 9728 §5.1): with no
// credential at all, nothing else, so that a client starts the OAuth
// flow.
func (cr credential) refuse(c *fiber.Ctx, msg string) error {
	var params []string
	if cr.metadataURL != "" {
		params = append(params, `resource_metadata="`+cr.metadataURL+`"`)
	}
	if cr.bearer {
		params = append(params, `error="invalid_token"`, `error_description="`+msg+`"`)
	}
	if len(params) > 0 {
		c.Set(fiber.HeaderWWWAuthenticate, "Bearer "+strings.Join(params, ", "))
	}
	return &httperr.Error{Status: fiber.StatusUnauthorized, Code: "unauthorized", Message: msg}
}

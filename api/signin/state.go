package signin

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
)

const (
	cookieSSOState   = "sso_state"
	cookieSSOPending = "sso_pending"
	cookieSAMLBind   = "saml_bind"
	ssoStateLife     = 10 * time.Minute
)

// Intents of a sign-in: a plain login, or a signed-in user connecting a
// provider to their account.
const (
	intentLogin = "login"
	intentLink  = "link"
)

// flow is what a sign-in is for, carried through the identity provider's
// round trip: where to go after, and a login, a link or a join.
type flow struct {
	ReturnTo   string         `json:"r"`
	Intent     string         `json:"i"`
	LinkUser   *uuid.UUID     `json:"u,omitempty"` // a link: the signed-in user who pressed Connect
	Invitation *invitationRef `json:"j,omitempty"` // a join: started from an invitation's page
	Mobile     *mobileDevice  `json:"m,omitempty"` // the mobile app's sign-in: ends at the app, with a code
}

// invitationRef names the invitation a sign-in accepts. It travels only
// sealed (the state cookie) or server-side (the SAML request in Redis), so
// a browser cannot swap in another invitation; the token itself stays in
// the link.
type invitationRef struct {
	FamilyID uuid.UUID `json:"f"`
	ID       uuid.UUID `json:"id"`
}

// ssoState is what the sso_state cookie carries through the identity
// provider's round trip. It is sealed, so the browser can neither read
// the nonce and PKCE verifier nor change any of it, and any web process
// can finish a flow another one started.
type ssoState struct {
	ProviderID uuid.UUID `json:"p"`
	State      string    `json:"s"`
	Nonce      string    `json:"n,omitempty"`
	Verifier   string    `json:"v"`
	flow
	IssuedAt int64 `json:"t"`
}

// randomToken is 32 random bytes, base64url: states, nonces, verifiers.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func (h *Handler) stateAEAD() (cipher.AEAD, error) {
	block, err := aes.NewCipher(h.sso.StateKey)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealCookie encrypts v for a cookie named name; the name is associated
// data, so one cookie's value does not open as another's.
func (h *Handler) sealCookie(name string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	aead, err := h.stateAEAD()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(name))), nil
}

var errBadCookie = errors.New("api: cookie does not open")

func (h *Handler) openCookie(name, value string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(value) > 4096 {
		return errBadCookie
	}
	aead, err := h.stateAEAD()
	if err != nil {
		return err
	}
	if len(raw) < aead.NonceSize() {
		return errBadCookie
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(name))
	if err != nil {
		return errBadCookie
	}
	if json.Unmarshal(plain, v) != nil {
		return errBadCookie
	}
	return nil
}

func (h *Handler) setShortCookie(c *fiber.Ctx, name, value, path string) {
	c.Cookie(&fiber.Cookie{Name: name, Value: value, Path: path, HTTPOnly: true, SameSite: "Lax",
		Secure: h.web.SecureCookies, MaxAge: int(ssoStateLife.Seconds())})
}

func (h *Handler) clearCookie(c *fiber.Ctx, name, path string) {
	c.Cookie(&fiber.Cookie{Name: name, Path: path, Expires: time.Unix(0, 0), HTTPOnly: true, SameSite: "Lax", Secure: h.web.SecureCookies})
}

package signin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/boombuler/barcode/qr"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"coffer/models"
)

// The second factor (issue 28): a TOTP authenticator app (RFC 6238: SHA-1,
// six digits, 30-second steps, what every app reads from a QR code) and
// ten one-time recovery codes.

const (
	totpPeriod        = 30
	recoveryCodeCount = 10
	// Second-factor methods, as audit records name them.
	factorTOTP     = "totp"
	factorRecovery = "recovery_code"
)

// totpOpts are the code parameters; a code one step early or late is
// accepted, for clocks that drift.
var totpOpts = totp.ValidateOpts{Period: totpPeriod, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// totpStep returns the time step of the window around now whose code is
// code, or false. Every step of the window is computed and compared in
// constant time, so the time taken says nothing of which one matched.
func totpStep(secret, code string, now time.Time) (int64, bool) {
	code = strings.Join(strings.Fields(code), "")
	if len(code) != 6 {
		return 0, false
	}
	step := now.Unix() / totpPeriod
	found, matched := int64(0), 0
	for s := step - 1; s <= step+1; s++ {
		want, err := totp.GenerateCodeCustom(secret, time.Unix(s*totpPeriod, 0), totpOpts)
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			found, matched = s, 1
		}
	}
	return found, matched == 1
}

// looksLikeTOTP reports whether what a person typed is an app's code (six
// digits) rather than a recovery code or a password.
func looksLikeTOTP(s string) bool {
	s = strings.Join(strings.Fields(s), "")
	if len(s) != 6 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// newRecoveryCodes makes the ten codes of an enrolment: 50 random bits
// each, written as two groups of five lowercase base32 letters.
func newRecoveryCodes() ([]string, error) {
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	codes := make([]string, recoveryCodeCount)
	for i := range codes {
		b := make([]byte, 7)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		s := strings.ToLower(enc.EncodeToString(b))[:10]
		codes[i] = s[:5] + "-" + s[5:]
	}
	return codes, nil
}

// recoveryHash is the stored form of a recovery code: HMAC-SHA256 keyed
// with the server secret over the user and the code as typed without
// spaces, dashes or case. The codes are random, so a fast keyed hash
// suffices; a copy of the table without the key is of no use.
func (h *Handler) recoveryHash(userID uuid.UUID, code string) string {
	code = strings.ToLower(strings.NewReplacer("-", "", " ", "", "\t", "").Replace(code))
	m := hmac.New(sha256.New, h.web.Secret)
	m.Write([]byte("coffer recovery code\x00" + userID.String() + "\x00" + code))
	return hex.EncodeToString(m.Sum(nil))
}

// qrSVG is the key's otpauth:// address as a QR code drawn inline as
// SVG: nothing leaves for another service, and the page's content
// security policy (no data: images) has nothing to allow.
func qrSVG(k *otp.Key) (template.HTML, error) {
	code, err := qr.Encode(k.URL(), qr.M, qr.Auto)
	if err != nil {
		return "", err
	}
	const quiet = 4 // the blank border a reader needs, in modules
	n := code.Bounds().Dx()
	var path strings.Builder
	for y := range n {
		for x := range n {
			if r, _, _, _ := code.At(x, y).RGBA(); r < 0x8000 {
				fmt.Fprintf(&path, "M%d %dh1v1h-1z", x+quiet, y+quiet)
			}
		}
	}
	size := n + 2*quiet
	// Every part of the markup is made here from numbers; nothing of the
	// request is in it.
	return template.HTML(fmt.Sprintf(`<svg class="qr" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="240" height="240" `+ //nolint:gosec
		`role="img" aria-label="QR code for your authenticator app" shape-rendering="crispEdges">`+
		`<rect width="%d" height="%d" fill="#fff"/><path d="%s" fill="#000"/></svg>`, size, size, size, size, path.String())), nil
}

// groupSecret writes a base32 secret in groups of four, for typing.
func groupSecret(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// userTOTP returns the user's authenticator app, or nil when there is none.
func (h *Handler) userTOTP(ctx context.Context, u *models.User) (*models.UserTOTP, error) {
	t, err := h.store.UserTOTP(ctx, u.FamilyID, u.ID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	return t, err
}

// checkFactor checks a code typed for u's authenticator app t (nil when
// the person has passkeys only, whose code can be a recovery code): six digits
// are an app's code, accepted once per time step (a replay within its
// window is refused); anything else is a recovery code, spent here. It
// returns the method that passed, or "" for a wrong code. The caller
// counts the attempt toward the lockout.
func (h *Handler) checkFactor(c *fiber.Ctx, u *models.User, t *models.UserTOTP, code string) (string, error) {
	ctx := c.UserContext()
	if len(code) > 64 {
		return "", nil
	}
	if looksLikeTOTP(code) {
		if t == nil {
			return "", nil
		}
		secret, err := h.store.TOTPSecret(t)
		if err != nil {
			return "", err
		}
		step, ok := totpStep(secret, code, h.now())
		if !ok {
			return "", nil
		}
		fresh, err := h.store.UseTOTPStep(ctx, u.FamilyID, u.ID, step)
		if err != nil || !fresh {
			return "", err
		}
		return factorTOTP, nil
	}
	rec := h.auditRecord(c, models.EventRecoveryCodeUsed, &u.ID, nil)
	used, err := h.store.UseRecoveryCode(ctx, u.FamilyID, u.ID, h.recoveryHash(u.ID, code), rec)
	if err != nil || !used {
		return "", err
	}
	return factorRecovery, nil
}

// auditBadCode writes second_factor_failed for a wrong code of u.
func (h *Handler) auditBadCode(c *fiber.Ctx, u *models.User, where string) error {
	return h.store.CreateAuditLog(c.UserContext(), h.auditRecord(c, models.EventSecondFactorFailed, &u.ID, map[string]any{"where": where}))
}

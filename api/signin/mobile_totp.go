package signin

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
)

// msgMFARequired is the reference's answer (auth_controller.rb login) to
// a person with a second factor who sent no code, or a wrong one; the app
// then asks for the code and sends the request again with otp_code.
const msgMFARequired = "Two-factor authentication required"

// mfaRequired answers as the reference does: 401 with exactly these two
// fields, which the app branches on.
func mfaRequired(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusUnauthorized).JSON(fiber.Map{"error": msgMFARequired, "mfa_required": true})
}

// appSecondFactor is the second factor of the app's password sign-in, for
// u whose password was right. It returns the method that passed ("" when
// none applies), or "-" when it has answered the request itself: the
// reference's mfa_required without a code or with a wrong one (counted
// toward the lockout, as at the sign-in screen), 429 while locked, and
// 403 for a person whose family requires a second factor they have not
// set up (that happens on the web).
func (h *Handler) appSecondFactor(c *fiber.Ctx, u *models.User, code string) (string, error) {
	ctx := c.UserContext()
	t, err := h.userTOTP(ctx, u)
	if err != nil {
		return "", err
	}
	// A person whose only second factor is a passkey has no code for the
	// app but their recovery codes: the app cannot make a passkey
	// ceremony, and a password alone must not do.
	has, err := h.store.HasSecondFactor(ctx, u.FamilyID, u.ID)
	if err != nil {
		return "", err
	}
	if t == nil && !has {
		fam, err := h.store.Family(ctx, u.FamilyID)
		if err != nil {
			return "", err
		}
		if fam.RequireSecondFactor {
			return "-", mobileRefusal(c, fiber.StatusForbidden,
				"Your household requires two-step verification. Sign in on the web once to set up an authenticator app.")
		}
		return "", nil
	}
	if code == "" {
		return "-", mfaRequired(c)
	}
	wait, err := h.claimAttempt(ctx, u.Email, web.ClientIP(c))
	if err != nil {
		return "", err
	}
	if wait > 0 {
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(int(wait.Seconds()+0.999)))
		return "-", mobileRefusal(c, fiber.StatusTooManyRequests,
			fmt.Sprintf("Too many failed sign-in attempts. Try again in %d minutes.", int(wait.Minutes()+0.999)))
	}
	method, err := h.checkFactor(c, u, t, code)
	if err != nil {
		return "", err
	}
	if method == "" {
		if err := h.auditBadCode(c, u, "app"); err != nil {
			return "", err
		}
		return "-", mfaRequired(c)
	}
	return method, h.releaseAttempt(ctx, u.Email, web.ClientIP(c))
}

package signin

import (
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/secret"
)

// refusal is a refused password sign-in: the audit record's reason, and
// the status and sentence of the answer.
type refusal struct {
	status int
	reason string
	msg    string
	userID *uuid.UUID
}

// passwordLogin is a password sign-in that passed every check.
type passwordLogin struct {
	user *models.User
	// override is a super admin signing in while local sign-in is off.
	override bool
	// newHash is the password hashed with today's parameters, when the
	// stored hash used older ones.
	newHash *string
}

// checkPassword runs the checks of a password sign-in that the form
// (POST /sessions) and the app (POST /api/v1/auth/login) share: the local
// sign-in setting and its admin override, the lockout (the attempt is
// counted before the password is checked, so parallel guesses get no
// more checks than the limit), the password, and the user's status. The
// answers reveal neither who exists nor who is a super admin. badStatus
// and badMsg answer wrong credentials, which the two answer differently
// (the form's 422, the app's 401 with the reference's sentence).
func (h *Handler) checkPassword(c *fiber.Ctx, email, password string, badStatus int, badMsg string) (*passwordLogin, *refusal, error) {
	ctx := c.UserContext()
	if !h.web.LocalLogin && !h.web.AdminOverride {
		return nil, &refusal{fiber.StatusForbidden, "local_login_disabled", "Password sign-in is disabled. Use single sign-on.", nil}, nil
	}
	bad := &refusal{badStatus, "bad_credentials", badMsg, nil}
	if email == "" || len(email) > 320 || len(password) > secret.MaxPasswordLen || web.HasControl(email) {
		return nil, bad, nil
	}
	wait, err := h.claimAttempt(ctx, email, web.ClientIP(c))
	if err != nil {
		return nil, nil, err
	}
	if wait > 0 {
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(int(wait.Seconds()+0.999)))
		return nil, &refusal{fiber.StatusTooManyRequests, "locked",
			fmt.Sprintf("Too many failed sign-in attempts. Try again in %d minutes.", int(wait.Minutes()+0.999)), nil}, nil
	}

	u, err := h.store.UserByEmail(ctx, email)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return nil, nil, err
	}
	hash := h.dummy() // unknown users cost the same time as known ones
	if err == nil && u.PasswordHash != nil {
		hash = *u.PasswordHash
	}
	ok, rehash, herr := h.hash.Check(ctx, hash, password)
	if herr != nil && !errors.Is(herr, secret.ErrBadHash) {
		return nil, nil, herr
	}
	if !ok || err != nil || u.PasswordHash == nil {
		if u != nil && u.ID != uuid.Nil {
			bad.userID = &u.ID
		}
		return nil, bad, nil
	}
	// A second factor still to pass keeps the account's failures counted
	// (see giveBackAttempt); its own success forgives them.
	t, err := h.userTOTP(ctx, u)
	if err != nil {
		return nil, nil, err
	}
	release := h.releaseAttempt
	if t != nil {
		release = h.giveBackAttempt
	}
	if err := release(ctx, email, web.ClientIP(c)); err != nil {
		return nil, nil, err
	}
	override := !h.web.LocalLogin
	if override && u.Role != models.RoleSuperAdmin {
		return nil, &refusal{fiber.StatusForbidden, "override_not_allowed", "Password sign-in is limited to super administrators.", &u.ID}, nil
	}
	if u.Status != models.UserActive {
		return nil, &refusal{fiber.StatusForbidden, "suspended", "Your account has been suspended.", &u.ID}, nil
	}
	login := &passwordLogin{user: u, override: override}
	if rehash {
		s, err := h.hash.Hash(ctx, password)
		if err != nil {
			return nil, nil, err
		}
		login.newHash = &s
	}
	return login, nil, nil
}

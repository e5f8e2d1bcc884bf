package signin

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/models"
	"coffer/sso"
)

// startInvitationSSO starts a sign-in at a provider that accepts the
// invitation (POST /invitations/:token/sso/:name, a form with CSRF). The
// invitation rides through the round trip by id, sealed with the rest of
// the flow; resolveIdentity takes it from there.
func (h *Handler) startInvitationSSO(c *fiber.Ctx) error {
	inv, err := h.store.InvitationByToken(c.UserContext(), c.Params("token"))
	if st, refusal, ok := invitationRefusal(err); ok {
		return h.invitationGone(c, st, refusal)
	}
	if err != nil {
		return err
	}
	e, err := h.enabledProvider(c)
	if err != nil {
		return err
	}
	ref := &invitationRef{FamilyID: inv.FamilyID, ID: inv.ID}
	return h.beginSSO(c, e, flow{ReturnTo: "/", Intent: intentLogin, Invitation: ref})
}

// acceptBySSO accepts the invitation for u: someone new (known nil), who
// joins the invited family with the invited role, or the owner of the
// known identity, who just signs in. Either way the invitation is used.
// The role given at the join stays until the next sign-in through a
// provider with group mappings, which recomputes it as for everyone.
// ErrConflict (a subject or address taken meanwhile) is returned as it is,
// for resolveOnce to try again.
func (h *Handler) acceptBySSO(c *fiber.Ctx, e *sso.Entry, id *sso.Identity, ref *invitationRef, u *models.User, known *models.SSOIdentity) error {
	token, err := h.store.AcceptInvitationSSO(c.UserContext(), h.ssoSignIn(c, e, id), ref.FamilyID, ref.ID, u, known)
	if err != nil {
		var who *uuid.UUID
		if known != nil {
			who = &u.ID
		}
		return h.invitationRefused(c, e, err, who)
	}
	if known == nil {
		return h.welcome(c, token)
	}
	return h.beginSession(c, token, "/")
}

// invitationRefused audits a join that the invitation refuses and shows
// the sentence the password path shows; any other error is returned.
func (h *Handler) invitationRefused(c *fiber.Ctx, e *sso.Entry, err error, userID *uuid.UUID) error {
	status, msg, ok := invitationRefusal(err)
	if !ok {
		return err
	}
	reason := sso.ReasonInvitationUnusable
	if errors.Is(err, models.ErrInvitationEmail) {
		reason = sso.ReasonInvitationEmail
	}
	return h.ssoRefused(c, e, status, reason, msg, err.Error(), userID)
}

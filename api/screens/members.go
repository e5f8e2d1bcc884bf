package screens

import (
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/jobs/mail"
	"coffer/models"
)

type membersData struct {
	Members     []models.UserRow
	Invitations []models.Invitation
	Admin       bool
	Form        *form
	NewLink     string // the link of an invitation just made, shown once
	Mailed      bool
}

func (h *Handler) membersPage(c *fiber.Ctx, status int, d membersData) error {
	ctx, u := c.UserContext(), web.SessionOf(c).User
	var err error
	if d.Members, _, err = h.store.Users(ctx, models.UserFilter{FamilyID: &u.FamilyID}, models.Page{Number: 1, Size: 200}); err != nil {
		return err
	}
	d.Admin = u.Role == models.RoleAdmin || u.Role == models.RoleSuperAdmin
	if d.Admin {
		if d.Invitations, err = h.store.Invitations(ctx, u.FamilyID); err != nil {
			return err
		}
	}
	if d.Form == nil {
		d.Form = newForm(c)
	}
	return h.pages.Render(c, status, "members", web.Page{Title: "Members", Data: d})
}

// listMembers shows the family's members to every member, and to admins
// the pending invitations and the invite form.
func (h *Handler) listMembers(c *fiber.Ctx) error {
	return h.membersPage(c, fiber.StatusOK, membersData{})
}

// invite makes a one-time link valid 7 days, mails it, and shows it once
// on the page too (for a family without mail set up).
func (h *Handler) invite(c *fiber.Ctx) error {
	ctx, u := c.UserContext(), web.SessionOf(c).User
	f := newForm(c)
	email := f.text("email", "Email", 320, true)
	role := f.oneOf("role", "Role", models.RoleMember, models.RoleAdmin)
	if !f.ok() {
		return h.membersPage(c, fiber.StatusUnprocessableEntity, membersData{Form: f})
	}
	inv, token, err := h.store.CreateInvitation(ctx, u.FamilyID, u.ID, email, role)
	if formProblems(f, err) {
		return h.membersPage(c, fiber.StatusUnprocessableEntity, membersData{Form: f})
	}
	if err != nil {
		return err
	}
	link := h.site.Options().Origin + "/invitations/" + token
	fam, err := h.store.Family(ctx, u.FamilyID)
	if err != nil {
		return err
	}
	body := fmt.Sprintf("%s invited you to keep the %s household's accounts together on coffer.\n\n"+
		"Open this link within 7 days to join:\n%s\n", u.Email, fam.Name, link)
	mailed := true
	if err := h.mail.Send(ctx, inv.Email, "You are invited to "+fam.Name+" on coffer", body); err != nil {
		mailed = false
		if !errors.Is(err, mail.ErrNoMail) {
			h.log.Warn("invitation mail not sent", "request_id", httperr.RequestID(c), "error", err)
		}
	}
	return h.membersPage(c, fiber.StatusCreated, membersData{NewLink: link, Mailed: mailed})
}

func (h *Handler) revokeInvitation(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	if err := h.store.RevokeInvitation(c.UserContext(), web.SessionOf(c).User.FamilyID, id); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/members", "Invitation revoked; its link no longer works.")
}

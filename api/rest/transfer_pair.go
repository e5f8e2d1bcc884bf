package rest

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/models"
)

// pairTransfer is the reference's PATCH /transactions/{id}/transfer: it
// links the path's transaction and {"transfer": {"other_transaction_id"}}
// as the two sides of one transfer and answers the transaction, its
// transfer shown. Neither row changes, so no balance does.
func (h *Handler) pairTransfer(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	id, f, err := idAndObject(c, "transfer")
	if err != nil {
		return err
	}
	raw, ok := f.str("other_transaction_id", 64, true)
	if !ok || raw == "" {
		if err := f.err(); err != nil {
			return err
		}
		return sentence("other_transaction_id is required")
	}
	other, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return models.ErrNotFound // no transaction has that id
	}
	if _, err := h.store.PairTransfer(ctx, k.FamilyID, id, other); err != nil {
		var inv *models.InvalidError
		if errors.As(err, &inv) {
			return sentence(inv.Problems...)
		}
		return err
	}
	t, err := h.store.Transaction(ctx, k.FamilyID, id)
	if err != nil {
		return err
	}
	return c.JSON(renderTransaction(t))
}

// sentence is the reference's 422 for a refused pairing: the problems as
// the message as well as the list.
func sentence(problems ...string) error {
	return &httperr.Error{Status: fiber.StatusUnprocessableEntity, Code: "validation_failed",
		Message: strings.Join(problems, "; "), Errors: problems}
}

// updateTransfer is the reference's PATCH /transfers/{id}: status
// "rejected" unpairs the two transactions and keeps both (the pair is not
// suggested again), "confirmed" keeps it; notes replaces the notes.
func (h *Handler) updateTransfer(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	id, f, err := idAndObject(c, "transfer")
	if err != nil {
		return err
	}
	status, hasStatus := f.str("status", 32, true)
	notes, hasNotes := f.str("notes", maxNotes, false)
	if err := f.err(); err != nil {
		return err
	}
	if hasStatus && status != "confirmed" && status != "rejected" {
		return &httperr.Error{Status: fiber.StatusUnprocessableEntity, Code: "validation_failed",
			Message: "Invalid status. Must be 'confirmed' or 'rejected'"}
	}
	if status == "rejected" {
		if err := h.store.UnpairTransfer(ctx, k.FamilyID, id); err != nil {
			return err
		}
		return c.JSON(fiber.Map{"message": "Transfer rejected"})
	}
	var np *string
	if hasNotes || f.isNull("notes") {
		if hasNotes {
			np = &notes
		}
		if err := h.store.SetTransferNotes(ctx, k.FamilyID, id, np); err != nil {
			return err
		}
	}
	tr, err := h.store.Transfer(ctx, k.FamilyID, id)
	if err != nil {
		return err
	}
	return c.JSON(renderTransfer(tr))
}

package screens

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

// maxSuggestions is how many suggested pairs the screen lists at once;
// confirming some brings up the next.
const maxSuggestions = 50

type suggestedData struct {
	Pairs []models.TransferSuggestion
	Days  int
}

// suggestedTransfers lists the pairs that look like one transfer (the
// same amount out of one account and into another within a few days),
// each with its own form to confirm it or say it is not one.
func (h *Handler) suggestedTransfers(c *fiber.Ctx) error {
	pairs, err := h.store.SuggestedTransfers(c.UserContext(), web.SessionOf(c).User.FamilyID, maxSuggestions)
	if err != nil {
		return err
	}
	return h.pages.Render(c, fiber.StatusOK, "transfers_suggested", web.Page{Nav: "transactions",
		Title: "Transfers to confirm", Data: suggestedData{Pairs: pairs, Days: models.TransferMatchDays}})
}

// rejectSuggestedTransfer records that a suggested pair is not a transfer.
func (h *Handler) rejectSuggestedTransfer(c *fiber.Ctx) error {
	out, err1 := uuid.Parse(c.FormValue("outflow_id"))
	in, err2 := uuid.Parse(c.FormValue("inflow_id"))
	if err1 != nil || err2 != nil {
		return httperr.NotFound()
	}
	if err := h.store.RejectTransferPair(c.UserContext(), web.SessionOf(c).User.FamilyID, out, in); err != nil {
		return err
	}
	return h.site.Redirect(c, returnTo(c, "/transfers/suggested"), "Not a transfer: both stay as they are.")
}

type pairData struct {
	Tx         *models.Transaction
	Candidates []models.Transaction
	Error      string
}

// transactionTransfer shows a transaction's transfer: the other side and
// a button to unpair when it has one, else the transactions it could be
// paired with, to choose one.
func (h *Handler) transactionTransfer(c *fiber.Ctx) error {
	return h.pairPage(c, fiber.StatusOK, "")
}

func (h *Handler) pairPage(c *fiber.Ctx, status int, problem string) error {
	t, err := h.familyTransaction(c)
	if err != nil {
		return err
	}
	d := pairData{Tx: t, Error: problem}
	if t.Transfer == nil {
		if d.Candidates, err = h.store.TransferCandidates(c.UserContext(), t.FamilyID, t.ID); err != nil {
			return err
		}
	}
	return h.pages.Render(c, status, "transfer_pair", web.Page{Nav: "transactions", Title: "Pair as a transfer", Data: d})
}

// pairTransfer makes the path's transaction and other_transaction_id the
// two sides of one transfer. Neither row changes, so no balance does.
func (h *Handler) pairTransfer(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	other, err := uuid.Parse(c.FormValue("other_transaction_id"))
	if err != nil {
		return h.pairPage(c, fiber.StatusUnprocessableEntity, "Choose the other side of the transfer.")
	}
	_, err = h.store.PairTransfer(c.UserContext(), web.SessionOf(c).User.FamilyID, id, other)
	var inv *models.InvalidError
	switch {
	case errors.As(err, &inv):
		return h.pairPage(c, fiber.StatusUnprocessableEntity, inv.Problems[0])
	case errors.Is(err, models.ErrNotFound):
		if _, err := h.familyTransaction(c); err != nil {
			return err
		}
		return h.pairPage(c, fiber.StatusUnprocessableEntity, "That transaction no longer exists.")
	case errors.Is(err, models.ErrConflict):
		return h.pairPage(c, fiber.StatusUnprocessableEntity, "One of the two was paired meanwhile.")
	case err != nil:
		return err
	}
	return h.site.Redirect(c, returnTo(c, "/transactions"), "Paired as a transfer: neither counts as income or spending now.")
}

// unpairTransfer undoes a transfer and keeps both transactions.
func (h *Handler) unpairTransfer(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	if err := h.store.UnpairTransfer(c.UserContext(), web.SessionOf(c).User.FamilyID, id); err != nil {
		return err
	}
	return h.site.Redirect(c, returnTo(c, "/transactions"), "Unpaired: both transactions stay, each counted again.")
}

package rest

import (
	"encoding/json"
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/jobs/assistant"
	"coffer/models"
)

// proposalJSON is a change the assistant proposed in an answer, waiting
// for the chat's owner (POST …/confirm or …/reject).
type proposalJSON struct {
	ID        string             `json:"id"`
	Tool      string             `json:"tool"`
	Status    string             `json:"status"`
	Summary   string             `json:"summary"`
	Changes   []assistant.Change `json:"changes"`
	CreatedAt string             `json:"created_at"`
	DecidedAt *string            `json:"decided_at"`
}

func renderProposal(p *models.Proposal) proposalJSON {
	out := proposalJSON{ID: p.ID.String(), Tool: p.Tool, Status: p.Status, Summary: p.Summary, Changes: []assistant.Change{},
		CreatedAt: timestamp(p.CreatedAt), DecidedAt: optTimestamp(p.DecidedAt)}
	// Written by the reply job; a row it cannot read shows no changes
	// rather than failing the whole chat.
	_ = json.Unmarshal([]byte(p.Changes), &out.Changes)
	return out
}

// proposalsByMessage groups a chat's proposals by the answer carrying them.
func proposalsByMessage(ps []models.Proposal) map[uuid.UUID][]proposalJSON {
	out := map[uuid.UUID][]proposalJSON{}
	for i := range ps {
		out[ps[i].MessageID] = append(out[ps[i].MessageID], renderProposal(&ps[i]))
	}
	return out
}

// proposalOf loads the proposal of the path: another user's or family's
// reads as not found.
func (h *Handler) proposalOf(c *fiber.Ctx) (*models.Proposal, error) {
	chatID, err := httperr.PathID(c)
	if err != nil {
		return nil, err
	}
	id, err := httperr.ParamID(c, "pid")
	if err != nil {
		return nil, err
	}
	k := KeyOf(c)
	p, err := h.store.Proposal(c.UserContext(), k.FamilyID, k.UserID, chatID, id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, httperr.NotFoundOf("Proposal")
	}
	return p, err
}

// proposalError is the answer to a confirmation or rejection that cannot
// be had.
func proposalError(err error) error {
	var te *assistant.Error
	switch {
	case errors.Is(err, models.ErrConflict):
		return httperr.New(fiber.StatusConflict, "conflict", assistant.DecidedMessage)
	case errors.Is(err, assistant.ErrStale):
		return httperr.New(fiber.StatusConflict, "stale_proposal", assistant.StaleMessage)
	case errors.As(err, &te):
		return httperr.Invalid([]string{te.Message})
	}
	return err
}

// confirmProposal applies the change a proposal shows, once.
func (h *Handler) confirmProposal(c *fiber.Ctx) error {
	p, err := h.proposalOf(c)
	if err != nil {
		return err
	}
	k := KeyOf(c)
	result, err := assistant.Confirm(c.UserContext(), h.store, assistant.Caller{FamilyID: k.FamilyID, UserID: k.UserID}, p)
	if err != nil {
		return proposalError(err)
	}
	return c.JSON(fiber.Map{"proposal": renderProposal(p), "result": json.RawMessage(result)})
}

// rejectProposal closes a proposal without changing anything.
func (h *Handler) rejectProposal(c *fiber.Ctx) error {
	p, err := h.proposalOf(c)
	if err != nil {
		return err
	}
	if err := h.store.DecideProposal(c.UserContext(), p, models.ProposalRejected); err != nil {
		return proposalError(err)
	}
	return c.JSON(fiber.Map{"proposal": renderProposal(p)})
}

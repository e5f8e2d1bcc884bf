package rest

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/models"
)

// The reference's splits (api/v1/splits_controller): POST splits a
// transaction into parts, PATCH replaces the parts, DELETE restores the
// parent; a part's id resolves to its parent for PATCH and DELETE. Each
// answers the parent as the transaction JSON, its parts in `splits`.

func (h *Handler) createSplit(c *fiber.Ctx) error {
	id, parts, err := splitBody(c)
	if err != nil {
		return err
	}
	parent, err := h.store.SplitTransaction(c.UserContext(), KeyOf(c).FamilyID, id, parts)
	if err != nil {
		return splitErr(err)
	}
	return h.respondTransaction(c, fiber.StatusCreated, parent)
}

func (h *Handler) updateSplit(c *fiber.Ctx) error {
	id, parts, err := splitBody(c)
	if err != nil {
		return err
	}
	parent, err := h.store.ReplaceSplit(c.UserContext(), KeyOf(c).FamilyID, id, parts)
	if err != nil {
		return splitErr(err)
	}
	return h.respondTransaction(c, fiber.StatusOK, parent)
}

func (h *Handler) deleteSplit(c *fiber.Ctx) error {
	parent, err := byPathID(c, h.store.Unsplit)
	if err != nil {
		return splitErr(err)
	}
	return h.respondTransaction(c, fiber.StatusOK, parent)
}

// splitErr words a refused split as the reference does: the reason is the
// message, not only an item of errors.
func splitErr(err error) error {
	var inv *models.InvalidError
	if errors.As(err, &inv) {
		return sentence(inv.Problems...)
	}
	return err
}

// splitBody reads the path id and {"split": {"splits": [{"name",
// "amount", "category_id", "excluded", "notes", "tag_ids"}]}}, amounts
// signed as the parent's is stored. Every malformed member is named.
func splitBody(c *fiber.Ctx) (uuid.UUID, []models.SplitPart, error) {
	id, f, err := idAndObject(c, "split")
	if err != nil {
		return id, nil, err
	}
	raw, ok := f.raw["splits"]
	var items []json.RawMessage
	if !ok || f.isNull("splits") || json.Unmarshal(raw, &items) != nil {
		return id, nil, sentence("splits must be an array of parts")
	}
	if len(items) == 0 {
		return id, nil, sentence(models.MsgSplitEmpty)
	}
	if len(items) > models.MaxSplitParts {
		return id, nil, sentence(fmt.Sprintf("A transaction can be split into at most %d parts, not %d", models.MaxSplitParts, len(items)))
	}
	parts := make([]models.SplitPart, len(items))
	var problems []string
	for i, item := range items {
		var obj map[string]json.RawMessage
		if json.Unmarshal(item, &obj) != nil || obj == nil {
			problems = append(problems, fmt.Sprintf("splits[%d] must be an object", i))
			continue
		}
		pf := &fields{raw: obj}
		p := &parts[i]
		p.Name, _ = pf.str("name", maxName, true)
		if a, ok := pf.amount("amount"); ok {
			p.Amount = a
		} else if !pf.bad("amount") {
			pf.add("Each split requires an amount")
		}
		// An empty category_id is none, as the reference reads it.
		if s, ok := pf.str("category_id", 64, true); ok && s != "" {
			p.CategoryID = pf.id("category_id")
		}
		if pf.has("excluded") && !pf.isNull("excluded") {
			if json.Unmarshal(obj["excluded"], &p.Excluded) != nil {
				pf.add("excluded must be true or false")
			}
		}
		if n, ok := pf.str("notes", maxNotes, false); ok {
			p.Notes = &n
		}
		p.TagIDs = pf.ids("tag_ids")
		for _, msg := range pf.problems {
			problems = append(problems, fmt.Sprintf("splits[%d]: %s", i, msg))
		}
	}
	if len(problems) > 0 {
		return id, nil, sentence(problems...)
	}
	return id, parts, nil
}

package rest

import (
	"github.com/gofiber/fiber/v2"

	"coffer/models"
)

// listMerchants answers a bare array, as the reference does.
func (h *Handler) listMerchants(c *fiber.Ctx) error {
	ms, err := h.store.Merchants(c.UserContext(), KeyOf(c).FamilyID)
	if err != nil {
		return err
	}
	return c.JSON(renderAll(ms, renderMerchant))
}

func (h *Handler) showMerchant(c *fiber.Ctx) error {
	return showOne(c, h.store.Merchant, renderMerchant)
}

func (h *Handler) createMerchant(c *fiber.Ctx) error {
	f, err := decodeObject(c, "merchant")
	if err != nil {
		return err
	}
	m := &models.Merchant{FamilyID: KeyOf(c).FamilyID, Name: f.required("name", maxName)}
	if err := f.err(); err != nil {
		return err
	}
	if err := h.store.CreateMerchant(c.UserContext(), m); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(renderMerchant(m))
}

func (h *Handler) updateMerchant(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, f, err := idAndObject(c, "merchant")
	if err != nil {
		return err
	}
	m, err := h.store.Merchant(ctx, KeyOf(c).FamilyID, id)
	if err != nil {
		return err
	}
	if f.has("name") {
		m.Name = f.required("name", maxName)
	}
	if err := f.err(); err != nil {
		return err
	}
	if err := h.store.UpdateMerchant(ctx, m); err != nil {
		return err
	}
	return c.JSON(renderMerchant(m))
}

func (h *Handler) deleteMerchant(c *fiber.Ctx) error {
	return deleteOne(c, h.store.DeleteMerchant, "Merchant")
}

type merchantJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func renderMerchant(m *models.Merchant) merchantJSON {
	return merchantJSON{ID: m.ID.String(), Name: m.Name, CreatedAt: timestamp(m.CreatedAt), UpdatedAt: timestamp(m.UpdatedAt)}
}

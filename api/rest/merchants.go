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

func merchantFields(f *fields, m *models.Merchant, create bool) {
	if create || f.has("name") {
		m.Name = f.required("name", maxName)
	}
}

func (h *Handler) createMerchant(c *fiber.Ctx) error {
	return createOne(c, "merchant", &models.Merchant{FamilyID: KeyOf(c).FamilyID}, merchantFields, h.store.CreateMerchant, renderMerchant)
}

func (h *Handler) updateMerchant(c *fiber.Ctx) error {
	return updateOne(c, "merchant", h.store.Merchant, merchantFields, h.store.UpdateMerchant, renderMerchant)
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

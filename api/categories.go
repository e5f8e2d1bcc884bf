package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/models"
)

type categoriesJSON struct {
	Categories []categoryJSON `json:"categories"`
	Pagination Pagination     `json:"pagination"`
}

func (h *Handler) listCategories(c *fiber.Ctx) error {
	p, err := parsePage(c)
	if err != nil {
		return err
	}
	cs, total, err := h.store.Categories(c.UserContext(), keyOf(c).FamilyID, p)
	if err != nil {
		return err
	}
	out := categoriesJSON{Categories: make([]categoryJSON, len(cs)), Pagination: pagination(p, total)}
	for i := range cs {
		out.Categories[i] = renderCategory(&cs[i])
	}
	return c.JSON(out)
}

func (h *Handler) showCategory(c *fiber.Ctx) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	return h.respondCategory(c, fiber.StatusOK, id)
}

func (h *Handler) respondCategory(c *fiber.Ctx, status int, id uuid.UUID) error {
	cat, err := h.store.Category(c.UserContext(), keyOf(c).FamilyID, id)
	if err != nil {
		return err
	}
	return c.Status(status).JSON(renderCategory(cat))
}

func categoryFields(f *fields, cat *models.Category, create bool) []string {
	var cols []string
	if create || f.has("name") {
		cat.Name = f.required("name", maxName)
		cols = append(cols, "name")
	}
	if col, ok := f.color("color"); ok {
		cat.Color = col
		cols = append(cols, "color")
	} else if create && !f.has("color") {
		cat.Color = "#6172f3"
	}
	if icon, ok := f.str("icon", 64, true); ok && icon != "" {
		cat.Icon = icon
		cols = append(cols, "icon")
	} else if create && !f.bad("icon") {
		cat.Icon = "shapes"
	}
	if f.has("parent_id") {
		cat.ParentID = f.id("parent_id")
		cols = append(cols, "parent_id")
	}
	if cl, ok := f.oneOf("classification", "income", "expense"); ok {
		cat.Classification = cl
		cols = append(cols, "classification")
	} else if create {
		cat.Classification = "expense"
	}
	return cols
}

func (h *Handler) createCategory(c *fiber.Ctx) error {
	f, err := decodeObject(c, "category")
	if err != nil {
		return err
	}
	cat := &models.Category{FamilyID: keyOf(c).FamilyID}
	categoryFields(f, cat, true)
	if err := f.err(); err != nil {
		return err
	}
	if err := h.store.CreateCategory(c.UserContext(), cat); err != nil {
		return err
	}
	return h.respondCategory(c, fiber.StatusCreated, cat.ID)
}

func (h *Handler) updateCategory(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, err := pathID(c)
	if err != nil {
		return err
	}
	f, err := decodeObject(c, "category")
	if err != nil {
		return err
	}
	cat, err := h.store.Category(ctx, keyOf(c).FamilyID, id)
	if err != nil {
		return err
	}
	cols := categoryFields(f, cat, false)
	if err := f.err(); err != nil {
		return err
	}
	if len(cols) > 0 {
		if err := h.store.UpdateCategory(ctx, cat, cols...); err != nil {
			return err
		}
	}
	return h.respondCategory(c, fiber.StatusOK, id)
}

func (h *Handler) deleteCategory(c *fiber.Ctx) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	if err := h.store.DeleteCategory(c.UserContext(), keyOf(c).FamilyID, id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"message": "Category deleted successfully"})
}

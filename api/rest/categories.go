package rest

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
	cs, page, err := listPage(c, h.store.Categories, renderCategory)
	if err != nil {
		return err
	}
	return c.JSON(categoriesJSON{Categories: cs, Pagination: page})
}

func (h *Handler) showCategory(c *fiber.Ctx) error {
	return showOne(c, h.store.Category, renderCategory)
}

func (h *Handler) respondCategory(c *fiber.Ctx, status int, id uuid.UUID) error {
	cat, err := h.store.Category(c.UserContext(), KeyOf(c).FamilyID, id)
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
	cat := &models.Category{FamilyID: KeyOf(c).FamilyID}
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
	id, f, err := idAndObject(c, "category")
	if err != nil {
		return err
	}
	cat, err := h.store.Category(ctx, KeyOf(c).FamilyID, id)
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
	return deleteOne(c, h.store.DeleteCategory, "Category")
}

type parentJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type categoryJSON struct {
	ID                 string      `json:"id"`
	Name               string      `json:"name"`
	Color              string      `json:"color"`
	Icon               string      `json:"icon"`
	Parent             *parentJSON `json:"parent"`
	SubcategoriesCount int         `json:"subcategories_count"`
	Classification     string      `json:"classification"`
	CreatedAt          string      `json:"created_at"`
	UpdatedAt          string      `json:"updated_at"`
}

func renderCategory(c *models.Category) categoryJSON {
	out := categoryJSON{
		ID: c.ID.String(), Name: c.Name, Color: c.Color, Icon: c.Icon,
		SubcategoriesCount: c.SubcategoriesCount, Classification: c.Classification,
		CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt),
	}
	if c.ParentID != nil && c.ParentName != nil {
		out.Parent = &parentJSON{ID: c.ParentID.String(), Name: *c.ParentName}
	}
	return out
}

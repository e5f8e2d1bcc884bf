package rest

import (
	"github.com/gofiber/fiber/v2"

	"coffer/models"
)

// listTags answers a bare array, as the reference does.
func (h *Handler) listTags(c *fiber.Ctx) error {
	ts, err := h.store.Tags(c.UserContext(), KeyOf(c).FamilyID)
	if err != nil {
		return err
	}
	return c.JSON(renderAll(ts, renderTag))
}

func (h *Handler) showTag(c *fiber.Ctx) error {
	return showOne(c, h.store.Tag, renderTag)
}

func tagFields(f *fields, t *models.Tag, create bool) {
	if create || f.has("name") {
		t.Name = f.required("name", maxName)
	}
	if col, ok := f.color("color"); ok {
		t.Color = col
	} else if create && !f.has("color") {
		t.Color = "#e99537"
	}
}

func (h *Handler) createTag(c *fiber.Ctx) error {
	return createOne(c, "tag", &models.Tag{FamilyID: KeyOf(c).FamilyID}, tagFields, h.store.CreateTag, renderTag)
}

func (h *Handler) updateTag(c *fiber.Ctx) error {
	return updateOne(c, "tag", h.store.Tag, tagFields, h.store.UpdateTag, renderTag)
}

func (h *Handler) deleteTag(c *fiber.Ctx) error {
	return deleteOne(c, h.store.DeleteTag, "Tag")
}

type tagJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Color     string `json:"color"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func renderTag(t *models.Tag) tagJSON {
	return tagJSON{ID: t.ID.String(), Name: t.Name, Color: t.Color, CreatedAt: timestamp(t.CreatedAt), UpdatedAt: timestamp(t.UpdatedAt)}
}

package screens

import (
	"context"
	"errors"
	"regexp"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/models"
)

// Categories, merchants and tags share one set of screens: a list with an
// add form, edit, merge one into another, and delete after saying what
// happens to the transactions. A kind says how each differs.

// label is one category, merchant or tag as the screens show it.
type label struct {
	ID             uuid.UUID
	Name           string
	Color          string
	Classification string
	ParentID       *uuid.UUID
	ParentName     string
}

// kind is one of the three lists and its store calls, which take the
// store first so that method expressions fit.
type kind struct {
	Path, One, Many string // "categories", "category", "Categories"
	Color, Parent   bool   // the form has a colour / a parent and classification
	// Orphans says what deleting does to the transactions that use one.
	Orphans string
	list    func(s *models.Store, ctx context.Context, fam uuid.UUID) ([]label, error)
	save    func(s *models.Store, ctx context.Context, l *label, fam uuid.UUID, create bool) error
	del     func(s *models.Store, ctx context.Context, fam, id uuid.UUID) error
	merge   func(s *models.Store, ctx context.Context, fam, from, to uuid.UUID) (int, error)
	filter  func(id uuid.UUID) models.TransactionFilter
}

var kinds = map[string]*kind{
	"categories": {Path: "categories", One: "category", Many: "Categories", Color: true, Parent: true,
		Orphans: "become uncategorized; its subcategories become top-level",
		list: func(s *models.Store, ctx context.Context, fam uuid.UUID) ([]label, error) {
			cs, _, err := s.Categories(ctx, fam, models.Page{Number: 1, Size: 1000})
			out := make([]label, len(cs))
			for i, c := range cs {
				out[i] = label{ID: c.ID, Name: c.Name, Color: c.Color, Classification: c.Classification, ParentID: c.ParentID, ParentName: deref(c.ParentName)}
			}
			return nested(out, func(l *label) uuid.UUID { return l.ID }, func(l *label) *uuid.UUID { return l.ParentID }), err
		},
		save: func(s *models.Store, ctx context.Context, l *label, fam uuid.UUID, create bool) error {
			c := &models.Category{ID: l.ID, FamilyID: fam, Name: l.Name, Color: l.Color, Classification: l.Classification, ParentID: l.ParentID}
			if create {
				err := s.CreateCategory(ctx, c)
				l.ID = c.ID
				return err
			}
			return s.UpdateCategory(ctx, c, "name", "color", "classification", "parent_id")
		},
		del:   (*models.Store).DeleteCategory,
		merge: (*models.Store).MergeCategories,
		filter: func(id uuid.UUID) models.TransactionFilter {
			return models.TransactionFilter{CategoryIDs: []uuid.UUID{id}}
		},
	},
	"merchants": {Path: "merchants", One: "merchant", Many: "Merchants", Orphans: "keep their other details but no merchant",
		list: func(s *models.Store, ctx context.Context, fam uuid.UUID) ([]label, error) {
			ms, err := s.Merchants(ctx, fam)
			out := make([]label, len(ms))
			for i, m := range ms {
				out[i] = label{ID: m.ID, Name: m.Name}
			}
			return out, err
		},
		save: func(s *models.Store, ctx context.Context, l *label, fam uuid.UUID, create bool) error {
			m := &models.Merchant{ID: l.ID, FamilyID: fam, Name: l.Name}
			if create {
				err := s.CreateMerchant(ctx, m)
				l.ID = m.ID
				return err
			}
			return s.UpdateMerchant(ctx, m)
		},
		del:   (*models.Store).DeleteMerchant,
		merge: (*models.Store).MergeMerchants,
		filter: func(id uuid.UUID) models.TransactionFilter {
			return models.TransactionFilter{MerchantIDs: []uuid.UUID{id}}
		},
	},
	"tags": {Path: "tags", One: "tag", Many: "Tags", Color: true, Orphans: "lose this tag and keep their others",
		list: func(s *models.Store, ctx context.Context, fam uuid.UUID) ([]label, error) {
			ts, err := s.Tags(ctx, fam)
			out := make([]label, len(ts))
			for i, t := range ts {
				out[i] = label{ID: t.ID, Name: t.Name, Color: t.Color}
			}
			return out, err
		},
		save: func(s *models.Store, ctx context.Context, l *label, fam uuid.UUID, create bool) error {
			t := &models.Tag{ID: l.ID, FamilyID: fam, Name: l.Name, Color: l.Color}
			if create {
				err := s.CreateTag(ctx, t)
				l.ID = t.ID
				return err
			}
			return s.UpdateTag(ctx, t)
		},
		del:    (*models.Store).DeleteTag,
		merge:  (*models.Store).MergeTags,
		filter: func(id uuid.UUID) models.TransactionFilter { return models.TransactionFilter{TagIDs: []uuid.UUID{id}} },
	},
}

type labelsData struct {
	Kind   *kind
	Labels []label
	Form   *form
	Label  *label // on the edit and delete screens
	Uses   int    // transactions that use Label
}

// labelScreen wraps a handler with the kind its path names.
func (h *Handler) labelScreen(path string, fn func(c *fiber.Ctx, k *kind) error) fiber.Handler {
	k := kinds[path]
	return func(c *fiber.Ctx) error { return fn(c, k) }
}

func (h *Handler) labelsPage(c *fiber.Ctx, k *kind, status int, name string, d labelsData) error {
	labels, err := k.list(h.store, c.UserContext(), web.SessionOf(c).User.FamilyID)
	if err != nil {
		return err
	}
	d.Kind, d.Labels = k, labels
	if d.Form == nil {
		d.Form = newForm(c)
		d.Form.Values["color"], d.Form.Values["classification"] = "#6172f3", "expense"
	}
	title := k.Many
	if d.Label != nil {
		title = d.Label.Name
	}
	return h.pages.Render(c, status, name, web.Page{Title: title, Data: d})
}

func (h *Handler) listLabels(c *fiber.Ctx, k *kind) error {
	return h.labelsPage(c, k, fiber.StatusOK, "labels", labelsData{})
}

var colorRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// readLabel applies the form to l.
func readLabel(f *form, k *kind, l *label) {
	l.Name = f.text("name", "Name", maxName, true)
	if k.Color {
		if l.Color = f.value("color"); !colorRE.MatchString(l.Color) {
			f.fail("color", "Colour must look like #1a2b3c.")
		}
	}
	if k.Parent {
		l.Classification = f.oneOf("classification", "Kind", "expense", "income")
		l.ParentID = f.id("parent_id", "Parent")
	}
}

// saveLabel writes a label and turns the store's refusals into messages
// beside the fields.
func (h *Handler) saveLabel(c *fiber.Ctx, k *kind, f *form, l *label, create bool) error {
	err := k.save(h.store, c.UserContext(), l, web.SessionOf(c).User.FamilyID, create)
	var inv *models.InvalidError
	switch {
	case errors.Is(err, models.ErrConflict):
		f.fail("name", "A "+k.One+" with this name already exists.")
		return nil
	case errors.As(err, &inv):
		formProblems(f, err)
		return nil
	}
	return err
}

func (h *Handler) createLabel(c *fiber.Ctx, k *kind) error {
	f := newForm(c)
	var l label
	readLabel(f, k, &l)
	if f.ok() {
		if err := h.saveLabel(c, k, f, &l, true); err != nil {
			return err
		}
	}
	if !f.ok() {
		return h.labelsPage(c, k, fiber.StatusUnprocessableEntity, "labels", labelsData{Form: f})
	}
	return h.site.Redirect(c, "/"+k.Path, "Added "+k.One+" "+l.Name+".")
}

// familyLabel finds the :id label among the family's; another family's
// id is a 404.
func (h *Handler) familyLabel(c *fiber.Ctx, k *kind) (*label, error) {
	id, err := httperr.PathID(c)
	if err != nil {
		return nil, err
	}
	labels, err := k.list(h.store, c.UserContext(), web.SessionOf(c).User.FamilyID)
	if err != nil {
		return nil, err
	}
	for i := range labels {
		if labels[i].ID == id {
			return &labels[i], nil
		}
	}
	return nil, models.ErrNotFound
}

func (h *Handler) editLabel(c *fiber.Ctx, k *kind) error {
	l, err := h.familyLabel(c, k)
	if err != nil {
		return err
	}
	f := newForm(c)
	f.Values = map[string]string{"name": l.Name, "color": l.Color, "classification": l.Classification, "parent_id": optString(l.ParentID)}
	return h.labelsPage(c, k, fiber.StatusOK, "label_form", labelsData{Form: f, Label: l})
}

func (h *Handler) updateLabel(c *fiber.Ctx, k *kind) error {
	l, err := h.familyLabel(c, k)
	if err != nil {
		return err
	}
	f := newForm(c)
	readLabel(f, k, l)
	if f.ok() {
		if err := h.saveLabel(c, k, f, l, false); err != nil {
			return err
		}
	}
	if !f.ok() {
		return h.labelsPage(c, k, fiber.StatusUnprocessableEntity, "label_form", labelsData{Form: f, Label: l})
	}
	return h.site.Redirect(c, "/"+k.Path, "Saved "+k.One+" "+l.Name+".")
}

// confirmDeleteLabel says how many transactions use the label and what
// happens to them, and offers merging into another instead.
func (h *Handler) confirmDeleteLabel(c *fiber.Ctx, k *kind) error {
	l, err := h.familyLabel(c, k)
	if err != nil {
		return err
	}
	_, uses, err := h.store.Transactions(c.UserContext(), web.SessionOf(c).User.FamilyID, k.filter(l.ID), models.Page{Number: 1, Size: 1})
	if err != nil {
		return err
	}
	return h.labelsPage(c, k, fiber.StatusOK, "label_delete", labelsData{Label: l, Uses: uses})
}

func (h *Handler) deleteLabel(c *fiber.Ctx, k *kind) error {
	l, err := h.familyLabel(c, k)
	if err != nil {
		return err
	}
	if err := k.del(h.store, c.UserContext(), web.SessionOf(c).User.FamilyID, l.ID); err != nil && !errors.Is(err, models.ErrNotFound) {
		return err
	}
	return h.site.Redirect(c, "/"+k.Path, "Deleted "+k.One+" "+l.Name+".")
}

// mergeLabel moves everything of one label to another and deletes it.
func (h *Handler) mergeLabel(c *fiber.Ctx, k *kind) error {
	l, err := h.familyLabel(c, k)
	if err != nil {
		return err
	}
	f := newForm(c)
	into := f.id("into_id", "Merge into")
	if into == nil || *into == l.ID {
		_, uses, err := h.store.Transactions(c.UserContext(), web.SessionOf(c).User.FamilyID, k.filter(l.ID), models.Page{Number: 1, Size: 1})
		if err != nil {
			return err
		}
		f.fail("into_id", "Choose another "+k.One+" to merge into.")
		return h.labelsPage(c, k, fiber.StatusUnprocessableEntity, "label_delete", labelsData{Form: f, Label: l, Uses: uses})
	}
	n, err := k.merge(h.store, c.UserContext(), web.SessionOf(c).User.FamilyID, l.ID, *into)
	if err != nil {
		return err
	}
	return h.site.Redirect(c, "/"+k.Path, "Merged "+l.Name+" into the other "+k.One+"; "+plural(n, "transaction")+" moved.")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

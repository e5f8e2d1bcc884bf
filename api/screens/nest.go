package screens

import (
	"github.com/google/uuid"

	"coffer/models"
)

// nested orders a list of categories (or rows that name one) so that each
// subcategory follows its parent, keeping the list's own order within each
// level: "Car", "↳ Fuel", "Dining out", never "Fuel" sorted away under
// "Dining out". Categories nest one level deep; a subcategory whose parent
// is not in the list stays where it was, as if it had none.
func nested[T any](items []T, id func(*T) uuid.UUID, parent func(*T) *uuid.UUID) []T {
	present := make(map[uuid.UUID]bool, len(items))
	for i := range items {
		present[id(&items[i])] = true
	}
	children := map[uuid.UUID][]T{}
	top := make([]T, 0, len(items))
	for i := range items {
		if p := parent(&items[i]); p != nil && present[*p] {
			children[*p] = append(children[*p], items[i])
		} else {
			top = append(top, items[i])
		}
	}
	out := make([]T, 0, len(items))
	for i := range top {
		out = append(out, top[i])
		out = append(out, children[id(&top[i])]...)
	}
	return out
}

// nestedCategories is nested for a list of categories.
func nestedCategories(cs []models.Category) []models.Category {
	return nested(cs, func(c *models.Category) uuid.UUID { return c.ID }, func(c *models.Category) *uuid.UUID { return c.ParentID })
}

package rest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/models"
)

// The steps that most resources' handlers share: read the path id, call
// the store for the key's family, render. Each takes the store method and
// the renderer, so that a handler stays one line that names both.

// byPathID calls fn on the key's family and the path id.
func byPathID[T any](c *fiber.Ctx, fn func(ctx context.Context, familyID, id uuid.UUID) (T, error)) (T, error) {
	id, err := httperr.PathID(c)
	if err != nil {
		var zero T
		return zero, err
	}
	return fn(c.UserContext(), KeyOf(c).FamilyID, id)
}

// showOne answers GET …/:id with the family's record of the path id.
func showOne[T, J any](c *fiber.Ctx, find func(ctx context.Context, familyID, id uuid.UUID) (*T, error), render func(*T) J) error {
	v, err := byPathID(c, find)
	if err != nil {
		return err
	}
	return c.JSON(render(v))
}

// createOne answers POST with a new record v of the key's family: read
// fills it from the JSON object under wrapper, create stores it, and the
// answer is 201 with it rendered.
func createOne[T, J any](c *fiber.Ctx, wrapper string, v *T, read func(*fields, *T, bool), create func(context.Context, *T) error, render func(*T) J) error {
	f, err := decodeObject(c, wrapper)
	if err != nil {
		return err
	}
	read(f, v, true)
	if err := f.err(); err != nil {
		return err
	}
	if err := create(c.UserContext(), v); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(render(v))
}

// updateOne answers PATCH …/:id: find reads the family's record of the
// path id, read changes it by the JSON object under wrapper, update
// stores it, and the answer is the record rendered.
func updateOne[T, J any](c *fiber.Ctx, wrapper string, find func(ctx context.Context, familyID, id uuid.UUID) (*T, error),
	read func(*fields, *T, bool), update func(context.Context, *T) error, render func(*T) J) error {
	id, f, err := idAndObject(c, wrapper)
	if err != nil {
		return err
	}
	v, err := find(c.UserContext(), KeyOf(c).FamilyID, id)
	if err != nil {
		return err
	}
	read(f, v, false)
	if err := f.err(); err != nil {
		return err
	}
	if err := update(c.UserContext(), v); err != nil {
		return err
	}
	return c.JSON(render(v))
}

// deleteOne answers DELETE …/:id: it deletes the family's record of the
// path id and confirms with "<what> deleted successfully", as the
// reference does.
func deleteOne(c *fiber.Ctx, del func(ctx context.Context, familyID, id uuid.UUID) error, what string) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	if err := del(c.UserContext(), KeyOf(c).FamilyID, id); err != nil {
		return err
	}
	return deleted(c, what)
}

// deleted is the confirmation of a deletion.
func deleted(c *fiber.Ctx, what string) error {
	return c.JSON(fiber.Map{"message": what + " deleted successfully"})
}

// listPage reads page and per_page, lists that page of the family's
// records and renders them; the caller wraps them with the page report
// under the resource's own key.
func listPage[T, J any](c *fiber.Ctx, list func(ctx context.Context, familyID uuid.UUID, p models.Page) ([]T, int, error), render func(*T) J) ([]J, Pagination, error) {
	p, err := parsePage(c)
	if err != nil {
		return nil, Pagination{}, err
	}
	rows, total, err := list(c.UserContext(), KeyOf(c).FamilyID, p)
	if err != nil {
		return nil, Pagination{}, err
	}
	return renderAll(rows, render), pagination(p, total), nil
}

// withFilter is list with its filter fixed: the lister listPage takes.
func withFilter[F, T any](list func(ctx context.Context, familyID uuid.UUID, f F, p models.Page) ([]T, int, error), f F) func(ctx context.Context, familyID uuid.UUID, p models.Page) ([]T, int, error) {
	return func(ctx context.Context, familyID uuid.UUID, p models.Page) ([]T, int, error) {
		return list(ctx, familyID, f, p)
	}
}

// renderAll renders each of rows, in order; none is an empty array, not null.
func renderAll[T, J any](rows []T, render func(*T) J) []J {
	out := make([]J, len(rows))
	for i := range rows {
		out[i] = render(&rows[i])
	}
	return out
}

// idAndObject reads what a write to one record sends: the path id, then
// the JSON object body (under wrapper, when set; see decodeObject).
func idAndObject(c *fiber.Ctx, wrapper string) (uuid.UUID, *fields, error) {
	id, err := httperr.PathID(c)
	if err != nil {
		return uuid.Nil, nil, err
	}
	f, err := decodeObject(c, wrapper)
	return id, f, err
}

// nameMissing says which record a 404 is about. The store knows only that
// a row is missing; the route knows what it was looking for.
func nameMissing(c *fiber.Ctx) error {
	err := c.Next()
	var he *httperr.Error
	if !errors.Is(err, models.ErrNotFound) && !(errors.As(err, &he) && he.Code == "not_found") {
		return err
	}
	if he != nil && he.Code == "not_found" && he.Message != "Resource not found" {
		return err // the handler named the record already (a valuation's account)
	}
	if name := resourceOf(c.Route().Path); name != "" {
		return fmt.Errorf("%w: %w", httperr.NotFoundOf(name), err)
	}
	return err
}

// resourceOf names the record a route under /api/v1 reads or writes, from
// its path: the first segment, or the provider account of a connection.
func resourceOf(route string) string {
	if strings.Contains(route, ":account_id") {
		return "Provider account"
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(route, "/api/v1/"), "/")
	switch first {
	case "transactions":
		return "Transaction"
	case "chats":
		return "Chat"
	case "accounts":
		return "Account"
	case "valuations":
		return "Valuation"
	case "categories":
		return "Category"
	case "merchants":
		return "Merchant"
	case "tags":
		return "Tag"
	case "transfers":
		return "Transfer"
	case "provider_connections":
		return "Provider connection"
	case "syncs":
		return "Sync"
	case "budgets":
		return "Budget"
	case "budget_categories":
		return "Budget category"
	case "rules":
		return "Rule"
	case "rule_runs":
		return "Rule run"
	case "exchange_rates":
		return "Exchange rate"
	case "recurring_transactions":
		return "Recurring transaction"
	case "family_exports":
		return "Family export"
	}
	return ""
}

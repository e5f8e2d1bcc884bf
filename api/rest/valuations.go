package rest

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// Valuations as the reference serves them (its valuations_controller.rb
// and _valuation.json.jbuilder): "account worth amount at the end of
// date". A create on a day that has one already sets that day's value,
// and repeats nothing: the same amount again answers the existing one.

type valuationAccountJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	AccountType string `json:"account_type"`
}

type valuationJSON struct {
	ID         string               `json:"id"`
	Date       *string              `json:"date"`
	Amount     string               `json:"amount"`
	Currency   string               `json:"currency"`
	Notes      *string              `json:"notes"`
	Kind       string               `json:"kind"`
	Adjustment string               `json:"adjustment"`
	Account    valuationAccountJSON `json:"account"`
	CreatedAt  string               `json:"created_at"`
	UpdatedAt  string               `json:"updated_at"`
}

type valuationsJSON struct {
	Valuations []valuationJSON `json:"valuations"`
	Pagination Pagination      `json:"pagination"`
}

// renderValuations renders vs with their accounts, read once each; an
// undated opening shows the day it stands for.
func (h *Handler) renderValuations(ctx context.Context, familyID uuid.UUID, vs []models.Valuation) ([]valuationJSON, error) {
	accounts := map[uuid.UUID]*models.Account{}
	out := make([]valuationJSON, len(vs))
	for i, v := range vs {
		a := accounts[v.AccountID]
		if a == nil {
			var err error
			if a, err = h.store.Account(ctx, familyID, v.AccountID); err != nil {
				return nil, err
			}
			accounts[v.AccountID] = a
		}
		date := v.Date
		if date == nil {
			d, _, err := h.store.OpeningDate(ctx, familyID, v.AccountID)
			if err != nil {
				return nil, err
			}
			date = d
		}
		cur := money.MustCurrency(a.Currency)
		out[i] = valuationJSON{ID: v.ID.String(), Amount: v.Amount.Format(cur), Currency: a.Currency, Notes: v.Notes,
			Kind: v.Kind, Adjustment: v.Adjustment.Format(cur),
			Account:   valuationAccountJSON{ID: a.ID.String(), Name: a.Name, AccountType: a.AccountType},
			CreatedAt: timestamp(v.CreatedAt), UpdatedAt: timestamp(v.UpdatedAt)}
		if date != nil {
			s := string(*date)
			out[i].Date = &s
		}
	}
	return out, nil
}

func (h *Handler) renderValuation(c *fiber.Ctx, status int, v *models.Valuation) error {
	js, err := h.renderValuations(c.UserContext(), v.FamilyID, []models.Valuation{*v})
	if err != nil {
		return err
	}
	return c.Status(status).JSON(js[0])
}

func (h *Handler) listValuations(c *fiber.Ctx) error {
	accountID, err := queryID(c, "account_id")
	if err != nil {
		return err
	}
	p, err := parsePage(c)
	if err != nil {
		return err
	}
	k := KeyOf(c)
	vs, total, err := h.store.Valuations(c.UserContext(), k.FamilyID, models.ValuationFilter{AccountID: accountID}, p)
	if err != nil {
		return err
	}
	js, err := h.renderValuations(c.UserContext(), k.FamilyID, vs)
	if err != nil {
		return err
	}
	return c.JSON(valuationsJSON{Valuations: js, Pagination: pagination(p, total)})
}

func (h *Handler) showValuation(c *fiber.Ctx) error {
	v, err := byPathID(c, h.store.Valuation)
	if err != nil {
		return err
	}
	return h.renderValuation(c, fiber.StatusOK, v)
}

// valuationFields applies the members present in f to v.
func valuationFields(f *fields, v *models.Valuation, create bool) {
	if d, ok := f.date("date"); ok {
		v.Date = &d
	} else if create && !f.bad("date") {
		f.add("date is required")
	}
	if a, ok := f.amount("amount"); ok {
		v.Amount = a
	} else if create && !f.bad("amount") {
		f.add("amount is required")
	}
	if s, ok := f.str("notes", maxNotes, false); ok || f.isNull("notes") {
		v.Notes = nonEmpty(s)
	}
}

// createValuation answers 201 with a new valuation, or 200 with the
// day's existing one (unchanged when the amount is the same).
func (h *Handler) createValuation(c *fiber.Ctx) error {
	f, err := decodeObject(c, "valuation")
	if err != nil {
		return err
	}
	v := &models.Valuation{FamilyID: KeyOf(c).FamilyID}
	if id := f.id("account_id"); id != nil {
		v.AccountID = *id
	} else if !f.bad("account_id") {
		f.add("account_id is required")
	}
	valuationFields(f, v, true)
	if err := f.err(); err != nil {
		return err
	}
	created, err := h.store.CreateValuation(c.UserContext(), v)
	if errors.Is(err, models.ErrAccountNotFound) {
		return httperr.NotFoundOf("Account")
	}
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if created {
		status = fiber.StatusCreated
	}
	return h.renderValuation(c, status, v)
}

func (h *Handler) updateValuation(c *fiber.Ctx) error {
	id, f, err := idAndObject(c, "valuation")
	if err != nil {
		return err
	}
	v, err := h.store.Valuation(c.UserContext(), KeyOf(c).FamilyID, id)
	if err != nil {
		return err
	}
	valuationFields(f, v, false)
	if err := f.err(); err != nil {
		return err
	}
	if err := h.store.UpdateValuation(c.UserContext(), v); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return httperr.Invalid([]string{"date already has a valuation of this account"})
		}
		return err
	}
	return h.renderValuation(c, fiber.StatusOK, v)
}

// openingDate reads the account's opening_balance_date member: a day, or
// null for the day before its first transaction.
func openingDate(f *fields) (date *civil.Date, present bool) {
	if f.isNull("opening_balance_date") {
		return nil, true
	}
	if d, ok := f.date("opening_balance_date"); ok {
		return &d, true
	}
	return nil, false
}

package rest

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// The exchange rates a family sees: the instance's fetched ones and its
// own. Only its own can be written, by an admin, and they count for it
// alone (the reference's table is global and so writable only on a
// self-hosted instance; ours is per family, so no such switch).

type exchangeRateJSON struct {
	ID           string `json:"id"`
	FromCurrency string `json:"from_currency"`
	ToCurrency   string `json:"to_currency"`
	Date         string `json:"date"`
	Rate         string `json:"rate"`
	Source       string `json:"source"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
}

type exchangeRatesJSON struct {
	ExchangeRates []exchangeRateJSON `json:"exchange_rates"`
	Pagination    Pagination         `json:"pagination"`
}

func renderExchangeRate(r *models.ExchangeRate) exchangeRateJSON {
	return exchangeRateJSON{ID: r.ID.String(), FromCurrency: r.FromCurrency, ToCurrency: r.ToCurrency, Date: string(r.Date),
		Rate: r.Rate.String(), Source: r.Source, CreatedAt: timestamp(r.CreatedAt), UpdatedAt: timestamp(r.UpdatedAt)}
}

func (h *Handler) listExchangeRates(c *fiber.Ctx) error {
	var f models.RateFilter
	var problems []string
	for _, q := range []struct {
		name string
		dst  *string
	}{{"from", &f.From}, {"to", &f.To}} {
		if v := strings.TrimSpace(c.Query(q.name)); v != "" {
			cur, ok := money.LookupCurrency(v)
			if !ok {
				problems = append(problems, q.name+" must be a known ISO 4217 currency code")
			}
			*q.dst = cur.Code
		}
	}
	for _, q := range []struct {
		name string
		dst  *civil.Date
	}{{"start_date", &f.Start}, {"end_date", &f.End}} {
		if v := c.Query(q.name); v != "" {
			d, err := civil.ParseDate(v)
			if err != nil {
				problems = append(problems, q.name+" must be a valid date in YYYY-MM-DD format")
			}
			*q.dst = d
		}
	}
	if len(problems) > 0 {
		return httperr.Invalid(problems)
	}
	rates, page, err := listPage(c, withFilter(h.store.ExchangeRates, f), renderExchangeRate)
	if err != nil {
		return err
	}
	return c.JSON(exchangeRatesJSON{ExchangeRates: rates, Pagination: page})
}

func (h *Handler) showExchangeRate(c *fiber.Ctx) error {
	return showOne(c, h.store.ExchangeRate, renderExchangeRate)
}

// createExchangeRate sets the family's own rate of a pair and day: an
// upsert on (from, to, date), 201 when new and 200 when it replaced one,
// so that a client can send a whole history again. A missing field is a
// 400, a bad one a 422, as the reference answers.
func (h *Handler) createExchangeRate(c *fiber.Ctx) error {
	ctx, k := c.UserContext(), KeyOf(c)
	u, err := h.store.User(ctx, k.FamilyID, k.UserID)
	if err != nil {
		return err
	}
	if u.Role != models.RoleAdmin && u.Role != models.RoleSuperAdmin {
		return httperr.Forbidden("Only a family admin can set exchange rates")
	}
	f, err := decodeObject(c, "")
	if err != nil {
		return err
	}
	var missing []string
	for _, name := range []string{"from", "to", "date", "rate"} {
		if !f.has(name) || f.isNull(name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return httperr.BadRequest("param is missing or the value is empty: " + strings.Join(missing, ", "))
	}
	r := &models.ExchangeRate{}
	r.FromCurrency, _ = f.currency("from")
	r.ToCurrency, _ = f.currency("to")
	r.Date, _ = f.date("date")
	r.Rate = f.rate("rate")
	if r.FromCurrency != "" && r.FromCurrency == r.ToCurrency {
		f.add("from and to must be different currencies")
	}
	if err := f.err(); err != nil {
		return err
	}
	created, err := h.store.SetRate(ctx, k.FamilyID, r)
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if created {
		status = fiber.StatusCreated
	}
	return c.Status(status).JSON(renderExchangeRate(r))
}

// rate returns a positive exchange rate sent as a JSON number or a
// numeric string.
func (f *fields) rate(name string) money.Rate {
	v, ok := f.raw[name]
	if !ok || f.isNull(name) {
		return money.Rate{}
	}
	s := strings.TrimSpace(string(v))
	if plain, isString := plainString(v); isString {
		s = strings.TrimSpace(plain)
	}
	r, err := money.ParseRateNumber(s)
	if err == nil {
		return r
	}
	if strings.HasPrefix(s, "-") || s != "" && strings.Trim(s, "0.") == "" {
		f.add(name + " must be greater than 0")
	} else {
		f.add(name + " must be a positive number with at most 12 digits before the point and 18 after it")
	}
	return money.Rate{}
}

package screens

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// rateRow is one currency of the family's accounts on the rates screen:
// the rate it converts at today, and how fresh the fetched rates are.
type rateRow struct {
	From, To    string
	Rate        string     // "" : no rate at all, so no conversion
	Date        civil.Date // the day of that rate
	Source      string     // fetched or manual
	Inverted    bool
	FetchedDate civil.Date // the latest fetched rate of the pair
	FetchedAge  string     // how old it is, in words
	Error       string     // the last fetch's failure, if the last attempt failed
	AttemptedAt time.Time
}

type ratesData struct {
	Form     *form
	Currency string // the family's
	Rows     []rateRow
	Admin    bool
	Decimal  string // how the family writes the decimal point
}

// exchangeRates shows the rate each currency of the family's accounts
// converts at today, where it comes from, how old the latest fetched rate
// is and what went wrong with the last fetch; an admin also gets a form
// to set a rate by hand.
func (h *Handler) exchangeRates(c *fiber.Ctx) error {
	f := newForm(c)
	f.Values["date"] = string(civil.DateOf(h.now()))
	return h.ratesPage(c, fiber.StatusOK, f)
}

func (h *Handler) ratesPage(c *fiber.Ctx, status int, f *form) error {
	ctx, u := c.UserContext(), web.SessionOf(c).User
	fam, err := h.store.Family(ctx, u.FamilyID)
	if err != nil {
		return err
	}
	d := ratesData{Form: f, Currency: fam.Currency, Decimal: string(familyNumbers(fam).Decimal),
		Admin: u.Role == models.RoleAdmin || u.Role == models.RoleSuperAdmin}
	if f.Values["to"] == "" {
		f.Values["to"] = fam.Currency
	}
	codes, err := h.store.ForeignCurrencies(ctx, u.FamilyID)
	if err != nil {
		return err
	}
	today := civil.DateOf(h.now())
	for _, code := range codes {
		row := rateRow{From: code, To: fam.Currency}
		q, ok, err := h.store.Quote(ctx, u.FamilyID, code, fam.Currency, today)
		if err != nil {
			return err
		}
		if ok {
			row.Rate, row.Date, row.Source, row.Inverted = q.Rate.String(), q.Date, q.Source, q.Inverted
		}
		if row.FetchedDate, err = h.store.LatestFetchedRate(ctx, code, fam.Currency); err != nil {
			return err
		}
		if row.FetchedDate != "" {
			row.FetchedAge = daysOld(row.FetchedDate, today)
		}
		fetch, err := h.store.RatesFetchOf(ctx, code, fam.Currency)
		if err == nil && fetch.Error != nil {
			row.Error, row.AttemptedAt = *fetch.Error, fetch.AttemptedAt
		}
		d.Rows = append(d.Rows, row)
	}
	return h.pages.Render(c, status, "exchange_rates", web.Page{Title: "Exchange rates", Data: d})
}

// daysOld says how long before today a day is.
func daysOld(d, today civil.Date) string {
	n := int(today.Time().Sub(d.Time()).Hours() / 24)
	switch {
	case n <= 0:
		return "today"
	case n == 1:
		return "1 day old"
	}
	return strconv.Itoa(n) + " days old"
}

// setExchangeRate stores the family's own rate of a pair for a day (an
// admin's), replacing the one it set for that day; it counts for this
// household alone and wins over the fetched rate of its day.
func (h *Handler) setExchangeRate(c *fiber.Ctx) error {
	ctx, u := c.UserContext(), web.SessionOf(c).User
	fam, err := h.store.Family(ctx, u.FamilyID)
	if err != nil {
		return err
	}
	f := newForm(c)
	r := &models.ExchangeRate{}
	for _, fld := range []struct{ name, label string }{{"from", "From"}, {"to", "To"}} {
		cur, ok := money.LookupCurrency(f.value(fld.name))
		if !ok {
			f.fail(fld.name, fld.label+" must be a three-letter ISO code such as USD or EUR.")
		}
		if fld.name == "from" {
			r.FromCurrency = cur.Code
		} else {
			r.ToCurrency = cur.Code
		}
	}
	if r.FromCurrency != "" && r.FromCurrency == r.ToCurrency {
		f.fail("to", "To must be another currency than From.")
	}
	r.Date, _ = f.date("date", "Date", true)
	// A rate is typed like an amount: with the family's decimal mark.
	text := f.value("rate")
	if familyNumbers(fam).Decimal == ',' {
		text = strings.Replace(text, ",", ".", 1)
	}
	if r.Rate, err = money.ParseRate(text); err != nil {
		f.fail("rate", "Rate must be a number above 0, such as 1"+string(familyNumbers(fam).Decimal)+"0823, with at most 18 decimals.")
	}
	if !f.ok() {
		return h.ratesPage(c, fiber.StatusUnprocessableEntity, f)
	}
	if _, err := h.store.SetRate(ctx, u.FamilyID, r); err != nil {
		return err
	}
	return h.site.Redirect(c, "/settings/exchange_rates",
		"Rate saved: 1 "+r.FromCurrency+" = "+r.Rate.String()+" "+r.ToCurrency+" from "+string(r.Date)+".")
}

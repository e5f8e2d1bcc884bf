package screens

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/money"
)

type familyData struct {
	Form    *form
	Family  *models.Family
	Formats []numberFormat
	Usual   numberFormat // the format of the family's currency
	Exports []models.FamilyExport
}

func (h *Handler) familyPage(c *fiber.Ctx, status int, f *form, fam *models.Family) error {
	exports, err := h.recentExports(c)
	if err != nil {
		return err
	}
	d := familyData{Form: f, Family: fam, Formats: numberFormats, Usual: numberFormatOf(fam.Currency), Exports: exports}
	return h.pages.Render(c, status, "family", web.Page{Title: "Household", Data: d})
}

// familySettings shows an admin the household's name, currency and how it
// types amounts.
func (h *Handler) familySettings(c *fiber.Ctx) error {
	fam, err := h.store.Family(c.UserContext(), web.SessionOf(c).User.FamilyID)
	if err != nil {
		return err
	}
	f := newForm(c)
	f.Values = map[string]string{"name": fam.Name, "currency": fam.Currency, "number_format": fam.NumberFormat}
	return h.familyPage(c, fiber.StatusOK, f, fam)
}

// saveFamilySettings renames the household or changes its currency or
// number format. The currency is the one totals are counted in and new
// accounts start with; existing accounts keep their own.
func (h *Handler) saveFamilySettings(c *fiber.Ctx) error {
	ctx := c.UserContext()
	fam, err := h.store.Family(ctx, web.SessionOf(c).User.FamilyID)
	if err != nil {
		return err
	}
	f := newForm(c)
	formats := []string{""}
	for _, n := range numberFormats {
		formats = append(formats, n.Example)
	}
	name := f.text("name", "Name", maxName, true)
	cur := strings.ToUpper(f.value("currency"))
	if _, ok := money.LookupCurrency(cur); !ok {
		f.fail("currency", "Currency must be a three-letter ISO code such as USD or EUR.")
	}
	format := f.oneOf("number_format", "Number format", formats...)
	if !f.ok() {
		return h.familyPage(c, fiber.StatusUnprocessableEntity, f, fam)
	}
	changed := fam.Currency != cur
	fam.Name, fam.Currency, fam.NumberFormat = name, cur, format
	if err := h.store.UpdateFamily(ctx, fam); err != nil {
		return err
	}
	if changed { // totals now need the rates of every account currency into the new one
		if err := jobs.QueueExchangeRates(ctx, h.queue, fam.ID); err != nil {
			h.log.Error("exchange rates for a new household currency", "family_id", fam.ID, "error", err)
		}
	}
	return h.site.Redirect(c, "/settings/family", "Household settings saved.")
}

// saveSecondFactorRule turns on or off the family's requirement of a
// second factor for every member who signs in with a password; members
// without one set it up at their next such sign-in. Single sign-on is
// left to the identity provider.
func (h *Handler) saveSecondFactorRule(c *fiber.Ctx) error {
	require := c.FormValue("require_second_factor") == "on"
	if err := h.store.SetRequireSecondFactor(c.UserContext(), web.SessionOf(c).User.FamilyID, require); err != nil {
		return err
	}
	msg := "Two-step verification is no longer required."
	if require {
		msg = "Two-step verification is now required: members without it set it up at their next password sign-in."
	}
	return h.site.Redirect(c, "/settings/family", msg)
}

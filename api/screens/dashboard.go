package screens

import (
	"html/template"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
)

type dashboardData struct {
	Sheet      *models.BalanceSheet
	Series     []models.SeriesPoint
	Chart      template.HTML
	Month      models.Period
	Totals     *models.Totals
	LeftOut    *models.LeftOut        // what the month's totals do not count
	Spending   []models.CategoryTotal // this month's spending by category, largest first
	Latest     []*models.Transaction
	Conns      []models.Connection
	HasAccount bool
	// Forecast is the next 90 days from the active recurring items;
	// ForecastChart draws its family line, and ForecastDays are the days
	// it moves on (and today), the chart's numbers as a table.
	Forecast      *models.Forecast
	ForecastChart template.HTML
	ForecastDays  []models.ForecastPoint
}

// home is the dashboard: net worth and its last 90 days, the next 90
// days projected from the recurring items (the lowest point, what is safe
// to spend until the next income), the accounts by type, this month's income and spending and where it went, the latest
// transactions and the bank connections. Each figure is one query; the
// month's totals are the sum of its category totals.
func (h *Handler) home(c *fiber.Ctx) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	today := civil.DateOf(h.now())
	d := dashboardData{Month: models.MonthPeriod(today)}
	var err error
	if d.Sheet, err = h.store.BalanceSheet(ctx, fam, false); err != nil {
		return err
	}
	d.HasAccount = len(d.Sheet.Groups) > 0
	// Ninety days, a point a day: recent enough to act on and cheap to
	// read; the reports page draws any longer period.
	recent := models.Period{From: civil.DateOf(h.now().AddDate(0, 0, -90)), To: today}
	if d.Series, err = h.store.NetWorthSeries(ctx, fam, recent, models.Day); err != nil {
		return err
	}
	d.Chart = lineChart("Net worth over the last 90 days", d.Sheet.Currency, d.Series)
	if d.Forecast, err = h.store.Forecast(ctx, fam, models.ForecastDays); err != nil {
		return err
	}
	projected := make([]models.SeriesPoint, len(d.Forecast.Family))
	for i, p := range d.Forecast.Family {
		projected[i] = models.SeriesPoint{Date: p.Date, Value: p.Balance}
		if i == 0 || p.Balance != d.Forecast.Family[i-1].Balance {
			d.ForecastDays = append(d.ForecastDays, p)
		}
	}
	d.ForecastChart = lineChart("Projected net worth over the next 90 days", d.Sheet.Currency, projected)
	totals, err := h.store.CategoryTotals(ctx, fam, d.Month)
	if err != nil {
		return err
	}
	d.Totals = models.TotalsOf(d.Sheet.Currency, totals)
	if d.LeftOut, err = h.store.LeftOutOf(ctx, fam, d.Month); err != nil {
		return err
	}
	for _, t := range totals {
		if t.Classification == "expense" && len(d.Spending) < 8 {
			d.Spending = append(d.Spending, t)
		}
	}
	if d.Latest, err = h.store.LatestTransactions(ctx, fam, 8); err != nil {
		return err
	}
	if d.Conns, _, err = h.store.Connections(ctx, fam, models.Page{Number: 1, Size: 20}); err != nil {
		return err
	}
	return h.pages.Render(c, fiber.StatusOK, "home", web.Page{Nav: "dashboard", Title: "Dashboard", Data: d})
}

// monthName is "November 2026" for a period's month.
func monthName(p models.Period) string { return p.From.Time().Format("January 2006") }

// shortDate is "24 Nov" for the tables of a chart.
func shortDate(d civil.Date) string { return d.Time().Format("2 Jan 2006") }

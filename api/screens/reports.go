package screens

import (
	"encoding/csv"
	"html/template"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// statementRow is one category's amounts, a column per month.
type statementRow struct {
	Name   string
	Cells  []money.Amount
	Total  money.Amount
	Income bool
}

type reportsData struct {
	Period     models.Period
	Currency   string
	Errors     map[string]string
	Months     []civil.Date
	Income     []statementRow
	Spending   []statementRow
	Flow       []models.CashFlowMonth
	FlowChart  template.HTML
	Worth      []models.SeriesPoint
	Interval   models.Interval
	WorthChart template.HTML
	Query      string
}

// reportPeriod reads ?from= and ?to= (default: this month so far); a bad
// value is said beside its field and the default is used.
func (h *Handler) reportPeriod(c *fiber.Ctx) (models.Period, map[string]string) {
	today := civil.DateOf(h.now())
	p := models.Period{From: models.MonthPeriod(today).From, To: today}
	problems := map[string]string{}
	for _, f := range []struct {
		name string
		dst  *civil.Date
	}{{"from", &p.From}, {"to", &p.To}} {
		if v := clipQuery(c.Query(f.name)); v != "" {
			if d, err := civil.ParseDate(v); err == nil {
				*f.dst = d
			} else {
				problems[f.name] = "Use a date such as 2026-01-31."
			}
		}
	}
	if p.To < p.From {
		problems["to"] = "The end must not be before the start."
		p.To = p.From
	}
	// Longer than 20 years is more than a screen can show; clip it.
	if limit := civil.DateOf(p.To.Time().AddDate(-20, 0, 0)); p.From < limit {
		p.From = limit
		problems["from"] = "Reports cover at most 20 years; the start was moved."
	}
	return p, problems
}

// interval picks a net worth series' step for the period's length.
func interval(p models.Period) models.Interval {
	days := p.To.Time().Sub(p.From.Time()).Hours() / 24
	switch {
	case days <= 62:
		return models.Day
	case days <= 400:
		return models.Week
	}
	return models.Month
}

// statement pivots the income statement's cells into rows by category,
// a column per month, largest total first.
func statement(cells []models.StatementCell, p models.Period) (months []civil.Date, income, spending []statementRow) {
	for m := models.MonthPeriod(p.From).From; m <= p.To; m = civil.DateOf(m.Time().AddDate(0, 1, 0)) {
		months = append(months, m)
	}
	col := map[civil.Date]int{}
	for i, m := range months {
		col[m] = i
	}
	rows := map[string]*statementRow{}
	var order []string
	for _, c := range cells {
		key := c.Classification + ":" + optString(c.CategoryID)
		r := rows[key]
		if r == nil {
			r = &statementRow{Name: catName(c.CategoryTotal), Cells: make([]money.Amount, len(months)), Income: c.Classification == "income"}
			rows[key] = r
			order = append(order, key)
		}
		if i, ok := col[c.Month]; ok {
			r.Cells[i] += c.Total
		}
		r.Total += c.Total
	}
	for _, k := range order {
		if rows[k].Income {
			income = append(income, *rows[k])
		} else {
			spending = append(spending, *rows[k])
		}
	}
	for _, rs := range [][]statementRow{income, spending} {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Total > rs[j].Total })
	}
	return months, income, spending
}

func (h *Handler) reportData(c *fiber.Ctx) (reportsData, error) {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	p, problems := h.reportPeriod(c)
	d := reportsData{Period: p, Errors: problems, Interval: interval(p),
		Query: "from=" + string(p.From) + "&to=" + string(p.To)}
	f, err := h.store.Family(ctx, fam)
	if err != nil {
		return d, err
	}
	d.Currency = f.Currency
	cells, err := h.store.IncomeStatement(ctx, fam, p)
	if err != nil {
		return d, err
	}
	d.Months, d.Income, d.Spending = statement(cells, p)
	d.Flow = models.CashFlowOf(cells, p) // the same rows: no second pass over the ledger
	cols := make([]barPair, len(d.Flow))
	for i, m := range d.Flow {
		cols[i] = barPair{Label: m.Month.Time().Format("Jan 06"), A: m.Income, B: m.Spending}
	}
	d.FlowChart = pairChart("Income and spending by month", cols)
	if d.Worth, err = h.store.NetWorthSeries(ctx, fam, p, d.Interval); err != nil {
		return d, err
	}
	d.WorthChart = lineChart("Net worth over the period", d.Worth)
	return d, nil
}

// reports shows the income statement, cash flow and net worth of a
// period, each as a chart and a table with a CSV download.
func (h *Handler) reports(c *fiber.Ctx) error {
	d, err := h.reportData(c)
	if err != nil {
		return err
	}
	return h.pages.Render(c, fiber.StatusOK, "reports", web.Page{Nav: "reports", Title: "Reports", Data: d})
}

// reportCSV downloads one report of the period as CSV, amounts as plain
// decimals in the family's currency.
func (h *Handler) reportCSV(c *fiber.Ctx) error {
	d, err := h.reportData(c)
	if err != nil {
		return err
	}
	var rows [][]string
	name := c.Params("report")
	switch name {
	case "income_statement":
		head := []string{"kind", "category"}
		for _, m := range d.Months {
			head = append(head, m.Time().Format("2006-01"))
		}
		rows = append(rows, append(head, "total"))
		for _, r := range append(append([]statementRow{}, d.Income...), d.Spending...) {
			kind := "spending"
			if r.Income {
				kind = "income"
			}
			row := []string{kind, csvSafe(r.Name)}
			for _, a := range r.Cells {
				row = append(row, a.String())
			}
			rows = append(rows, append(row, r.Total.String()))
		}
	case "cash_flow":
		rows = append(rows, []string{"month", "income", "spending", "net"})
		for _, m := range d.Flow {
			rows = append(rows, []string{m.Month.Time().Format("2006-01"), m.Income.String(), m.Spending.String(), m.Net().String()})
		}
	case "net_worth":
		rows = append(rows, []string{"date", "net_worth"})
		for _, p := range d.Worth {
			rows = append(rows, []string{string(p.Date), p.Value.String()})
		}
	default:
		return fiber.ErrNotFound
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(rows); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`_`+string(d.Period.From)+`_`+string(d.Period.To)+`.csv"`)
	return c.SendString(b.String())
}

// csvSafe keeps a spreadsheet from reading a name as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

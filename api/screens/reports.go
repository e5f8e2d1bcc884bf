package screens

import (
	"encoding/csv"
	"html/template"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"coffer/api/web"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// statementRow is one category's amounts, a column per month. A parent
// category with subcategories is a Subtotal row (its own amounts and its
// subcategories'), followed by one Child row per subcategory and one for
// what was filed under the parent itself.
type statementRow struct {
	Name     string
	Cells    []money.Amount
	Total    money.Amount
	Income   bool
	Subtotal bool
	Child    bool
}

// statementTotals are the income statement's last rows: income, spending
// and what was left, a column per month.
type statementTotals struct {
	Income, Spending, Net statementRow
}

type reportsData struct {
	Period     models.Period
	Currency   string
	Errors     map[string]string
	Months     []civil.Date
	Income     []statementRow
	Spending   []statementRow
	Totals     statementTotals
	LeftOut    *models.LeftOut
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
// a column per month: each direction's top-level categories largest
// total first, a parent with subcategories as a subtotal followed by its
// parts (largest first), and the totals of both directions and their
// difference. Every cell of a subtotal is the sum of its parts' cells, so
// the rows a person adds up give the figure shown.
func statement(cells []models.StatementCell, p models.Period) (months []civil.Date, income, spending []statementRow, totals statementTotals) {
	for m := models.MonthPeriod(p.From).From; m <= p.To; m = civil.DateOf(m.Time().AddDate(0, 1, 0)) {
		months = append(months, m)
	}
	col := map[civil.Date]int{}
	for i, m := range months {
		col[m] = i
	}
	newRow := func(name string, in bool) *statementRow {
		return &statementRow{Name: name, Cells: make([]money.Amount, len(months)), Income: in}
	}
	add := func(r *statementRow, i int, ok bool, a money.Amount) {
		if ok {
			r.Cells[i] += a
		}
		r.Total += a
	}
	// A group is a top-level category (or the uncategorised rest) and the
	// rows filed under it: its own and each subcategory's.
	type group struct {
		sum      *statementRow
		parts    map[string]*statementRow
		order    []string
		children bool // some part is a subcategory
	}
	groups := map[string]*group{}
	var order []string
	totals = statementTotals{Income: *newRow("Total income", true), Spending: *newRow("Total spending", false), Net: *newRow("Net (income less spending)", false)}
	for _, c := range cells {
		in := c.Classification == "income"
		top, topName, part, partName := optString(c.CategoryID), catName(c.CategoryTotal), optString(c.CategoryID), "Uncategorized"
		if c.Name != nil {
			partName = *c.Name
		}
		if c.ParentID != nil {
			top, topName = c.ParentID.String(), deref(c.ParentName)
		}
		own := c.ParentID == nil
		key := c.Classification + ":" + top
		g := groups[key]
		if g == nil {
			g = &group{sum: newRow(topName, in), parts: map[string]*statementRow{}}
			groups[key] = g
			order = append(order, key)
		}
		r := g.parts[part]
		if r == nil {
			r = newRow(partName, in)
			if own && c.CategoryID != nil {
				r.Name = partName + " (not in a subcategory)"
			}
			g.parts[part] = r
			g.order = append(g.order, part)
		}
		g.children = g.children || !own
		i, ok := col[c.Month]
		add(r, i, ok, c.Total)
		add(g.sum, i, ok, c.Total)
		if in {
			add(&totals.Income, i, ok, c.Total)
			add(&totals.Net, i, ok, c.Total)
		} else {
			add(&totals.Spending, i, ok, c.Total)
			add(&totals.Net, i, ok, -c.Total)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return groups[order[i]].sum.Total > groups[order[j]].sum.Total })
	for _, k := range order {
		g := groups[k]
		rows := []statementRow{*g.sum}
		if g.children {
			rows[0].Subtotal = true
			parts := make([]statementRow, 0, len(g.order))
			for _, p := range g.order {
				r := *g.parts[p]
				r.Child = true
				parts = append(parts, r)
			}
			sort.SliceStable(parts, func(i, j int) bool { return parts[i].Total > parts[j].Total })
			rows = append(rows, parts...)
		}
		if g.sum.Income {
			income = append(income, rows...)
		} else {
			spending = append(spending, rows...)
		}
	}
	return months, income, spending, totals
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
	d.Months, d.Income, d.Spending, d.Totals = statement(cells, p)
	if d.LeftOut, err = h.store.LeftOutOf(ctx, fam, p); err != nil {
		return d, err
	}
	d.Flow = models.CashFlowOf(cells, p) // the same rows: no second pass over the ledger
	cols := make([]barPair, len(d.Flow))
	for i, m := range d.Flow {
		cols[i] = barPair{Label: m.Month.Time().Format("Jan 06"), A: m.Income, B: m.Spending}
	}
	d.FlowChart = pairChart("Income and spending by month", d.Currency, cols)
	if d.Worth, err = h.store.NetWorthSeries(ctx, fam, p, d.Interval); err != nil {
		return d, err
	}
	d.WorthChart = lineChart("Net worth over the period", d.Currency, d.Worth)
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
		head := []string{"kind", "category", "parent", "currency"}
		for _, m := range d.Months {
			head = append(head, m.Time().Format("2006-01"))
		}
		rows = append(rows, append(head, "total"))
		line := func(kind, parent string, r statementRow) {
			row := []string{kind, csvSafe(r.Name), csvSafe(parent), d.Currency}
			for _, a := range r.Cells {
				row = append(row, csvMoney(a, d.Currency))
			}
			rows = append(rows, append(row, csvMoney(r.Total, d.Currency)))
		}
		for _, part := range []struct {
			kind string
			rows []statementRow
		}{{"income", d.Income}, {"spending", d.Spending}} {
			parent := ""
			for _, r := range part.rows {
				switch {
				case r.Subtotal:
					parent = r.Name
					line(part.kind+"_subtotal", "", r)
				case r.Child:
					line(part.kind, parent, r)
				default:
					parent = ""
					line(part.kind, "", r)
				}
			}
		}
		line("total_income", "", d.Totals.Income)
		line("total_spending", "", d.Totals.Spending)
		line("net", "", d.Totals.Net)
	case "cash_flow":
		rows = append(rows, []string{"month", "currency", "income", "spending", "net"})
		for _, m := range d.Flow {
			rows = append(rows, []string{m.Month.Time().Format("2006-01"), d.Currency,
				csvMoney(m.Income, d.Currency), csvMoney(m.Spending, d.Currency), csvMoney(m.Net(), d.Currency)})
		}
	case "net_worth":
		rows = append(rows, []string{"date", "currency", "net_worth"})
		for _, p := range d.Worth {
			rows = append(rows, []string{string(p.Date), d.Currency, csvMoney(p.Value, d.Currency)})
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

// csvMoney is an amount as a spreadsheet reads it: a plain decimal with
// the currency's own places ("1234.50" for dollars, "1235" for yen),
// rounded half away from zero as the screens round it.
func csvMoney(a money.Amount, currency string) string {
	c := money.MustCurrency(currency)
	minor := a.Minor(c)
	s := strconv.FormatInt(minor, 10)
	neg := minor < 0
	if neg {
		s = s[1:]
	}
	if c.Exponent > 0 {
		if pad := c.Exponent + 1 - len(s); pad > 0 {
			s = strings.Repeat("0", pad) + s
		}
		s = s[:len(s)-c.Exponent] + "." + s[len(s)-c.Exponent:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// csvSafe keeps a spreadsheet from reading a name as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

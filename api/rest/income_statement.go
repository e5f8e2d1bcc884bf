package rest

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// maxStatementDays bounds the period of one income statement (ten years):
// longer ones are refused rather than answered with thousands of months.
const maxStatementDays = 3653

// flowJSON is money in, money out and what was left, as the statement
// reports them for the whole period and for each month.
type flowJSON struct {
	Income        string `json:"income"`
	IncomeCents   int64  `json:"income_cents"`
	Spending      string `json:"spending"`
	SpendingCents int64  `json:"spending_cents"`
	Net           string `json:"net"`
	NetCents      int64  `json:"net_cents"`
}

func renderFlow(money func(money.Amount) (string, int64), income, spending, net money.Amount) flowJSON {
	var f flowJSON
	f.Income, f.IncomeCents = money(income)
	f.Spending, f.SpendingCents = money(spending)
	f.Net, f.NetCents = money(net)
	return f
}

type statementMonthJSON struct {
	Month string `json:"month"` // its first day
	flowJSON
}

type statementCategoryRefJSON struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Color    string  `json:"color"`
	Icon     string  `json:"icon"`
	ParentID *string `json:"parent_id"`
}

type statementCellJSON struct {
	Month             string `json:"month"`
	Total             string `json:"total"`
	TotalCents        int64  `json:"total_cents"`
	TransactionsCount int    `json:"transactions_count"`
}

type statementCategoryJSON struct {
	Classification    string                    `json:"classification"`
	Category          *statementCategoryRefJSON `json:"category"` // null: uncategorised
	Total             string                    `json:"total"`
	TotalCents        int64                     `json:"total_cents"`
	TransactionsCount int                       `json:"transactions_count"`
	Months            []statementCellJSON       `json:"months"` // months with any, in order
}

type incomeStatementJSON struct {
	Currency  string `json:"currency"`
	StartDate string `json:"start_date"`
	EndDate   string `json:"end_date"`
	flowJSON
	IncomeCount   int                     `json:"income_count"`
	SpendingCount int                     `json:"spending_count"`
	Months        []statementMonthJSON    `json:"months"`
	Categories    []statementCategoryJSON `json:"categories"`
}

// showIncomeStatement answers the family's income and spending over a
// period (the current month by default): totals, every month, and every
// category with its months, all added up from the one IncomeStatement.
func (h *Handler) showIncomeStatement(c *fiber.Ctx) error {
	ctx, fam := c.UserContext(), KeyOf(c).FamilyID
	start, end, err := queryRange(c)
	if err != nil {
		return err
	}
	p := models.MonthPeriod(civil.DateOf(h.now()))
	switch {
	case start != "" && end != "":
		p = models.Period{From: start, To: end}
	case start != "":
		p = models.Period{From: start, To: models.MonthPeriod(start).To}
	case end != "":
		p = models.Period{From: models.MonthPeriod(end).From, To: end}
	}
	if p.To.Time().Sub(p.From.Time()).Hours()/24 >= maxStatementDays {
		return httperr.BadRequest("start_date and end_date may be at most ten years apart")
	}
	f, err := h.store.Family(ctx, fam)
	if err != nil {
		return err
	}
	cells, err := h.store.IncomeStatement(ctx, fam, p)
	if err != nil {
		return err
	}
	// The categories, the totals and the months add up the same cells:
	// one read of the ledger, and the figures cannot disagree.
	categories := models.CategoryTotalsOf(cells)
	totals, months := models.TotalsOf(f.Currency, categories), models.CashFlowOf(cells, p)

	money := moneyIn(totals.Currency)
	out := incomeStatementJSON{Currency: totals.Currency, StartDate: string(p.From), EndDate: string(p.To),
		IncomeCount: totals.IncomeCount, SpendingCount: totals.SpendingCount,
		Months: make([]statementMonthJSON, len(months)), Categories: make([]statementCategoryJSON, len(categories))}
	out.flowJSON = renderFlow(money, totals.Income, totals.Spending, totals.Net())
	for i, m := range months {
		out.Months[i] = statementMonthJSON{Month: string(m.Month), flowJSON: renderFlow(money, m.Income, m.Spending, m.Net())}
	}
	type key struct {
		class string
		id    uuid.UUID // uuid.Nil: uncategorised
	}
	index := map[key]int{}
	for i, ct := range categories {
		j := statementCategoryJSON{Classification: ct.Classification, TransactionsCount: ct.Count, Months: []statementCellJSON{}}
		j.Total, j.TotalCents = money(ct.Total)
		k := key{class: ct.Classification}
		if ct.CategoryID != nil {
			k.id = *ct.CategoryID
			j.Category = &statementCategoryRefJSON{ID: ct.CategoryID.String(), Name: deref(ct.Name), Color: deref(ct.Color),
				Icon: deref(ct.Icon), ParentID: optID(ct.ParentID)}
		}
		index[k] = i
		out.Categories[i] = j
	}
	for _, cell := range cells {
		k := key{class: cell.Classification}
		if cell.CategoryID != nil {
			k.id = *cell.CategoryID
		}
		i := index[k] // every cell's category is among categories: they are its sums
		j := statementCellJSON{Month: string(cell.Month), TransactionsCount: cell.Count}
		j.Total, j.TotalCents = money(cell.Total)
		out.Categories[i].Months = append(out.Categories[i].Months, j)
	}
	return c.JSON(out)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

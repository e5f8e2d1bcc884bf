package assistant

import (
	"cmp"
	"context"
	"encoding/json"
	"math/big"
	"slices"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// maxMonths is how many months a monthly series may hold, as the
// reference allows.
const maxMonths = 36

// incomeArgs are get_income_statement's arguments, as the reference's.
type incomeArgs struct {
	StartDate           string   `json:"start_date"`
	EndDate             string   `json:"end_date"`
	AccountIDs          []string `json:"account_ids"`
	GroupBy             string   `json:"group_by"`
	CompareWithPrevious bool     `json:"compare_previous_period"`
}

var getIncomeStatement = Tool{
	Name: "get_income_statement",
	Description: `Returns income and spending by category over a period, with totals, net and savings rate.
The net is income less spending. Transfers between the household's own accounts are not counted. Use it for questions such as
"how much did we spend last month" or "what is our net income this year". Month over month: pass group_by "month"
for a monthly_series (at most 36 months). Against the period just before: pass compare_previous_period true. Per
account: pass account_ids from get_accounts (totals only; the category breakdown is omitted with this filter).`,
	Schema: object([]string{"start_date", "end_date"}, map[string]any{
		"start_date":              str("First day of the period, YYYY-MM-DD"),
		"end_date":                str("Last day of the period, YYYY-MM-DD"),
		"account_ids":             strList("Account ids from get_accounts; scopes the totals to those accounts and omits the category breakdown"),
		"group_by":                enum(`Pass "month" to add a monthly_series of income, expenses and net per calendar month`, "none", "month"),
		"compare_previous_period": map[string]any{"type": "boolean", "description": "Adds the totals of the equal-length period just before start_date, with the changes"},
	}),
	Run: runIncomeStatement,
}

func runIncomeStatement(ctx context.Context, s *models.Store, c Caller, raw json.RawMessage) (any, error) {
	var a incomeArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	from, err1 := civil.ParseDate(a.StartDate)
	to, err2 := civil.ParseDate(a.EndDate)
	if err1 != nil || err2 != nil {
		return nil, refuse("invalid_date", "start_date and end_date are required, as real days in YYYY-MM-DD format.")
	}
	if to < from {
		return nil, refuse("validation_failed", "end_date must not be before start_date.")
	}
	p := models.Period{From: from, To: to}
	if a.GroupBy != "" && a.GroupBy != "none" && a.GroupBy != "month" {
		return nil, refuse("invalid_arguments", `group_by must be "none" or "month".`)
	}
	var months []models.Period
	if a.GroupBy == "month" {
		if months = monthsOf(p); len(months) > maxMonths {
			return nil, refuse("too_many_periods", "That range has more than %d months. Use a shorter range.", maxMonths)
		}
	}
	accounts, unknown, err := eligibleAccounts(ctx, s, c.FamilyID, a.AccountIDs)
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		return map[string]any{"error": "unknown_account_ids", "unknown_ids": unknown,
			"message": "Some account ids were not found or are not active accounts of this household. Call get_accounts for ids and retry once with those."}, nil
	}
	fam, err := s.Family(ctx, c.FamilyID)
	if err != nil {
		return nil, err
	}
	cur := fam.Currency
	totals := func(p models.Period) (*models.Totals, error) { return s.AccountTotals(ctx, c.FamilyID, p, accounts) }
	out := map[string]any{"currency": cur,
		"period": map[string]string{"start_date": string(from), "end_date": string(to)}}
	var t *models.Totals
	if len(accounts) > 0 {
		if t, err = totals(p); err != nil {
			return nil, err
		}
		out["account_ids"] = a.AccountIDs
		out["income"] = map[string]any{"total": formatMoney(t.Income, cur), "by_category": nil}
		out["expense"] = map[string]any{"total": formatMoney(t.Spending, cur), "by_category": nil}
		out["breakdown_omitted_reason"] = "the category breakdown is not available with an account filter"
	} else {
		rows, err := s.CategoryTotals(ctx, c.FamilyID, p)
		if err != nil {
			return nil, err
		}
		t = models.TotalsOf(cur, rows)
		out["income"] = map[string]any{"total": formatMoney(t.Income, cur), "by_category": byCategory(rows, "income", t.Income, cur)}
		out["expense"] = map[string]any{"total": formatMoney(t.Spending, cur), "by_category": byCategory(rows, "expense", t.Spending, cur)}
	}
	out["net"] = formatMoney(t.Net(), cur)
	out["insights"] = map[string]any{"net_income": formatMoney(t.Net(), cur), "savings_rate": percent(t.Net(), t.Income, 2) + "%"}
	if months != nil {
		series := make([]map[string]any, len(months))
		for i, m := range months {
			mt, err := totals(m)
			if err != nil {
				return nil, err
			}
			series[i] = flow(m, mt, cur)
		}
		out["monthly_series"] = series
	}
	if a.CompareWithPrevious {
		days := int(to.Time().Sub(from.Time()).Hours()/24) + 1
		prev := models.Period{From: civil.DateOf(from.Time().AddDate(0, 0, -days)), To: civil.DateOf(from.Time().AddDate(0, 0, -1))}
		pt, err := totals(prev)
		if err != nil {
			return nil, err
		}
		before := flow(prev, pt, cur)
		before["income_change"] = change(pt.Income, t.Income, cur)
		before["expenses_change"] = change(pt.Spending, t.Spending, cur)
		out["previous_period"] = before
	}
	return out, nil
}

// eligibleAccounts checks account ids against the family's active
// accounts, the ones the income figures count; the rest come back as
// unknown, as an id of another family does.
func eligibleAccounts(ctx context.Context, s *models.Store, familyID uuid.UUID, ids []string) ([]uuid.UUID, []string, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	all, err := liveAccounts(ctx, s, familyID)
	if err != nil {
		return nil, nil, err
	}
	var ok []uuid.UUID
	var unknown []string
	for _, raw := range ids {
		id, err := uuid.Parse(raw)
		if i := slices.IndexFunc(all, func(a models.Account) bool { return a.ID == id }); err != nil || i < 0 || all[i].Status != models.AccountActive {
			unknown = append(unknown, truncate(raw, 64))
			continue
		}
		ok = append(ok, id)
	}
	return ok, unknown, nil
}

// monthsOf cuts p at calendar month ends.
func monthsOf(p models.Period) []models.Period {
	var out []models.Period
	for start := p.From.Time(); !start.After(p.To.Time()); {
		end := time.Date(start.Year(), start.Month()+1, 0, 0, 0, 0, 0, time.UTC)
		if end.After(p.To.Time()) {
			end = p.To.Time()
		}
		out = append(out, models.Period{From: civil.DateOf(start), To: civil.DateOf(end)})
		if len(out) > maxMonths {
			break // enough to refuse
		}
		start = end.AddDate(0, 0, 1)
	}
	return out
}

func flow(p models.Period, t *models.Totals, cur string) map[string]any {
	return map[string]any{"start_date": string(p.From), "end_date": string(p.To), "income": formatMoney(t.Income, cur),
		"expenses": formatMoney(t.Spending, cur), "net": formatMoney(t.Net(), cur)}
}

// change is how much now differs from before, and by what percent of
// before (null when before is zero).
func change(before, now money.Amount, cur string) map[string]any {
	out := map[string]any{"amount": formatMoney(now-before, cur), "percent": nil}
	if before != 0 {
		out["percent"] = json.Number(percent(now-before, before, 1))
	}
	return out
}

// percent is part/whole×100 rounded half away from zero to places
// decimals ("0" when whole is zero), exact at any size of amount.
func percent(part, whole money.Amount, places int) string {
	if whole == 0 {
		return "0"
	}
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	n := new(big.Int).Mul(big.NewInt(int64(part)), big.NewInt(100))
	n.Mul(n, scale)
	d := big.NewInt(int64(whole))
	if d.Sign() < 0 {
		n.Neg(n)
		d.Neg(d)
	}
	half := new(big.Int).Quo(d, big.NewInt(2))
	if n.Sign() < 0 {
		n.Sub(n, half)
	} else {
		n.Add(n, half)
	}
	q := new(big.Rat).SetFrac(n.Quo(n, d), scale)
	return q.FloatString(places)
}

// categoryShare is a top category's part of income or spending.
type categoryShare struct {
	Name          string             `json:"name"`
	Total         string             `json:"total"`
	Percentage    string             `json:"percentage_of_total"`
	Transactions  int                `json:"transactions"`
	Subcategories []subcategoryShare `json:"subcategory_totals"`
	amount        money.Amount
}

type subcategoryShare struct {
	Name         string `json:"name"`
	Total        string `json:"total"`
	Percentage   string `json:"percentage_of_total"`
	Transactions int    `json:"transactions"`
}

// byCategory groups one direction's category totals under their top
// categories, as the reference does: each top category's total includes
// its subcategories, which are listed beneath it; the largest first.
func byCategory(rows []models.CategoryTotal, classification string, whole money.Amount, cur string) []categoryShare {
	tops := map[string]*categoryShare{}
	var order []*categoryShare
	top := func(key, name string) *categoryShare {
		if tops[key] == nil {
			tops[key] = &categoryShare{Name: name, Subcategories: []subcategoryShare{}}
			order = append(order, tops[key])
		}
		return tops[key]
	}
	for _, r := range rows {
		if r.Classification != classification {
			continue
		}
		switch {
		case r.CategoryID == nil:
			t := top("", uncategorized)
			t.amount, t.Transactions = t.amount+r.Total, t.Transactions+r.Count
		case r.ParentID == nil:
			t := top(r.CategoryID.String(), *r.Name)
			t.amount, t.Transactions = t.amount+r.Total, t.Transactions+r.Count
		default:
			t := top(r.ParentID.String(), cmp.Or(derefOr(r.ParentName), *r.Name))
			t.amount, t.Transactions = t.amount+r.Total, t.Transactions+r.Count
			t.Subcategories = append(t.Subcategories, subcategoryShare{Name: *r.Name, Total: formatMoney(r.Total, cur),
				Percentage: percent(r.Total, whole, 1) + "%", Transactions: r.Count})
		}
	}
	slices.SortStableFunc(order, func(a, b *categoryShare) int { return cmp.Compare(b.amount, a.amount) })
	out := make([]categoryShare, len(order))
	for i, t := range order {
		t.Total, t.Percentage = formatMoney(t.amount, cur), percent(t.amount, whole, 1)+"%"
		out[i] = *t
	}
	return out
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

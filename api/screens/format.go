package screens

import (
	"html/template"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/money"
)

// formatMoney renders an amount in its currency's own convention ("$1,234.56");
// an unknown code falls back to the plain decimal and the code.
func formatMoney(a money.Amount, currency string) string {
	if c, ok := money.LookupCurrency(currency); ok {
		return a.Format(c)
	}
	return a.String() + " " + currency
}

// flow renders a transaction amount with the house convention: money in
// is green with a plus sign, money out is plain. Colour is never the only
// cue, for readers who cannot see it.
func flow(a money.Amount, currency string) template.HTML {
	if a < 0 {
		return template.HTML(`<span class="in">+` + template.HTMLEscapeString(formatMoney(-a, currency)) + `</span>`)
	}
	return template.HTML(template.HTMLEscapeString(formatMoney(a, currency)))
}

// currencyChoice is one option of a currency select.
type currencyChoice struct{ Code, Label string }

// currencyChoices lists every ISO 4217 code the service knows, each with
// its symbol where it has one.
func currencyChoices() []currencyChoice {
	codes := money.Codes()
	out := make([]currencyChoice, len(codes))
	for i, c := range codes {
		out[i] = currencyChoice{Code: c, Label: c}
		if cur := money.MustCurrency(c); cur.Symbol != c {
			out[i].Label = c + " (" + cur.Symbol + ")"
		}
	}
	return out
}

// code names currency after an amount when it is not home, the family's
// own: a symbol alone ($, ¥, R) may stand for several currencies.
func code(currency, home string) template.HTML {
	if currency == "" || currency == home {
		return ""
	}
	return template.HTML(` <span class="cur">` + template.HTMLEscapeString(currency) + `</span>`)
}

// balance renders an account balance: a liability's is what is owed.
func balance(a money.Amount, currency, accountType string) template.HTML {
	if models.Liability(accountType) {
		return template.HTML(`<span class="owed">` + template.HTMLEscapeString(formatMoney(a, currency)) + ` owed</span>`)
	}
	return template.HTML(template.HTMLEscapeString(formatMoney(a, currency)))
}

// typeLabels names each account type for people.
var typeLabels = map[string]string{
	"depository": "Cash and bank", "investment": "Investments", "crypto": "Crypto", "property": "Property",
	"vehicle": "Vehicles", "other_asset": "Other assets", "credit_card": "Credit cards", "loan": "Loans",
	"other_liability": "Other liabilities", "": "Other (untyped)",
}

func typeLabel(t string) string {
	if l, ok := typeLabels[t]; ok {
		return l
	}
	return t
}

// pager is a list's position and the links to its neighbours, which
// keep the list's filters.
type pager struct {
	Number, Pages, Total int
	More                 bool   // the count stopped at Total: at least Total rows, at least Pages pages
	Prev, Next           string // "" at either end
}

func newPager(q url.Values, p models.Page, total int) pager {
	pg := pager{Number: p.Number, Pages: p.Pages(total), Total: total, More: p.AtLeast(total)}
	link := func(n int) string {
		out := url.Values{}
		for k, v := range q {
			out[k] = v
		}
		out.Set("page", strconv.Itoa(n))
		return "?" + out.Encode()
	}
	if p.Number > 1 {
		pg.Prev = link(min(p.Number-1, pg.Pages))
	}
	if p.Number < pg.Pages {
		pg.Next = link(p.Number + 1)
	}
	return pg
}

var funcs = template.FuncMap{
	"money": formatMoney, "flow": flow, "balance": balance, "code": code, "currencies": currencyChoices, "typeLabel": typeLabel,
	"amountValue": amountValue, "share": share, "monthName": monthName, "shortDate": shortDate,
	"catName":      catName,
	"importKind":   importKind,
	"deref_amount": func(a *money.Amount) money.Amount { return *a },
	"add_amount":   func(a, b money.Amount) money.Amount { return a + b },
	"plus":         func(a, b int) int { return a + b },
	"neg":          func(a money.Amount) money.Amount { return -a },
	"stampOf":      stamp,
	"plural":       plural,
	"lines":        func(s string) []string { return strings.Split(s, "\n") },
	"thousands":    thousands,
	"exportSize":   exportSize,
	"dict":         dict,
	"str":          models.Str,
	"has":          func(list []string, v string) bool { return slices.Contains(list, v) },
	// the rules screens
	"inc": func(i int) int { return i + 1 }, "refName": refName,
	"conditionLabel": func(t string) string { return labelOr(conditionLabels, t) },
	"actionLabel":    func(t string) string { return labelOr(actionLabels, t) },
	"operatorLabel":  operatorLabel,
	"conditionTypes": func() []string { return models.RuleConditionTypes[:len(models.RuleConditionTypes)-1] }, // compound: via "any"
	"actionTypes":    func() []string { return models.RuleActionTypes },
	"operators":      func() [][2]string { return operatorLabels },
	"ruleKinds":      func() []string { return []string{"income", "expense", "transfer"} },
}

// dict builds a map from key, value pairs, to pass several values to a
// template.
func dict(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		m[k] = kv[i+1]
	}
	return m
}

// amountValue is an amount as a form shows it: positive, with at least two
// decimals and no trailing zeros beyond them ("12.50", "0.1234").
func amountValue(a money.Amount) string {
	s := a.Abs().String()
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return s
}

// catName names a report row's category, "Uncategorized" for none.
func catName(t models.CategoryTotal) string {
	if t.Name == nil {
		return "Uncategorized"
	}
	if t.ParentName != nil {
		return *t.ParentName + " › " + *t.Name
	}
	return *t.Name
}

// importKind names an import's type as a person knows the file: CSV, not
// the reference app's TransactionImport.
func importKind(t string) string {
	switch t {
	case importfile.CSV:
		return "CSV import"
	case importfile.OFX:
		return "OFX import"
	case importfile.QIF:
		return "QIF import"
	}
	return t
}

package rest

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// moneyJSON is a sum of money as the reference API renders one: a plain
// decimal with the currency's digits, the code and the display string;
// amount_cents adds the minor units, as every other amount here has.
type moneyJSON struct {
	Amount      string `json:"amount"`
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	Formatted   string `json:"formatted"`
}

func renderMoney(a money.Amount, code string) moneyJSON {
	cur := money.MustCurrency(code)
	minor := a.Minor(cur)
	return moneyJSON{Amount: plainDecimal(minor, cur.Exponent), AmountCents: minor, Currency: cur.Code, Formatted: a.Format(cur)}
}

// moneyIn renders amounts in a currency as the pair every amount field
// has: the display string and the minor units (its _cents twin).
func moneyIn(code string) func(money.Amount) (string, int64) {
	cur := money.MustCurrency(code)
	return func(a money.Amount) (string, int64) { return a.Format(cur), a.Minor(cur) }
}

// plainDecimal writes minor units as a decimal with exp digits after the
// point: 424450, 2 is "4244.50".
func plainDecimal(minor int64, exp int) string {
	neg := minor < 0
	digits := strconv.FormatInt(abs64(minor), 10)
	if exp > 0 {
		if pad := exp + 1 - len(digits); pad > 0 {
			digits = strings.Repeat("0", pad) + digits
		}
		digits = digits[:len(digits)-exp] + "." + digits[len(digits)-exp:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// queryDate reads an optional YYYY-MM-DD query parameter.
func queryDate(c *fiber.Ctx, name string) (civil.Date, error) {
	v := c.Query(name)
	if v == "" {
		return "", nil
	}
	d, err := civil.ParseDate(v)
	if err != nil {
		return "", httperr.BadRequest(name + " must be a date, YYYY-MM-DD")
	}
	return d, nil
}

// queryID reads an optional UUID query parameter.
func queryID(c *fiber.Ctx, name string) (*uuid.UUID, error) {
	v := c.Query(name)
	if v == "" {
		return nil, nil
	}
	id, err := uuid.Parse(v)
	if err != nil || len(v) != 36 {
		return nil, httperr.BadRequest(name + " must be a UUID")
	}
	return &id, nil
}

// queryRange reads start_date and end_date, refusing a reversed range.
func queryRange(c *fiber.Ctx) (start, end civil.Date, err error) {
	if start, err = queryDate(c, "start_date"); err != nil {
		return "", "", err
	}
	if end, err = queryDate(c, "end_date"); err != nil {
		return "", "", err
	}
	if start != "" && end != "" && end < start {
		return "", "", httperr.BadRequest("end_date must not be before start_date")
	}
	return start, end, nil
}

type balanceSheetJSON struct {
	Currency           string    `json:"currency"`
	IncludeDisabled    bool      `json:"include_disabled"`
	NetWorth           moneyJSON `json:"net_worth"`
	Assets             moneyJSON `json:"assets"`
	Liabilities        moneyJSON `json:"liabilities"`
	UnconvertedAccount int       `json:"unconverted_accounts"`
	// Conversions are the accounts in another currency counted in the
	// totals, each at its rate of today or the latest day before.
	Conversions []conversionJSON `json:"conversions"`
}

type conversionJSON struct {
	AccountID string    `json:"account_id"`
	Balance   moneyJSON `json:"balance"`
	Rate      string    `json:"rate"`
	RateDate  string    `json:"rate_date"`
	Value     moneyJSON `json:"value"`
}

func (h *Handler) showBalanceSheet(c *fiber.Ctx) error {
	var include bool
	switch v := strings.ToLower(c.Query("include_disabled")); v {
	case "", "false", "0":
	case "true", "1":
		include = true
	default:
		return httperr.BadRequest("include_disabled must be true or false")
	}
	bs, err := h.store.BalanceSheet(c.UserContext(), KeyOf(c).FamilyID, include)
	if err != nil {
		return err
	}
	conv := make([]conversionJSON, len(bs.Converted))
	for i, cv := range bs.Converted {
		conv[i] = conversionJSON{AccountID: cv.AccountID.String(), Balance: renderMoney(cv.Balance, cv.Currency),
			Rate: cv.Rate.Rate.String(), RateDate: string(cv.Rate.Date), Value: renderMoney(cv.Value, bs.Currency)}
	}
	return c.JSON(balanceSheetJSON{
		Currency: bs.Currency, IncludeDisabled: include,
		NetWorth: renderMoney(bs.NetWorth(), bs.Currency), Assets: renderMoney(bs.Assets, bs.Currency),
		Liabilities: renderMoney(bs.Liabilities, bs.Currency), UnconvertedAccount: bs.Unconverted, Conversions: conv,
	})
}

type balanceAccountJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	AccountType *string `json:"account_type"`
}

// balanceJSON is one account's day, in the reference's shape. Cash is the
// whole balance of a depository or credit card account and nothing of
// any other; there are no market flows or adjustments.
type balanceJSON struct {
	ID                      string             `json:"id"`
	Date                    string             `json:"date"`
	Currency                string             `json:"currency"`
	FlowsFactor             int                `json:"flows_factor"`
	Balance                 string             `json:"balance"`
	BalanceCents            int64              `json:"balance_cents"`
	CashBalance             string             `json:"cash_balance"`
	CashBalanceCents        int64              `json:"cash_balance_cents"`
	StartCashBalance        string             `json:"start_cash_balance"`
	StartCashBalanceCents   int64              `json:"start_cash_balance_cents"`
	StartNonCashBalance     string             `json:"start_non_cash_balance"`
	StartNonCashBalanceCent int64              `json:"start_non_cash_balance_cents"`
	StartBalance            string             `json:"start_balance"`
	StartBalanceCents       int64              `json:"start_balance_cents"`
	CashInflows             string             `json:"cash_inflows"`
	CashInflowsCents        int64              `json:"cash_inflows_cents"`
	CashOutflows            string             `json:"cash_outflows"`
	CashOutflowsCents       int64              `json:"cash_outflows_cents"`
	NonCashInflows          string             `json:"non_cash_inflows"`
	NonCashInflowsCents     int64              `json:"non_cash_inflows_cents"`
	NonCashOutflows         string             `json:"non_cash_outflows"`
	NonCashOutflowsCents    int64              `json:"non_cash_outflows_cents"`
	NetMarketFlows          string             `json:"net_market_flows"`
	NetMarketFlowsCents     int64              `json:"net_market_flows_cents"`
	CashAdjustments         string             `json:"cash_adjustments"`
	CashAdjustmentsCents    int64              `json:"cash_adjustments_cents"`
	NonCashAdjustments      string             `json:"non_cash_adjustments"`
	NonCashAdjustmentsCents int64              `json:"non_cash_adjustments_cents"`
	EndCashBalance          string             `json:"end_cash_balance"`
	EndCashBalanceCents     int64              `json:"end_cash_balance_cents"`
	EndNonCashBalance       string             `json:"end_non_cash_balance"`
	EndNonCashBalanceCents  int64              `json:"end_non_cash_balance_cents"`
	EndBalance              string             `json:"end_balance"`
	EndBalanceCents         int64              `json:"end_balance_cents"`
	Account                 balanceAccountJSON `json:"account"`
	CreatedAt               string             `json:"created_at"`
	UpdatedAt               string             `json:"updated_at"`
}

type balancesJSON struct {
	Balances   []balanceJSON `json:"balances"`
	Pagination Pagination    `json:"pagination"`
}

// balanceNamespace makes a day's id: the same account and day always get
// the same id, though no row stores it.
var balanceNamespace = uuid.MustParse("6f1c1f3e-3a52-4c0e-9a63-2f1f6c0b7d41")

func renderBalance(d *models.BalanceDay) balanceJSON {
	show := moneyIn(d.Currency)
	cash := d.AccountType == "depository" || d.AccountType == "credit_card"
	split := func(a money.Amount) (cashPart, other money.Amount) {
		if cash {
			return a, 0
		}
		return 0, a
	}
	var out balanceJSON
	out.ID = uuid.NewSHA1(balanceNamespace, []byte(d.AccountID.String()+"/"+string(d.Date))).String()
	out.Date, out.Currency, out.FlowsFactor = string(d.Date), d.Currency, d.FlowsFactor
	startCash, startOther := split(d.StartBalance)
	endCash, endOther := split(d.EndBalance)
	inCash, inOther := split(d.Inflows)
	outCash, outOther := split(d.Outflows)
	out.Balance, out.BalanceCents = show(d.EndBalance)
	out.CashBalance, out.CashBalanceCents = show(d.CashBalance())
	out.StartCashBalance, out.StartCashBalanceCents = show(startCash)
	out.StartNonCashBalance, out.StartNonCashBalanceCent = show(startOther)
	out.StartBalance, out.StartBalanceCents = show(d.StartBalance)
	out.CashInflows, out.CashInflowsCents = show(inCash)
	out.CashOutflows, out.CashOutflowsCents = show(outCash)
	out.NonCashInflows, out.NonCashInflowsCents = show(inOther)
	out.NonCashOutflows, out.NonCashOutflowsCents = show(outOther)
	out.NetMarketFlows, out.NetMarketFlowsCents = show(0)
	out.CashAdjustments, out.CashAdjustmentsCents = show(0)
	out.NonCashAdjustments, out.NonCashAdjustmentsCents = show(0)
	out.EndCashBalance, out.EndCashBalanceCents = show(endCash)
	out.EndNonCashBalance, out.EndNonCashBalanceCents = show(endOther)
	out.EndBalance, out.EndBalanceCents = show(d.EndBalance)
	out.Account = balanceAccountJSON{ID: d.AccountID.String(), Name: d.AccountName, AccountType: nonEmpty(d.AccountType)}
	out.CreatedAt, out.UpdatedAt = timestamp(d.CreatedAt), timestamp(d.UpdatedAt)
	return out
}

func (h *Handler) listBalances(c *fiber.Ctx) error {
	p, err := parsePage(c)
	if err != nil {
		return err
	}
	var f models.BalanceFilter
	if f.AccountID, err = queryID(c, "account_id"); err != nil {
		return err
	}
	if f.StartDate, f.EndDate, err = queryRange(c); err != nil {
		return err
	}
	if v := c.Query("currency"); v != "" {
		cur, ok := money.LookupCurrency(v)
		if !ok {
			return httperr.BadRequest("currency must be an ISO 4217 code")
		}
		f.Currency = cur.Code
	}
	days, total, err := h.store.BalanceHistory(c.UserContext(), KeyOf(c).FamilyID, f, p)
	if err != nil {
		return err
	}
	out := balancesJSON{Balances: make([]balanceJSON, len(days)), Pagination: pagination(p, total)}
	for i := range days {
		out.Balances[i] = renderBalance(&days[i])
	}
	return c.JSON(out)
}

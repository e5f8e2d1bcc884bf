package models

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// foreignWhereSQL chooses the rows countedWhereSQL would count but for
// their currency: they count too, each converted at the rate of its own
// day into the family's currency.
const foreignWhereSQL = countedBaseSQL + ` AND t.currency <> f.currency` + notTransferSQL

// foreignRowsSQL reads the foreign rows of family ?0 from ?1 to ?2 by
// currency, day, category and amount. Rows of one amount on one day
// convert to the same rounded figure, so converting a group once and
// multiplying by its count rounds each row once, as converting row by
// row would.
const foreignRowsSQL = `
SELECT t.currency, f.currency AS to_currency, t.date, t.category_id, t.amount, COUNT(*) AS n
FROM transactions t` + countedJoinsSQL + `
WHERE t.date >= ?1 AND t.date <= ?2 AND ` + foreignWhereSQL + `
GROUP BY t.currency, f.currency, t.date, t.category_id, t.amount`

// foreignAccountRowsSQL is foreignRowsSQL on the accounts ?3 only.
const foreignAccountRowsSQL = `
SELECT t.currency, f.currency AS to_currency, t.date, t.category_id, t.amount, COUNT(*) AS n
FROM transactions t` + countedJoinsSQL + `
WHERE t.date >= ?1 AND t.date <= ?2 AND t.account_id IN (?3) AND ` + foreignWhereSQL + `
GROUP BY t.currency, f.currency, t.date, t.category_id, t.amount`

// flowRow is rows of one currency, day, category and amount, and how
// many. Once converted, Amount is the value of one of them in the
// family's currency.
type flowRow struct {
	Currency   string       `bun:"currency"`
	ToCurrency string       `bun:"to_currency"`
	Date       civil.Date   `bun:"date"`
	CategoryID *uuid.UUID   `bun:"category_id"`
	Amount     money.Amount `bun:"amount"`
	N          int          `bun:"n"`
	Income     bool         `bun:"-"` // the stored amount is negative: kept when a tiny one converts to 0
}

// total is the rows' sum: Amount (one row, rounded once) times N.
func (r flowRow) total() money.Amount { return r.Amount * money.Amount(r.N) }

// foreignFlows returns the counted rows of a period in currencies other
// than the family's, each group converted at the rate of its day (or the
// latest day before with one), and how many rows stayed out by currency:
// a currency without a rate on or before their day is never counted 1:1.
// accountIDs narrows the rows when not empty. The rates are read once
// per currency (RateSeries), never per row.
func (s *Store) foreignFlows(ctx context.Context, familyID uuid.UUID, p Period, accountIDs []uuid.UUID) ([]flowRow, map[string]int, error) {
	var rows []flowRow
	q := s.db.NewRaw(foreignRowsSQL, familyID, p.From, p.To)
	if len(accountIDs) > 0 {
		q = s.db.NewRaw(foreignAccountRowsSQL, familyID, p.From, p.To, bun.List(accountIDs))
	}
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, nil, dbErr("foreign flows", err)
	}
	if len(rows) == 0 {
		return nil, nil, nil
	}
	type span struct{ from, to civil.Date }
	spans := map[string]span{}
	for _, r := range rows {
		sp, ok := spans[r.Currency]
		if !ok {
			sp = span{r.Date, r.Date}
		}
		sp.from, sp.to = min(sp.from, r.Date), max(sp.to, r.Date)
		spans[r.Currency] = sp
	}
	series := map[string]*RateSeries{}
	for cur, sp := range spans {
		rs, err := s.RateSeries(ctx, familyID, strings.ToUpper(cur), strings.ToUpper(rows[0].ToCurrency), sp.from, sp.to)
		if err != nil {
			return nil, nil, err
		}
		series[cur] = rs
	}
	var left map[string]int
	out := rows[:0]
	for _, r := range rows {
		q, ok := series[r.Currency].At(r.Date)
		var v money.Amount
		var err error
		if ok {
			v, err = money.Convert(r.Amount, q.Rate)
		}
		if !ok || err != nil || (v != 0 && int64(r.N) > math.MaxInt64/abs64(int64(v))) {
			if left == nil {
				left = map[string]int{}
			}
			left[r.Currency] += r.N // no rate, or past what an Amount holds: left out, and said so
			continue
		}
		r.Income, r.Amount = r.Amount < 0, v
		out = append(out, r)
	}
	return out, left, nil
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// cellKey is where a flow goes in a report: its month (zero when the
// report has no months), its direction and its category (uuid.Nil: none).
type cellKey struct {
	month    civil.Date
	income   bool
	category uuid.UUID
}

// addFlows adds the converted foreign flows to a report's cells, by month
// when byMonth, and returns the cells in the report's order: by month,
// spending before income, the largest total first, then by name. A cell
// only foreign rows filled gets its category's names read once.
func (s *Store) addFlows(ctx context.Context, familyID uuid.UUID, cells []StatementCell, flows []flowRow, byMonth bool) ([]StatementCell, error) {
	if len(flows) == 0 {
		return cells, nil
	}
	keyOf := func(month civil.Date, income bool, cat *uuid.UUID) cellKey {
		k := cellKey{month: month, income: income}
		if cat != nil {
			k.category = *cat
		}
		return k
	}
	at := map[cellKey]int{}
	for i, c := range cells {
		at[keyOf(c.Month, c.Classification == "income", c.CategoryID)] = i
	}
	var missing []uuid.UUID
	for _, f := range flows {
		var month civil.Date
		if byMonth {
			month = civil.DateOf(Month.start(f.Date.Time()))
		}
		k := keyOf(month, f.Income, f.CategoryID)
		i, ok := at[k]
		if !ok {
			c := StatementCell{Month: month}
			c.Classification, c.CategoryID = "expense", f.CategoryID
			if f.Income {
				c.Classification = "income"
			}
			if f.CategoryID != nil && !slices.Contains(missing, *f.CategoryID) {
				missing = append(missing, *f.CategoryID)
			}
			cells = append(cells, c)
			i = len(cells) - 1
			at[k] = i
		}
		cells[i].Total += money.Amount(abs64(int64(f.total())))
		cells[i].Count += f.N
	}
	if len(missing) > 0 {
		var names []CategoryTotal
		if err := s.db.NewRaw(categoryNamesSQL, familyID, bun.List(missing)).Scan(ctx, &names); err != nil {
			return nil, dbErr("category names", err)
		}
		for i := range cells {
			for _, n := range names {
				if cells[i].CategoryID != nil && cells[i].Name == nil && *cells[i].CategoryID == *n.CategoryID {
					c := &cells[i].CategoryTotal
					c.Name, c.Color, c.Icon, c.ParentID, c.ParentName = n.Name, n.Color, n.Icon, n.ParentID, n.ParentName
				}
			}
		}
	}
	slices.SortStableFunc(cells, func(a, b StatementCell) int {
		if a.Month != b.Month {
			return strings.Compare(string(a.Month), string(b.Month))
		}
		if a.Classification != b.Classification {
			return strings.Compare(a.Classification, b.Classification)
		}
		if a.Total != b.Total {
			if a.Total > b.Total {
				return -1
			}
			return 1
		}
		switch {
		case a.Name == nil && b.Name == nil:
			return 0
		case a.Name == nil:
			return 1
		case b.Name == nil:
			return -1
		}
		return strings.Compare(*a.Name, *b.Name)
	})
	return cells, nil
}

// categoryNamesSQL names the categories ?1 of family ?0 and their parents.
const categoryNamesSQL = `
SELECT c.id AS category_id, c.name, c.color, c.icon, c.parent_id, p.name AS parent_name
FROM categories c
LEFT JOIN categories p ON p.id = c.parent_id AND p.family_id = ?0
WHERE c.family_id = ?0 AND c.id IN (?1)`

// addFlowsToTotals adds the converted foreign flows to a period's Totals.
func addFlowsToTotals(t *Totals, flows []flowRow) {
	for _, f := range flows {
		if f.Income {
			t.Income -= f.total()
			t.IncomeCount += f.N
		} else {
			t.Spending += f.total()
			t.SpendingCount += f.N
		}
	}
}

package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
// day into the family's currency. It is countedJoinsSQL and
// countedBaseSQL written without joins: the family's active accounts and
// its currency are looked up once, as a set and a value, and every row
// is tested against them in the scan; joining them to every row made
// PostgreSQL spend a third of this query on a hash join.
const foreignWhereSQL = `t.family_id = ?0
  AND t.deleted_at IS NULL AND NOT t.excluded
  AND t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')
  AND t.currency <> (SELECT f.currency FROM families f WHERE f.id = ?0)` + notTransferSQL

// foreignRowsSQL reads the foreign rows of family ?0 from ?1 to ?2 by
// currency, day and category, each group with the list of its rows'
// amounts (?3: amountsOf), so that Go converts every row on its own and
// rounds it once. A list per group rather than a result row per
// transaction: a year of a large ledger is tens of thousands of rows,
// and the database driver's cost per result row is most of the work.
// The day comes first in the GROUP BY so that the sort compares dates
// before it compares currencies, text under a collation.
const foreignRowsSQL = `
SELECT t.currency, t.date, t.category_id, ?3 AS amounts
FROM transactions t
WHERE t.date >= ?1 AND t.date <= ?2 AND ` + foreignWhereSQL + `
GROUP BY t.date, t.category_id, t.currency`

// foreignAccountRowsSQL is foreignRowsSQL on the accounts ?4 only.
const foreignAccountRowsSQL = `
SELECT t.currency, t.date, t.category_id, ?3 AS amounts
FROM transactions t
WHERE t.date >= ?1 AND t.date <= ?2 AND t.account_id IN (?4) AND ` + foreignWhereSQL + `
GROUP BY t.date, t.category_id, t.currency`

// amountsOf is the SQL for the comma-separated list of a group's
// t.amount, in this store's dialect.
func (s *Store) amountsOf() bun.Safe {
	if s.Postgres() {
		return bun.Safe("string_agg(CAST(t.amount AS text), ',')")
	}
	return bun.Safe("group_concat(t.amount, ',')")
}

// flowRow is the counted rows of one currency, day, category and
// direction: N of them, worth Amount in the family's currency, each row
// converted and rounded on its own before it was added.
type flowRow struct {
	Currency   string
	Date       civil.Date
	CategoryID *uuid.UUID
	Income     bool         // the stored amounts are negative (kept when a tiny one converts to 0)
	Amount     money.Amount // signed as stored
	N          int
}

// total is the rows' sum in the family's currency, signed as stored.
func (r flowRow) total() money.Amount { return r.Amount }

// flowGroup is a result row of foreignRowsSQL: the amounts of one
// currency, day and category, as the database listed them.
type flowGroup struct {
	currency   string
	date       civil.Date
	categoryID *uuid.UUID
	amounts    []byte
}

// foreignFlows returns the counted rows of a period in currencies other
// than the family's, each converted at the rate of its day (or the
// latest day before with one) and rounded once, summed by currency, day,
// category and direction, and how many rows stayed out by currency: a
// currency without a rate on or before their day is never counted 1:1.
// accountIDs narrows the rows when not empty. The rates are read once
// per currency (RateSeries), never per row.
func (s *Store) foreignFlows(ctx context.Context, familyID uuid.UUID, p Period, accountIDs []uuid.UUID) ([]flowRow, map[string]int, error) {
	query, args := foreignRowsSQL, []any{familyID, p.From, p.To, s.amountsOf()}
	if len(accountIDs) > 0 {
		query, args = foreignAccountRowsSQL, append(args, bun.List(accountIDs))
	}
	groups, err := scanFlows(s.db.QueryContext(ctx, query, args...))
	if err != nil {
		return nil, nil, err
	}
	return s.convertFlows(ctx, familyID, groups)
}

// convertFlows converts every amount of the groups at the rate of its
// group's day and rounds it once (see foreignFlows).
func (s *Store) convertFlows(ctx context.Context, familyID uuid.UUID, groups []flowGroup) ([]flowRow, map[string]int, error) {
	if len(groups) == 0 {
		return nil, nil, nil
	}
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, nil, err
	}
	type span struct{ from, to civil.Date }
	spans := map[string]span{}
	for _, g := range groups {
		sp, ok := spans[g.currency]
		if !ok {
			sp = span{g.date, g.date}
		}
		sp.from, sp.to = min(sp.from, g.date), max(sp.to, g.date)
		spans[g.currency] = sp
	}
	series := map[string]*RateSeries{}
	for cur, sp := range spans {
		rs, err := s.RateSeries(ctx, familyID, strings.ToUpper(cur), strings.ToUpper(fam.Currency), sp.from, sp.to)
		if err != nil {
			return nil, nil, err
		}
		series[cur] = rs
	}
	var left map[string]int
	out := make([]flowRow, 0, len(groups))
	for _, g := range groups {
		q, ok := series[g.currency].At(g.date)
		in := flowRow{Currency: g.currency, Date: g.date, CategoryID: g.categoryID, Income: true}
		outgo := flowRow{Currency: g.currency, Date: g.date, CategoryID: g.categoryID}
		for rest := g.amounts; len(rest) > 0; {
			var a int64
			if a, rest, err = parseAmountList(rest); err != nil {
				return nil, nil, fmt.Errorf("models: foreign flows: %w", err)
			}
			var v money.Amount
			if ok {
				v, err = money.Convert(money.Amount(a), q.Rate)
			}
			if !ok || err != nil { // no rate, or past what an Amount holds: left out, and said so
				if left == nil {
					left = map[string]int{}
				}
				left[g.currency]++
				continue
			}
			r := &outgo
			if a < 0 {
				r = &in
			}
			r.Amount += v
			r.N++
		}
		for _, r := range []flowRow{in, outgo} {
			if r.N > 0 {
				out = append(out, r)
			}
		}
	}
	return out, left, nil
}

// scanFlows reads the groups of foreignRowsSQL (currency, date,
// category, amounts), the currencies shared.
func scanFlows(rs *sql.Rows, err error) ([]flowGroup, error) {
	if err != nil {
		return nil, dbErr("foreign flows", err)
	}
	defer rs.Close()
	var groups []flowGroup
	currencies := map[string]string{}
	var cur []byte
	var cat uuid.NullUUID
	for rs.Next() {
		var g flowGroup
		if err := rs.Scan(&cur, &g.date, &cat, &g.amounts); err != nil {
			return nil, dbErr("foreign flows", err)
		}
		if g.currency = currencies[string(cur)]; g.currency == "" {
			g.currency = string(cur)
			currencies[g.currency] = g.currency
		}
		if cat.Valid {
			id := cat.UUID
			g.categoryID = &id
		}
		groups = append(groups, g)
	}
	return groups, dbErr("foreign flows", rs.Err())
}

// parseAmountList reads the first integer of a comma-separated list and
// returns the rest after its comma. It is strconv.ParseInt without the
// copy to a string, for tens of thousands of amounts.
func parseAmountList(b []byte) (int64, []byte, error) {
	neg := len(b) > 0 && b[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	var n uint64
	start := i
	for ; i < len(b) && b[i] != ','; i++ {
		c := b[i] - '0'
		if c > 9 || n > (math.MaxInt64-uint64(c))/10 {
			return 0, nil, errors.New("an amount in the list is not an integer")
		}
		n = n*10 + uint64(c)
	}
	if i == start {
		return 0, nil, errors.New("an amount in the list is empty")
	}
	if i < len(b) {
		i++
	}
	if neg {
		return -int64(n), b[i:], nil
	}
	return int64(n), b[i:], nil
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
	months := map[civil.Date]civil.Date{} // a day's month, worked out once per day
	for _, f := range flows {
		var month civil.Date
		if byMonth {
			var ok bool
			if month, ok = months[f.Date]; !ok {
				month = civil.DateOf(Month.start(f.Date.Time()))
				months[f.Date] = month
			}
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
	sortCells(cells)
	return cells, nil
}

// sortCells puts a report's cells in order: by month, then as
// compareCategoryTotals.
func sortCells(cells []StatementCell) {
	slices.SortStableFunc(cells, func(a, b StatementCell) int {
		if a.Month != b.Month {
			return strings.Compare(string(a.Month), string(b.Month))
		}
		return compareCategoryTotals(a.CategoryTotal, b.CategoryTotal)
	})
}

// compareCategoryTotals orders a report's rows: spending before income,
// the largest total first, then by name, the uncategorised last.
func compareCategoryTotals(a, b CategoryTotal) int {
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

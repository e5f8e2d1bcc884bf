package models

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"coffer/models/civil"
	"coffer/models/money"
)

// BudgetCategory is what a budget gives one expense category.
type BudgetCategory struct {
	bun.BaseModel `bun:"table:budget_categories,alias:bc"`

	ID               uuid.UUID    `bun:"id,pk"`
	FamilyID         uuid.UUID    `bun:"family_id"`
	BudgetID         uuid.UUID    `bun:"budget_id"`
	CategoryID       uuid.UUID    `bun:"category_id"`
	BudgetedSpending money.Amount `bun:"budgeted_spending"`
	// RolloverEnabled carries what this month leaves of the category (or
	// what it overspent) into the next month's.
	RolloverEnabled bool      `bun:"rollover_enabled"`
	Currency        string    `bun:"currency"`
	CreatedAt       time.Time `bun:"created_at"`
	UpdatedAt       time.Time `bun:"updated_at"`
}

// missingBudgetCategoriesSQL lists family ?0's expense categories that
// budget ?1 has no row for, each with the carry-over choice its row had in
// the budget of month ?2, if any.
const missingBudgetCategoriesSQL = `
SELECT c.id,
       COALESCE((SELECT p.rollover_enabled FROM budget_categories p
                 JOIN budgets pb ON pb.id = p.budget_id AND pb.family_id = ?0
                 WHERE p.family_id = ?0 AND p.category_id = c.id AND pb.start_date = ?2), false) AS rollover_enabled
FROM categories c
WHERE c.family_id = ?0 AND c.classification = 'expense'
  AND NOT EXISTS (SELECT 1 FROM budget_categories bc WHERE bc.family_id = ?0 AND bc.budget_id = ?1 AND bc.category_id = c.id)`

// addBudgetCategories gives budget b a row for each expense category it
// lacks, with nothing budgeted yet.
func (s *Store) addBudgetCategories(ctx context.Context, b *Budget) error {
	var missing []struct {
		ID              uuid.UUID `bun:"id"`
		RolloverEnabled bool      `bun:"rollover_enabled"`
	}
	prev := civil.DateOf(b.StartDate.Time().AddDate(0, -1, 0))
	if err := s.db.NewRaw(missingBudgetCategoriesSQL, b.FamilyID, b.ID, prev).Scan(ctx, &missing); err != nil {
		return dbErr("list missing budget categories", err)
	}
	if len(missing) == 0 {
		return nil
	}
	now := s.now()
	rows := make([]BudgetCategory, len(missing))
	for i, m := range missing {
		rows[i] = BudgetCategory{ID: NewID(), FamilyID: b.FamilyID, BudgetID: b.ID, CategoryID: m.ID,
			RolloverEnabled: m.RolloverEnabled, Currency: b.Currency, CreatedAt: now, UpdatedAt: now}
	}
	_, err := s.db.NewInsert().Model(&rows).On("CONFLICT (budget_id, category_id) DO NOTHING").Exec(ctx)
	return dbErr("add budget categories", err)
}

// UpdateBudgetCategory sets what a budget gives one category and whether
// what is left carries into the next month.
func (s *Store) UpdateBudgetCategory(ctx context.Context, familyID, id uuid.UUID, budgeted money.Amount, rollover bool) error {
	if budgeted < 0 {
		return Invalid("Budgeted spending must not be negative")
	}
	res, err := s.db.NewUpdate().Model((*BudgetCategory)(nil)).
		Set("budgeted_spending = ?", budgeted).Set("rollover_enabled = ?", rollover).Set("updated_at = ?", s.now()).
		Where("family_id = ?", familyID).Where("id = ?", id).Exec(ctx)
	return affectedOne(res, err, "update budget category")
}

// BudgetLine is a budget category with what the month did to it: the
// figures the budget screen and GET /api/v1/budget_categories show.
type BudgetLine struct {
	BudgetCategory `bun:",extend"`
	StartDate      civil.Date `bun:"start_date,scanonly"` // of the budget's month
	EndDate        civil.Date `bun:"end_date,scanonly"`
	CategoryName   string     `bun:"category_name,scanonly"`
	CategoryColor  string     `bun:"category_color,scanonly"`
	CategoryIcon   string     `bun:"category_icon,scanonly"`
	ParentID       *uuid.UUID `bun:"parent_id,scanonly"`
	// ActualSpending is what the category spent in the month; a top-level
	// category's includes its subcategories'.
	ActualSpending money.Amount `bun:"actual_spending,scanonly"`
	// RolledOver is what the month before carried in: its available
	// amount, when it had carry-over on (negative when it overspent).
	RolledOver money.Amount `bun:"rolled_over,scanonly"`
	// Available is what is left to spend (negative: overspent). A
	// top-level category's is its shared pool: its budget and carry, less
	// the subcategories with limits of their own and their spending. An
	// inheriting subcategory shares its parent's.
	Available      money.Amount `bun:"available,scanonly"`
	ParentBudgeted money.Amount `bun:"parent_budgeted,scanonly"`
}

// Subcategory reports whether the line's category has a parent.
func (l *BudgetLine) Subcategory() bool { return l.ParentID != nil }

// InheritsParentBudget reports whether a subcategory has no limit of its
// own and spends from its parent's.
func (l *BudgetLine) InheritsParentBudget() bool { return l.Subcategory() && l.BudgetedSpending == 0 }

// Budgeted reports whether the line has anything to spend: its own
// amount, its parent's for an inheriting subcategory, or a carry from the
// month before. A line without is never "over": nobody set a limit.
func (l *BudgetLine) Budgeted() bool {
	return l.DisplayBudgetedSpending() != 0 || l.RolledOver != 0
}

// DisplayBudgetedSpending is the budget a screen shows for the line: the
// parent's for an inheriting subcategory.
func (l *BudgetLine) DisplayBudgetedSpending() money.Amount {
	if l.InheritsParentBudget() {
		return l.ParentBudgeted
	}
	return l.BudgetedSpending
}

// BudgetLineFilter narrows BudgetLines. Zero values do not filter.
type BudgetLineFilter struct {
	ID         *uuid.UUID
	BudgetID   *uuid.UUID
	CategoryID *uuid.UUID
	StartDate  civil.Date // budgets starting on or after
	EndDate    civil.Date // budgets ending on or before
}

// budgetLinesSQL computes the budget lines of family ?0 in budgets from
// ?1 to ?2, narrowed to line ?3, budget ?4 and category ?5 when they are
// not NULL (LIMIT ?6 OFFSET ?7), in one statement:
//   - spent: each category's spending in each budget month up to ?2,
//     counted as every report counts: the family's currency ?11 from the
//     monthly kept sums (a budget is a calendar month; a sum that is not
//     income is spending, its zero amounts adding nothing), the rows in
//     other currencies (budgetForeignRowsSQL) summed by day, each
//     converted on its own in SQL at the rates ?10 into
//     the family's currency ?11 (report_fx_sql.go), and the rows ?9 adds
//     (those SQL cannot convert exactly, converted in Go: see
//     budgetFlows);
//   - line: a top-level category's spending includes its subcategories';
//   - own: what each month leaves of a line before any carry (the shared
//     pool for a top-level category, nothing for an inheriting one);
//   - runs, carried: consecutive months with carry-over on form a run, and
//     what a month carries out is the sum of the run up to it (gaps and
//     islands: the month number less the row number is constant in a
//     run), so a month's carry in is the carry out of the month before.
//
// Months after ?2 never influence the lines asked for, so they are left out.
const budgetLinesSQL = `
WITH ` + fxRatesSQL + `,
months AS (
    SELECT b.id AS budget_id, b.start_date, b.end_date, ?8 AS mi
    FROM budgets b WHERE b.family_id = ?0 AND b.start_date <= ?2
),
span AS (SELECT MIN(start_date) AS lo, MAX(end_date) AS hi FROM months),
foreign_rows AS (` + budgetForeignRowsSQL + `
),
foreign_days AS (
    SELECT t.date, t.category_id, SUM(` + fxValueSQL + `) AS amount
    FROM foreign_rows t` + fxJoinSQL + `
    WHERE t.amount > 0 AND t.category_id IS NOT NULL
      AND t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')` + notTransferSQL + `
    GROUP BY t.date, t.category_id
),
spent AS (
    SELECT m.budget_id, s.category_id, SUM(s.amount) AS amount
    FROM months m
    JOIN transaction_sums s ON s.family_id = ?0 AND s.grain = 'm' AND s.day = m.start_date
    WHERE s.currency = ?11 AND NOT s.transfer AND NOT s.income AND s.category_id IS NOT NULL
      AND s.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')
    GROUP BY m.budget_id, s.category_id
    UNION ALL
    SELECT m.budget_id, d.category_id, SUM(d.amount) AS amount
    FROM months m
    JOIN foreign_days d ON d.date >= m.start_date AND d.date <= m.end_date
    GROUP BY m.budget_id, d.category_id
    UNION ALL ?9
),
actual AS (
    SELECT budget_id, category_id, SUM(amount) AS amount FROM (
        SELECT s.budget_id, s.category_id, s.amount FROM spent s
        UNION ALL
        SELECT s.budget_id, c.parent_id, s.amount FROM spent s
        JOIN categories c ON c.id = s.category_id AND c.family_id = ?0
        WHERE c.parent_id IS NOT NULL
    ) x GROUP BY budget_id, category_id
),
line AS (
    SELECT bc.id, bc.family_id, bc.budget_id, bc.category_id, bc.budgeted_spending, bc.rollover_enabled, bc.currency,
           bc.created_at, bc.updated_at, m.start_date, m.end_date, m.mi,
           c.name AS category_name, c.color AS category_color, c.icon AS category_icon, c.parent_id,
           COALESCE(ac.amount, 0) AS actual_spending
    FROM budget_categories bc
    JOIN months m ON m.budget_id = bc.budget_id
    JOIN categories c ON c.id = bc.category_id AND c.family_id = ?0
    LEFT JOIN actual ac ON ac.budget_id = bc.budget_id AND ac.category_id = bc.category_id
    WHERE bc.family_id = ?0
),
limited AS (
    SELECT budget_id, parent_id, SUM(budgeted_spending) AS budgeted, SUM(actual_spending) AS spent
    FROM line WHERE parent_id IS NOT NULL AND budgeted_spending > 0
    GROUP BY budget_id, parent_id
),
own AS (
    SELECT l.*, CASE
        WHEN l.parent_id IS NULL THEN l.budgeted_spending - COALESCE(lm.budgeted, 0) - (l.actual_spending - COALESCE(lm.spent, 0))
        WHEN l.budgeted_spending > 0 THEN l.budgeted_spending - l.actual_spending
        ELSE 0 END AS own_available
    FROM line l LEFT JOIN limited lm ON lm.budget_id = l.budget_id AND lm.parent_id = l.category_id
),
runs AS (
    SELECT category_id, mi, own_available, mi - ROW_NUMBER() OVER (PARTITION BY category_id ORDER BY mi) AS run
    FROM own WHERE rollover_enabled
),
carried AS (
    SELECT category_id, mi, SUM(own_available) OVER (PARTITION BY category_id, run ORDER BY mi) AS carry_out
    FROM runs
),
final AS (
    SELECT o.*, COALESCE(cr.carry_out, 0) AS rolled_over, o.own_available + COALESCE(cr.carry_out, 0) AS available
    FROM own o LEFT JOIN carried cr ON cr.category_id = o.category_id AND cr.mi = o.mi - 1
)
SELECT f.id, f.family_id, f.budget_id, f.category_id, f.budgeted_spending, f.rollover_enabled, f.currency,
       f.created_at, f.updated_at, f.start_date, f.end_date, f.category_name, f.category_color, f.category_icon, f.parent_id,
       CAST(f.actual_spending AS bigint) AS actual_spending,
       CAST(CASE WHEN f.parent_id IS NOT NULL AND f.budgeted_spending = 0 THEN 0 ELSE f.rolled_over END AS bigint) AS rolled_over,
       CAST(CASE WHEN f.parent_id IS NOT NULL AND f.budgeted_spending = 0 THEN COALESCE(p.available, 0) ELSE f.available END AS bigint) AS available,
       COALESCE(p.budgeted_spending, 0) AS parent_budgeted
FROM final f
LEFT JOIN final p ON p.budget_id = f.budget_id AND p.category_id = f.parent_id
WHERE f.start_date >= ?1 AND f.end_date <= ?2
  AND (?3 IS NULL OR f.id = ?3) AND (?4 IS NULL OR f.budget_id = ?4) AND (?5 IS NULL OR f.category_id = ?5)
ORDER BY f.start_date DESC, lower(f.category_name), f.id
LIMIT ?6 OFFSET ?7`

// monthNumber is the SQL for the number of a date's month counted from
// year 0, so that consecutive months differ by one on both dialects.
func (s *Store) monthNumber(col string) bun.Safe {
	if s.Postgres() {
		return bun.Safe("CAST(EXTRACT(YEAR FROM " + col + ") * 12 + EXTRACT(MONTH FROM " + col + ") AS integer)")
	}
	return bun.Safe("(CAST(strftime('%Y', " + col + ") AS integer) * 12 + CAST(strftime('%m', " + col + ") AS integer))")
}

// BudgetLines lists a page of the family's budget lines, newest month
// first and by category name within a month, and how many there are.
func (s *Store) BudgetLines(ctx context.Context, familyID uuid.UUID, f BudgetLineFilter, p Page) ([]BudgetLine, int, error) {
	from, to := civil.OpenRange(f.StartDate, f.EndDate)
	q := s.db.NewSelect().Model((*BudgetCategory)(nil)).
		Join("JOIN budgets AS b ON b.id = bc.budget_id AND b.family_id = bc.family_id").
		Where("bc.family_id = ?", familyID).Where("b.start_date >= ?", from).Where("b.end_date <= ?", to)
	if f.ID != nil {
		q.Where("bc.id = ?", *f.ID)
	}
	if f.BudgetID != nil {
		q.Where("bc.budget_id = ?", *f.BudgetID)
	}
	if f.CategoryID != nil {
		q.Where("bc.category_id = ?", *f.CategoryID)
	}
	lines := []BudgetLine{}
	n, err := p.read(ctx, q.Count, func(limit, offset int64) error {
		return s.budgetFlows(ctx, familyID, to, func(tx *Store, fx, rates schema.QueryWithArgs, cur string) error {
			return tx.db.NewRaw(budgetLinesSQL, fxArgs(rates, cur, familyID, from, to, f.ID, f.BudgetID, f.CategoryID, limit, offset,
				s.monthNumber("b.start_date"), fx)...).Scan(ctx, &lines)
		})
	})
	return lines, n, dbErr("list budget lines", err)
}

// BudgetLine returns one budget line of the family.
func (s *Store) BudgetLine(ctx context.Context, familyID, id uuid.UUID) (*BudgetLine, error) {
	lines, _, err := s.BudgetLines(ctx, familyID, BudgetLineFilter{ID: &id}, Page{Number: 1, Size: 1})
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, ErrNotFound
	}
	return &lines[0], nil
}

// budgetFlows runs fn with a query of rows (budget_id, category_id,
// amount): each category's spending in other currencies in each of
// family's budget months up to to that SQL cannot convert exactly (see
// report_fx_sql.go), converted in Go at each row's day's rate, for
// budgetLinesSQL to add to what it counts and converts in SQL. Without
// any, it is a query of no rows. fn also gets the rates table of those
// months and the family's currency, for budgetLinesSQL's conversion, and
// the store to read them on (see withRates).
func (s *Store) budgetFlows(ctx context.Context, familyID uuid.UUID, to civil.Date, fn func(tx *Store, flows, rates schema.QueryWithArgs, currency string) error) error {
	// Scoped like every other read, though it reads no row: a database
	// distributed by family then sends it to the family's node alone.
	none := bun.SafeQuery("SELECT NULL, NULL, 0 FROM budgets WHERE budgets.family_id = ? AND 1 = 0", familyID)
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return err
	}
	var months []Budget
	if err := s.db.NewSelect().Model(&months).Column("id", "start_date", "end_date").
		Where("b.family_id = ?", familyID).Where("b.start_date <= ?", to).
		OrderExpr("b.start_date").Scan(ctx); err != nil {
		return dbErr("budget flows", err)
	}
	if len(months) == 0 {
		return fn(s, none, s.noRates(), fam.Currency)
	}
	if err := s.maybeCompactSums(ctx, familyID); err != nil {
		return err
	}
	p := Period{From: months[0].StartDate, To: months[len(months)-1].EndDate}
	return s.withRates(ctx, familyID, fam.Currency, p, func(tx *Store, rates schema.QueryWithArgs) error {
		flows, err := tx.budgetSlowFlows(ctx, familyID, fam.Currency, rates, months, p)
		if err != nil {
			return err
		}
		if flows == nil {
			flows = &none
		}
		return fn(tx, *flows, rates, fam.Currency)
	})
}

// budgetSlowFlows is budgetFlows' query of the rows SQL cannot convert,
// nil without any.
func (s *Store) budgetSlowFlows(ctx context.Context, familyID uuid.UUID, currency string, rates schema.QueryWithArgs, months []Budget, p Period) (*schema.QueryWithArgs, error) {
	groups, err := scanFlows(s.db.QueryContext(ctx, slowSpendingRowsSQL, fxArgs(rates, currency, familyID, p.From, p.To, s.amountsOf())...))
	if err != nil {
		return nil, err
	}
	fl, _, err := s.convertFlows(ctx, familyID, groups)
	if err != nil || len(fl) == 0 {
		return nil, err
	}
	type key struct{ budget, category uuid.UUID }
	sums := map[key]money.Amount{}
	var order []key
	for _, f := range fl {
		if f.Income || f.CategoryID == nil || f.total() <= 0 {
			continue
		}
		i := sort.Search(len(months), func(i int) bool { return months[i].EndDate >= f.Date })
		if i == len(months) || months[i].StartDate > f.Date {
			continue // a day of no budget month
		}
		k := key{months[i].ID, *f.CategoryID}
		if _, ok := sums[k]; !ok {
			order = append(order, k)
		}
		sums[k] += f.total()
	}
	if len(order) == 0 {
		return nil, nil
	}
	var q strings.Builder
	args := make([]any, 0, 3*len(order))
	for i, k := range order {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		q.WriteString("SELECT ?, ?, ?")
		args = append(args, k.budget, k.category, int64(sums[k]))
	}
	q2 := bun.SafeQuery(q.String(), args...)
	return &q2, nil
}

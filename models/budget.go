package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"coffer/models/civil"
	"coffer/models/money"
)

// Budget is a family's plan for one calendar month: what it means to
// spend, what it expects to earn, and (in its budget categories) how the
// spending is split.
type Budget struct {
	bun.BaseModel `bun:"table:budgets,alias:b"`

	ID               uuid.UUID     `bun:"id,pk"`
	FamilyID         uuid.UUID     `bun:"family_id"`
	StartDate        civil.Date    `bun:"start_date"` // the first of the month
	EndDate          civil.Date    `bun:"end_date"`   // its last day
	Currency         string        `bun:"currency"`
	BudgetedSpending *money.Amount `bun:"budgeted_spending"` // nil until the month is set up
	ExpectedIncome   *money.Amount `bun:"expected_income"`
	CreatedAt        time.Time     `bun:"created_at"`
	UpdatedAt        time.Time     `bun:"updated_at"`
}

// Initialized reports whether the month has been set up.
func (b *Budget) Initialized() bool { return b.BudgetedSpending != nil }

// Name is the month, in English: "January 2026".
func (b *Budget) Name() string { return b.StartDate.Time().Format("January 2006") }

// Current reports whether today falls in the budget's month.
func (b *Budget) Current(today civil.Date) bool { return b.StartDate <= today && today <= b.EndDate }

// BudgetSummary is a budget with the figures derived from the ledger.
type BudgetSummary struct {
	Budget            `bun:",extend"`
	AllocatedSpending money.Amount `bun:"allocated_spending,scanonly"` // split among top-level categories
	ActualSpending    money.Amount `bun:"actual_spending,scanonly"`    // spent in the month, every category
	ActualIncome      money.Amount `bun:"actual_income,scanonly"`
	// UncategorizedSpending is the part of ActualSpending that no
	// category holds, so no category line shows it.
	UncategorizedSpending money.Amount `bun:"uncategorized_spending,scanonly"`
	// SlowRows counts the month's rows in other currencies that SQL left
	// to Go to convert (see budgetSummaries); no figure.
	SlowRows int `bun:"slow_rows,scanonly" json:"-"`
}

// AvailableToSpend is what is left of the budgeted spending (negative:
// overspent). A month with no total budgeted has nothing to overspend:
// see Budgeted.
func (b *BudgetSummary) AvailableToSpend() money.Amount { return b.budgeted() - b.ActualSpending }

// AvailableToAllocate is what is budgeted but not yet split among
// categories.
func (b *BudgetSummary) AvailableToAllocate() money.Amount { return b.budgeted() - b.AllocatedSpending }

// Budgeted reports whether the month has a total to spend, so that a
// screen says "overspent" only against an amount someone set.
func (b *BudgetSummary) Budgeted() bool { return b.budgeted() > 0 }

func (b *BudgetSummary) budgeted() money.Amount {
	if b.BudgetedSpending == nil {
		return 0
	}
	return *b.BudgetedSpending
}

// BudgetFilter narrows Budgets. Zero values do not filter.
type BudgetFilter struct {
	StartDate civil.Date // budgets starting on or after
	EndDate   civil.Date // budgets ending on or before
}

// budgetForeignRowsSQL reads family ?0's live, counted rows in other
// currencies than ?11 from span's lo to its hi (a CTE of the query's
// months) as the two ranges of currency codes either side of the
// family's, so that transactions_currency_idx reads them alone (as
// fxFlowsSQL does); the family's own rows are read from the kept sums.
const budgetForeignRowsSQL = `
    SELECT t.id, t.account_id, t.currency, t.date, t.category_id, t.amount FROM transactions t
    WHERE t.family_id = ?0 AND t.currency < ?11 AND t.date >= (SELECT lo FROM span) AND t.date <= (SELECT hi FROM span)
      AND t.deleted_at IS NULL AND NOT t.excluded
    UNION ALL
    SELECT t.id, t.account_id, t.currency, t.date, t.category_id, t.amount FROM transactions t
    WHERE t.family_id = ?0 AND t.currency > ?11 AND t.date >= (SELECT lo FROM span) AND t.date <= (SELECT hi FROM span)
      AND t.deleted_at IS NULL AND NOT t.excluded`

// budgetSummariesSQL reads a page of family ?0's budgets between ?1 and
// ?2 (LIMIT ?3 OFFSET ?4), newest month first, each with what was spent
// and earned in its month (counted as every report counts, a row in
// another currency converted in SQL at its day's rate: report_fx_sql.go,
// the rates ?10 into the family's currency ?11; slow_rows counts those
// left to Go) and what its top-level categories were given. The page is
// chosen first, so the ledger is read for those months only: the
// family's own currency from the monthly kept sums (a budget is a
// calendar month), the rows in other currencies one by one, each
// converted on its own (budgetForeignRowsSQL) and summed by day before
// the days are joined to their months (a join of the rows themselves to
// the months let PostgreSQL scan the rates for every row).
const budgetSummariesSQL = `
WITH ` + fxRatesSQL + `,
page AS (
    SELECT b.* FROM budgets b
    WHERE b.family_id = ?0 AND b.start_date >= ?1 AND b.end_date <= ?2
    ORDER BY b.start_date DESC, b.created_at, b.id
    LIMIT ?3 OFFSET ?4
),
own_flows AS (
    SELECT p.id,
           SUM(CASE WHEN NOT s.income THEN s.amount ELSE 0 END) AS spending,
           SUM(CASE WHEN s.income THEN -s.amount ELSE 0 END) AS income,
           SUM(CASE WHEN NOT s.income AND s.category_id IS NULL THEN s.amount ELSE 0 END) AS uncategorized,
           0 AS slow
    FROM page p
    JOIN transaction_sums s ON s.family_id = ?0 AND s.grain = 'm' AND s.day = p.start_date
    WHERE s.currency = ?11 AND NOT s.transfer
      AND s.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')
    GROUP BY p.id
),
span AS (SELECT MIN(p.start_date) AS lo, MAX(p.end_date) AS hi FROM page p),
foreign_rows AS (` + budgetForeignRowsSQL + `
),
foreign_days AS (
    SELECT t.date,
           SUM(CASE WHEN t.amount > 0 THEN ` + fxValueSQL + ` ELSE 0 END) AS spending,
           SUM(CASE WHEN t.amount < 0 THEN -(` + fxValueSQL + `) ELSE 0 END) AS income,
           SUM(CASE WHEN t.amount > 0 AND t.category_id IS NULL THEN ` + fxValueSQL + ` ELSE 0 END) AS uncategorized,
           SUM(CASE WHEN ` + fxFastSQL + ` THEN 0 ELSE 1 END) AS slow
    FROM foreign_rows t` + fxJoinSQL + `
    WHERE t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')` + notTransferSQL + `
    GROUP BY t.date
),
foreign_flows AS (
    SELECT p.id, SUM(d.spending) AS spending, SUM(d.income) AS income, SUM(d.uncategorized) AS uncategorized, SUM(d.slow) AS slow
    FROM page p
    JOIN foreign_days d ON d.date >= p.start_date AND d.date <= p.end_date
    GROUP BY p.id
),
flows AS (
    SELECT id, SUM(spending) AS spending, SUM(income) AS income, SUM(uncategorized) AS uncategorized, SUM(slow) AS slow
    FROM (SELECT * FROM own_flows UNION ALL SELECT * FROM foreign_flows) f
    GROUP BY id
),
allocated AS (
    SELECT bc.budget_id, SUM(bc.budgeted_spending) AS amount
    FROM budget_categories bc
    JOIN page p ON p.id = bc.budget_id
    JOIN categories c ON c.id = bc.category_id AND c.family_id = ?0
    WHERE bc.family_id = ?0 AND c.parent_id IS NULL
    GROUP BY bc.budget_id
)
SELECT p.*,
       CAST(COALESCE(al.amount, 0) AS bigint) AS allocated_spending,
       CAST(COALESCE(fl.spending, 0) AS bigint) AS actual_spending,
       CAST(COALESCE(fl.income, 0) AS bigint) AS actual_income,
       CAST(COALESCE(fl.uncategorized, 0) AS bigint) AS uncategorized_spending,
       CAST(COALESCE(fl.slow, 0) AS bigint) AS slow_rows
FROM page p
LEFT JOIN flows fl ON fl.id = p.id
LEFT JOIN allocated al ON al.budget_id = p.id
ORDER BY p.start_date DESC, p.created_at, p.id`

// Budgets lists a page of the family's budgets, newest month first, with
// their figures, and how many there are.
func (s *Store) Budgets(ctx context.Context, familyID uuid.UUID, f BudgetFilter, p Page) ([]BudgetSummary, int, error) {
	from, to := civil.OpenRange(f.StartDate, f.EndDate)
	count := s.db.NewSelect().Model((*Budget)(nil)).
		Where("b.family_id = ?", familyID).Where("b.start_date >= ?", from).Where("b.end_date <= ?", to)
	var rows []BudgetSummary
	n, err := p.read(ctx, count.Count, func(limit, offset int64) error {
		var err error
		rows, err = s.budgetSummaries(ctx, familyID, from, to, limit, offset)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return rows, n, nil
}

// Budget returns one budget of the family with its figures.
func (s *Store) Budget(ctx context.Context, familyID, id uuid.UUID) (*BudgetSummary, error) {
	b := new(Budget)
	if err := s.db.NewSelect().Model(b).Where("b.family_id = ?", familyID).Where("b.id = ?", id).Scan(ctx); err != nil {
		return nil, dbErr("get budget", err)
	}
	return s.budgetSummary(ctx, b)
}

// BudgetForMonth returns the family's budget of the month d falls in.
func (s *Store) BudgetForMonth(ctx context.Context, familyID uuid.UUID, d civil.Date) (*BudgetSummary, error) {
	b := new(Budget)
	err := s.db.NewSelect().Model(b).Where("b.family_id = ?", familyID).Where("b.start_date = ?", MonthPeriod(d).From).Scan(ctx)
	if err != nil {
		return nil, dbErr("get budget", err)
	}
	return s.budgetSummary(ctx, b)
}

// budgetSummary reads b's figures with the list's query, narrowed to its
// month.
func (s *Store) budgetSummary(ctx context.Context, b *Budget) (*BudgetSummary, error) {
	rows, err := s.budgetSummaries(ctx, b.FamilyID, b.StartDate, b.EndDate, 1, 0)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, ErrNotFound
	}
	return &rows[0], nil
}

// EnsureBudget returns the family's budget of the month d falls in,
// creating it (in the family's currency, not yet set up) if it does not
// exist, and gives it a row for every expense category that has none. A
// new row keeps the carry-over choice its category had the month before.
// Two concurrent calls make one budget.
func (s *Store) EnsureBudget(ctx context.Context, familyID uuid.UUID, d civil.Date) (*BudgetSummary, error) {
	if _, err := civil.ParseDate(string(d)); err != nil {
		return nil, Invalid("Month must be a real calendar date")
	}
	month := MonthPeriod(d)
	err := s.RunInTx(ctx, func(tx *Store) error {
		fam, err := tx.Family(ctx, familyID)
		if err != nil {
			return err
		}
		now := tx.now()
		b := &Budget{ID: NewID(), FamilyID: familyID, StartDate: month.From, EndDate: month.To, Currency: fam.Currency,
			CreatedAt: now, UpdatedAt: now}
		if _, err := tx.db.NewInsert().Model(b).On("CONFLICT (family_id, start_date) DO NOTHING").Exec(ctx); err != nil {
			return dbErr("create budget", err)
		}
		if err := tx.db.NewSelect().Model(b).Where("b.family_id = ?", familyID).Where("b.start_date = ?", month.From).Scan(ctx); err != nil {
			return dbErr("get budget", err)
		}
		return tx.addBudgetCategories(ctx, b)
	})
	if err != nil {
		return nil, err
	}
	return s.BudgetForMonth(ctx, familyID, month.From)
}

// UpdateBudget sets a budget's budgeted spending and expected income
// (nil clears them).
func (s *Store) UpdateBudget(ctx context.Context, b *Budget) error {
	var problems []string
	if b.BudgetedSpending != nil && *b.BudgetedSpending < 0 {
		problems = append(problems, "Budgeted spending must not be negative")
	}
	if b.ExpectedIncome != nil && *b.ExpectedIncome < 0 {
		problems = append(problems, "Expected income must not be negative")
	}
	if len(problems) > 0 {
		return Invalid(problems...)
	}
	b.UpdatedAt = s.now()
	return s.updateOne(ctx, b, b.FamilyID, b.ID, "update budget", "budgeted_spending", "expected_income")
}

// copyBudgetCategoriesSQL gives every category row of budget ?1 the
// amount and carry-over choice of the same category in budget ?2.
const copyBudgetCategoriesSQL = `
UPDATE budget_categories SET
    budgeted_spending = (SELECT p.budgeted_spending FROM budget_categories p
                         WHERE p.family_id = ?0 AND p.budget_id = ?2 AND p.category_id = budget_categories.category_id),
    rollover_enabled = (SELECT p.rollover_enabled FROM budget_categories p
                        WHERE p.family_id = ?0 AND p.budget_id = ?2 AND p.category_id = budget_categories.category_id),
    updated_at = ?3
WHERE family_id = ?0 AND budget_id = ?1
  AND category_id IN (SELECT p.category_id FROM budget_categories p WHERE p.family_id = ?0 AND p.budget_id = ?2)`

// CopyPreviousBudget overwrites a budget's amounts (budgeted spending,
// expected income, each category's amount and carry-over choice) with
// those of the month before, in one transaction. Categories the month
// before did not have keep theirs. With no budget the month before, it
// is refused.
func (s *Store) CopyPreviousBudget(ctx context.Context, familyID, budgetID uuid.UUID) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		cur := new(Budget)
		if err := tx.db.NewSelect().Model(cur).Where("b.family_id = ?", familyID).Where("b.id = ?", budgetID).Scan(ctx); err != nil {
			return dbErr("get budget", err)
		}
		prev := new(Budget)
		err := tx.db.NewSelect().Model(prev).Where("b.family_id = ?", familyID).
			Where("b.start_date = ?", civil.DateOf(cur.StartDate.Time().AddDate(0, -1, 0))).Scan(ctx)
		if err := dbErr("get previous budget", err); err == ErrNotFound {
			return Invalid("There is no budget for the month before to copy")
		} else if err != nil {
			return err
		}
		if err := tx.addBudgetCategories(ctx, cur); err != nil {
			return err
		}
		cur.BudgetedSpending, cur.ExpectedIncome = prev.BudgetedSpending, prev.ExpectedIncome
		if err := tx.UpdateBudget(ctx, cur); err != nil {
			return err
		}
		_, err = tx.db.NewRaw(copyBudgetCategoriesSQL, familyID, cur.ID, prev.ID, tx.now()).Exec(ctx)
		return dbErr("copy budget categories", err)
	})
}

// budgetPageSQL is the months of budgetSummariesSQL's page.
const budgetPageSQL = `
SELECT MIN(p.start_date), MAX(p.end_date) FROM (
    SELECT b.start_date, b.end_date FROM budgets b
    WHERE b.family_id = ?0 AND b.start_date >= ?1 AND b.end_date <= ?2
    ORDER BY b.start_date DESC, b.created_at, b.id
    LIMIT ?3 OFFSET ?4) p`

// budgetSummaries reads a page of budgets with their figures
// (budgetSummariesSQL), the rates table spanning the page's months.
func (s *Store) budgetSummaries(ctx context.Context, familyID uuid.UUID, from, to civil.Date, limit, offset int64) ([]BudgetSummary, error) {
	var first, last *civil.Date
	if err := s.db.NewRaw(budgetPageSQL, familyID, from, to, limit, offset).Scan(ctx, &first, &last); err != nil {
		return nil, dbErr("list budgets", err)
	}
	rows := []BudgetSummary{}
	if first == nil || last == nil {
		return rows, nil
	}
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	if err := s.maybeCompactSums(ctx, familyID); err != nil {
		return nil, err
	}
	p := Period{From: *first, To: *last}
	err = s.withRates(ctx, familyID, fam.Currency, p, func(tx *Store, rates schema.QueryWithArgs) error {
		if err := tx.db.NewRaw(budgetSummariesSQL, fxArgs(rates, fam.Currency, familyID, from, to, limit, offset)...).Scan(ctx, &rows); err != nil {
			return dbErr("list budgets", err)
		}
		return tx.addSlowFlowsToBudgets(ctx, familyID, fam.Currency, rates, p, rows)
	})
	return rows, err
}

// addSlowFlowsToBudgets adds to each budget's figures the month's rows in
// other currencies that SQL left to Go, converted at their days' rates
// (see convertFlows), read once for the months of all of them.
func (s *Store) addSlowFlowsToBudgets(ctx context.Context, familyID uuid.UUID, currency string, rates schema.QueryWithArgs, p Period, budgets []BudgetSummary) error {
	slow := false
	for _, b := range budgets {
		slow = slow || b.SlowRows > 0
	}
	if !slow {
		return nil
	}
	groups, err := scanFlows(s.db.QueryContext(ctx, slowRowsSQL, fxArgs(rates, currency, familyID, p.From, p.To, s.amountsOf())...))
	if err != nil {
		return err
	}
	flows, _, err := s.convertFlows(ctx, familyID, groups)
	if err != nil {
		return err
	}
	for _, f := range flows {
		for i := range budgets {
			b := &budgets[i]
			if f.Date < b.StartDate || f.Date > b.EndDate {
				continue
			}
			switch {
			case f.Income:
				b.ActualIncome -= f.total()
			case f.total() > 0:
				b.ActualSpending += f.total()
				if f.CategoryID == nil {
					b.UncategorizedSpending += f.total()
				}
			}
		}
	}
	return nil
}

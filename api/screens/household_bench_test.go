package screens_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// seedLedger gives the alpha family n transactions over the two years to
// today, across its checking account and a card, in ten categories, the
// size a household reaches after years of bank sync.
func seedLedger(b *testing.B, e *apitest.Env, n int) {
	b.Helper()
	ctx := b.Context()
	fam := e.Alpha.Family.ID
	card := &models.Account{FamilyID: fam, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	if err := e.Store.CreateAccount(ctx, card); err != nil {
		b.Fatal(err)
	}
	var cats []models.Category
	for i := range 10 {
		c := models.Category{FamilyID: fam, Name: fmt.Sprintf("Category %d", i), Color: "#112233", Classification: "expense"}
		if err := e.Store.CreateCategory(ctx, &c); err != nil {
			b.Fatal(err)
		}
		cats = append(cats, c)
	}
	today := time.Now().UTC()
	now := today.Truncate(time.Microsecond)
	batch := make([]models.Transaction, 0, 1000)
	for i := range n {
		acct := e.Alpha.Account.ID
		if i%3 == 0 {
			acct = card.ID
		}
		amount := money.Amount((i%9000 + 100) * 100)
		if i%20 == 0 {
			amount = -amount * 10 // income now and then
		}
		cat := cats[i%len(cats)].ID
		batch = append(batch, models.Transaction{ID: models.NewID(), FamilyID: fam, AccountID: acct,
			Date: civil.DateOf(today.AddDate(0, 0, -(i % 730))), Amount: amount, Currency: "USD",
			Name: fmt.Sprintf("Shop %d", i%500), CategoryID: &cat, CreatedAt: now, UpdatedAt: now})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := e.Store.DB().NewInsert().Model(&batch).Exec(ctx); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	for _, id := range []models.Account{*e.Alpha.Account, *card} {
		if err := e.Store.RecalculateBalance(ctx, fam, id.ID); err != nil {
			b.Fatal(err)
		}
	}
	if e.Store.Postgres() {
		if _, err := e.Store.DB().ExecContext(ctx, "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
}

// benchScreen measures one screen's server time for a signed-in member,
// from the request to the last byte of HTML.
func benchScreen(b *testing.B, path string) {
	e := apitest.BenchEnv(b)
	seedLedger(b, e, 100_000)
	token, err := e.Store.CreateSession(b.Context(), &models.Session{FamilyID: e.Alpha.User.FamilyID, UserID: e.Alpha.User.ID, Method: models.MethodPassword}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	e.BenchPage(b, path, token)
}

func BenchmarkDashboard(b *testing.B)        { benchScreen(b, "/") }
func BenchmarkTransactionsPage(b *testing.B) { benchScreen(b, "/transactions?page=3") }
func BenchmarkTransactionsSearch(b *testing.B) {
	benchScreen(b, "/transactions?q=shop+42&min=10")
}
func BenchmarkReportsYear(b *testing.B) {
	to := time.Now().UTC()
	benchScreen(b, "/reports?from="+to.AddDate(-1, 0, 1).Format(time.DateOnly)+"&to="+to.Format(time.DateOnly))
}

// BenchmarkDashboardRecurring is the dashboard of the ledger above with 50
// active recurring items to project (issue 29's forecast size).
func BenchmarkDashboardRecurring(b *testing.B) {
	e := apitest.BenchEnv(b)
	seedLedger(b, e, 100_000)
	ctx, fam := b.Context(), e.Alpha.Family.ID
	cadences := []string{"weekly", "biweekly", "monthly", "monthly", "quarterly", "yearly"}
	today := time.Now().UTC()
	for i := range 50 {
		r := &models.RecurringTransaction{FamilyID: fam, AccountID: &e.Alpha.Account.ID, Name: fmt.Sprintf("Bill %d", i),
			Amount: money.Amount((i%7 + 1) * 250_000), Currency: "USD", Cadence: cadences[i%len(cadences)],
			ExpectedDay: i%31 + 1, NextDate: civil.DateOf(today.AddDate(0, 0, i%40)), Status: models.RecurringActive, Manual: true}
		if i%6 == 0 {
			r.Amount = -r.Amount * 8
		}
		if err := e.Store.CreateRecurringTransaction(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	token, err := e.Store.CreateSession(ctx, &models.Session{FamilyID: e.Alpha.User.FamilyID, UserID: e.Alpha.User.ID, Method: models.MethodPassword}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	// The server's own processor time per page, beside the wall time: on
	// a shared machine the wall time moves with everyone else's load. In
	// the embedded mode this is all of it (SQLite and Redis run here).
	before := processCPU(b)
	e.BenchPage(b, "/", token)
	b.ReportMetric(float64(processCPU(b)-before)/float64(b.N)/1e6, "cpu-ms/op")
}

// processCPU is this process's user and system time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package screens_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// BenchmarkScale measures the server time of the pages and writes a family
// uses most, as its history and the number of families grow (issue 30):
// one family of 10,000 and 100,000 transactions, and with
// COFFER_BENCH_SCALE=full also one of 1,000,000 and 1,000 families of 2,000
// each in one database. Each case seeds once, so run it with -benchtime
// (say 3s) rather than -count; min-ms is the fastest request of the run,
// the figure least moved by other work on the machine.
func BenchmarkScale(b *testing.B) {
	cases := []struct {
		name            string
		families, count int
	}{{"10k", 1, 10_000}, {"100k", 1, 100_000}}
	if os.Getenv("COFFER_BENCH_SCALE") == "full" {
		cases = append(cases, struct {
			name            string
			families, count int
		}{"1M", 1, 1_000_000}, struct {
			name            string
			families, count int
		}{"1000x2k", 1000, 2_000})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { benchScale(b, c.families, c.count) })
	}
}

func benchScale(b *testing.B, families, count int) {
	e := apitest.BenchEnv(b)
	started := time.Now()
	checking := seedScale(b, e, families, count)
	b.Logf("seeded %d × %d transactions in %s", families, count, time.Since(started).Round(time.Second))
	token, err := e.Store.CreateSession(b.Context(), &models.Session{FamilyID: e.Alpha.User.FamilyID, UserID: e.Alpha.User.ID, Method: models.MethodPassword}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	trace := &sqlTrace{enabled: os.Getenv("COFFER_BENCH_SQL") != ""}
	if trace.enabled {
		e.Store.DB().AddQueryHook(trace)
	}
	today := time.Now().UTC()
	get := func(path string) func(int) (string, string, string, int) {
		return func(int) (string, string, string, int) { return "GET", path, "", 200 }
	}
	acct := e.Alpha.Account.ID.String()
	if _, _, err := e.Store.CreateTransaction(b.Context(), &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID,
		Date: civil.DateOf(today.AddDate(0, 0, -4)), Amount: 42000, Currency: "USD", Name: "Tea house"}, nil); err != nil {
		b.Fatal(err)
	}
	ops := []struct {
		name string
		req  func(i int) (method, path, body string, want int)
	}{
		{"Dashboard", get("/")},
		{"TransactionsPage", get("/transactions?page=3")},
		{"RegisterPage", get("/accounts/" + checking.String() + "?page=2")},
		{"Search", get("/transactions?q=grocer+4")},
		{"IncomeStatementYear", get("/reports?from=" + today.AddDate(-1, 0, 1).Format(time.DateOnly) + "&to=" + today.Format(time.DateOnly))},
		{"Create", func(i int) (string, string, string, int) {
			return "POST", "/api/v1/transactions", fmt.Sprintf(`{"transaction":{"account_id":%q,"date":%q,"amount":"12.50","name":"Coffee","nature":"expense","external_id":"scale-%d"}}`,
				acct, today.AddDate(0, 0, -3).Format(time.DateOnly), i), 201
		}},
		// An API client's keyed row of the same amount as a person's
		// entry of its days (seeded above) that is not the same movement:
		// the arrival check holds it, and the full pipeline's matcher
		// reads the candidates of its amount and writes it.
		{"CreateHeld", func(i int) (string, string, string, int) {
			return "POST", "/api/v1/transactions", fmt.Sprintf(`{"transaction":{"account_id":%q,"date":%q,"amount":"4.20","name":"Coffee","nature":"expense","external_id":"scale-held-%d"}}`,
				acct, today.AddDate(0, 0, -3).Format(time.DateOnly), i), 201
		}},
		// A person's entry: no key, so no arrival to match (see
		// models.matchArrivals); the create above is an API client's
		// keyed row, matched against the account's rows of its days.
		{"CreateEntry", func(i int) (string, string, string, int) {
			return "POST", "/api/v1/transactions", fmt.Sprintf(`{"transaction":{"account_id":%q,"date":%q,"amount":"12.50","name":"Coffee %d","nature":"expense"}}`,
				acct, today.AddDate(0, 0, -3).Format(time.DateOnly), i), 201
		}},
		{"BulkCreate1000", func(i int) (string, string, string, int) {
			var sb strings.Builder
			sb.WriteString(`{"transactions":[`)
			for k := range 1000 {
				if k > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `{"account_id":%q,"date":%q,"amount":"12.50","name":"Coffee %d","nature":"expense","external_id":"scale-bulk-%d-%d"}`,
					acct, today.AddDate(0, 0, -(k%90)).Format(time.DateOnly), k, i, k)
			}
			sb.WriteString(`]}`)
			return "POST", "/api/v1/transactions/bulk", sb.String(), 200
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			b.ReportAllocs()
			fastest := time.Duration(1<<63 - 1)
			send := func(i int) time.Duration {
				method, path, body, want := op.req(i)
				req := httptest.NewRequest(method, path, strings.NewReader(body))
				if method == "GET" {
					req.Header.Set("Cookie", "session="+token)
				} else {
					req.Header.Set("X-Api-Key", e.Alpha.Key)
					req.Header.Set("Content-Type", "application/json")
				}
				began := time.Now()
				resp, err := e.App.Test(req, -1)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				took := time.Since(began)
				if resp.StatusCode != want {
					b.Fatalf("%s %s: status %d", method, path, resp.StatusCode)
				}
				return took
			}
			if trace.enabled {
				trace.resetStatements(b, e.Store.DB(), e.Store.Postgres())
			}
			i := 0
			for b.Loop() {
				fastest = min(fastest, send(i))
				i++
			}
			if trace.enabled {
				b.StopTimer()
				trace.statements(b, e.Store.DB(), e.Store.Postgres(), i)
				trace.on.Store(true)
				b.Logf("one more request: %s", send(i).Round(time.Microsecond))
				trace.report(b, e.Store.DB(), e.Store.Postgres())
			}
			b.ReportMetric(float64(fastest.Microseconds())/1000, "min-ms")
		})
	}
}

// seedScale gives the alpha family (and, for families > 1, beta and
// families-2 more) count transactions each over the three years to today,
// on six accounts, with twenty categories (three of them subcategories),
// fifty merchants, eight tags on one row in ten, transfers and excluded
// rows: rows inserted a thousand at a time, then each account's balance
// recalculated and its kept sums merged, then the tables analysed, as a
// restore would leave them.
// It returns the alpha family's checking account.
func seedScale(b *testing.B, e *apitest.Env, families, count int) uuid.UUID {
	b.Helper()
	ctx := b.Context()
	s, db := e.Store, e.Store.DB()
	rng := rand.New(rand.NewPCG(5, 6))
	fams := []uuid.UUID{e.Alpha.Family.ID}
	if families > 1 {
		fams = append(fams, e.Beta.Family.ID)
	}
	for len(fams) < families {
		f := &models.Family{Name: fmt.Sprintf("Family %d", len(fams)), Currency: "USD"}
		if err := s.CreateFamily(ctx, f); err != nil {
			b.Fatal(err)
		}
		fams = append(fams, f.ID)
	}
	today := time.Now().UTC()
	created := today.Truncate(time.Microsecond)
	stems := []string{"Grocer", "Coffee", "Fuel", "Pharmacy", "Books", "Restaurant", "Hardware", "Cinema", "Bakery", "Transit"}
	var (
		txs       []models.Transaction
		links     []models.TransactionTag
		transfers []models.Transfer
		cats      []models.Category
		merchants []models.Merchant
		tags      []models.Tag
		accounts  []uuid.UUID
	)
	// flush inserts the pending rows, transactions first since transfers
	// and tags point to them, once a thousand transactions are pending.
	// On PostgreSQL the tables are analysed each time they have doubled,
	// as autovacuum would (the test server runs without it): planned on
	// no statistics, the transfers' sums trigger joined each leg through
	// the family's whole index, and the seed of 1,000,000 slowed to 70
	// rows a second by 250,000.
	inserted, analysed := 0, 1000
	flush := func(all bool) {
		if len(txs) < 1000 && !all {
			return
		}
		insert := func(rows any, n int) {
			if n == 0 {
				return
			}
			if _, err := db.NewInsert().Model(rows).Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
		inserted += len(txs)
		insert(&txs, len(txs))
		insert(&transfers, len(transfers))
		insert(&links, len(links))
		txs, transfers, links = txs[:0], transfers[:0], links[:0]
		if s.Postgres() && inserted >= 2*analysed {
			if _, err := db.ExecContext(ctx, "ANALYZE transactions, transfers, transaction_tags, transaction_sums"); err != nil {
				b.Fatal(err)
			}
			analysed = inserted
		}
	}
	var checking uuid.UUID
	for n, fam := range fams {
		accts := make([]*models.Account, 0, 6)
		if n == 0 {
			accts = append(accts, e.Alpha.Account)
		}
		for _, a := range []struct{ name, typ string }{
			{"Checking", "depository"}, {"Savings", "depository"}, {"Card", "credit_card"}, {"Second card", "credit_card"},
			{"Mortgage", "loan"}, {"Brokerage", "investment"},
		}[len(accts):] {
			acc := &models.Account{FamilyID: fam, Name: a.name, AccountType: a.typ, Currency: "USD", OpeningBalance: money.Amount(rng.Int64N(1e9))}
			if err := s.CreateAccount(ctx, acc); err != nil {
				b.Fatal(err)
			}
			accts = append(accts, acc)
		}
		for _, a := range accts {
			accounts = append(accounts, a.ID)
			// Uncounted until the recalculation below, so that the
			// inserts skip the balance moves the recalculation would
			// redo.
			if _, err := db.NewUpdate().Model((*models.Account)(nil)).Set("balance_updated_at = NULL").
				Where("family_id = ?", fam).Where("id = ?", a.ID).Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if n == 0 {
			checking = accts[0].ID
		}
		cats, merchants, tags = cats[:0], merchants[:0], tags[:0]
		for i := range 20 {
			c := models.Category{ID: models.NewID(), FamilyID: fam, Name: fmt.Sprintf("Category %d", i), Color: "#336699", Icon: "tag",
				Classification: "expense", CreatedAt: created, UpdatedAt: created}
			if i < 4 {
				c.Classification = "income"
			}
			if i >= 17 {
				parent := cats[i-10].ID
				c.ParentID = &parent
			}
			cats = append(cats, c)
		}
		for i := range 50 {
			merchants = append(merchants, models.Merchant{ID: models.NewID(), FamilyID: fam, Name: fmt.Sprintf("%s %d", stems[i%len(stems)], i),
				CreatedAt: created, UpdatedAt: created})
		}
		for i := range 8 {
			tags = append(tags, models.Tag{ID: models.NewID(), FamilyID: fam, Name: fmt.Sprintf("tag %d", i), Color: "#000000",
				CreatedAt: created, UpdatedAt: created})
		}
		for _, rows := range []any{&cats, &merchants, &tags} {
			if _, err := db.NewInsert().Model(rows).Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
		// Each row has the fingerprint the pipeline would have taken
		// (a transfer's legs, made by coffer, have no bank text): the
		// arrival check reads them, and the planner's statistics of a
		// column left empty are not a family's.
		newTx := func(acc *models.Account, date civil.Date, amount money.Amount, name string) *models.Transaction {
			text := name
			if strings.HasPrefix(name, "Transfer ") {
				text = ""
			}
			fp := models.Fingerprint(date, amount, text)
			txs = append(txs, models.Transaction{ID: models.NewID(), FamilyID: fam, AccountID: acc.ID, Date: date, Amount: amount,
				Currency: "USD", Name: name, Fingerprint: &fp, CreatedAt: created, UpdatedAt: created})
			return &txs[len(txs)-1]
		}
		for made := 0; made < count; {
			date := civil.DateOf(today.AddDate(0, 0, -rng.IntN(3*365)))
			acc := accts[[]int{0, 0, 0, 0, 1, 2, 2, 3, 4, 5}[rng.IntN(10)]]
			switch r := rng.IntN(100); {
			case r < 2 && made+2 <= count: // a transfer
				amount := money.Amount(1 + rng.Int64N(5e7))
				out := newTx(accts[0], date, amount, "Transfer out")
				outID := out.ID
				in := newTx(accts[1+rng.IntN(4)], date, -amount, "Transfer in")
				transfers = append(transfers, models.Transfer{ID: models.NewID(), FamilyID: fam, InflowTransactionID: in.ID,
					OutflowTransactionID: outID, Status: "confirmed", CreatedAt: created, UpdatedAt: created})
				made += 2
			case r < 10: // income
				t := newTx(acc, date, -money.Amount(1+rng.Int64N(3e7)), "Salary")
				cat := cats[rng.IntN(4)].ID // a copy: cats is reused by the next family before the flush
				t.CategoryID = &cat
				made++
			default:
				m := merchants[rng.IntN(len(merchants))]
				t := newTx(acc, date, money.Amount(1+rng.Int64N(2e6)), fmt.Sprintf("%s purchase %d", m.Name, rng.IntN(1000)))
				if rng.IntN(10) > 0 {
					cat := cats[4+rng.IntN(16)].ID
					t.CategoryID = &cat
				}
				t.MerchantID = &m.ID
				t.Excluded = rng.IntN(100) == 0
				if rng.IntN(10) == 0 {
					links = append(links, models.TransactionTag{TransactionID: t.ID, TagID: tags[rng.IntN(len(tags))].ID, FamilyID: fam})
				}
				made++
			}
			flush(false)
		}
	}
	flush(true)
	for i, id := range accounts {
		if err := s.RecalculateBalance(ctx, fams[i/6], id); err != nil {
			b.Fatal(err)
		}
	}
	// The inserts left about a delta of the kept sums per row; a family
	// in use has them merged by its readers, a batch at a time.
	for _, fam := range fams {
		if err := s.CompactTransactionSums(ctx, fam); err != nil {
			b.Fatal(err)
		}
	}
	analyse := "ANALYZE"
	if s.Postgres() {
		analyse = "VACUUM ANALYZE"
	}
	if _, err := db.ExecContext(ctx, analyse); err != nil {
		b.Fatal(err)
	}
	return checking
}

// sqlTrace, on with COFFER_BENCH_SQL=1, logs the statements of one more
// request of each operation with their times, and on PostgreSQL the plan
// (EXPLAIN ANALYZE, BUFFERS) of each read that took a millisecond or more:
// what to look at when a case is not flat. On PostgreSQL it also logs each
// operation's top statements over its whole run from pg_stat_statements
// (when the server preloads it), which sees what bun's hook does not: the
// statements sent through database/sql or pgx directly, such as a create's.
type sqlTrace struct {
	enabled bool
	on      atomic.Bool
	mu      sync.Mutex
	stmts   []tracedStmt
}

type tracedStmt struct {
	query string
	took  time.Duration
}

func (t *sqlTrace) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (t *sqlTrace) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if !t.on.Load() {
		return
	}
	t.mu.Lock()
	t.stmts = append(t.stmts, tracedStmt{e.Query, time.Since(e.StartTime)})
	t.mu.Unlock()
}

// report logs what was traced during one request, then forgets it.
func (t *sqlTrace) report(b *testing.B, db *bun.DB, postgres bool) {
	t.on.Store(false)
	t.mu.Lock()
	stmts := t.stmts
	t.stmts = nil
	t.mu.Unlock()
	for _, st := range stmts {
		q := st.query
		b.Logf("%7.2f ms  %.300s", float64(st.took.Microseconds())/1000, q)
		read := strings.HasPrefix(strings.TrimSpace(strings.ToUpper(q)), "SELECT") || strings.HasPrefix(strings.TrimSpace(strings.ToUpper(q)), "WITH")
		if !postgres || !read || st.took < time.Millisecond {
			continue
		}
		rows, err := db.QueryContext(b.Context(), "EXPLAIN (ANALYZE, BUFFERS) "+q)
		if err != nil {
			b.Logf("explain: %v", err)
			continue
		}
		var plan strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				b.Fatal(err)
			}
			plan.WriteString("\n    " + line)
		}
		rows.Close()
		b.Logf("plan:%s", plan.String())
	}
}

// resetStatements forgets pg_stat_statements' counts before an operation.
func (t *sqlTrace) resetStatements(b *testing.B, db *bun.DB, postgres bool) {
	if !postgres {
		return
	}
	if _, err := db.ExecContext(b.Context(), "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		b.Logf("pg_stat_statements: %v", err)
		return
	}
	if _, err := db.ExecContext(b.Context(), "SELECT pg_stat_statements_reset()"); err != nil {
		b.Logf("pg_stat_statements is not preloaded: %v", err)
	}
}

// statements logs the operation's top statements by their time over n
// requests: calls and µs per request, shared blocks (hit and read) per
// call.
func (t *sqlTrace) statements(b *testing.B, db *bun.DB, postgres bool, n int) {
	if !postgres || n == 0 {
		return
	}
	rows, err := db.QueryContext(b.Context(), `SELECT calls, total_exec_time, shared_blks_hit, shared_blks_read, query
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY total_exec_time DESC LIMIT 10`)
	if err != nil {
		b.Logf("pg_stat_statements: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var calls, hit, read int64
		var ms float64
		var q string
		if err := rows.Scan(&calls, &ms, &hit, &read, &q); err != nil {
			b.Fatal(err)
		}
		b.Logf("%6.2f calls %8.1f µs %7.1f hit %6.1f read  %.160s", float64(calls)/float64(n), ms*1000/float64(n),
			float64(hit)/float64(calls), float64(read)/float64(calls), strings.Join(strings.Fields(q), " "))
	}
}

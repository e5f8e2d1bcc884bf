package models_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestLoad drives a running `coffer web` and, next to it, the same SQL
// straight through pgx, and prints requests/s and latency percentiles. It
// is a measuring tool run by deploy/loadtest/run.sh, not a check: it only
// runs when COFFER_LOAD_URL is set. It sits in models, the one package
// that may talk to the database driver itself.
func TestLoad(t *testing.T) {
	base := os.Getenv("COFFER_LOAD_URL")
	if base == "" {
		t.Skip("COFFER_LOAD_URL is not set; deploy/loadtest/run.sh runs this against a real server")
	}
	key, account, dsn := os.Getenv("COFFER_LOAD_KEY"), os.Getenv("COFFER_LOAD_ACCOUNT"), os.Getenv("COFFER_LOAD_DSN")
	dur, err := time.ParseDuration(envOr("COFFER_LOAD_DURATION", "10s"))
	if err != nil {
		t.Fatal(err)
	}
	const conns = 32
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn+"&pool_max_conns=32")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
	run := strings.ReplaceAll(uuid.NewString(), "-", "")[:8]

	httpCall := func(method, path string, body func(n int64) string, want int) func(n int64) error {
		return func(n int64) error {
			var rd io.Reader
			if body != nil {
				rd = strings.NewReader(body(n))
			}
			req, _ := http.NewRequest(method, base+path, rd)
			req.Header.Set("X-Api-Key", key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		}
	}
	keyHash := sha256Hex(key)

	createHTTP := func() loadResult {
		return measure("POST /api/v1/transactions", conns, dur, httpCall("POST", "/api/v1/transactions", func(n int64) string {
			return fmt.Sprintf(`{"transaction":{"account_id":%q,"date":"2024-01-15","amount":"12.50","name":"Coffee","nature":"expense","external_id":"load-%s-%d"}}`, account, run, n)
		}, 201))
	}
	chatsHTTP := func() loadResult {
		return measure("GET /api/v1/chats (1,000 chats)", conns, dur, httpCall("GET", "/api/v1/chats", nil, 200))
	}
	// wrk, when given, drives the HTTP side: a C client leaves more of the
	// two cores to the server than Go's client does.
	if wrk := os.Getenv("COFFER_LOAD_WRK"); wrk != "" {
		script := os.Getenv("COFFER_LOAD_WRK_SCRIPT")
		createHTTP = func() loadResult {
			return runWrk(t, wrk, "POST /api/v1/transactions (wrk)", base, dur, conns, "-s", script, "-H", "X-Api-Key: "+key)
		}
		chatsHTTP = func() loadResult {
			return runWrk(t, wrk, "GET /api/v1/chats (wrk, 1,000)", base+"/api/v1/chats", dur, conns, "-H", "X-Api-Key: "+key)
		}
		os.Setenv("COFFER_LOAD_RUN", run)
	}

	familyID, userID, err := owner(ctx, pool, keyHash)
	if err != nil {
		t.Fatal(err)
	}
	accountID := uuid.MustParse(account)
	procs := loadProcs(os.Getenv("COFFER_LOAD_DB"))
	pg := newPGProfile(ctx, pool)
	var pgReports []string
	pgProfiled := func(title string, run func() loadResult) func() loadResult {
		return func() loadResult {
			pg.start(ctx)
			r := run()
			pgReports = append(pgReports, pg.report(ctx, title, r.count))
			return r
		}
	}
	results := []loadResult{
		procs.costed(pgProfiled("the creates", func() loadResult { return profiled("create", dur, createHTTP) })),
		procs.costed(func() loadResult {
			return measure("  bare INSERT through pgx", conns, dur, func(n int64) error {
				return bareCreate(ctx, pool, familyID, accountID, fmt.Sprintf("raw-%s-%d", run, n))
			})
		}),
		procs.costed(pgProfiled("the chats pages", func() loadResult { return profiled("chats", dur, chatsHTTP) })),
		procs.costed(func() loadResult {
			return measure("  bare page + count through pgx", conns, dur, func(n int64) error {
				return bareChatsPage(ctx, pool, familyID, userID)
			})
		}),
	}
	fmt.Printf("\n%-34s %10s %10s %10s %8s %9s\n", "", "req/s", "p50", "p99", "errors", "vs bare")
	for i, r := range results {
		ratio := ""
		if i%2 == 0 {
			ratio = fmt.Sprintf("%.2f", r.rps/results[i+1].rps)
		} else {
			ratio = fmt.Sprintf("p99 %.1fx", float64(results[i-1].p99)/float64(r.p99))
		}
		fmt.Printf("%-34s %10.0f %10s %10s %8d %9s\n", r.name, r.rps, r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.errors, ratio)
	}
	// Processor time per request is the figure to steer by: a throughput
	// ratio moves with the load generator's share of the cores, this does
	// not. The bare side's PostgreSQL time is the physical limit.
	fmt.Printf("\nprocessor time per request (µs)   %8s %8s %8s %8s %8s %12s\n", "web", "worker", "pg", "redis", "total", "vs bare pg")
	for i, r := range results {
		ratio := ""
		if i%2 == 0 && results[i+1].cpu.pg > 0 {
			ratio = fmt.Sprintf("%.2fx", r.cpu.total()/results[i+1].cpu.pg)
		} else if i%2 == 1 && results[i-1].cpu.pg > 0 && r.cpu.pg > 0 {
			ratio = fmt.Sprintf("pg %.2fx", results[i-1].cpu.pg/r.cpu.pg)
		}
		c := r.cpu
		fmt.Printf("%-34s %8.0f %8.0f %8.0f %8.0f %8.0f %12s\n", r.name, c.web, c.worker, c.pg, c.redis, c.total(), ratio)
	}
	for _, r := range pgReports {
		fmt.Print(r)
	}
}

// profiled runs the HTTP side while the web process records a CPU profile
// into COFFER_LOAD_RESULTS/NAME.pprof, when COFFER_LOAD_PPROF (the web
// process's PPROF_ADDR) is set.
func profiled(name string, d time.Duration, run func() loadResult) loadResult {
	addr, dir := os.Getenv("COFFER_LOAD_PPROF"), os.Getenv("COFFER_LOAD_RESULTS")
	if addr == "" || dir == "" {
		return run()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		secs := max(int(d.Seconds())-1, 1)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs))
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(filepath.Join(dir, name+".pprof"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			return
		}
		defer f.Close()
		_, _ = io.Copy(f, resp.Body)
	}()
	r := run()
	<-done
	return r
}

type loadResult struct {
	name     string
	rps      float64
	p50, p99 time.Duration
	errors   int64
	count    int64   // requests that succeeded
	cpu      perCall // processor time per request, by side
}

// measure runs op from conns goroutines for d and reports the rate and the
// latency percentiles of the calls that succeeded.
func measure(name string, conns int, d time.Duration, op func(n int64) error) loadResult {
	var counter, errs atomic.Int64
	lat := make([][]time.Duration, conns)
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := op(counter.Add(1)); err != nil {
					if errs.Add(1) == 1 {
						fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
					}
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	r := loadResult{name: name, errors: errs.Load(), rps: float64(len(all)) / elapsed.Seconds(), count: int64(len(all))}
	if len(all) > 0 {
		r.p50, r.p99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// The baseline is the physical limit of each request: the bare SQL it
// needs, sent straight through pgx with parameters (one round trip each),
// not a replay of what the handlers send.
const (
	bareInsert = `INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, external_id, source,
                          pending, created_at, updated_at)
VALUES ($1, $2, $3, '2024-01-15', 125000, 'USD', 'Coffee', $4, 'api', FALSE, $5, $5)`
	bareCount = `SELECT count(*) FROM chats WHERE family_id = $1 AND user_id = $2`
	bareChats = `SELECT id, family_id, user_id, title, error, message_count, last_message_at, created_at, updated_at
FROM chats WHERE family_id = $1 AND user_id = $2 ORDER BY created_at DESC, id DESC LIMIT 25`
)

// owner reads the family and user of the key once, before the clock runs.
func owner(ctx context.Context, pool *pgxpool.Pool, keyHash string) (familyID, userID uuid.UUID, err error) {
	err = pool.QueryRow(ctx, `SELECT family_id, user_id FROM api_keys WHERE key_hash = $1`, keyHash).Scan(&familyID, &userID)
	return familyID, userID, err
}

func bareCreate(ctx context.Context, pool *pgxpool.Pool, familyID, account uuid.UUID, ext string) error {
	id, _ := uuid.NewV7()
	_, err := pool.Exec(ctx, bareInsert, id, familyID, account, ext, time.Now().UTC())
	return err
}

func bareChatsPage(ctx context.Context, pool *pgxpool.Pool, familyID, userID uuid.UUID) error {
	var n int
	if err := pool.QueryRow(ctx, bareCount, familyID, userID).Scan(&n); err != nil {
		return err
	}
	rows, err := pool.Query(ctx, bareChats, familyID, userID)
	if err != nil {
		return err
	}
	for rows.Next() {
		if _, err := rows.Values(); err != nil {
			return err
		}
	}
	rows.Close()
	return rows.Err()
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// runWrk runs wrk with one thread and conns connections and reads its
// summary: requests/s, the 50th and 99th latency percentiles, and the
// responses that were not 2xx.
func runWrk(t *testing.T, wrk, name, url string, d time.Duration, conns int, extra ...string) loadResult {
	t.Helper()
	args := append([]string{"-t1", fmt.Sprintf("-c%d", conns), "-d" + d.String(), "--latency"}, extra...)
	out, err := exec.Command(wrk, append(args, url)...).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	r := loadResult{name: name}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "Requests/sec:":
			r.rps, _ = strconv.ParseFloat(f[1], 64)
		case len(f) == 2 && f[0] == "50%":
			r.p50, _ = time.ParseDuration(f[1])
		case len(f) == 2 && f[0] == "99%":
			r.p99, _ = time.ParseDuration(f[1])
		case len(f) == 5 && f[0] == "Non-2xx":
			r.errors, _ = strconv.ParseInt(f[4], 10, 64)
		case len(f) > 2 && f[1] == "requests" && f[2] == "in":
			r.count, _ = strconv.ParseInt(f[0], 10, 64)
		}
	}
	r.count -= r.errors
	return r
}

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
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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

	results := []loadResult{
		createHTTP(),
		measure("  same SQL through pgx", conns, dur, func(n int64) error {
			return replayCreate(ctx, pool, keyHash, account, fmt.Sprintf("raw-%s-%d", run, n))
		}),
		chatsHTTP(),
		measure("  same SQL through pgx", conns, dur, func(n int64) error {
			return replayChats(ctx, pool, keyHash)
		}),
	}
	fmt.Printf("\n%-34s %10s %10s %10s %8s %7s\n", "", "req/s", "p50", "p99", "errors", "vs raw")
	for i, r := range results {
		ratio := ""
		if i%2 == 0 {
			ratio = fmt.Sprintf("%5.0f%%", 100*r.rps/results[i+1].rps)
		}
		fmt.Printf("%-34s %10.0f %10s %10s %8d %7s\n", r.name, r.rps, r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.errors, ratio)
	}
}

type loadResult struct {
	name     string
	rps      float64
	p50, p99 time.Duration
	errors   int64
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
	r := loadResult{name: name, errors: errs.Load(), rps: float64(len(all)) / elapsed.Seconds()}
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

// The statements below are what the handlers send for one request, as
// bun renders them, with the values inlined the same way.
const (
	sqlKey     = `SELECT "k"."id", "k"."family_id", "k"."user_id", "k"."name", "k"."scope", "k"."key_hash", "k"."display_prefix", "k"."expires_at", "k"."revoked_at", "k"."last_used_at", "k"."created_at", "user"."id" AS "user__id", "user"."family_id" AS "user__family_id", "user"."email" AS "user__email", "user"."password_hash" AS "user__password_hash", "user"."role" AS "user__role", "user"."status" AS "user__status", "user"."first_name" AS "user__first_name", "user"."last_name" AS "user__last_name", "user"."suspended_at" AS "user__suspended_at", "user"."last_login_at" AS "user__last_login_at", "user"."created_at" AS "user__created_at", "user"."updated_at" AS "user__updated_at", "family"."id" AS "family__id", "family"."name" AS "family__name", "family"."currency" AS "family__currency", "family"."created_at" AS "family__created_at", "family"."updated_at" AS "family__updated_at" FROM "api_keys" AS "k" LEFT JOIN "users" AS "user" ON ("user"."id" = "k"."user_id" AND "user"."family_id" = "k"."family_id") LEFT JOIN "families" AS "family" ON ("family"."id" = "k"."family_id") WHERE (k.key_hash = '%s') AND (k.revoked_at IS NULL)`
	sqlAccount = `SELECT "a"."id", "a"."family_id", "a"."name", "a"."account_type", "a"."subtype", "a"."currency", "a"."status", "a"."opening_balance", "a"."balance", "a"."cash_balance", "a"."institution_name", "a"."institution_domain", "a"."balance_updated_at", "a"."created_at", "a"."updated_at" FROM "accounts" AS "a" WHERE (a.family_id = '%s') AND (a.id = '%s')`
	sqlInsert  = `
INSERT INTO transactions (id, family_id, account_id, date, amount, currency, name, notes, external_id, source,
                          pending, category_id, merchant_id, created_at, updated_at)
SELECT '%s', '%s', '%s', '2024-01-15', 125000, 'USD', 'Coffee', NULL, '%s', 'api', FALSE, NULL, NULL, '%s', '%s'
FROM accounts WHERE id = '%s' AND family_id = '%s' AND status = 'active'
ON CONFLICT (account_id, source, external_id) WHERE external_id IS NOT NULL DO NOTHING`
	sqlCount = `SELECT count(*) FROM "chats" AS "ch" WHERE (ch.family_id = '%s') AND (ch.user_id = '%s')`
	sqlChats = `SELECT "ch"."id", "ch"."family_id", "ch"."user_id", "ch"."title", "ch"."error", "ch"."message_count", "ch"."last_message_at", "ch"."created_at", "ch"."updated_at" FROM "chats" AS "ch" WHERE (ch.family_id = '%s') AND (ch.user_id = '%s') ORDER BY ch.created_at DESC, ch.id DESC LIMIT 25`
)

func replayKey(ctx context.Context, pool *pgxpool.Pool, keyHash string) (familyID, userID string, err error) {
	rows, err := pool.Query(ctx, fmt.Sprintf(sqlKey, keyHash), pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	if !rows.Next() {
		return "", "", fmt.Errorf("key not found")
	}
	vals, err := rows.Values()
	if err != nil {
		return "", "", err
	}
	return fmt.Sprint(uuid.UUID(vals[1].([16]byte))), fmt.Sprint(uuid.UUID(vals[2].([16]byte))), nil
}

func query(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string) error {
	rows, err := q.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
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

func replayCreate(ctx context.Context, pool *pgxpool.Pool, keyHash, account, ext string) error {
	fam, _, err := replayKey(ctx, pool, keyHash)
	if err != nil {
		return err
	}
	if err := query(ctx, pool, fmt.Sprintf(sqlAccount, fam, account)); err != nil {
		return err
	}
	now := time.Now().UTC().Format("2006-01-02 15:04:05.999999-07:00")
	id, _ := uuid.NewV7()
	return query(ctx, pool, fmt.Sprintf(sqlInsert, id, fam, account, ext, now, now, account, fam))
}

func replayChats(ctx context.Context, pool *pgxpool.Pool, keyHash string) error {
	fam, user, err := replayKey(ctx, pool, keyHash)
	if err != nil {
		return err
	}
	if err := query(ctx, pool, fmt.Sprintf(sqlCount, fam, user)); err != nil {
		return err
	}
	return query(ctx, pool, fmt.Sprintf(sqlChats, fam, user))
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
		}
	}
	return r
}

package worker_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/modelstest"
)

// benchRedisDB is the Redis database the benchmark's processes use.
const benchRedisDB = 14

// TestSimplefinBulkImport is the performance bar of spec §14.4, run only
// when COFFER_BENCH_BIN names a built coffer binary
// (deploy/loadtest/simplefin.sh builds it): `coffer web` and
// `coffer worker` (concurrency 4) run as their own processes, pinned to
// two cores, on PostgreSQL and Redis; 100,000 transactions across 20
// accounts go from POST /provider_connections on the fake Bridge to the
// completed parent sync; then a full re-sync of the same data must write
// nothing. The worker's peak RSS is its own, read from /proc. In the
// embedded mode (COFFER_TEST_STORAGE=embedded) one `coffer dev` process
// does all of it on a SQLite file.
func TestSimplefinBulkImport(t *testing.T) {
	bin := os.Getenv("COFFER_BENCH_BIN")
	if bin == "" {
		t.Skip("set COFFER_BENCH_BIN to a coffer binary to run the SimpleFIN import benchmark")
	}
	port := freePort(t)
	base := "http://127.0.0.1:" + port
	env := append(os.Environ(), "HOST=127.0.0.1", "PORT="+port, "APP_URL="+base, "SECRETS_ENCRYPTION_KEY="+randomKey(32),
		"SECRET_KEY_BASE="+hex.EncodeToString([]byte(randomKey(32))), "SIMPLEFIN_ALLOW_HTTP=true", "SIMPLEFIN_ALLOW_PRIVATE_HOSTS=true",
		"WORKER_CONCURRENCY=4", "GOMAXPROCS=2", "LOG_LEVEL=warn", "API_RATE_LIMIT_PER_HOUR=0")
	var fingerprint func() string
	if modelstest.Embedded() {
		dir := t.TempDir()
		env = append(env, "DATABASE_URL=", "REDIS_URL=", "DATA_DIR="+dir)
		fingerprint = func() string { return sqliteFingerprint(t, filepath.Join(dir, "coffer.db")) }
	} else {
		dbURL := modelstest.PostgresURL(t)
		ropt := modelstest.Redis(t, benchRedisDB)
		rdb := ropt.MakeRedisClient().(redis.UniversalClient)
		defer rdb.Close()
		rdb.FlushDB(context.Background())
		t.Cleanup(func() {
			c := ropt.MakeRedisClient().(redis.UniversalClient)
			c.FlushDB(context.Background())
			c.Close()
		})
		env = append(env, "DATABASE_URL="+dbURL, fmt.Sprintf("REDIS_URL=redis://%s/%d", ropt.Addr, ropt.DB))
		db, err := models.OpenPostgres(context.Background(), dbURL, 2, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		fingerprint = func() string { return tupleCounts(t, db) }
	}
	cli := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("coffer %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	cli("migrate")
	cli("users", "create", "--email", "bench@example.com", "--password", "correct horse battery")
	lines := strings.Split(cli("apikeys", "create", "--email", "bench@example.com", "--name", "bench"), "\n")
	key := lines[len(lines)-1]
	var web, worker *exec.Cmd
	if modelstest.Embedded() {
		web = start(t, bin, env, "dev")
		worker = web
	} else {
		web = start(t, bin, env, "web")
		worker = start(t, bin, env, "worker")
	}
	api := benchClient{t: t, base: base, key: key}
	api.waitReady()

	bridge := bridgetest.New(t)
	data := bridgetest.Generate(2026, 20, 5000, 85, time.Now().UTC())
	bridge.SetDataset(data)
	began := time.Now()
	var conn struct{ ID string }
	api.call("POST", "/api/v1/provider_connections", map[string]any{"provider": "simplefin", "setup_token": bridge.Token("bench")}, 202, &conn)
	first := api.waitSync(func() string {
		var list struct{ Syncs []struct{ ID string } }
		api.call("GET", "/api/v1/syncs?provider_connection_id="+conn.ID, nil, 200, &list)
		if len(list.Syncs) == 0 {
			return ""
		}
		return list.Syncs[len(list.Syncs)-1].ID
	})
	importTook := time.Since(began)
	importRSS := peakRSS(worker.Process.Pid)
	if first.Status != "completed" || first.Counts.TransactionsCreated != data.Count() {
		t.Fatalf("import: %+v", first)
	}

	before := fingerprint()
	began = time.Now()
	var re struct{ ID string }
	api.call("POST", "/api/v1/provider_connections/"+conn.ID+"/sync", map[string]any{"full": true}, 202, &re)
	again := api.waitSync(func() string { return re.ID })
	resyncTook := time.Since(began)
	after := fingerprint()
	written := again.Counts.TransactionsCreated + again.Counts.TransactionsUpdated
	fmt.Printf("simplefin bulk import: %d transactions in %d accounts: import %.1fs (%.0f rows/s), worker peak RSS %s; "+
		"full re-sync %.1fs, %d rows written, rows/newest xmin of transactions and aliases %s -> %s; worker peak RSS %s, web %s\n",
		data.Count(), len(data.Accounts), importTook.Seconds(), float64(data.Count())/importTook.Seconds(), importRSS,
		resyncTook.Seconds(), written, before, after, peakRSS(worker.Process.Pid), peakRSS(web.Process.Pid))
	if again.Status != "completed" || written != 0 || before != after {
		t.Fatalf("re-sync wrote: %+v", again)
	}
	if importTook > 60*time.Second {
		t.Fatalf("import took %v, over the 60 s bar", importTook)
	}
}

// start runs a coffer subcommand as its own process, pinned to two cores
// when taskset exists, until the test ends.
func start(t *testing.T, bin string, env []string, sub string) *exec.Cmd {
	t.Helper()
	args := []string{bin, sub}
	if p, err := exec.LookPath("taskset"); err == nil {
		args = append([]string{p, "-c", "0,1"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("coffer %s log:\n%s", sub, log.String())
		}
	})
	return cmd
}

type benchClient struct {
	t         *testing.T
	base, key string
}

func (c benchClient) call(method, path string, body any, want int, out any) {
	c.t.Helper()
	var r *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	} else {
		r = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, c.base+path, r)
	req.Header.Set("X-Api-Key", c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&raw)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

func (c benchClient) waitReady() {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(c.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatal("coffer web never became ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type benchSync struct {
	Status string
	Error  *string
	Counts models.SyncCounts
}

// waitSync polls the sync id() names until it is no longer active.
func (c benchClient) waitSync(id func() string) benchSync {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if s := id(); s != "" {
			var got benchSync
			c.call("GET", "/api/v1/syncs/"+s, nil, 200, &got)
			if got.Status == "completed" || got.Status == "failed" {
				return got
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatal("the sync did not finish within 5 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tupleCounts fingerprints the tables an import writes: their row count
// and the newest xmin, which any insert or update (of any column) moves,
// unlike the statistics counters, which backends flush lazily.
func tupleCounts(t *testing.T, db *bun.DB) string {
	t.Helper()
	var out string
	err := db.NewRaw(`SELECT (SELECT count(*) || '/' || coalesce(max(xmin::text::bigint), 0) FROM transactions) || ' ' ||
		(SELECT count(*) || '/' || coalesce(max(xmin::text::bigint), 0) FROM provider_transaction_aliases)`).Scan(context.Background(), &out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sqliteFingerprint is tupleCounts for the embedded file: the row counts
// and the newest updated_at, which every write of a transaction moves
// (the aliases are never updated, only inserted).
func sqliteFingerprint(t *testing.T, path string) string {
	t.Helper()
	db, err := models.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out string
	err = db.NewRaw(`SELECT (SELECT count(*) || '/' || coalesce(max(updated_at), '') FROM transactions) || ' ' ||
		(SELECT count(*) FROM provider_transaction_aliases)`).Scan(context.Background(), &out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// peakRSS is a process's high-water resident set, from /proc.
func peakRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return "unknown"
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func randomKey(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

package models_test

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// pgProfile is PostgreSQL's side of a load run: its statements by the time
// they took (pg_stat_statements, when the server preloads it) and the
// indexes of transactions, each with how often a query read it, so a run
// shows what the database did per request and which indexes an insert
// keeps for nothing.
type pgProfile struct {
	pool       *pgxpool.Pool
	statements bool
	scans      map[string]int64
}

func newPGProfile(ctx context.Context, pool *pgxpool.Pool) *pgProfile {
	p := &pgProfile{pool: pool}
	if _, err := pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err == nil {
		_, err = pool.Exec(ctx, "SELECT pg_stat_statements_reset()")
		p.statements = err == nil
	}
	if !p.statements {
		fmt.Println("(pg_stat_statements is not preloaded: ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements' and restart PostgreSQL for its statement profile)")
	}
	return p
}

// start forgets what came before the run.
func (p *pgProfile) start(ctx context.Context) {
	if p.statements {
		_, _ = p.pool.Exec(ctx, "SELECT pg_stat_statements_reset()")
	}
	p.scans = p.indexScans(ctx)
}

func (p *pgProfile) indexScans(ctx context.Context) map[string]int64 {
	scans := map[string]int64{}
	rows, err := p.pool.Query(ctx, `SELECT indexrelname, idx_scan FROM pg_stat_user_indexes WHERE relname = 'transactions'`)
	if err != nil {
		return scans
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if rows.Scan(&name, &n) == nil {
			scans[name] = n
		}
	}
	return scans
}

// report is the run's top statements per request (n requests) and the
// transactions indexes, read or not during it.
func (p *pgProfile) report(ctx context.Context, title string, n int64) string {
	var b strings.Builder
	if n <= 0 {
		return ""
	}
	if p.statements {
		fmt.Fprintf(&b, "\nPostgreSQL under %s, top statements (per request: calls, µs; rows, shared blocks hit+read per call):\n", title)
		rows, err := p.pool.Query(ctx, `SELECT calls, total_exec_time, rows, shared_blks_hit + shared_blks_read, query
			FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
			ORDER BY total_exec_time DESC LIMIT 8`)
		if err == nil {
			for rows.Next() {
				var calls, nrows, blocks int64
				var ms float64
				var q string
				if rows.Scan(&calls, &ms, &nrows, &blocks, &q) != nil {
					continue
				}
				q = strings.Join(strings.Fields(q), " ")
				if len(q) > 110 {
					q = q[:110] + "…"
				}
				fmt.Fprintf(&b, "  %5.2f calls %7.1f µs  %5.1f rows %5.1f blocks  %s\n", float64(calls)/float64(n),
					ms*1000/float64(n), float64(nrows)/float64(calls), float64(blocks)/float64(calls), q)
			}
			rows.Close()
		}
	}
	after := p.indexScans(ctx)
	var read, unread []string
	for name, v := range after {
		if d := v - p.scans[name]; d > 0 {
			read = append(read, fmt.Sprintf("%s (%.2f per request)", name, float64(d)/float64(n)))
		} else {
			unread = append(unread, name)
		}
	}
	sort.Strings(read)
	sort.Strings(unread)
	fmt.Fprintf(&b, "transactions indexes read under %s: %s\n  kept but not read: %s\n", title,
		strings.Join(read, ", "), strings.Join(unread, ", "))
	return b.String()
}

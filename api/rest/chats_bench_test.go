package rest_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/modelstest"
)

// BenchmarkChatsPage is make load's chats side in process: a page of 25
// of 1,000 chats through the real app, next to the bare SQL that page
// needs (the page and its count, through pgx). Beside the wall time each
// reports the processor time per request of this process (the web side,
// plus app.Test's own few µs) and, on PostgreSQL, of the database's
// backends, read from /proc: the figures make load steers by, without
// its load generator. Run with -cpuprofile to see the web side.
func BenchmarkChatsPage(b *testing.B) {
	e := apitest.BenchEnv(b)
	ctx := b.Context()
	for i := 0; i < 1000; i++ {
		c := &models.Chat{FamilyID: e.Alpha.Family.ID, UserID: e.Alpha.User.ID, Title: fmt.Sprintf("chat %d", i)}
		if _, err := e.Store.CreateChat(ctx, c, "hello"); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("service", func(b *testing.B) {
		cpu := startCPU(b, e.Store)
		e.Bench(b, "GET", "/api/v1/chats?per_page=25", e.Alpha.Key, nil, 200)
		cpu.report(b)
	})
	if modelstest.Embedded() {
		return
	}
	b.Run("bare", func(b *testing.B) {
		conn, err := e.Store.DB().Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		fam, user := e.Alpha.Family.ID, e.Alpha.User.ID
		cpu := startCPU(b, e.Store)
		b.ResetTimer()
		err = conn.Raw(func(dc any) error {
			pc := dc.(*stdlib.Conn).Conn()
			for i := 0; i < b.N; i++ {
				if err := barePage(ctx, pc, fam, user); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		cpu.report(b)
	})
}

// barePage is models/load_test.go's bareChatsPage on one connection.
func barePage(ctx context.Context, c *pgx.Conn, fam, user any) error {
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM chats WHERE family_id = $1 AND user_id = $2`, fam, user).Scan(&n); err != nil {
		return err
	}
	rows, err := c.Query(ctx, `SELECT id, family_id, user_id, title, error, message_count, last_message_at, created_at, updated_at
FROM chats WHERE family_id = $1 AND user_id = $2 ORDER BY created_at DESC, id DESC LIMIT 25`, fam, user)
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

// cpuMeter is the processor time of this process and of the database's
// backends at the start of a run.
type cpuMeter struct {
	db        *sql.DB
	self, srv time.Duration
}

func startCPU(b *testing.B, s *models.Store) *cpuMeter {
	m := &cpuMeter{db: s.DB().DB}
	m.self, m.srv = selfCPU(b), backendsCPU(b, m.db, s.Postgres())
	return m
}

func (m *cpuMeter) report(b *testing.B) {
	b.StopTimer()
	self, srv := selfCPU(b), backendsCPU(b, m.db, m.srv > 0)
	b.ReportMetric(float64(self-m.self)/float64(b.N)/1e3, "go-µs/op")
	if m.srv > 0 {
		b.ReportMetric(float64(srv-m.srv)/float64(b.N)/1e3, "pg-µs/op")
	}
}

func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendsCPU is the user and system time of the PostgreSQL backends
// connected to this test's database (0 on SQLite, or when /proc does not
// show them). Ticks are 10 ms: only a long run reads finely.
func backendsCPU(b *testing.B, db *sql.DB, pg bool) time.Duration {
	if !pg {
		return 0
	}
	rows, err := db.QueryContext(context.Background(), `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var total time.Duration
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			b.Fatal(err)
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: utime and stime
		// are the 12th and 13th.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		for _, s := range f[11:13] {
			ticks, _ := strconv.ParseInt(s, 10, 64)
			total += time.Duration(ticks) * 10 * time.Millisecond
		}
	}
	return total
}

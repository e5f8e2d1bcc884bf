package models_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// perCall is processor time per request, in microseconds, by process.
type perCall struct{ web, worker, pg, redis float64 }

func (c perCall) total() float64 { return c.web + c.worker + c.pg + c.redis }

// procs are the processes a load run charges: `coffer web` and `coffer
// worker` (their pids in COFFER_LOAD_WEB_PID and COFFER_LOAD_WORKER_PID),
// the PostgreSQL backends of the load database with the server's own
// writers (WAL writer, background writer, checkpointer: shared with any
// other database of the server, idle on a quiet machine), and Redis.
type procs struct{ db string }

func loadProcs(db string) procs { return procs{db: db} }

// ticks reads the processor time (user + system, in clock ticks of 10 ms)
// of the processes of each side, from /proc.
func (p procs) ticks() (web, worker, pg, redis int64) {
	web = procTicks(os.Getenv("COFFER_LOAD_WEB_PID"))
	worker = procTicks(os.Getenv("COFFER_LOAD_WORKER_PID"))
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid := filepath.Base(d)
		comm, _ := os.ReadFile(filepath.Join(d, "comm"))
		switch strings.TrimSpace(string(comm)) {
		case "redis-server":
			redis += procTicks(pid)
		case "postgres":
			cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
			title := strings.ReplaceAll(string(cmd), "\x00", " ")
			// A backend's title is "postgres: user database host state".
			if (p.db != "" && strings.Contains(title, " "+p.db+" ")) || strings.Contains(title, "walwriter") ||
				strings.Contains(title, "background writer") || strings.Contains(title, "checkpointer") {
				pg += procTicks(pid)
			}
		}
	}
	return web, worker, pg, redis
}

// procTicks is a process's utime + stime (fields 14 and 15 of its stat,
// counted after the command name, which may hold spaces).
func procTicks(pid string) int64 {
	if pid == "" {
		return 0
	}
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

// costed runs one measured side and charges it the processor time each
// process spent meanwhile, per request that succeeded. The web process's
// CPU profile (see profiled) is part of what web spends.
func (p procs) costed(run func() loadResult) loadResult {
	w0, k0, pg0, r0 := p.ticks()
	r := run()
	w1, k1, pg1, r1 := p.ticks()
	if r.count == 0 {
		return r
	}
	per := func(ticks int64) float64 { return float64(ticks) * 10000 / float64(r.count) } // a tick is 10 ms
	r.cpu = perCall{web: per(w1 - w0), worker: per(k1 - k0), pg: per(pg1 - pg0), redis: per(r1 - r0)}
	return r
}

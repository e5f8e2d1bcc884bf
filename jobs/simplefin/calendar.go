package simplefin

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"coffer/models"
)

// SyncCalendar knows when the daily scheduled sync runs (the scheduler's
// cron, in its zone) and each connection's jitter after the tick, so that
// the web process can say when a connection's next sync will run.
type SyncCalendar struct {
	schedule cron.Schedule // nil: syncs are never scheduled
	jitter   time.Duration
}

// NewSyncCalendar reads the cron spec the scheduler registers (an empty
// spec: no scheduled syncs) in loc (nil: UTC); jitter is the
// SIMPLEFIN_SYNC_JITTER window, zero meaning its default.
func NewSyncCalendar(spec string, loc *time.Location, jitter time.Duration) (*SyncCalendar, error) {
	c := &SyncCalendar{jitter: Options{Jitter: jitter}.withDefaults().Jitter}
	if spec == "" {
		return c, nil
	}
	if loc == nil {
		loc = time.UTC
	}
	sched, err := cron.ParseStandard("CRON_TZ=" + loc.String() + " " + spec)
	if err != nil {
		return nil, fmt.Errorf("simplefin: sync cron %q: %w", spec, err)
	}
	c.schedule = sched
	return c, nil
}

// NextSync is when a connection's next sync will run (spec §10,
// next_sync_at): the not_before of its pending sync if it has one; else,
// while rate limited, the retry_after that ends the wait; else, for a
// connection the daily fan-out visits, the next cron tick plus the
// connection's stable jitter. Nil means no sync is coming until the user
// acts (a claim, a refused credential, a disconnect).
func (c *SyncCalendar) NextSync(conn *models.Connection, pending *models.Sync, now time.Time) *time.Time {
	if pending != nil && pending.Status == models.SyncPending {
		t := pending.NotBefore
		return &t
	}
	switch conn.Status {
	case models.ConnRateLimited:
		if conn.RetryAfter != nil && conn.RetryAfter.After(now) {
			t := *conn.RetryAfter
			return &t
		}
	case models.ConnActive, models.ConnPaymentRequired:
	default:
		return nil
	}
	if c == nil || c.schedule == nil {
		return nil
	}
	t := c.schedule.Next(now).Add(jitter(conn.ID, c.jitter))
	return &t
}

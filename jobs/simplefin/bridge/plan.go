package bridge

import "time"

// Window is one /accounts request: [Start, End).
type Window struct {
	Start, End time.Time
}

// Plan is what a sync asks for (spec/aggregator.md §6).
type Plan struct {
	Now          time.Time
	LookbackDays int        // initial history depth
	ChunkDays    int        // the largest window per request (at most 90)
	OverlapDays  int        // how far a regular sync re-reads
	LastStart    *time.Time // when the last completed sync started; nil: first sync
	Full         bool
}

// Windows splits the sync's range into contiguous chunks of at most
// ChunkDays, newest first. E is 00:00 UTC tomorrow, so today is included.
// A first or full sync covers the lookback; a regular one starts the
// overlap before the last completed sync's start, never further back than
// the lookback.
func (p Plan) Windows() []Window {
	chunk := p.ChunkDays
	if chunk <= 0 || chunk > 90 {
		chunk = 90
	}
	y, m, d := p.Now.UTC().Date()
	end := time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	floor := end.AddDate(0, 0, -p.LookbackDays)
	start := floor
	if p.LastStart != nil && !p.Full {
		ly, lm, ld := p.LastStart.UTC().Date()
		start = time.Date(ly, lm, ld-p.OverlapDays, 0, 0, 0, 0, time.UTC)
		if start.Before(floor) {
			start = floor
		}
	}
	var out []Window
	for e := end; e.After(start); e = e.AddDate(0, 0, -chunk) {
		s := e.AddDate(0, 0, -chunk)
		if s.Before(start) {
			s = start
		}
		out = append(out, Window{Start: s, End: e})
	}
	return out
}

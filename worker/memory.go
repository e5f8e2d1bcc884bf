package worker

import (
	"context"
	"time"
)

const (
	// trimEvery is how often an idle process gives memory back.
	trimEvery = 30 * time.Second
	// idleCPU is the CPU time below which a process counts as idle over
	// trimEvery: under 1% of a core.
	idleCPU = 250 * time.Millisecond
)

// TrimWhenIdle gives memory back (TrimStartupMemory) a few seconds after
// start, and then after every trimEvery in which the process used less
// than idleCPU, until ctx ends: a web or worker process that served a
// burst of requests or jobs returns to its idle size in a minute or so
// instead of holding the burst's heap and pages, and a busy one is left
// alone.
func TrimWhenIdle(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(3 * time.Second):
		trim()
	}
	tick := time.NewTicker(trimEvery)
	defer tick.Stop()
	last := cpuTime()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			now := cpuTime()
			if now-last < idleCPU {
				trim()
				now = cpuTime() // the trim's own work does not count
			}
			last = now
		}
	}
}

package bridgetest

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// Check is one of the protocol rules the fake holds every test's request
// log to when the test ends (spec §14.1).
type Check uint

// The checks.
const (
	CheckPending   Check = 1 << iota // pending is only ever sent as pending=1, never pending=0
	CheckWindow                      // every /accounts request has start < end, at most 90 days apart
	CheckSecrets                     // no credential in a query string
	CheckBudget                      // no credential over its budget in any rolling 24 h
	CheckClaimOnce                   // one claim POST per code, unless the Bridge answered the earlier one with a 5xx or a block page
)

func (c Check) String() string {
	switch c {
	case CheckPending:
		return "pending"
	case CheckWindow:
		return "window"
	case CheckSecrets:
		return "secrets"
	case CheckBudget:
		return "budget"
	case CheckClaimOnce:
		return "claim-once"
	}
	return fmt.Sprintf("check-%d", uint(c))
}

// Violation is a broken rule and the request that broke it.
type Violation struct {
	Check  Check
	Detail string
}

// Exempt turns checks off for this fake: for a test that breaks a rule on
// purpose (a user pasting a used token twice, say).
func (s *Server) Exempt(checks ...Check) {
	s.mu.Lock()
	for _, c := range checks {
		s.exempt |= c
	}
	s.mu.Unlock()
}

// SetBudget changes the budget the log is checked against.
func (s *Server) SetBudget(n int) {
	s.mu.Lock()
	s.budget = n
	s.mu.Unlock()
}

func (s *Server) check(t testing.TB) {
	s.mu.Lock()
	exempt := s.exempt
	s.mu.Unlock()
	for _, v := range s.Violations() {
		if exempt&v.Check == 0 {
			t.Errorf("bridgetest: %s rule broken: %s", v.Check, v.Detail)
		}
	}
}

// Violations checks the log so far against every rule, exempt or not.
func (s *Server) Violations() []Violation {
	reqs := s.Log()
	s.mu.Lock()
	budget := s.budget
	var secrets []string
	for _, c := range s.creds {
		secrets = append(secrets, c.user, c.pass)
	}
	s.mu.Unlock()
	var out []Violation
	add := func(c Check, format string, args ...any) {
		out = append(out, Violation{Check: c, Detail: fmt.Sprintf(format, args...)})
	}
	seen := map[string][]time.Time{} // /accounts requests per user
	lastClaim := map[string]Request{}
	for i, r := range reqs {
		q := strings.ToLower(r.RawQuery)
		if strings.Contains(q, "s3cret") || strings.Contains(q, "password") ||
			slices.ContainsFunc(secrets, func(s string) bool { return strings.Contains(r.RawQuery, s) }) {
			add(CheckSecrets, "request %d to %s carries a credential in its query", i, r.Path)
		}
		if v, ok := r.Query["pending"]; ok && (len(v) != 1 || v[0] != "1") {
			add(CheckPending, "request %d sent pending=%v", i, v)
		}
		switch {
		case r.Method == http.MethodGet && r.Path == s.root+"/accounts":
			start, end, ok := r.Window()
			if !ok || start >= end || end-start > 90*86400 {
				add(CheckWindow, "request %d asked for the window %q..%q", i, r.Query.Get("start-date"), r.Query.Get("end-date"))
			}
			if r.User == "" {
				continue
			}
			seen[r.User] = append(seen[r.User], r.Time)
			in := 0
			for _, at := range seen[r.User] {
				if at.After(r.Time.Add(-24*time.Hour)) && !at.After(r.Time) {
					in++
				}
			}
			if in > budget {
				add(CheckBudget, "request %d is the %dth of its credential in 24 h, over the budget of %d", i, in, budget)
			}
		case r.Method == http.MethodPost && strings.HasPrefix(r.Path, s.root+"/claim/"):
			if prev, ok := lastClaim[r.Path]; ok && prev.Status < 500 && prev.Fault != "html403" {
				add(CheckClaimOnce, "request %d is a second claim POST of one code, after a %d", i, prev.Status)
			}
			lastClaim[r.Path] = r
		}
	}
	return out
}

// Contiguous checks that the /accounts windows of reqs (those of one
// sync; retries repeat a window) tile a range with no gap and no
// overlap. Tests of multi-chunk plans call it on their part of the log.
func Contiguous(reqs []Request) error {
	type span struct{ start, end int64 }
	var spans []span
	for i, r := range reqs {
		start, end, ok := r.Window()
		if !ok || start >= end {
			return fmt.Errorf("bridgetest: request %d has no window", i)
		}
		if !slices.Contains(spans, span{start, end}) {
			spans = append(spans, span{start, end})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(spans); i++ {
		if spans[i].start != spans[i-1].end {
			return fmt.Errorf("bridgetest: windows %d..%d and %d..%d are not contiguous",
				spans[i-1].start, spans[i-1].end, spans[i].start, spans[i].end)
		}
	}
	return nil
}

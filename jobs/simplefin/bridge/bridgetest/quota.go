package bridgetest

import (
	"io"
	"net/http"
	"strconv"
	"time"
)

// QuotaStyle is how the fake refuses a credential over its quota.
type QuotaStyle string

// Quota styles (spec §14.2).
const (
	Quota429JSON   QuotaStyle = "429"       // 429 with a JSON body
	Quota429HTML   QuotaStyle = "429html"   // 429 with a Cloudflare-like HTML page
	QuotaHTML403   QuotaStyle = "html403"   // 403 with a Cloudflare-like HTML page: not a revocation
	QuotaErrors200 QuotaStyle = "errors200" // 200 with no accounts and a "make fewer requests" message
)

// quotaWarning is the hint an answer carries once a credential reaches
// the warning threshold.
const quotaWarning = "This access URL is approaching its daily request quota."

// Quota is the Bridge's own request quota, per credential and rolling
// 24 h by the fake's clock: answers carry a warning from the Warn-th
// request and are refused from the Block-th.
type Quota struct {
	Warn       int        // 0: 48
	Block      int        // 0: 96
	Style      QuotaStyle // "": Quota429JSON
	RetryAfter int        // seconds sent in Retry-After with a 429; 0: none
}

func (q Quota) withDefaults() Quota {
	if q.Warn <= 0 {
		q.Warn = 48
	}
	if q.Block <= 0 {
		q.Block = 96
	}
	if q.Style == "" {
		q.Style = Quota429JSON
	}
	return q
}

// SetQuota changes the quota thresholds and style.
func (s *Server) SetQuota(q Quota) {
	s.mu.Lock()
	s.quota = q
	s.mu.Unlock()
}

// usedLocked counts a credential's /accounts requests in the 24 h up to
// now, the one being served included (it is logged on arrival).
func (s *Server) usedLocked(user string, now time.Time) int {
	n := 0
	for _, r := range s.log {
		if r.User == user && r.Path == s.root+"/accounts" && r.Time.After(now.Add(-24*time.Hour)) && !r.Time.After(now) {
			n++
		}
	}
	return n
}

// block writes the refusal of the style.
func (q Quota) block(w http.ResponseWriter) {
	if q.RetryAfter > 0 && q.Style != QuotaErrors200 {
		w.Header().Set("Retry-After", strconv.Itoa(q.RetryAfter))
	}
	switch q.Style {
	case Quota429HTML:
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, "<!DOCTYPE html><html><head><title>Rate limited | Cloudflare</title></head><body>Too many requests</body></html>")
	case QuotaHTML403:
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "<!DOCTYPE html><html><head><title>Access denied | Cloudflare</title></head><body>blocked</body></html>")
	case QuotaErrors200:
		writeJSON(w, `{"errors":["You must make fewer requests: data is only refreshed once every 24 hours."],"accounts":[]}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"errors":["Rate limit exceeded: make fewer requests."],"accounts":[]}`)
	}
}

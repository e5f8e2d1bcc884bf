package bridgetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// AccountsBehaviour scripts how the next /accounts requests are answered.
type AccountsBehaviour int

// Accounts behaviours.
const (
	AccountsNormally   AccountsBehaviour = iota // 200 with the account set
	Accounts402                                 // payment required
	AccountsHTML403                             // a front-end block page, not a revoked URL
	Accounts429                                 // rate limited, Retry-After: 120, HTML body
	Accounts5xxOnce                             // one 503, then normal
	AccountsTruncated                           // a 200 whose JSON is cut short
	AccountsReset                               // drop the connection mid-body
	Accounts500                                 // a server error, every time
	AccountsBadJSON                             // a complete 200 that is not an account set
	AccountsQuota                               // a 200 with no accounts and a quota message
	AccountsHTML429                             // a Cloudflare 429 without Retry-After
	AccountsGenAuth                             // a v2 200 with gen.auth and no accounts
	AccountsRedirect                            // a 302 to another host
	AccountsHang                                // no answer until the client gives up
	Accounts502                                 // a bad gateway from the front end
	Accounts504                                 // a gateway timeout from the front end
	AccountsEmpty                               // a 200 with an empty body
	AccountsJSON403                             // a revoked credential answered in JSON
	Accounts401                                 // unauthorised
	AccountsResetEarly                          // drop the connection before any header
	AccountsDrip                                // send the body a few bytes at a time, slower than any deadline
)

var accountsNames = []string{"normal", "402", "html403", "429", "5xx-once", "truncated", "reset", "500", "bad-json",
	"quota", "html429", "gen-auth", "redirect", "hang", "502", "504", "empty", "json403", "401", "reset-early", "drip"}

// String is the behaviour's name in the request log and the control API.
func (b AccountsBehaviour) String() string {
	if int(b) < len(accountsNames) {
		return accountsNames[b]
	}
	return "behaviour-" + strconv.Itoa(int(b))
}

// ParseAccountsBehaviour reads a behaviour's name.
func ParseAccountsBehaviour(name string) (AccountsBehaviour, bool) {
	for i, n := range accountsNames {
		if n == name {
			return AccountsBehaviour(i), true
		}
	}
	return 0, false
}

// SetAccounts sets the /accounts behaviour and the account set it answers.
func (s *Server) SetAccounts(b AccountsBehaviour, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts = b
	if body != "" {
		s.body = body
	}
}

// SetDataset makes /accounts answer from d, window by window.
func (s *Server) SetDataset(d *Dataset) {
	s.mu.Lock()
	s.data = d
	s.mu.Unlock()
}

// Generate seeds a dataset on the fake's clock (see Generate), answers
// from it, and returns it.
func (s *Server) Generate(seed uint64, accounts, perAccount, days int) *Dataset {
	d := Generate(seed, accounts, perAccount, days, s.Now())
	s.SetDataset(d)
	return d
}

// Script makes the next requests behave as listed, one each, before the
// behaviour set with SetAccounts applies again.
func (s *Server) Script(bs ...AccountsBehaviour) {
	s.mu.Lock()
	s.script = append(s.script, bs...)
	s.mu.Unlock()
}

func (s *Server) accountsHandler(w http.ResponseWriter, r *http.Request) {
	user, pass, ok := r.BasicAuth()
	s.mu.Lock()
	now := s.nowLocked()
	behaviour, body := s.accounts, s.body
	if len(s.script) > 0 {
		behaviour, s.script = s.script[0], s.script[1:]
	}
	if behaviour == Accounts5xxOnce {
		s.accounts = AccountsNormally
	}
	cred := s.creds[user]
	authorised := ok && cred != nil && cred.pass == pass && !cred.revoked
	quota, used := s.quota.withDefaults(), s.usedLocked(user, now)
	shape := s.shape(r)
	data := s.data
	capDays, capQuiet := s.capDays, s.capQuiet
	s.mu.Unlock()
	if !authorised {
		if cred != nil && cred.revoked {
			s.fault(r, "revoked")
		}
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	if used >= quota.Block {
		s.fault(r, "quota-"+string(quota.Style))
		quota.block(w)
		return
	}
	var warnings []string
	if used >= quota.Warn {
		warnings = append(warnings, quotaWarning)
	}
	q := r.URL.Query()
	if start, end, ok := window(q); ok && end-start > int64(capDays)*86400 {
		// The Bridge trims a long range to its newest days.
		q.Set("start-date", strconv.FormatInt(end-int64(capDays)*86400, 10))
		s.fault(r, "capped")
		if !capQuiet {
			warnings = append(warnings, fmt.Sprintf("Requested date range exceeds limit of %d days and was capped.", capDays))
		}
	}
	if data != nil {
		body = data.render(q, shape, now, warnings)
	} else if len(warnings) > 0 {
		body = withAPIMessages(body, warnings)
	}
	if behaviour != AccountsNormally {
		s.fault(r, behaviour.String())
	}
	switch behaviour {
	case Accounts402:
		http.Error(w, "Payment Required", http.StatusPaymentRequired)
	case AccountsHTML403:
		Quota{Style: QuotaHTML403}.block(w)
	case Accounts429:
		Quota{Style: Quota429HTML, RetryAfter: 120}.block(w)
	case Accounts500:
		http.Error(w, "internal server error", http.StatusInternalServerError)
	case Accounts5xxOnce:
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	case Accounts502:
		http.Error(w, "bad gateway", http.StatusBadGateway)
	case Accounts504:
		http.Error(w, "gateway timeout", http.StatusGatewayTimeout)
	case AccountsEmpty:
		writeJSON(w, "")
	case AccountsJSON403:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"error":"Forbidden: the access token was revoked"}`)
	case Accounts401:
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	case AccountsResetEarly:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	case AccountsDrip:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		rc := http.NewResponseController(w)
		for i := 0; i < len(body); i += 8 {
			_, _ = io.WriteString(w, body[i:min(i+8, len(body))])
			if rc.Flush() != nil {
				return
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	case AccountsBadJSON:
		writeJSON(w, `{"errors":[],"accounts":"nope"}`)
	case AccountsQuota:
		Quota{Style: QuotaErrors200}.block(w)
	case AccountsHTML429:
		Quota{Style: Quota429HTML}.block(w)
	case AccountsHang:
		<-r.Context().Done()
	case AccountsRedirect:
		http.Redirect(w, r, "http://elsewhere.example/simplefin/accounts", http.StatusFound)
	case AccountsGenAuth:
		writeJSON(w, `{"errors":[],"errlist":[{"code":"gen.auth","msg":"Authentication failed"}],"accounts":[]}`)
	case AccountsTruncated:
		writeJSON(w, body[:len(body)/2])
	case AccountsReset:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = io.WriteString(w, body[:len(body)/2])
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		if conn, _, err := rc.Hijack(); err == nil {
			conn.Close()
		}
	default:
		writeJSON(w, body)
	}
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

// withAPIMessages adds developer hints to a JSON account set; a body that
// is not a JSON object is left as it is.
func withAPIMessages(body string, msgs []string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(body), &m) != nil || m == nil {
		return body
	}
	var have []string
	_ = json.Unmarshal(m["x-api-message"], &have)
	b, _ := json.Marshal(append(have, msgs...))
	m["x-api-message"] = b
	out, _ := json.Marshal(m)
	return string(out)
}

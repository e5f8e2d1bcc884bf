package bridgetest

import (
	"encoding/json"
	"net/http"
	"time"
)

// control mirrors the Go controls under /_fake/*, as JSON, for black-box
// runs of the service against a fake it did not start itself.
func (s *Server) control(mux *http.ServeMux) {
	mux.HandleFunc("POST /_fake/tokens", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Code string    `json:"code"`
			Mode TokenMode `json:"mode"`
		}
		if !decodeBody(w, r, &in) {
			return
		}
		if in.Mode == "" {
			in.Mode = OneTime
		}
		switch in.Mode {
		case OneTime, Reusable, Expired, ConsumeThenFail, ConsumeThenDrop:
		default:
			http.Error(w, "unknown mode", http.StatusBadRequest)
			return
		}
		answer(w, map[string]string{"token": s.NewToken(in.Code, in.Mode), "access_url": s.AccessURL(in.Code)})
	})
	mux.HandleFunc("POST /_fake/revoke", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Code string `json:"code"`
		}
		if decodeBody(w, r, &in) {
			s.Revoke(in.Code)
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("POST /_fake/accounts", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Behaviour string   `json:"behaviour"`
			Body      string   `json:"body"`
			Script    []string `json:"script"`
			Version   string   `json:"version"`
		}
		if !decodeBody(w, r, &in) {
			return
		}
		b, ok := ParseAccountsBehaviour(in.Behaviour)
		if in.Behaviour == "" {
			ok = true
		}
		var script []AccountsBehaviour
		for _, name := range in.Script {
			sb, known := ParseAccountsBehaviour(name)
			ok = ok && known
			script = append(script, sb)
		}
		if !ok {
			http.Error(w, "unknown behaviour", http.StatusBadRequest)
			return
		}
		s.SetAccounts(b, in.Body)
		s.Script(script...)
		if in.Version != "" {
			s.SetVersion(in.Version)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /_fake/clock", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Now     *time.Time `json:"now"`
			Advance string     `json:"advance"`
		}
		if !decodeBody(w, r, &in) {
			return
		}
		d, err := time.ParseDuration(in.Advance)
		if in.Advance != "" && err != nil {
			http.Error(w, "bad advance", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		if s.clock == nil {
			s.clock = NewClock(s.nowLocked())
			s.now = s.clock.Now
		}
		if in.Now != nil {
			s.clock.Set(*in.Now)
		}
		s.clock.Advance(d)
		now := s.nowLocked()
		s.mu.Unlock()
		answer(w, map[string]time.Time{"now": now})
	})
	mux.HandleFunc("POST /_fake/quota", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Warn       int        `json:"warn"`
			Block      int        `json:"block"`
			Style      QuotaStyle `json:"style"`
			RetryAfter int        `json:"retry_after"`
		}
		if decodeBody(w, r, &in) {
			s.SetQuota(Quota(in))
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("POST /_fake/cap", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Days   int  `json:"days"`
			Silent bool `json:"silent"`
		}
		if decodeBody(w, r, &in) {
			if in.Days <= 0 {
				in.Days = 90
			}
			s.SetCap(in.Days, in.Silent)
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("POST /_fake/dataset", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Seed       uint64 `json:"seed"`
			Accounts   int    `json:"accounts"`
			PerAccount int    `json:"per_account"`
			Days       int    `json:"days"`
		}
		if !decodeBody(w, r, &in) {
			return
		}
		if in.Accounts < 0 || in.PerAccount < 0 || in.Days <= 0 || in.Accounts*in.PerAccount > 1_000_000 {
			http.Error(w, "bad sizes", http.StatusBadRequest)
			return
		}
		d := s.Generate(in.Seed, in.Accounts, in.PerAccount, in.Days)
		answer(w, map[string]int{"transactions": d.Count()})
	})
	mux.HandleFunc("GET /_fake/requests", func(w http.ResponseWriter, _ *http.Request) {
		answer(w, s.Log())
	})
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

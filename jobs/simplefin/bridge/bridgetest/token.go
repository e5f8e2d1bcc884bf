package bridgetest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// TokenMode is how the fake answers the claims of one setup token.
type TokenMode string

// Token modes (spec §14.2).
const (
	OneTime         TokenMode = "one-time"          // 200 once, then 403
	Reusable        TokenMode = "reusable"          // 200 every time, with the same access URL
	Expired         TokenMode = "expired"           // always 403
	ConsumeThenFail TokenMode = "consume-then-fail" // marked used, then a 500
	ConsumeThenDrop TokenMode = "consume-then-drop" // marked used, then the connection dropped
)

// ClaimBehaviour scripts how the next claims are answered, whatever the
// token's mode: faults of the Bridge's front end, in front of the tokens.
type ClaimBehaviour int

// Claim behaviours.
const (
	ClaimNormally ClaimBehaviour = iota // as the token's mode says
	ClaimHTML403                        // a Cloudflare-style HTML block page
	Claim500                            // a server error
	ClaimHang                           // never answer: the client times out after writing
	ClaimReset                          // consume the token, then drop the connection (ConsumeThenDrop)
	ClaimBadURL                         // consume the token, then 200 with an access URL that has no password
	ClaimNotURL                         // consume the token, then 200 with a body that is not a URL
)

var claimFaults = map[ClaimBehaviour]string{ClaimHTML403: "html403", Claim500: "500", ClaimHang: "hang",
	ClaimReset: string(ConsumeThenDrop), ClaimBadURL: "bad-url", ClaimNotURL: "not-url"}

type token struct {
	mode TokenMode
	used bool
}

// Token makes a new one-time setup token.
func (s *Server) Token(code string) string { return s.NewToken(code, OneTime) }

// NewToken makes a setup token for code with the given mode, replacing
// any earlier token of that code.
func (s *Server) NewToken(code string, mode TokenMode) string {
	s.mu.Lock()
	s.tokens[code] = &token{mode: mode}
	s.mu.Unlock()
	return b64(s.URL + s.root + "/claim/" + code)
}

// Set changes the claim behaviour.
func (s *Server) Set(b ClaimBehaviour) {
	s.mu.Lock()
	s.claim = b
	s.mu.Unlock()
}

func (s *Server) claimHandler(w http.ResponseWriter, r *http.Request) {
	code := r.PathValue("code")
	s.mu.Lock()
	behaviour := s.claim
	tok := s.tokens[code]
	mode, refused := OneTime, tok == nil
	if tok != nil {
		mode = tok.mode
		refused = mode == Expired || (tok.used && mode != Reusable)
	}
	consume := !refused && behaviour != ClaimHTML403 && behaviour != Claim500 && behaviour != ClaimHang
	if consume {
		tok.used = true
	}
	s.mu.Unlock()
	if name, ok := claimFaults[behaviour]; ok {
		s.fault(r, name)
	}
	switch behaviour {
	case ClaimHTML403:
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "<!DOCTYPE html><html><head><title>Attention Required! | Cloudflare</title></head><body>blocked</body></html>")
		return
	case Claim500:
		http.Error(w, "upstream unavailable", http.StatusBadGateway)
		return
	case ClaimHang:
		<-r.Context().Done()
		return
	}
	if refused {
		if tok != nil {
			s.fault(r, string(mode))
		}
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	switch {
	case mode == ConsumeThenFail:
		s.fault(r, string(mode))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	case mode == ConsumeThenDrop || behaviour == ClaimReset:
		s.fault(r, string(ConsumeThenDrop))
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	case behaviour == ClaimBadURL:
		s.mu.Lock()
		c := s.credFor(code)
		s.mu.Unlock()
		_, _ = io.WriteString(w, strings.Replace(s.URL, "://", "://"+c.user+"@", 1)+s.root)
		return
	case behaviour == ClaimNotURL:
		_, _ = io.WriteString(w, "<html><body>Claimed!</body></html>")
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = fmt.Fprintln(w, s.AccessURL(code))
}

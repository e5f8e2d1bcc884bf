package bridgetest

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Request is one request the fake received, as the request log keeps it.
type Request struct {
	Time          time.Time  `json:"time"` // on arrival, by the fake's clock
	Method        string     `json:"method"`
	Path          string     `json:"path"`
	Query         url.Values `json:"query"`
	RawQuery      string     `json:"raw_query"`
	User          string     `json:"user"`           // Basic authentication user; "" without one
	ContentLength bool       `json:"content_length"` // a Content-Length header came with it
	Status        int        `json:"status"`         // 0 while in flight, or when the connection was dropped
	Bytes         int64      `json:"bytes"`          // body bytes written
	Fault         string     `json:"fault"`          // the injected fault; "" for a normal answer
}

// Window is the [start-date, end-date) of an /accounts request; ok is
// false when either is missing or not an integer.
func (r Request) Window() (start, end int64, ok bool) {
	return window(r.Query)
}

// Log returns a copy of every request so far, in order of arrival.
func (s *Server) Log() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.log))
	copy(out, s.log)
	for i := range out {
		out[i].Query = cloneValues(out[i].Query)
	}
	return out
}

// AccountsLog returns the /accounts requests of the log.
func (s *Server) AccountsLog() []Request {
	var out []Request
	for _, r := range s.Log() {
		if r.Path == s.root+"/accounts" {
			out = append(out, r)
		}
	}
	return out
}

// Queries returns the query of every /accounts request so far.
func (s *Server) Queries() []url.Values {
	var out []url.Values
	for _, r := range s.AccountsLog() {
		out = append(out, r.Query)
	}
	return out
}

// AccountsRequests reports the /accounts requests seen and the last query.
func (s *Server) AccountsRequests() (int, url.Values) {
	reqs := s.AccountsLog()
	if len(reqs) == 0 {
		return 0, nil
	}
	return len(reqs), reqs[len(reqs)-1].Query
}

// Posts reports how many claim POSTs a code received.
func (s *Server) Posts(code string) int {
	n := 0
	for _, r := range s.Log() {
		if r.Method == http.MethodPost && r.Path == s.root+"/claim/"+code {
			n++
		}
	}
	return n
}

type logKey struct{}

// record logs a request on arrival, so that a count read right after a
// client gave up already includes it, and fills in the outcome when the
// handler returns. Control calls are not part of the protocol: not logged.
func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/_fake/") {
			next.ServeHTTP(w, r)
			return
		}
		user, _, _ := r.BasicAuth()
		_, cl := r.Header["Content-Length"]
		s.mu.Lock()
		i := len(s.log)
		s.log = append(s.log, Request{Time: s.nowLocked(), Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(),
			RawQuery: r.URL.RawQuery, User: user, ContentLength: cl || r.ContentLength > 0})
		s.mu.Unlock()
		rw := &recorder{ResponseWriter: w}
		next.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), logKey{}, i)))
		s.mu.Lock()
		s.log[i].Status = rw.status
		if rw.status == 0 && !rw.hijacked {
			s.log[i].Status = http.StatusOK
		}
		s.log[i].Bytes = rw.bytes
		s.mu.Unlock()
	})
}

// fault names the fault injected into the request being served.
func (s *Server) fault(r *http.Request, name string) {
	i, ok := r.Context().Value(logKey{}).(int)
	if !ok {
		return
	}
	s.mu.Lock()
	s.log[i].Fault = name
	s.mu.Unlock()
}

// recorder notes the status and the bytes of an answer; it still lets
// handlers flush and hijack, to cut a body short or drop a connection.
type recorder struct {
	http.ResponseWriter
	status   int
	bytes    int64
	hijacked bool
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *recorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

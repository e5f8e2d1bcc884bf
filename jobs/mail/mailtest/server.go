// Package mailtest is a real SMTP server on loopback for tests
// (emersion/go-smtp, plain, no TLS): it keeps each message whose DATA
// ended with its final dot, as a mail server takes responsibility for it.
// Clients reach it through a relay of bytes that can stop in the middle
// of a message's DATA (HoldNext), as a slow network would, so a test can
// kill the sender there and see the server discard the torn message.
package mailtest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Mail is one message the server took.
type Mail struct {
	From string
	To   []string
	Data string
}

// Header returns the value of the message's first header called name.
func (m Mail) Header(name string) string {
	head, _, _ := strings.Cut(strings.ReplaceAll(m.Data, "\r\n", "\n"), "\n\n")
	for _, l := range strings.Split(head, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Body is the message's text after its header.
func (m Mail) Body() string {
	_, body, _ := strings.Cut(strings.ReplaceAll(m.Data, "\r\n", "\n"), "\n\n")
	return body
}

// Server records what it received.
type Server struct {
	Addr string

	mu     sync.Mutex
	mails  []Mail
	torn   int           // messages whose DATA never finished (discarded)
	hold   chan struct{} // non-nil: the relay stops the next DATA after its header and closes this
	arrive chan struct{} // signalled on each mail taken
}

// Start runs a server until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: front.Addr().String(), arrive: make(chan struct{}, 1000)}
	srv := smtp.NewServer(s)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 30*time.Second, 30*time.Second
	go func() { _ = srv.Serve(ln) }()
	go s.relay(front, ln.Addr().String())
	t.Cleanup(func() { srv.Close(); front.Close() })
	return s
}

// relay passes each connection of front to the server at back.
func (s *Server) relay(front net.Listener, back string) {
	for {
		c, err := front.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			b, err := net.Dial("tcp", back)
			if err != nil {
				return
			}
			defer b.Close()
			go func() { _, _ = io.Copy(c, b); c.Close() }()
			s.forward(b, c)
		}()
	}
}

// forward copies the client's bytes to the server; when a hold is armed,
// it stops at the end of the next message's header (after DATA) and
// passes nothing more, until the client goes away.
func (s *Server) forward(dst io.Writer, src io.Reader) {
	var seen []byte // since DATA, while a hold is armed
	inData := false
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		chunk := buf[:n]
		s.mu.Lock()
		hold := s.hold
		s.mu.Unlock()
		if hold != nil && n > 0 {
			seen = append(seen, chunk...)
			if !inData {
				if i := strings.Index(string(seen), "DATA\r\n"); i >= 0 {
					inData = true
				}
			}
			if inData {
				if i := strings.Index(string(seen), "\r\n\r\n"); i >= 0 && strings.Contains(string(seen[:i]), "DATA\r\n") {
					// Pass the header, keep back the body and its final dot.
					cut := len(chunk) - (len(seen) - (i + 4))
					if cut > 0 {
						_, _ = dst.Write(chunk[:cut])
					}
					s.mu.Lock()
					s.hold = nil
					s.mu.Unlock()
					close(hold)
					_, _ = io.Copy(io.Discard, src) // until the client is gone
					return
				}
			}
		}
		if n > 0 {
			if _, werr := dst.Write(chunk); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// URL is the SMTP_URL of the server.
func (s *Server) URL() string { return "smtp://" + s.Addr }

// HoldNext makes the relay stop the next message's DATA after its header:
// the returned channel closes when it got there. The server then waits
// for the rest, which never comes; when the client goes away, the server
// sees its DATA cut and discards the message.
func (s *Server) HoldNext() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = make(chan struct{})
	return s.hold
}

// Mails returns what the server took so far.
func (s *Server) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mails...)
}

// Torn counts the messages whose DATA was cut before its end.
func (s *Server) Torn() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.torn
}

// Wait waits until the server took n mails in all, or fails the test.
func (s *Server) Wait(t testing.TB, n int) []Mail {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if ms := s.Mails(); len(ms) >= n {
			return ms
		}
		select {
		case <-s.arrive:
		case <-deadline:
			t.Fatalf("the SMTP server took %d mails, want %d", len(s.Mails()), n)
		}
	}
}

// WaitTorn waits until the server discarded n torn messages in all, or
// fails the test.
func (s *Server) WaitTorn(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for s.Torn() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the SMTP server discarded %d torn messages, want %d", s.Torn(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// NewSession is go-smtp's Backend.
func (s *Server) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }

type session struct {
	s    *Server
	from string
	to   []string
}

func (x *session) Reset()        { x.from, x.to = "", nil }
func (x *session) Logout() error { return nil }

func (x *session) Mail(from string, _ *smtp.MailOptions) error { x.from = from; return nil }

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error { x.to = append(x.to, to); return nil }

func (x *session) Data(r io.Reader) error {
	var data strings.Builder
	// Up to the final dot: a client gone before it leaves an error here,
	// and the message is discarded, as servers do.
	if _, err := io.Copy(&data, r); err != nil {
		x.s.mu.Lock()
		x.s.torn++
		x.s.mu.Unlock()
		return err
	}
	x.s.mu.Lock()
	x.s.mails = append(x.s.mails, Mail{From: x.from, To: x.to, Data: data.String()})
	x.s.mu.Unlock()
	x.s.arrive <- struct{}{}
	return nil
}

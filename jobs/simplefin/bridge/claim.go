package bridge

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"

	"coffer/models/publicaddr"
)

// Client talks to SimpleFIN Bridge servers.
type Client struct {
	http            *http.Client
	AllowHTTP       bool
	retry           time.Duration // first backoff interval
	claimTimeout    time.Duration
	accountsTimeout time.Duration
}

// Options configure a Client.
type Options struct {
	AllowHTTP         bool          `env:"SIMPLEFIN_ALLOW_HTTP" default:"false"`          // accept http URLs (tests only)
	AllowPrivateHosts bool          `env:"SIMPLEFIN_ALLOW_PRIVATE_HOSTS" default:"false"` // dial addresses that are not public: loopback, private, … (tests only)
	ClaimTimeout      time.Duration `env:"SIMPLEFIN_CLAIM_TIMEOUT" default:"30s"`         // deadline of one claim request; zero: 30 s
	AccountsTimeout   time.Duration `env:"SIMPLEFIN_ACCOUNTS_TIMEOUT" default:"120s"`     // deadline of one /accounts request; zero: 120 s
	// RetryInitial is the first backoff interval (then ×2 with 25 %
	// jitter, at most 30 s, 3 retries). Zero means 2 s; tests shorten it.
	RetryInitial time.Duration
	// RootCAs are the certificate authorities trusted for HTTPS; nil: the
	// system's. Tests add the fake Bridge's CA; verification stays on.
	RootCAs *x509.CertPool
}

// NewClient builds a client whose dialer refuses every address that is
// not public unicast (publicaddr.Public) unless allowed, and which
// never follows redirects.
func NewClient(o Options) *Client {
	dialer := publicaddr.Dialer(o.AllowPrivateHosts)
	claimTimeout, accountsTimeout := o.ClaimTimeout, o.AccountsTimeout
	if claimTimeout <= 0 {
		claimTimeout = 30 * time.Second
	}
	if accountsTimeout <= 0 {
		accountsTimeout = 120 * time.Second
	}
	retry := o.RetryInitial
	if retry <= 0 {
		retry = 2 * time.Second
	}
	return &Client{
		AllowHTTP:       o.AllowHTTP,
		retry:           retry,
		claimTimeout:    claimTimeout,
		accountsTimeout: accountsTimeout,
		http: &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport: &http.Transport{
				DialContext:           dialer.DialContext,
				TLSClientConfig:       &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
				TLSHandshakeTimeout:   10 * time.Second,
				ResponseHeaderTimeout: 90 * time.Second,
				// A connection per request: a kept-alive one that the server
				// closes makes the transport resend a GET by itself, a
				// request the budget would never see. Requests are a few a
				// day per connection, so reuse would save nothing.
				DisableKeepAlives: true,
			},
		},
	}
}

// ClaimOutcome tells the claim job what happened to a claim that failed.
type ClaimOutcome int

// Claim outcomes.
const (
	// NeverSent: the request provably never left (DNS, refused, connect
	// timeout): the token is intact and the claim may be tried again.
	NeverSent ClaimOutcome = iota + 1
	// Refused: the Bridge answered 403: the token is used, expired or
	// unknown, and may be compromised.
	Refused
	// Blocked: a 5xx, or an HTML 403/429 from the front end: the Bridge did
	// not serve the claim, so the token is kept for a retry.
	Blocked
	// Unknown: the request may have reached the Bridge but no valid answer
	// came back: the token may be used; it cannot be claimed again safely.
	Unknown
	// NotAllowed: the claim URL points at a private or loopback address,
	// which the service refuses to call; nothing was sent.
	NotAllowed
)

// ClaimError is a failed claim with its outcome; its text never holds the
// claim URL.
type ClaimError struct {
	Outcome ClaimOutcome
	Detail  string
}

func (e *ClaimError) Error() string { return "simplefin: claim: " + e.Detail }

// Claim sends the one POST that exchanges a claim URL for an access URL.
// Only failures that prove the request was never written are retried
// (exponential backoff, 3 retries, bound to ctx): a claim is not
// idempotent, and a second POST after a lost answer would report a good
// token as compromised.
func (c *Client) Claim(ctx context.Context, claimURL *url.URL) (string, error) {
	var access string
	op := func() error {
		ctx, cancel := context.WithTimeout(ctx, c.claimTimeout)
		defer cancel()
		var wrote bool
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote = true }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, claimURL.String(), http.NoBody)
		if err != nil {
			return backoff.Permanent(&ClaimError{Outcome: Unknown, Detail: "bad request"})
		}
		req.ContentLength = 0
		req.Header.Set("Content-Length", "0")
		resp, err := c.http.Do(req)
		if err != nil {
			if errors.Is(err, publicaddr.ErrPrivate) {
				return backoff.Permanent(&ClaimError{Outcome: NotAllowed, Detail: "the claim URL points at a private address"})
			}
			if !wrote && certRejected(err) {
				// Nothing was sent, so the token is intact; but another try
				// meets the same certificate: final, with no backoff.
				return backoff.Permanent(&ClaimError{Outcome: NeverSent, Detail: "the Bridge's TLS certificate did not verify"})
			}
			if !wrote && tlsHandshake(err) {
				return &ClaimError{Outcome: NeverSent, Detail: "TLS handshake failed"}
			}
			if !wrote && neverSent(err) {
				return &ClaimError{Outcome: NeverSent, Detail: "could not reach the Bridge: " + opName(err)}
			}
			return backoff.Permanent(&ClaimError{Outcome: Unknown, Detail: "no answer to the claim: " + opName(err)})
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if err != nil {
			return backoff.Permanent(&ClaimError{Outcome: Unknown, Detail: "the answer was cut off"})
		}
		html := strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "html") ||
			strings.HasPrefix(strings.ToLower(strings.TrimSpace(string(body))), "<")
		switch {
		case resp.StatusCode == http.StatusOK:
			access = strings.TrimSpace(string(body))
			if err := c.checkAccessURL(access); err != nil {
				access = ""
				return backoff.Permanent(&ClaimError{Outcome: Unknown, Detail: "the Bridge answered with an invalid access URL"})
			}
			return nil
		case resp.StatusCode == http.StatusForbidden && !html:
			return backoff.Permanent(&ClaimError{Outcome: Refused, Detail: "the Bridge refused the token (403)"})
		case resp.StatusCode >= 500 || ((resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests) && html):
			return backoff.Permanent(&ClaimError{Outcome: Blocked, Detail: fmt.Sprintf("the Bridge did not serve the claim (%d)", resp.StatusCode)})
		default:
			return backoff.Permanent(&ClaimError{Outcome: Unknown, Detail: fmt.Sprintf("unexpected answer %d", resp.StatusCode)})
		}
	}
	if err := backoff.Retry(op, c.policy(ctx)); err != nil {
		var ce *ClaimError
		if errors.As(err, &ce) {
			return "", ce
		}
		return "", &ClaimError{Outcome: NeverSent, Detail: "interrupted before the claim was sent"}
	}
	return access, nil
}

// policy is the network retry policy: exponential from the first interval,
// ×2 with 25 % jitter, at most 30 s apart, 3 retries (4 attempts), bound
// to ctx.
func (c *Client) policy(ctx context.Context) backoff.BackOff {
	return backoff.WithContext(backoff.WithMaxRetries(backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(c.retry), backoff.WithMultiplier(2), backoff.WithRandomizationFactor(0.25),
		backoff.WithMaxInterval(30*time.Second), backoff.WithMaxElapsedTime(0)), 3), ctx)
}

// checkAccessURL accepts only an absolute https (or allowed http) URL
// with a user and a password, no query or fragment, at most 2 KiB.
func (c *Client) checkAccessURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || len(s) > maxURLBytes || u.RawQuery != "" || u.Fragment != "" || u.Host == "" {
		return errors.New("invalid")
	}
	if u.Scheme != "https" && !(c.AllowHTTP && u.Scheme == "http") {
		return errors.New("scheme")
	}
	if u.User == nil || u.User.Username() == "" {
		return errors.New("credentials")
	}
	if pw, ok := u.User.Password(); !ok || pw == "" {
		return errors.New("credentials")
	}
	return nil
}

// neverSent reports errors that happen before a request can be written:
// DNS failures, refused connections, connect timeouts.
func neverSent(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// certRejected reports a server certificate that does not verify.
func certRejected(err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	return errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr)
}

// tlsHandshake reports a TLS failure before the request was written,
// other than a certificate that does not verify (which is final).
func tlsHandshake(err error) bool {
	if certRejected(err) {
		return false
	}
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	return errors.As(err, &recErr) || errors.As(err, &alert) || strings.Contains(err.Error(), "tls: ")
}

// opName describes a network failure without the URL it was for.
func opName(err error) string {
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return opErr.Op + " failed"
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return "timeout"
	}
	return "network error"
}

package jobs_test

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/simplefintest"
	"coffer/models"
	"coffer/models/modelstest"
)

func claimSetup(t *testing.T) (*jobs.Handlers, *models.Store, *simplefintest.Server, *modelstest.FamilyFixture) {
	t.Helper()
	h, store, _ := newHandlers(t)
	h.SimpleFIN = simplefin.NewClient(simplefin.Options{AllowHTTP: true, AllowPrivateHosts: true, ClaimTimeout: 2 * time.Second, RetryInitial: 5 * time.Millisecond})
	return h, store, simplefintest.New(t), modelstest.NewFamily(t, store, "bridge")
}

func connect(t *testing.T, store *models.Store, f *modelstest.FamilyFixture, token string) *models.Connection {
	t.Helper()
	c := &models.Connection{FamilyID: f.Family.ID, Name: "SimpleFIN"}
	if err := store.CreateConnection(context.Background(), c, token); err != nil {
		t.Fatal(err)
	}
	return c
}

func runClaim(t *testing.T, h *jobs.Handlers, c *models.Connection) error {
	t.Helper()
	task, err := jobs.NewSimplefinClaimTask(c.FamilyID, c.ID, c.ClaimSeq)
	if err != nil {
		t.Fatal(err)
	}
	return h.SimplefinClaim(context.Background(), asynq.NewTask(task.Type(), task.Payload()))
}

func reload(t *testing.T, store *models.Store, c *models.Connection) *models.Connection {
	t.Helper()
	got, err := store.Connection(context.Background(), c.FamilyID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestClaim(t *testing.T) {
	h, store, bridge, f := claimSetup(t)
	c := connect(t, store, f, bridge.Token("one"))
	if c.SetupTokenEnc == nil || strings.Contains(*c.SetupTokenEnc, "claim") {
		t.Fatalf("token not sealed: %v", c.SetupTokenEnc)
	}
	if err := runClaim(t, h, c); err != nil {
		t.Fatal(err)
	}
	got := reload(t, store, c)
	if got.Status != models.ConnActive || got.SetupTokenEnc != nil || got.AccessURLEnc == nil || strings.Contains(*got.AccessURLEnc, "s3cret") {
		t.Fatalf("after claim: %+v", got)
	}
	access, err := store.AccessURL(got)
	if err != nil || access != bridge.AccessURL("one") {
		t.Fatalf("access URL: %q %v", access, err)
	}
	// Running the task again (at-least-once delivery) sends nothing.
	if err := runClaim(t, h, c); err != nil || bridge.Posts("one") != 1 {
		t.Fatalf("rerun: %v, %d POSTs", err, bridge.Posts("one"))
	}
}

func TestClaimFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		behaviour simplefintest.ClaimBehaviour
		reuse     bool // claim a token that was already claimed
		mode      simplefintest.TokenMode
		msg       string
		retryable bool
		posts     int
	}{
		{"token already used", simplefintest.ClaimNormally, true, "", jobs.MsgClaimRefused, false, 2},
		{"token expired", simplefintest.ClaimNormally, false, simplefintest.Expired, jobs.MsgClaimRefused, false, 1},
		{"html block page", simplefintest.ClaimHTML403, false, "", jobs.MsgClaimUnreachable, true, 1},
		{"server error", simplefintest.Claim500, false, "", jobs.MsgClaimUnreachable, true, 1},
		{"token used, then a server error", simplefintest.ClaimNormally, false, simplefintest.ConsumeThenFail, jobs.MsgClaimUnreachable, true, 1},
		{"timeout after the request was written", simplefintest.ClaimHang, false, "", jobs.MsgClaimUnconfirmed, false, 1},
		{"reset after the token was used", simplefintest.ClaimReset, false, "", jobs.MsgClaimUnconfirmed, false, 1},
		{"access URL without a password", simplefintest.ClaimBadURL, false, "", jobs.MsgClaimUnconfirmed, false, 1},
		{"a 200 that is not a URL", simplefintest.ClaimNotURL, false, "", jobs.MsgClaimUnconfirmed, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, store, bridge, f := claimSetup(t)
			token := bridge.Token("x")
			if tc.mode != "" {
				token = bridge.NewToken("x", tc.mode)
			}
			if tc.reuse {
				bridge.Exempt(simplefintest.CheckClaimOnce) // the user pastes a used token: a second POST on purpose
				if err := runClaim(t, h, connect(t, store, f, token)); err != nil {
					t.Fatal(err)
				}
			}
			bridge.Set(tc.behaviour)
			c := connect(t, store, f, token)
			if err := runClaim(t, h, c); err != nil {
				t.Fatal(err)
			}
			got := reload(t, store, c)
			if got.Status != models.ConnClaimFailed || got.StatusMessage == nil || *got.StatusMessage != tc.msg || got.ClaimRetryable != tc.retryable {
				t.Fatalf("after claim: status %s message %v retryable %v", got.Status, got.StatusMessage, got.ClaimRetryable)
			}
			if (got.SetupTokenEnc != nil) != tc.retryable {
				t.Errorf("token kept = %v, want %v", got.SetupTokenEnc != nil, tc.retryable)
			}
			if got.AccessURLEnc != nil {
				t.Error("an access URL was stored")
			}
			// Never a second POST for one claim: that would turn a lost
			// answer into a "compromised" message.
			if n := bridge.Posts("x"); n != tc.posts {
				t.Errorf("%d POSTs, want %d", n, tc.posts)
			}
		})
	}
}

// TestClaimNeverSentIsRetried: a claim URL where nothing listens fails
// with the token kept (no POST can have been received), and a later
// Retry with the same token succeeds once the Bridge answers there.
func TestClaimNeverSentIsRetried(t *testing.T) {
	h, store, bridge, f := claimSetup(t)
	bridge.Token("later") // the Bridge knows the code; the URL below reaches it only later
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there for now: every dial is refused
	token := base64.StdEncoding.EncodeToString([]byte("http://" + addr + "/simplefin/claim/later"))
	c := connect(t, store, f, token)
	if err := runClaim(t, h, c); err != nil {
		t.Fatal(err)
	}
	got := reload(t, store, c)
	if got.Status != models.ConnClaimFailed || !got.ClaimRetryable || got.SetupTokenEnc == nil || bridge.Posts("later") != 0 {
		t.Fatalf("unreachable bridge: %+v, %d POSTs", got, bridge.Posts("later"))
	}

	// The Bridge answers at that address now; Retry claims with the same token.
	target, _ := url.Parse(bridge.URL)
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	proxy := &http.Server{Handler: httputil.NewSingleHostReverseProxy(target)}
	go func() { _ = proxy.Serve(ln) }()
	t.Cleanup(func() { proxy.Close() })
	if err := store.RetryClaim(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	if err := runClaim(t, h, reload(t, store, c)); err != nil {
		t.Fatal(err)
	}
	got = reload(t, store, c)
	if got.Status != models.ConnActive || got.SetupTokenEnc != nil || bridge.Posts("later") != 1 {
		t.Fatalf("after Retry: %s, %d POSTs", got.Status, bridge.Posts("later"))
	}
}

func TestClaimInterruptedMidway(t *testing.T) {
	h, store, bridge, f := claimSetup(t)
	c := connect(t, store, f, bridge.Token("mid"))
	// A worker marked the claim as sent and died: the next run must not
	// POST, first waiting for the first run's deadline, then giving up.
	if _, _, err := store.BeginClaim(context.Background(), c.FamilyID, c.ID, c.ClaimSeq); err != nil {
		t.Fatal(err)
	}
	if err := runClaim(t, h, c); err == nil {
		t.Fatal("a claim that may be in flight was not retried later")
	}
	h.Now = func() time.Time { return time.Now().Add(time.Hour) }
	if err := runClaim(t, h, c); err != nil {
		t.Fatal(err)
	}
	got := reload(t, store, c)
	if got.Status != models.ConnClaimFailed || *got.StatusMessage != jobs.MsgClaimUnconfirmed || bridge.Posts("mid") != 0 {
		t.Fatalf("after the deadline: %s %v, %d POSTs", got.Status, got.StatusMessage, bridge.Posts("mid"))
	}
}

// TestClaimPrivateAddressRefused: with the production setting (private
// hosts not allowed) a claim URL on loopback or on 10.0.0.5 is refused by
// the dialer: claim_failed "address not allowed", final, and the fake on
// loopback sees no connection at all.
func TestClaimPrivateAddressRefused(t *testing.T) {
	h, store, _ := newHandlers(t)
	h.SimpleFIN = simplefin.NewClient(simplefin.Options{AllowHTTP: true, ClaimTimeout: 2 * time.Second, RetryInitial: time.Millisecond})
	bridge := simplefintest.New(t)
	f := modelstest.NewFamily(t, store, "ssrf")
	for _, token := range []string{bridge.Token("loopback"),
		base64.StdEncoding.EncodeToString([]byte("http://10.0.0.5:8080/simplefin/claim/private"))} {
		c := connect(t, store, f, token)
		if err := runClaim(t, h, c); err != nil {
			t.Fatal(err)
		}
		got := reload(t, store, c)
		if got.Status != models.ConnClaimFailed || got.StatusMessage == nil || *got.StatusMessage != jobs.MsgClaimNotAllowed || got.ClaimRetryable {
			t.Fatalf("%s: %s %v retryable %v", token, got.Status, got.StatusMessage, got.ClaimRetryable)
		}
	}
	if n := bridge.Connections(); n != 0 || bridge.Posts("loopback") != 0 {
		t.Fatalf("the fake saw %d connections and %d POSTs", n, bridge.Posts("loopback"))
	}
}

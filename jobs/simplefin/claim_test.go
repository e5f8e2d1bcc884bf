package simplefin_test

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

	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/modelstest"
)

func claimSetup(t *testing.T) (*simplefin.Handlers, *models.Store, *bridgetest.Server, *modelstest.FamilyFixture) {
	t.Helper()
	h, store, _ := newHandlers(t)
	h.Bridge = bridge.NewClient(bridge.Options{AllowHTTP: true, AllowPrivateHosts: true, ClaimTimeout: 2 * time.Second, RetryInitial: 5 * time.Millisecond})
	return h, store, bridgetest.New(t), modelstest.NewFamily(t, store, "bridge")
}

func TestClaim(t *testing.T) {
	h, store, fake, f := claimSetup(t)
	c := connect(t, store, f, fake.Token("one"))
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
	if err != nil || access != fake.AccessURL("one") {
		t.Fatalf("access URL: %q %v", access, err)
	}
	// Running the task again (at-least-once delivery) sends nothing.
	if err := runClaim(t, h, c); err != nil || fake.Posts("one") != 1 {
		t.Fatalf("rerun: %v, %d POSTs", err, fake.Posts("one"))
	}
}

func TestClaimFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		behaviour bridgetest.ClaimBehaviour
		reuse     bool // claim a token that was already claimed
		mode      bridgetest.TokenMode
		msg       string
		retryable bool
		posts     int
	}{
		{"token already used", bridgetest.ClaimNormally, true, "", simplefin.MsgClaimRefused, false, 2},
		{"token expired", bridgetest.ClaimNormally, false, bridgetest.Expired, simplefin.MsgClaimRefused, false, 1},
		{"html block page", bridgetest.ClaimHTML403, false, "", simplefin.MsgClaimUnreachable, true, 1},
		{"server error", bridgetest.Claim500, false, "", simplefin.MsgClaimUnreachable, true, 1},
		{"token used, then a server error", bridgetest.ClaimNormally, false, bridgetest.ConsumeThenFail, simplefin.MsgClaimUnreachable, true, 1},
		{"timeout after the request was written", bridgetest.ClaimHang, false, "", simplefin.MsgClaimUnconfirmed, false, 1},
		{"reset after the token was used", bridgetest.ClaimReset, false, "", simplefin.MsgClaimUnconfirmed, false, 1},
		{"access URL without a password", bridgetest.ClaimBadURL, false, "", simplefin.MsgClaimUnconfirmed, false, 1},
		{"a 200 that is not a URL", bridgetest.ClaimNotURL, false, "", simplefin.MsgClaimUnconfirmed, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, store, fake, f := claimSetup(t)
			token := fake.Token("x")
			if tc.mode != "" {
				token = fake.NewToken("x", tc.mode)
			}
			if tc.reuse {
				fake.Exempt(bridgetest.CheckClaimOnce) // the user pastes a used token: a second POST on purpose
				if err := runClaim(t, h, connect(t, store, f, token)); err != nil {
					t.Fatal(err)
				}
			}
			fake.Set(tc.behaviour)
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
			if n := fake.Posts("x"); n != tc.posts {
				t.Errorf("%d POSTs, want %d", n, tc.posts)
			}
		})
	}
}

// TestClaimNeverSentIsRetried: a claim URL where nothing listens fails
// with the token kept (no POST can have been received), and a later
// Retry with the same token succeeds once the Bridge answers there.
func TestClaimNeverSentIsRetried(t *testing.T) {
	h, store, fake, f := claimSetup(t)
	fake.Token("later") // the Bridge knows the code; the URL below reaches it only later
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
	if got.Status != models.ConnClaimFailed || !got.ClaimRetryable || got.SetupTokenEnc == nil || fake.Posts("later") != 0 {
		t.Fatalf("unreachable bridge: %+v, %d POSTs", got, fake.Posts("later"))
	}

	// The Bridge answers at that address now; Retry claims with the same token.
	target, _ := url.Parse(fake.URL)
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
	if got.Status != models.ConnActive || got.SetupTokenEnc != nil || fake.Posts("later") != 1 {
		t.Fatalf("after Retry: %s, %d POSTs", got.Status, fake.Posts("later"))
	}
}

func TestClaimInterruptedMidway(t *testing.T) {
	h, store, fake, f := claimSetup(t)
	c := connect(t, store, f, fake.Token("mid"))
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
	if got.Status != models.ConnClaimFailed || *got.StatusMessage != simplefin.MsgClaimUnconfirmed || fake.Posts("mid") != 0 {
		t.Fatalf("after the deadline: %s %v, %d POSTs", got.Status, got.StatusMessage, fake.Posts("mid"))
	}
}

// TestClaimPrivateAddressRefused: with the production setting (private
// hosts not allowed) a claim URL on loopback, a private or carrier-grade
// NAT address, a benchmarking address or NAT64 is refused by the dialer:
// claim_failed "address not allowed", final, and the fake on loopback sees
// no connection at all.
func TestClaimPrivateAddressRefused(t *testing.T) {
	h, store, _ := newHandlers(t)
	h.Bridge = bridge.NewClient(bridge.Options{AllowHTTP: true, ClaimTimeout: 2 * time.Second, RetryInitial: time.Millisecond})
	fake := bridgetest.New(t)
	f := modelstest.NewFamily(t, store, "ssrf")
	tokens := []string{fake.Token("loopback")}
	for _, host := range []string{"10.0.0.5", "100.64.0.5", "198.18.0.5", "[64:ff9b::a00:5]", "224.0.0.5"} {
		tokens = append(tokens, base64.StdEncoding.EncodeToString([]byte("http://"+host+":8080/simplefin/claim/private")))
	}
	for _, token := range tokens {
		c := connect(t, store, f, token)
		if err := runClaim(t, h, c); err != nil {
			t.Fatal(err)
		}
		got := reload(t, store, c)
		if got.Status != models.ConnClaimFailed || got.StatusMessage == nil || *got.StatusMessage != simplefin.MsgClaimNotAllowed || got.ClaimRetryable {
			t.Fatalf("%s: %s %v retryable %v", token, got.Status, got.StatusMessage, got.ClaimRetryable)
		}
	}
	if n := fake.Connections(); n != 0 || fake.Posts("loopback") != 0 {
		t.Fatalf("the fake saw %d connections and %d POSTs", n, fake.Posts("loopback"))
	}
}

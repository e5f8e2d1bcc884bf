package simplefin_test

import (
	"context"
	"errors"
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

// TestHTTPSClaimAndSync: over HTTPS, with the fake's CA in the client's
// roots (verification on), a token is claimed, /info read and the first
// sync imported, all on the clock the fake shares with the service.
func TestHTTPSClaimAndSync(t *testing.T) {
	clock := bridgetest.NewClock(time.Now().UTC())
	s := newSyncSetupWith(t, bridgetest.Options{TLS: true, Now: clock.Now})
	access, err := s.store.AccessURL(s.conn)
	if err != nil || !strings.HasPrefix(access, "https://") || !strings.HasPrefix(s.bridge.URL, "https://") {
		t.Fatalf("access URL over %q: %v", strings.SplitN(access, ":", 2)[0], err)
	}
	s.fetchInfo(t)
	data := s.bridge.Generate(21, 2, 30, 60)
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted || got.TransactionsCreated != data.Count() {
		t.Fatalf("sync over HTTPS: %v %s %+v", err, got.Status, got.SyncCounts)
	}
	if c := reload(t, s.store, s.conn); c.Status != models.ConnActive || len(c.ServerVersions) == 0 {
		t.Fatalf("connection %s, versions %v", c.Status, c.ServerVersions)
	}
	reqs := s.bridge.AccountsLog()
	if len(reqs) != 1 || !reqs[0].Time.Equal(clock.Now()) || reqs[0].Status != 200 {
		t.Fatalf("requests %+v", reqs)
	}
	if err := bridgetest.Contiguous(reqs); err != nil {
		t.Fatal(err)
	}
}

// TestClaimUntrustedCertificate: a client without the fake's CA fails
// the claim on the certificate, once: no backoff retry, no POST reaches
// the Bridge, so the token is kept for a Retry.
func TestClaimUntrustedCertificate(t *testing.T) {
	h, store, _ := newHandlers(t)
	h.Bridge = bridge.NewClient(bridge.Options{AllowHTTP: true, AllowPrivateHosts: true, ClaimTimeout: 2 * time.Second,
		RetryInitial: time.Millisecond})
	fake := bridgetest.NewTLS(t)
	c := connect(t, store, modelstest.NewFamily(t, store, "tls"), fake.Token("tls"))
	if err := runClaim(t, h, c); err != nil {
		t.Fatal(err)
	}
	got := reload(t, store, c)
	if got.Status != models.ConnClaimFailed || *got.StatusMessage != simplefin.MsgClaimUnreachable || !got.ClaimRetryable || got.SetupTokenEnc == nil {
		t.Fatalf("after an untrusted certificate: %s %q retryable %v", got.Status, *got.StatusMessage, got.ClaimRetryable)
	}
	if n := fake.Connections(); n != 1 || fake.Posts("tls") != 0 {
		t.Fatalf("%d connections, %d POSTs; want one handshake and no POST", n, fake.Posts("tls"))
	}
	// The same client check, directly: the error names the certificate.
	_, err := h.Bridge.Claim(context.Background(), mustURL(t, fake.URL+"/simplefin/claim/direct"))
	var ce *bridge.ClaimError
	if !errors.As(err, &ce) || ce.Outcome != bridge.NeverSent || !strings.Contains(ce.Detail, "certificate") {
		t.Fatalf("claim error %v", err)
	}
}

// TestV2Import: an answer in the v2 shape only (connections, conn_id,
// errlist) imports with bank names from connections[].name, and a con.auth
// item flags that bank's accounts only; the connection stays active.
func TestV2Import(t *testing.T) {
	s := newSyncSetupWith(t, bridgetest.Options{Version: "2"})
	day := time.Now().UTC().Add(-24 * time.Hour).Unix()
	txn := func(id string) []bridgetest.Txn {
		return []bridgetest.Txn{{ID: id, Posted: day, Amount: "-3.00", Description: "SHOP"}}
	}
	s.bridge.SetDataset(&bridgetest.Dataset{
		Accounts: []bridgetest.Account{
			{ID: "A1", Name: "Checking", Currency: "USD", Balance: "1.00", BalanceDate: day, Org: "First Bank", Transactions: txn("T1")},
			{ID: "B1", Name: "Card", Currency: "USD", Balance: "-2.00", BalanceDate: day, Org: "Second Bank", Transactions: txn("T2")},
			{ID: "B2", Name: "Savings", Currency: "USD", Balance: "9.00", BalanceDate: day, Org: "Second Bank"}},
		Problems: []bridgetest.Problem{{Code: "con.auth", Message: "Second Bank needs you to sign in again", Bank: "Second Bank"}},
	})
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted || got.TransactionsCreated != 2 || got.AccountsCreated != 3 {
		t.Fatalf("%v %s %+v", err, got.Status, got.SyncCounts)
	}
	c := reload(t, s.store, s.conn)
	if c.Status != models.ConnActive || len(c.ProviderErrors) != 1 || !strings.Contains(c.ProviderErrors[0].Message, "sign in again") {
		t.Fatalf("connection %s %v", c.Status, c.ProviderErrors)
	}
	pas, _ := s.store.ProviderAccounts(context.Background(), s.f.Family.ID, s.conn.ID)
	if len(pas) != 3 {
		t.Fatalf("%d remote accounts", len(pas))
	}
	for _, pa := range pas {
		bank := map[string]string{"A1": "First Bank", "B1": "Second Bank", "B2": "Second Bank"}[pa.RemoteID]
		if pa.OrgName == nil || *pa.OrgName != bank || (pa.Attention != nil) != (bank == "Second Bank") {
			t.Errorf("%s: org %v attention %v", pa.RemoteID, pa.OrgName, pa.Attention)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestLongLookbackChunks: a 365-day lookback is read in 5 contiguous
// chunks of at most 90 days (the fake checks each window), and every
// transaction of the year arrives once.
func TestLongLookbackChunks(t *testing.T) {
	clock := bridgetest.NewClock(time.Now().UTC())
	s := newSyncSetupWith(t, bridgetest.Options{Now: clock.Now})
	s.h.Options.LookbackDays = 365
	data := s.bridge.Generate(365, 2, 60, 360)
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted || got.RequestsUsed != 5 || got.TransactionsCreated != data.Count() {
		t.Fatalf("%v %s, %d requests, %+v", err, got.Status, got.RequestsUsed, got.SyncCounts)
	}
	reqs := s.bridge.AccountsLog()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	if err := bridgetest.Contiguous(reqs); err != nil {
		t.Fatal(err)
	}
	if start, _, _ := reqs[len(reqs)-1].Window(); start != got.WindowStart.Unix() {
		t.Fatalf("oldest chunk starts %d, the sync %v", start, got.WindowStart)
	}
}

// TestNinetyDayCap: the client's windows never meet the Bridge's 90-day
// cap; a Bridge that caps shorter (a test setting) costs a warning only:
// the sync completes and nothing imported before is lost.
func TestNinetyDayCap(t *testing.T) {
	s := newSyncSetup(t)
	data := s.bridge.Generate(31, 2, 60, 60)
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted || got.TransactionsCreated != data.Count() {
		t.Fatalf("first: %v %s %+v", err, got.Status, got.SyncCounts)
	}
	for _, r := range s.bridge.AccountsLog() {
		if r.Fault == "capped" {
			t.Fatalf("a window met the cap: %v", r.Query)
		}
	}
	s.bridge.SetCap(30, false)
	got, err = s.run(t, s.newSync(t, true))
	if err != nil || got.Status != models.SyncCompleted || got.TransactionsCreated+got.TransactionsUpdated != 0 {
		t.Fatalf("capped: %v %s %+v", err, got.Status, got.SyncCounts)
	}
	if w := strings.Join(got.Warnings, "|"); !strings.Contains(w, "was capped") {
		t.Fatalf("warnings %q", w)
	}
	if n := len(s.imported(t)); n != data.Count() {
		t.Fatalf("%d rows after a capped answer, want %d", n, data.Count())
	}
}

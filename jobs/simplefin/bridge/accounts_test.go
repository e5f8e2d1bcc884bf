package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"coffer/jobs/simplefin/bridge"
	"coffer/jobs/simplefin/bridge/bridgetest"
)

const accountSet = `{"errors":["Example Bank: sign-in needs attention"],"x-api-message":["hint"],
"accounts":[{"org":{"name":"Example Bank","sfin-url":"https://b.example/simplefin"},"id":"ACT-1","name":"Checking",
"currency":"USD","balance":"812.50","balance-date":"1767312000","transactions":[
{"id":"T-9","posted":1767225600,"amount":"-19.99","description":"BOOKSHOP ONLINE","payee":"Bookshop"},
{"id":"T-10","posted":0,"amount":"-5.00","description":"COFFEE","pending":true,"transacted_at":1767300000}]}]}`

func fetch(t *testing.T, fake *bridgetest.Server, access string, pending bool) (*bridge.AccountSet, error) {
	t.Helper()
	c := bridge.NewClient(bridge.Options{AllowHTTP: true, AllowPrivateHosts: true, ClaimTimeout: 2 * time.Second, RetryInitial: 5 * time.Millisecond})
	end := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	return c.Accounts(context.Background(), access, bridge.FetchOptions{Start: end.AddDate(0, 0, -90), End: end, Pending: pending})
}

func TestAccounts(t *testing.T) {
	fake := bridgetest.New(t)
	fake.SetAccounts(bridgetest.AccountsNormally, accountSet)
	set, err := fetch(t, fake, fake.AccessURL("a"), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Accounts) != 1 || set.Accounts[0].Org.Name != "Example Bank" || set.Accounts[0].BalanceDate != 1767312000 {
		t.Fatalf("account: %+v", set.Accounts)
	}
	txs := set.Accounts[0].Transactions
	if len(txs) != 2 || txs[0].Amount != "-19.99" || txs[0].Payee != "Bookshop" || !txs[1].Pending || txs[1].Posted != 0 {
		t.Fatalf("transactions: %+v", txs)
	}
	if len(set.Errors) != 1 || len(set.APIMessages) != 1 {
		t.Errorf("errors %v messages %v", set.Errors, set.APIMessages)
	}
	n, q := fake.AccountsRequests()
	if n != 1 || q.Get("start-date") != "1759622400" || q.Get("end-date") != "1767398400" || q.Get("pending") != "1" {
		t.Errorf("query %v", q)
	}
	// pending is left out, never sent as 0.
	if _, err := fetch(t, fake, fake.AccessURL("a"), false); err != nil {
		t.Fatal(err)
	}
	if _, q := fake.AccountsRequests(); q.Has("pending") {
		t.Errorf("pending sent: %v", q)
	}
}

func TestAccountsFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		behaviour bridgetest.AccountsBehaviour
		revoke    bool
		kind      bridge.FetchKind
		requests  int
	}{
		{"revoked access URL", bridgetest.AccountsNormally, true, bridge.AuthFailed, 1},
		{"payment required", bridgetest.Accounts402, false, bridge.PaymentRequired, 1},
		{"html 403 is a block, not a revocation", bridgetest.AccountsHTML403, false, bridge.RateLimited, 1},
		{"429", bridgetest.Accounts429, false, bridge.RateLimited, 1},
		{"truncated JSON", bridgetest.AccountsTruncated, false, bridge.BadAnswer, 1},
		{"reset mid-body is retried", bridgetest.AccountsReset, false, bridge.Unavailable, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := bridgetest.New(t)
			fake.SetAccounts(tc.behaviour, accountSet)
			if tc.revoke {
				fake.Revoke("a")
			}
			_, err := fetch(t, fake, fake.AccessURL("a"), true)
			var fe *bridge.FetchError
			if !errors.As(err, &fe) || fe.Kind != tc.kind {
				t.Fatalf("err = %v, want kind %d", err, tc.kind)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "127.0.0.1") {
				t.Errorf("the error names the access URL: %v", err)
			}
			if tc.behaviour == bridgetest.Accounts429 && fe.RetryAfter != 120*time.Second {
				t.Errorf("Retry-After %v", fe.RetryAfter)
			}
			if n, _ := fake.AccountsRequests(); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
	t.Run("a 5xx is an answer, for a retry later", func(t *testing.T) {
		fake := bridgetest.New(t)
		fake.SetAccounts(bridgetest.Accounts5xxOnce, accountSet)
		_, err := fetch(t, fake, fake.AccessURL("a"), true)
		var fe *bridge.FetchError
		if !errors.As(err, &fe) || fe.Kind != bridge.Unavailable || !fe.Retry {
			t.Fatalf("err = %v", err)
		}
		if n, _ := fake.AccountsRequests(); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
		if _, err := fetch(t, fake, fake.AccessURL("a"), true); err != nil {
			t.Fatalf("the next run: %v", err)
		}
	})
}

// TestAccountsTolerantDecoding: one odd field spoils only its own row.
func TestAccountsTolerantDecoding(t *testing.T) {
	fake := bridgetest.New(t)
	fake.SetAccounts(bridgetest.AccountsNormally, `{"errors":[],"accounts":[{"id":"A","name":"x","currency":"USD",
"balance":812.5,"balance-date":"NaN","transactions":[
{"id":"1","posted":"unavailable","amount":12.5,"description":"a"},
{"id":"2","posted":1767225600,"amount":"1e3","description":"b"},
{"id":"3","posted":1767225600,"amount":true,"description":"c"}]}]}`)
	set, err := fetch(t, fake, fake.AccessURL("a"), true)
	if err != nil {
		t.Fatal(err)
	}
	a := set.Accounts[0]
	if a.Balance != "812.5" || a.BalanceDate != bridge.BadEpoch {
		t.Errorf("account: balance %q date %d", a.Balance, a.BalanceDate)
	}
	txs := a.Transactions
	if txs[0].Amount != "12.5" || txs[0].Posted != bridge.BadEpoch || txs[1].Amount != "1e3" || txs[2].Amount != "" {
		t.Errorf("transactions: %+v", txs)
	}
}

// TestAccountsUntrustedCertificate: a certificate that does not verify
// fails the request once, final and marked as never sent; with the
// fake's CA the same request succeeds.
func TestAccountsUntrustedCertificate(t *testing.T) {
	fake := bridgetest.NewTLS(t)
	fake.SetAccounts(bridgetest.AccountsNormally, accountSet)
	attempts := 0
	o := bridge.FetchOptions{Start: time.Now().AddDate(0, 0, -30), End: time.Now(), Attempt: func(int) error { attempts++; return nil }}
	c := bridge.NewClient(bridge.Options{AllowPrivateHosts: true, RetryInitial: time.Millisecond})
	_, err := c.Accounts(context.Background(), fake.AccessURL("a"), o)
	var fe *bridge.FetchError
	if !errors.As(err, &fe) || fe.Kind != bridge.BadAnswer || !errors.Is(err, bridge.ErrNotSent) || attempts != 1 {
		t.Fatalf("err = %v after %d attempts", err, attempts)
	}
	if n, _ := fake.AccountsRequests(); n != 0 {
		t.Fatalf("%d requests reached the Bridge", n)
	}
	trusted := bridge.NewClient(bridge.Options{AllowPrivateHosts: true, RootCAs: fake.CertPool()})
	if _, err := trusted.Accounts(context.Background(), fake.AccessURL("a"), o); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteIDDecoding: a number is its literal text; null, an object, a
// boolean or an array are empty, never an error for the whole answer.
func TestRemoteIDDecoding(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"ACT-1"`, "ACT-1"}, {`12345`, "12345"}, {`-7`, "-7"}, {`1.50`, "1.50"}, {`" x "`, " x "},
		{`null`, ""}, {`{"a":1}`, ""}, {`true`, ""}, {`[1]`, ""},
	} {
		var a bridge.Account
		if err := json.Unmarshal([]byte(`{"id":`+tc.in+`,"conn_id":`+tc.in+`,"transactions":[{"id":`+tc.in+`}]}`), &a); err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if string(a.ID) != tc.want || string(a.ConnID) != tc.want || string(a.Transactions[0].ID) != tc.want {
			t.Errorf("%s: account %q conn %q transaction %q, want %q", tc.in, a.ID, a.ConnID, a.Transactions[0].ID, tc.want)
		}
	}
}

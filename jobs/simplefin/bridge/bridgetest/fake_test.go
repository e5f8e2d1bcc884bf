package bridgetest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"coffer/jobs/simplefin/bridge/bridgetest"
)

// get sends an /accounts request with the credentials of an access URL.
func get(t *testing.T, access string, q url.Values) (*http.Response, map[string]json.RawMessage) {
	t.Helper()
	u, err := url.Parse(access)
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	pass, _ := u.User.Password()
	u.User = nil
	u.Path += "/accounts"
	u.RawQuery = q.Encode()
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	req.SetBasicAuth(user, pass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(body, &m)
	return resp, m
}

func window(start, end time.Time, extra ...string) url.Values {
	q := url.Values{"start-date": {strconv.FormatInt(start.Unix(), 10)}, "end-date": {strconv.FormatInt(end.Unix(), 10)}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Add(extra[i], extra[i+1])
	}
	return q
}

func claim(t *testing.T, token string) (int, string) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(string(raw), "", nil)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

func TestShapes(t *testing.T) {
	clock := bridgetest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	f := bridgetest.Start(t, bridgetest.Options{Now: clock.Now})
	now := clock.Now()
	f.SetDataset(&bridgetest.Dataset{
		Accounts: []bridgetest.Account{
			{ID: "A1", Name: "Checking", Currency: "USD", Balance: "1.00", BalanceDate: now.Unix(), Org: "Bank A",
				Transactions: []bridgetest.Txn{{ID: "T1", Posted: now.Add(-48 * time.Hour).Unix(), Amount: "-1.00", Description: "old"},
					{ID: "T2", Posted: now.Add(-time.Hour).Unix(), Amount: "-2.00", Description: "new"}}},
			{ID: "B1", Name: "Savings", Currency: "USD", Balance: "2.00", BalanceDate: now.Unix(), Org: "Bank B"}},
		Problems: []bridgetest.Problem{{Code: "con.auth", Message: "sign in again", Bank: "Bank B"}},
	})
	access := f.AccessURL("s")
	q := window(now.Add(-72*time.Hour), now)
	_, v1 := get(t, access, q)
	if _, ok := v1["connections"]; ok || string(v1["errors"]) != `["Bank B: sign in again"]` || !bytes.Contains(v1["accounts"], []byte(`"org"`)) {
		t.Fatalf("v1: %s", v1)
	}
	_, v2 := get(t, access, window(now.Add(-72*time.Hour), now, "version", "2"))
	if _, ok := v2["errors"]; ok || !bytes.Contains(v2["errlist"], []byte(`"conn_id":"CON-BANK-B"`)) ||
		!bytes.Contains(v2["connections"], []byte(`"name":"Bank A"`)) || bytes.Contains(v2["accounts"], []byte(`"org"`)) {
		t.Fatalf("v2: %s", v2)
	}
	f.SetVersion("both")
	_, both := get(t, access, q)
	for _, k := range []string{"errors", "errlist", "connections"} {
		if _, ok := both[k]; !ok {
			t.Fatalf("both: no %s in %s", k, both)
		}
	}
	// Without start-date: the last day only, and a hint. With account and
	// balances-only: that account, without transactions.
	f.Exempt(bridgetest.CheckWindow)
	_, day := get(t, access, url.Values{"account": {"A1"}})
	if !bytes.Contains(day["accounts"], []byte(`"T2"`)) || bytes.Contains(day["accounts"], []byte(`"T1"`)) ||
		bytes.Contains(day["accounts"], []byte(`"B1"`)) || !bytes.Contains(day["x-api-message"], []byte("start-date")) {
		t.Fatalf("last day: %s", day)
	}
	_, bal := get(t, access, window(now.Add(-72*time.Hour), now, "balances-only", "1"))
	if bytes.Contains(bal["accounts"], []byte("transactions")) {
		t.Fatalf("balances only: %s", bal)
	}
}

func TestTokenModes(t *testing.T) {
	f := bridgetest.New(t)
	f.Exempt(bridgetest.CheckClaimOnce) // each token is claimed twice on purpose
	for _, tc := range []struct {
		mode          bridgetest.TokenMode
		first, second int // statuses; 0: the connection was dropped
	}{
		{bridgetest.OneTime, 200, 403},
		{bridgetest.Reusable, 200, 200},
		{bridgetest.Expired, 403, 403},
		{bridgetest.ConsumeThenFail, 500, 403},
		{bridgetest.ConsumeThenDrop, 0, 403},
	} {
		token := f.NewToken(string(tc.mode), tc.mode)
		first, body := claim(t, token)
		second, _ := claim(t, token)
		if first != tc.first || second != tc.second {
			t.Errorf("%s: %d then %d", tc.mode, first, second)
		}
		if first == 200 && body != f.AccessURL(string(tc.mode)) {
			t.Errorf("%s: access URL %q", tc.mode, body)
		}
	}
	for _, r := range f.Log() {
		if !r.ContentLength && r.Method == http.MethodPost {
			t.Errorf("claim without Content-Length: %+v", r)
		}
	}
}

// TestQuota: the Bridge warns, then blocks, per credential over a rolling
// 24 h of the fake's clock, in each style.
func TestQuota(t *testing.T) {
	for _, tc := range []struct {
		style      bridgetest.QuotaStyle
		status     int
		html       bool
		retryAfter string
	}{
		{bridgetest.Quota429JSON, 429, false, "60"},
		{bridgetest.Quota429HTML, 429, true, ""},
		{bridgetest.QuotaHTML403, 403, true, ""},
		{bridgetest.QuotaErrors200, 200, false, ""},
	} {
		t.Run(string(tc.style), func(t *testing.T) {
			clock := bridgetest.NewClock(time.Now())
			f := bridgetest.Start(t, bridgetest.Options{Now: clock.Now})
			ra := 0
			if tc.retryAfter != "" {
				ra, _ = strconv.Atoi(tc.retryAfter)
			}
			f.SetQuota(bridgetest.Quota{Warn: 2, Block: 3, Style: tc.style, RetryAfter: ra})
			f.Generate(1, 1, 5, 5)
			access, other := f.AccessURL("q"), f.AccessURL("other")
			q := window(clock.Now().Add(-24*time.Hour), clock.Now())
			if _, m := get(t, access, q); m["x-api-message"] != nil {
				t.Fatalf("first answer warns: %s", m["x-api-message"])
			}
			if _, m := get(t, access, q); !bytes.Contains(m["x-api-message"], []byte("quota")) {
				t.Fatalf("second answer does not warn: %s", m)
			}
			resp, m := get(t, access, q)
			html := strings.Contains(resp.Header.Get("Content-Type"), "html")
			if resp.StatusCode != tc.status || html != tc.html || resp.Header.Get("Retry-After") != tc.retryAfter {
				t.Fatalf("block: %d html %v Retry-After %q", resp.StatusCode, html, resp.Header.Get("Retry-After"))
			}
			if tc.style == bridgetest.QuotaErrors200 && (!bytes.Contains(m["errors"], []byte("make fewer requests")) || string(m["accounts"]) != "[]") {
				t.Fatalf("errors200: %s", m)
			}
			if resp, _ := get(t, other, q); resp.StatusCode != 200 {
				t.Fatalf("another credential is blocked: %d", resp.StatusCode)
			}
			clock.Advance(24 * time.Hour)
			if resp, _ := get(t, access, q); resp.StatusCode != 200 {
				t.Fatalf("a day later: %d", resp.StatusCode)
			}
			log := f.AccountsLog()
			if log[2].Fault != "quota-"+string(tc.style) || log[2].Status != tc.status {
				t.Fatalf("log: %+v", log[2])
			}
		})
	}
}

// TestViolations: each rule the fake checks on every test's log catches
// a request that breaks it.
func TestViolations(t *testing.T) {
	clock := bridgetest.NewClock(time.Now())
	f := bridgetest.Start(t, bridgetest.Options{Now: clock.Now, Budget: 2})
	f.Exempt(bridgetest.CheckPending, bridgetest.CheckWindow, bridgetest.CheckSecrets, bridgetest.CheckBudget,
		bridgetest.CheckClaimOnce)
	now := clock.Now()
	access := f.AccessURL("v")
	u, _ := url.Parse(access)
	pass, _ := u.User.Password()
	get(t, access, window(now.Add(-time.Hour), now, "pending", "0"))
	get(t, access, window(now.Add(-91*24*time.Hour), now))
	get(t, access, window(now.Add(-time.Hour), now, "token", pass))
	token := f.Token("twice")
	claim(t, token)
	claim(t, token)
	want := []bridgetest.Check{bridgetest.CheckPending, bridgetest.CheckWindow, bridgetest.CheckSecrets,
		bridgetest.CheckBudget, bridgetest.CheckClaimOnce}
	var got []bridgetest.Check
	for _, v := range f.Violations() {
		if !slices.Contains(got, v.Check) {
			got = append(got, v.Check)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("violations %v, want %v", f.Violations(), want)
	}
	// A second POST after a 5xx is allowed: the Bridge did not serve it.
	g := bridgetest.New(t)
	g.Set(bridgetest.Claim500)
	again := g.Token("retry")
	claim(t, again)
	g.Set(bridgetest.ClaimNormally)
	if status, _ := claim(t, again); status != 200 || len(g.Violations()) != 0 {
		t.Fatalf("retry after a 5xx: %d %v", status, g.Violations())
	}

	day := 86400
	reqs := func(windows ...[2]int) []bridgetest.Request {
		var out []bridgetest.Request
		for _, w := range windows {
			out = append(out, bridgetest.Request{Query: url.Values{"start-date": {strconv.Itoa(w[0])}, "end-date": {strconv.Itoa(w[1])}}})
		}
		return out
	}
	if err := bridgetest.Contiguous(reqs([2]int{90 * day, 180 * day}, [2]int{90 * day, 180 * day}, [2]int{0, 90 * day})); err != nil {
		t.Fatal(err)
	}
	if err := bridgetest.Contiguous(reqs([2]int{91 * day, 180 * day}, [2]int{0, 90 * day})); err == nil {
		t.Fatal("a gap passed")
	}
}

// TestControl drives the fake over its /_fake/* endpoints only.
func TestControl(t *testing.T) {
	f := bridgetest.New(t)
	call := func(method, path string, in any, out any) int {
		t.Helper()
		b, _ := json.Marshal(in)
		req, _ := http.NewRequest(method, f.URL+path, bytes.NewReader(b))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		return resp.StatusCode
	}
	var tok struct {
		Token     string `json:"token"`
		AccessURL string `json:"access_url"`
	}
	if call("POST", "/_fake/tokens", map[string]string{"code": "c", "mode": "reusable"}, &tok) != 200 {
		t.Fatal("tokens")
	}
	if status, access := claim(t, tok.Token); status != 200 || access != tok.AccessURL {
		t.Fatalf("claim: %d %q", status, access)
	}
	if call("POST", "/_fake/tokens", map[string]string{"code": "d", "mode": "sometimes"}, nil) != 400 {
		t.Fatal("an unknown mode was accepted")
	}
	var clock struct {
		Now time.Time `json:"now"`
	}
	start := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	call("POST", "/_fake/clock", map[string]any{"now": start, "advance": "2h"}, &clock)
	if !clock.Now.Equal(start.Add(2*time.Hour)) || !f.Now().Equal(clock.Now) {
		t.Fatalf("clock %v, fake %v", clock.Now, f.Now())
	}
	var seeded struct {
		Transactions int `json:"transactions"`
	}
	call("POST", "/_fake/dataset", map[string]int{"seed": 3, "accounts": 2, "per_account": 10, "days": 5}, &seeded)
	call("POST", "/_fake/quota", map[string]any{"warn": 1, "block": 5, "style": "html403"}, nil)
	call("POST", "/_fake/accounts", map[string]any{"script": []string{"500"}, "version": "2"}, nil)
	q := window(clock.Now.Add(-6*24*time.Hour), clock.Now, "pending", "1")
	if resp, _ := get(t, tok.AccessURL, q); resp.StatusCode != 500 {
		t.Fatalf("scripted 500: %d", resp.StatusCode)
	}
	_, m := get(t, tok.AccessURL, q)
	if seeded.Transactions != 20 || m["connections"] == nil || m["x-api-message"] == nil || bytes.Count(m["accounts"], []byte(`"TRN-`)) != 20 {
		t.Fatalf("seeded %d, answer %s", seeded.Transactions, m)
	}
	call("POST", "/_fake/cap", map[string]any{"days": 2}, nil)
	if _, m := get(t, tok.AccessURL, q); !bytes.Contains(m["x-api-message"], []byte("was capped")) || bytes.Count(m["accounts"], []byte(`"TRN-`)) >= 20 {
		t.Fatalf("capped answer %s", m)
	}
	call("POST", "/_fake/revoke", map[string]string{"code": "c"}, nil)
	if resp, _ := get(t, tok.AccessURL, q); resp.StatusCode != 403 {
		t.Fatalf("revoked: %d", resp.StatusCode)
	}
	var log []bridgetest.Request
	call("GET", "/_fake/requests", nil, &log)
	if len(log) != 5 || log[0].Method != "POST" || !log[0].ContentLength || log[1].Fault != "500" || log[3].Fault != "capped" || log[4].Fault != "revoked" ||
		log[2].User == "" || log[2].Query.Get("pending") != "1" || log[2].Bytes == 0 || !log[2].Time.Equal(clock.Now) {
		t.Fatalf("log %+v", log)
	}
}

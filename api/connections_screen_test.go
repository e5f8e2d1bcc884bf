package api_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/models"
)

func TestConnectionsScreen(t *testing.T) {
	e, bridge := bridgeEnv(t)
	b := signedInBrowser(t, e)

	if r := b.get("/settings/connections"); r.status != 200 || !strings.Contains(string(r.body), "Setup token") {
		t.Fatalf("screen: %d", r.status)
	}
	if r := b.post("/settings/connections", url.Values{"setup_token": {"@@@"}}); r.status != 422 || !strings.Contains(string(r.body), "flash error") {
		t.Fatalf("bad token: %d", r.status)
	}
	token := bridge.Token("screen")
	if r := b.post("/settings/connections", url.Values{"setup_token": {token}, "name": {"My bank"}, "lookback_days": {"30"}}); r.status != 303 {
		t.Fatalf("connect: %d %s", r.status, r.body)
	}
	conns, _, _ := e.store.Connections(t.Context(), e.alpha.Family.ID, models.Page{Number: 1, Size: 10})
	if len(conns) != 1 || conns[0].IncludePending || conns[0].LookbackDays == nil || *conns[0].LookbackDays != 30 {
		t.Fatalf("stored: %+v", conns)
	}
	conn := conns[0]
	if _, err := e.store.ClaimSucceeded(t.Context(), &conn, bridge.AccessURL("screen")); err != nil {
		t.Fatal(err)
	}
	pa, _, err := e.store.SaveProviderAccount(t.Context(), e.alpha.Family.ID, conn.ID, models.RemoteAccount{RemoteID: "A1", Name: "Checking",
		Currency: "USD", BalanceDate: time.Now(), Attention: "Sign in <b>again</b>"})
	if err != nil {
		t.Fatal(err)
	}
	page := b.get("/settings/connections")
	body := string(page.body)
	if !strings.Contains(body, "My bank") || !strings.Contains(body, "active") || !strings.Contains(body, "Sign in &lt;b&gt;again&lt;/b&gt;") {
		t.Fatalf("page: %s", body)
	}
	// The initial sync is queued: the card says when it runs.
	if !strings.Contains(body, "Next sync: ") || strings.Contains(body, "none planned") {
		t.Errorf("no next sync on the card: %s", body)
	}
	if strings.Contains(body, "s3cret") || strings.Contains(body, token) {
		t.Fatal("a secret reached the page")
	}
	base := "/settings/connections/" + conn.ID.String()
	if r := b.post(base+"/sync", nil); r.status != 303 {
		t.Fatalf("sync now: %d", r.status)
	}
	if r := b.post(base+"/accounts/"+pa.ID.String(), url.Values{"account_id": {e.alpha.Account.ID.String()}}); r.status != 303 {
		t.Fatalf("link: %d %s", r.status, r.body)
	}
	got, _ := e.store.ProviderAccount(t.Context(), e.alpha.Family.ID, pa.ID)
	if got.AccountID == nil || *got.AccountID != e.alpha.Account.ID || got.ImportEnabled {
		t.Fatalf("link saved as %+v", got)
	}
	// Another family's connection is not found.
	other := e.browser(t)
	setPassword(t, e, e.beta.User, "correct horse battery")
	other.login(e.beta.User.Email, "correct horse battery")
	other.get("/settings/connections")
	if r := other.post(base+"/disconnect", nil); r.status != 404 {
		t.Fatalf("another family: %d", r.status)
	}
	if r := b.post(base+"/disconnect", url.Values{"delete_transactions": {"1"}}); r.status != 303 {
		t.Fatalf("disconnect: %d", r.status)
	}
	if c, _ := e.store.Connection(t.Context(), e.alpha.Family.ID, conn.ID); c.Status != models.ConnDisconnected {
		t.Fatalf("status %s", c.Status)
	}
	// Without a CSRF token the form is refused.
	if r := b.send("POST", base+"/sync", url.Values{}, nil); r.status != 403 {
		t.Fatalf("no CSRF: %d", r.status)
	}
}

package screens_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
)

func TestConnectionsScreen(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	b := apitest.SignedInBrowser(t, e)

	if r := b.Get("/settings/connections"); r.Status != 200 || !strings.Contains(string(r.Body), "Setup token") {
		t.Fatalf("screen: %d", r.Status)
	}
	if r := b.Post("/settings/connections", url.Values{"setup_token": {"@@@"}}); r.Status != 422 || !strings.Contains(string(r.Body), "flash error") {
		t.Fatalf("bad token: %d", r.Status)
	}
	token := bridge.Token("screen")
	if r := b.Post("/settings/connections", url.Values{"setup_token": {token}, "name": {"My bank"}, "lookback_days": {"30"}}); r.Status != 303 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	conns, _, _ := e.Store.Connections(t.Context(), e.Alpha.Family.ID, models.Page{Number: 1, Size: 10})
	if len(conns) != 1 || conns[0].IncludePending || conns[0].LookbackDays == nil || *conns[0].LookbackDays != 30 {
		t.Fatalf("stored: %+v", conns)
	}
	conn := conns[0]
	if _, err := e.Store.ClaimSucceeded(t.Context(), &conn, bridge.AccessURL("screen")); err != nil {
		t.Fatal(err)
	}
	pa, _, err := e.Store.SaveProviderAccount(t.Context(), e.Alpha.Family.ID, conn.ID, models.RemoteAccount{RemoteID: "A1", Name: "Checking",
		Currency: "USD", BalanceDate: time.Now(), Attention: "Sign in <b>again</b>"})
	if err != nil {
		t.Fatal(err)
	}
	page := b.Get("/settings/connections")
	body := string(page.Body)
	if !strings.Contains(body, "My bank") || !strings.Contains(body, "Active") || !strings.Contains(body, "Sign in &lt;b&gt;again&lt;/b&gt;") {
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
	if r := b.Post(base+"/sync", nil); r.Status != 303 {
		t.Fatalf("sync now: %d", r.Status)
	}
	if r := b.Post(base+"/accounts/"+pa.ID.String(), url.Values{"account_id": {e.Alpha.Account.ID.String()}}); r.Status != 303 {
		t.Fatalf("link: %d %s", r.Status, r.Body)
	}
	got, _ := e.Store.ProviderAccount(t.Context(), e.Alpha.Family.ID, pa.ID)
	if got.AccountID == nil || *got.AccountID != e.Alpha.Account.ID || got.ImportEnabled {
		t.Fatalf("link saved as %+v", got)
	}
	// Another family's connection is not found.
	other := e.Browser(t)
	apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
	other.Login(e.Beta.User.Email, "correct horse battery")
	other.Get("/settings/connections")
	if r := other.Post(base+"/disconnect", nil); r.Status != 404 {
		t.Fatalf("another family: %d", r.Status)
	}
	if r := b.Post(base+"/disconnect", url.Values{"delete_transactions": {"1"}}); r.Status != 303 {
		t.Fatalf("disconnect: %d", r.Status)
	}
	if c, _ := e.Store.Connection(t.Context(), e.Alpha.Family.ID, conn.ID); c.Status != models.ConnDisconnected {
		t.Fatalf("status %s", c.Status)
	}
	// Without a CSRF token the form is refused.
	if r := b.Send("POST", base+"/sync", url.Values{}, nil); r.Status != 403 {
		t.Fatalf("no CSRF: %d", r.Status)
	}
}

package screens_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
)

// FuzzScreenQueries sends any query string to the household screens that
// read one (the transaction filters, the account register, the report
// period, the budget month): the answer is a page or a 404, never a 500.
func FuzzScreenQueries(f *testing.F) {
	e := apitest.NewEnv(f, func(o *api.Options) { o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) })
	u := e.Alpha.User
	token, err := e.Store.CreateSession(f.Context(), &models.Session{FamilyID: u.FamilyID, UserID: u.ID, Method: models.MethodPassword}, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	acct := e.Alpha.Account.ID.String()
	for _, seed := range []string{
		"q=%25_&min=-3&max=1e3", "from=2024-13-01&to=2024-01-01", "account_id=x&tag_id=" + acct, "page=99999999999",
		"type=sideways", "q=%FF%FE", "month=0000-00", "month=9999-12", "from=0001-01-01&to=9999-12-31",
	} {
		f.Add(0, seed)
	}
	paths := []string{"/transactions", "/accounts/" + acct, "/reports", "/budgets", "/reports/cash_flow.csv"}
	f.Fuzz(func(t *testing.T, which int, query string) {
		if strings.ContainsAny(query, " #") || !utf8.ValidString(query) {
			return
		}
		path := paths[(which%len(paths)+len(paths))%len(paths)] + "?" + query
		if _, err := url.ParseRequestURI(path); err != nil {
			return
		}
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Cookie", "session="+token)
		resp, err := e.App.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 && resp.StatusCode != 404 {
			t.Fatalf("status %d for %s", resp.StatusCode, path)
		}
	})
}

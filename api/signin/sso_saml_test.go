package signin_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
)

func TestSAMLSignIn(t *testing.T) {
	ctx := context.Background()
	s := apitest.NewSAMLEnv(t)
	b := s.Browser(t)
	path, fields := s.Respond(t, b, "corp")
	if path != "/auth/saml/"+s.Prov.ID.String()+"/callback" {
		t.Fatalf("IdP posts to %s", path)
	}
	if r := apitest.ACS(b, path, fields); r.Status != 303 || r.Header.Get("Location") != "/settings/security" {
		t.Fatalf("ACS: %d %s %s", r.Status, r.Header.Get("Location"), r.Body)
	}
	u, err := s.Store.UserByEmail(ctx, "alice@example.org")
	if err != nil || u.Role != models.RoleAdmin {
		t.Fatalf("JIT user: %+v %v", u, err)
	}
	logs, _, _ := s.Store.AuditLogs(ctx, models.AuditFilter{EventType: models.EventLogin}, models.Page{Number: 1, Size: 1})
	if len(logs) != 1 || !strings.Contains(apitest.MetadataText(logs[0].Metadata), "Admins") {
		t.Fatalf("login record: %+v", logs)
	}

	// The same response posted again: its request was used up.
	if r := apitest.ACS(b, path, fields); r.Status != 400 || !strings.Contains(string(r.Body), "could not be accepted") {
		t.Fatalf("repost: %d", r.Status)
	}

	// Logout continues at the IdP's single logout.
	if r := b.Get("/settings/security"); r.Status != 200 {
		t.Fatalf("not signed in: %d", r.Status)
	}
	r := b.Post("/sessions/logout", url.Values{})
	if r.Status != 302 || !strings.HasPrefix(r.Header.Get("Location"), s.IdP.URL+"/slo?SAMLRequest=") {
		t.Fatalf("logout: %d %s", r.Status, r.Header.Get("Location"))
	}
	if apitest.AuditCount(t, s.Env, models.EventLogoutIdP, "") != 1 {
		t.Error("no logout_idp record")
	}
	// An answer that does not verify still leaves the user signed out here.
	back := b.Get("/auth/saml/" + s.Prov.ID.String() + "/logout?SAMLResponse=bm90IHhtbA")
	if back.Status != 303 {
		t.Fatalf("logout response: %d", back.Status)
	}
	if page := b.Get("/sessions/new"); !strings.Contains(string(page.Body), "The identity provider did not confirm.") {
		t.Fatalf("after logout: %s", page.Body)
	}
}

func TestSAMLAttacks(t *testing.T) {
	s := apitest.NewSAMLEnv(t)
	other := s.AddProvider(t, "other")
	invalid := func(t *testing.T, r apitest.Response, reason string) {
		t.Helper()
		if r.Status != 400 || !strings.Contains(string(r.Body), "The sign-in response from Corp SAML could not be accepted.") ||
			!strings.Contains(string(r.Body), "Reference: ") {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		if apitest.AuditCount(t, s.Env, models.EventLoginFailed, reason) == 0 {
			t.Fatalf("no %s record", reason)
		}
	}
	t.Run("another browser's response", func(t *testing.T) {
		path, fields := s.Respond(t, s.Browser(t), "corp")
		invalid(t, apitest.ACS(s.Browser(t), path, fields), "saml_invalid")
	})
	t.Run("provider A's response at B's ACS", func(t *testing.T) {
		b := s.Browser(t)
		_, fields := s.Respond(t, b, "corp")
		invalid(t, apitest.ACS(b, "/auth/saml/"+other.ID.String()+"/callback", fields), "saml_invalid")
	})
	t.Run("unsolicited", func(t *testing.T) {
		s.IdP.AddShortcut("direct", "http://example.com/auth/saml/"+s.Prov.ID.String())
		action, fields, err := s.IdP.Login(s.IdP.URL+"/login/direct", "alice", "pw")
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(action)
		invalid(t, apitest.ACS(s.Browser(t), u.Path, fields), "saml_unsolicited")
	})
	t.Run("malformed", func(t *testing.T) {
		path := "/auth/saml/" + s.Prov.ID.String() + "/callback"
		invalid(t, apitest.ACS(s.Browser(t), path, url.Values{"SAMLResponse": {"%%% not base64"}}), "saml_invalid")
		if r := apitest.ACS(s.Browser(t), path, url.Values{"SAMLResponse": {strings.Repeat("A", 600<<10)}}); r.Status != 413 {
			t.Fatalf("oversized: %d", r.Status)
		}
	})
	if r := s.Browser(t).Get("/auth/saml/" + s.Prov.ID.String() + "x/metadata"); r.Status != 404 {
		t.Errorf("bad provider id: %d", r.Status)
	}
}

func TestSAMLIdPInitiatedAndReplay(t *testing.T) {
	s := apitest.NewSAMLEnv(t, func(p *models.SSOProvider) { p.AllowIdPInitiated = true })
	s.IdP.AddShortcut("direct", "http://example.com/auth/saml/"+s.Prov.ID.String())
	action, fields, err := s.IdP.Login(s.IdP.URL+"/login/direct", "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(action)
	if r := apitest.ACS(s.Browser(t), u.Path, fields); r.Status != 303 {
		t.Fatalf("IdP-initiated: %d %s", r.Status, r.Body)
	}
	// The same assertion again, from anywhere: refused by the replay cache.
	r := apitest.ACS(s.Browser(t), u.Path, fields)
	if r.Status != 400 || apitest.AuditCount(t, s.Env, models.EventLoginFailed, "saml_replay") != 1 {
		t.Fatalf("replay: %d", r.Status)
	}
}

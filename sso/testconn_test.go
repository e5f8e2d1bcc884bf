package sso

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"coffer/models"
)

// wantChecks compares results with "name:ok" or "name:fail" lines and,
// when given, a fragment of each detail.
func wantChecks(t *testing.T, got []CheckResult, want []string, details []string) {
	t.Helper()
	var names []string
	for _, r := range got {
		state := "fail"
		if r.OK {
			state = "ok"
		}
		names = append(names, r.Name+":"+state)
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("checks %v, want %v (%+v)", names, want, got)
	}
	for i, d := range details {
		if !strings.Contains(got[i].Detail, d) {
			t.Errorf("check %s detail %q, want it to contain %q", got[i].Name, got[i].Detail, d)
		}
	}
}

func TestTestConnectionOIDC(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(f *fakeIssuer)
		want    []string
		details []string
	}{
		{name: "all good", want: []string{"discovery:ok", "jwks:ok", "end_session_endpoint:ok"},
			details: []string{"confirmed", "1 key", "present: http://127.0.0.1"}},
		{name: "no end session endpoint", setup: func(f *fakeIssuer) {
			f.doc = func(base string) any { return without(discoveryDoc(base), "end_session_endpoint") }
		}, want: []string{"discovery:ok", "jwks:ok", "end_session_endpoint:ok"}, details: []string{"", "", "absent"}},
		{name: "empty key set", setup: func(f *fakeIssuer) { f.jwks = `{"keys": []}` },
			want: []string{"discovery:ok", "jwks:fail", "end_session_endpoint:ok"}, details: []string{"", "has no keys"}},
		{name: "key set not JSON", setup: func(f *fakeIssuer) { f.jwks = `<html>` },
			want: []string{"discovery:ok", "jwks:fail", "end_session_endpoint:ok"}, details: []string{"", "not a JSON key set"}},
		{name: "jwks unreachable", setup: func(f *fakeIssuer) {
			f.doc = func(base string) any { d := discoveryDoc(base); d["jwks_uri"] = base + "/missing"; return d }
		}, want: []string{"discovery:ok", "jwks:fail", "end_session_endpoint:ok"}, details: []string{"", "HTTP 405"}},
		{name: "discovery fails", setup: func(f *fakeIssuer) { f.raw = "<html>" },
			want: []string{"discovery:fail"}, details: []string{"The discovery document is not valid JSON."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeIssuer(t, tt.setup)
			p := &models.SSOProvider{Strategy: models.StrategyOIDC, Issuer: strp(f.srv.URL)}
			got := TestConnection(context.Background(), p, Options{HTTPClient: f.srv.Client()})
			wantChecks(t, got, tt.want, tt.details)
		})
	}
}

func TestTestConnectionOAuth(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/authorize":
			http.Redirect(w, r, "https://elsewhere.example/login", http.StatusFound)
		case "/token":
			w.WriteHeader(http.StatusMethodNotAllowed)
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()

	p := &models.SSOProvider{Strategy: models.StrategyOAuth, AuthorizationURL: strp(srv.URL + "/authorize"),
		TokenURL: strp(srv.URL + "/token"), UserinfoURL: strp(gone.URL + "/userinfo")}
	got := TestConnection(context.Background(), p, Options{HTTPClient: srv.Client()})
	wantChecks(t, got, []string{"authorization_url:ok", "token_url:ok", "userinfo_url:fail"},
		[]string{"HTTP 302 (without TLS)", "HTTP 405", "could not reach " + gone.URL + "/userinfo: "})

	p.UserinfoURL = nil
	got = TestConnection(context.Background(), p, Options{HTTPClient: srv.Client()})
	wantChecks(t, got, []string{"authorization_url:ok", "token_url:ok", "userinfo_url:fail"}, []string{"", "", "not set"})
}

func TestTestConnectionSAML(t *testing.T) {
	idp := newECKeyPair(t, "idp.example", testNow.AddDate(-1, 0, 0), testNow.AddDate(1, 0, 0))
	expired := newECKeyPair(t, "old.example", testNow.AddDate(-2, 0, 0), testNow.AddDate(0, -1, 0))
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metadata" {
			_, _ = w.Write([]byte(metadataXML("https://idp.example/entity", srv.URL, idp.DER)))
			return
		}
		w.WriteHeader(http.StatusBadRequest) // an SSO URL without a SAMLRequest
	}))
	t.Cleanup(srv.Close)
	o := Options{HTTPClient: srv.Client(), Now: func() time.Time { return testNow }}
	base := func() *models.SSOProvider {
		return &models.SSOProvider{Strategy: models.StrategySAML, IdPEntityID: strp("https://idp.example/entity"),
			IdPSSOURL: strp(srv.URL + "/sso"), IdPCertificates: strp(idp.CertPEM), IdPMetadataURL: strp(srv.URL + "/metadata")}
	}
	tests := []struct {
		name    string
		p       func(p *models.SSOProvider)
		want    []string
		details []string
	}{
		{name: "all good", want: []string{"certificates:ok", "metadata:ok", "sso_url:ok"},
			details: []string{"1: idp.example, 2025-06-01 to 2027-06-01, valid", "entity https://idp.example/entity", "HTTP 400"}},
		{name: "expired certificate", p: func(p *models.SSOProvider) { p.IdPCertificates = strp(idp.CertPEM + expired.CertPEM) },
			want:    []string{"certificates:fail", "metadata:ok", "sso_url:ok"},
			details: []string{"2: old.example, 2024-06-01 to 2026-05-01, EXPIRED"}},
		{name: "garbled certificate", p: func(p *models.SSOProvider) { p.IdPCertificates = strp("nope") },
			want: []string{"certificates:fail", "metadata:ok", "sso_url:ok"}, details: []string{"PEM"}},
		{name: "metadata of another entity", p: func(p *models.SSOProvider) { p.IdPEntityID = strp("urn:other") },
			want: []string{"certificates:ok", "metadata:fail", "sso_url:ok"}, details: []string{"", "metadata names entity"}},
		{name: "metadata missing", p: func(p *models.SSOProvider) { p.IdPMetadataURL = strp(srv.URL + "/gone") },
			want: []string{"certificates:ok", "metadata:fail", "sso_url:ok"}, details: []string{"", "HTTP 400"}},
		{name: "no metadata URL", p: func(p *models.SSOProvider) { p.IdPMetadataURL = nil },
			want: []string{"certificates:ok", "metadata:ok", "sso_url:ok"}, details: []string{"", "no metadata URL"}},
		{name: "SSO URL unreachable", p: func(p *models.SSOProvider) { p.IdPSSOURL = strp("http://127.0.0.1:1/sso") },
			want: []string{"certificates:ok", "metadata:ok", "sso_url:fail"}, details: []string{"", "", "could not reach"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base()
			if tt.p != nil {
				tt.p(p)
			}
			wantChecks(t, TestConnection(context.Background(), p, o), tt.want, tt.details)
		})
	}
}

func TestTestConnectionUnknownStrategy(t *testing.T) {
	got := TestConnection(context.Background(), &models.SSOProvider{Strategy: "ldap"}, Options{})
	wantChecks(t, got, []string{"strategy:fail"}, []string{`unknown strategy "ldap"`})
}

package sso

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"coffer/models"
)

// CheckResult is one line of Test connection: a check's name, whether it
// passed, and what was seen.
type CheckResult struct {
	Name   string
	OK     bool
	Detail string
}

// TestConnection runs the checks of "Test connection" against a saved
// provider (spec/sso.md §4.4) and saves nothing. OIDC: discovery, a JWKS
// with a key, whether end_session_endpoint is present (informational,
// never a failure). OAuth 2.0: each URL answers. SAML: certificates parse
// (expiry dates shown), the metadata URL (when set) gives metadata, the
// SSO URL answers. Any HTTP answer counts as reachable; redirects are not
// followed.
func TestConnection(ctx context.Context, p *models.SSOProvider, o Options) []CheckResult {
	switch p.Strategy {
	case models.StrategyOIDC:
		return testOIDC(ctx, p, o)
	case models.StrategyOAuth:
		return []CheckResult{
			reachable(ctx, "authorization_url", models.Str(p.AuthorizationURL), o.HTTPClient),
			reachable(ctx, "token_url", models.Str(p.TokenURL), o.HTTPClient),
			reachable(ctx, "userinfo_url", models.Str(p.UserinfoURL), o.HTTPClient),
		}
	case models.StrategySAML:
		return testSAML(ctx, p, o)
	}
	return []CheckResult{{Name: "strategy", Detail: fmt.Sprintf("unknown strategy %q", p.Strategy)}}
}

func testOIDC(ctx context.Context, p *models.SSOProvider, o Options) []CheckResult {
	issuer := models.Str(p.Issuer)
	doc, err := discover(ctx, issuer, o.HTTPClient)
	if err != nil {
		return []CheckResult{{Name: "discovery", Detail: err.Error()}}
	}
	out := []CheckResult{{Name: "discovery", OK: true, Detail: "issuer " + issuer + " confirmed"}}
	out = append(out, checkJWKS(ctx, doc["jwks_uri"].(string), o.HTTPClient))
	if end, _ := doc["end_session_endpoint"].(string); end != "" {
		out = append(out, CheckResult{Name: "end_session_endpoint", OK: true, Detail: "present: " + end})
	} else {
		out = append(out, CheckResult{Name: "end_session_endpoint", OK: true,
			Detail: "absent: signing out will not end the session at the provider"})
	}
	return out
}

func checkJWKS(ctx context.Context, u string, client *http.Client) CheckResult {
	r := CheckResult{Name: "jwks"}
	status, body, err := get(ctx, client, u)
	switch {
	case err != nil:
		r.Detail = "could not fetch " + u + ": " + err.Error()
		return r
	case status < 200 || status > 299:
		r.Detail = fmt.Sprintf("%s returned HTTP %d", u, status)
		return r
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if json.Unmarshal(body, &set) != nil {
		r.Detail = u + " is not a JSON key set"
		return r
	}
	if len(set.Keys) == 0 {
		r.Detail = u + " has no keys"
		return r
	}
	r.OK = true
	r.Detail = fmt.Sprintf("%d key(s)", len(set.Keys))
	return r
}

func testSAML(ctx context.Context, p *models.SSOProvider, o Options) []CheckResult {
	certs := CheckResult{Name: "certificates"}
	if parsed, msg := readCertificates(models.Str(p.IdPCertificates)); msg != "" {
		certs.Detail = msg
	} else {
		now := o.now()
		certs.OK = true
		var lines []string
		for i, c := range parsed {
			state := "valid"
			switch {
			case now.After(c.NotAfter):
				state, certs.OK = "EXPIRED", false
			case now.Before(c.NotBefore):
				state, certs.OK = "not yet valid", false
			}
			lines = append(lines, fmt.Sprintf("%d: %s, %s to %s, %s", i+1, c.Subject.CommonName,
				c.NotBefore.UTC().Format(time.DateOnly), c.NotAfter.UTC().Format(time.DateOnly), state))
		}
		certs.Detail = strings.Join(lines, "; ")
	}
	out := []CheckResult{certs}
	if mu := models.Str(p.IdPMetadataURL); mu != "" {
		r := CheckResult{Name: "metadata"}
		if m, err := fetchMetadata(ctx, mu, o.HTTPClient); err != nil {
			r.Detail = "could not read " + mu + ": " + err.Error()
		} else {
			r.OK = true
			r.Detail = "entity " + m.EntityID
			if m.EntityID != models.Str(p.IdPEntityID) {
				r.OK = false
				r.Detail = fmt.Sprintf("metadata names entity %s, configured %s", m.EntityID, models.Str(p.IdPEntityID))
			}
		}
		out = append(out, r)
	} else {
		out = append(out, CheckResult{Name: "metadata", OK: true, Detail: "no metadata URL set"})
	}
	return append(out, reachable(ctx, "sso_url", models.Str(p.IdPSSOURL), o.HTTPClient))
}

// reachable reports whether u answers HTTP at all: any status passes, a
// connection, TLS or timeout failure does not.
func reachable(ctx context.Context, name, u string, client *http.Client) CheckResult {
	r := CheckResult{Name: name}
	if u == "" {
		r.Detail = "not set"
		return r
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		r.Detail = "invalid URL"
		return r
	}
	c := *httpClient(client)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		r.Detail = "could not reach " + u + ": " + transportCause(err).Error()
		return r
	}
	resp.Body.Close()
	r.OK = true
	r.Detail = fmt.Sprintf("%s answered HTTP %d", u, resp.StatusCode)
	if !strings.HasPrefix(strings.ToLower(u), "https:") {
		r.Detail += " (without TLS)"
	}
	return r
}

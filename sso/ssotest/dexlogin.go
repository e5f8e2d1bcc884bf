package ssotest

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// ErrLoginRefused is returned by Dex.Login when Dex shows its login form
// again: the credentials were wrong.
var ErrLoginRefused = errors.New("ssotest: dex refused the credentials")

// passwordForm finds the action of Dex's password form (web/templates/password.html).
var passwordForm = regexp.MustCompile(`<form method="post" action="([^"]*)"`)

// Login signs in through Dex's own login form, as a browser would: it
// requests authURL (an authorization URL the relying party made), follows
// Dex to the password connector's form, posts username (for static
// passwords, the email) and password, and follows redirects until one
// points at a redirect URI of the client. It returns that URL, with its
// code and state (or error), without requesting it. Cookies live in a jar
// of this call only, so every Login is a fresh browser.
func (d *Dex) Login(ctx context.Context, authURL, username, password string) (*url.URL, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	client := &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	next, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("ssotest: login: %w", err)
	}
	var form url.Values // non-nil: POST it to next
	posted := false
	for hop := 0; hop < 20; hop++ {
		req, err := loginRequest(ctx, next, form)
		if err != nil {
			return nil, fmt.Errorf("ssotest: login: %w", err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("ssotest: login: %w", err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("ssotest: login: read %s: %w", next.Path, err)
		}
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			loc, err := resp.Location()
			if err != nil {
				return nil, fmt.Errorf("ssotest: login: %s redirected nowhere: %w", next.Path, err)
			}
			if d.isRedirectURI(loc) {
				return loc, nil
			}
			next, form = loc, nil
		case passwordForm.Match(body) && strings.Contains(string(body), `name="password"`):
			if posted {
				return nil, ErrLoginRefused // Dex shows the form again, with a 401
			}
			action, err := next.Parse(html.UnescapeString(string(passwordForm.FindSubmatch(body)[1])))
			if err != nil {
				return nil, fmt.Errorf("ssotest: login: form action: %w", err)
			}
			next, form, posted = action, url.Values{"login": {username}, "password": {password}}, true
		default:
			return nil, fmt.Errorf("ssotest: login: dex answered %s at %s: %s", resp.Status, next.Path, snippet(body))
		}
	}
	return nil, errors.New("ssotest: login: more than 20 redirects")
}

func loginRequest(ctx context.Context, u *url.URL, form url.Values) (*http.Request, error) {
	if form == nil {
		return http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req, nil
}

// isRedirectURI reports whether u is one of the client's redirect URIs,
// whatever its query.
func (d *Dex) isRedirectURI(u *url.URL) bool {
	for _, r := range d.RedirectURIs {
		ru, err := url.Parse(r)
		if err == nil && ru.Scheme == u.Scheme && ru.Host == u.Host && ru.Path == u.Path {
			return true
		}
	}
	return false
}

// snippet is the start of an error page, tags and all, for a failure message.
func snippet(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

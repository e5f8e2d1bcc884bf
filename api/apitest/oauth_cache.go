package apitest

import (
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"coffer/models"
)

// MobileLogin signs u in through the mobile app's endpoint and returns
// its access and refresh tokens.
func MobileLogin(t *testing.T, e *Env, u *models.User, password string) (access, refresh string) {
	t.Helper()
	m := e.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": u.Email, "password": password, "device": Phone}).WantJSON(t, 200)
	return m["access_token"].(string), m["refresh_token"].(string)
}

// SendAsync posts a form from another goroutine than the test's: it
// reports the status rather than failing the test.
func (b *Browser) SendAsync(method, path string, form url.Values) int {
	req := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", b.IP)
	resp, err := b.E.App.Test(req, -1)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

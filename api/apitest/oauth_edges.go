package apitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"coffer/api"
)

// ShortTokenEnv is an env whose access tokens live 2 s, on clocks (the
// app's and the store's) that the test moves forward with skew; alpha's
// user has the password "correct horse battery".
func ShortTokenEnv(t *testing.T) (*Env, *atomic.Int64) {
	t.Helper()
	skew := new(atomic.Int64)
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	e := NewEnv(t, func(o *api.Options) {
		o.Clock = clock
		o.OAuth.AccessTokenTTL = 2 * time.Second
	})
	e.Store.Now = func() time.Time { return clock().UTC() }
	SetPassword(t, e, e.Alpha.User, "correct horse battery")
	return e, skew
}

// DoFrom is do from the client address ip (X-Forwarded-For), for the
// endpoints limited per IP: each test counts on an address of its own,
// not on the one every do shares.
func (e *Env) DoFrom(ip, method, path string, body any) Response {
	e.T.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.T.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	resp, err := e.App.Test(req, -1)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	NoLeak(e.T, r)
	e.Validate(req, r)
	return r
}

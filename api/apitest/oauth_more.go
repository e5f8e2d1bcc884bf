package apitest

import (
	"io"
	"net/http/httptest"
)

var Phone = map[string]any{"device_id": "4f1c", "device_name": "Ana's phone", "device_type": "ios", "os_version": "18.1", "app_version": "1.4.0"}

// DoBearer sends a request with a bearer token and checks the answer
// against the OpenAPI document.
func (e *Env) DoBearer(method, path, token string) Response {
	e.T.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.App.Test(req, -1)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	e.Validate(req, r)
	return r
}

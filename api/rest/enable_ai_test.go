package rest_test

import (
	"encoding/json"
	"testing"

	"coffer/api"
	"coffer/api/apitest"
)

// The app's AI switch turns the user's ai_enabled on, which every sign-in
// answer then carries; a read credential or a server without a model is
// refused.
func TestEnableAI(t *testing.T) {
	e := apitest.NewEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	login := func() (token string, ai bool) {
		t.Helper()
		r := e.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Alpha.User.Email, "password": "correct horse battery", "device": apitest.Phone})
		var out struct {
			AccessToken string `json:"access_token"`
			User        struct {
				AIEnabled bool `json:"ai_enabled"`
			} `json:"user"`
		}
		if r.Status != 200 || json.Unmarshal(r.Body, &out) != nil {
			t.Fatalf("login: %d %s", r.Status, r.Body)
		}
		return out.AccessToken, out.User.AIEnabled
	}
	token, ai := login()
	if ai {
		t.Fatal("ai_enabled before the switch")
	}
	apitest.WantError(t, e.Do("PATCH", "/api/v1/auth/enable_ai", e.Alpha.ReadKey, nil), 403, "insufficient_scope")
	r := e.DoBearer("PATCH", "/api/v1/auth/enable_ai", token)
	var out struct {
		User struct {
			Email     string `json:"email"`
			AIEnabled bool   `json:"ai_enabled"`
		} `json:"user"`
	}
	if r.Status != 200 || json.Unmarshal(r.Body, &out) != nil || !out.User.AIEnabled || out.User.Email != e.Alpha.User.Email {
		t.Fatalf("enable_ai: %d %s", r.Status, r.Body)
	}
	if _, ai := login(); !ai {
		t.Fatal("the next sign-in does not say ai_enabled")
	}
	if u, _ := e.Store.User(t.Context(), e.Beta.Family.ID, e.Beta.User.ID); u.AIEnabled {
		t.Fatal("another family's user changed")
	}

	off := apitest.NewEnv(t, func(o *api.Options) { o.AssistantOff = true })
	apitest.WantError(t, off.Do("PATCH", "/api/v1/auth/enable_ai", off.Alpha.Key, nil), 403, "forbidden")
}

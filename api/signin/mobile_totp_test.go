package signin_test

import (
	"encoding/json"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
)

// The app's sign-in of a person with two-step verification, with the
// app's own requests: without otp_code the reference's mfa_required
// answer, exactly; a wrong code the same answer, counted toward the
// lockout; a right one signs in, once.
func TestMobileLoginTOTP(t *testing.T) {
	e, skew := totpEnv(t)
	b := apitest.SignedInBrowser(t, e)
	secret, codes := enrol(t, b, now(skew))
	ip := e.Browser(t).IP // an address of this run's own: the lockout counts per address too
	login := func(otp string) apitest.Response {
		body := map[string]any{"email": e.Alpha.User.Email, "password": totpPassword, "device": apitest.Phone}
		if otp != "" {
			body["otp_code"] = otp
		}
		return e.DoFrom(ip, "POST", "/api/v1/auth/login", body)
	}

	r := login("")
	var got map[string]any
	if err := json.Unmarshal(r.Body, &got); err != nil || r.Status != 401 || len(got) != 2 ||
		got["error"] != "Two-factor authentication required" || got["mfa_required"] != true {
		t.Fatalf("without a code: %d %s", r.Status, r.Body)
	}
	if m := login(code(t, secret, now(skew).Add(-time.Hour))).WantJSON(t, 401); m["mfa_required"] != true {
		t.Fatalf("wrong code: %v", m)
	}
	if n := len(auditMeta(t, e, models.EventSecondFactorFailed)); n != 1 {
		t.Fatalf("second_factor_failed records: %d", n)
	}
	skew.Add(int64(30 * time.Second))
	c := code(t, secret, now(skew))
	m := login(c).WantJSON(t, 200)
	if m["access_token"] == "" || m["token_type"] != "Bearer" {
		t.Fatalf("right code: %v", m)
	}
	if m := login(c).WantJSON(t, 401); m["mfa_required"] != true {
		t.Fatalf("code replayed: %v", m)
	}
	login(codes[0]).WantJSON(t, 200)
	login(codes[0]).WantJSON(t, 401)
	logins := auditMeta(t, e, models.EventLogin)
	if logins[0]["second_factor"] != "recovery_code" || logins[1]["second_factor"] != "totp" {
		t.Fatalf("login records: %v", logins[:2])
	}

	// Wrong codes up to the account's limit (a right code forgave the
	// earlier ones; the spent recovery code was one), then 429 even for a
	// right one.
	for range 4 {
		login("000000")
	}
	skew.Add(int64(30 * time.Second))
	if r := login(code(t, secret, now(skew))); r.Status != 429 {
		t.Fatalf("locked: %d %s", r.Status, r.Body)
	}
}

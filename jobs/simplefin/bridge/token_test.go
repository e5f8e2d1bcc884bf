package bridge_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"coffer/jobs/simplefin/bridge"
)

func TestParseSetupToken(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	url64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, token string
		http        bool
		code        string
		want        string
	}{
		{"demo", "aHR0cHM6Ly9icmlkZ2Uuc2ltcGxlZmluLm9yZy9zaW1wbGVmaW4vY2xhaW0vZGVtbw==", false, "", "https://bridge.simplefin.org/simplefin/claim/demo"},
		{"line breaks and spaces", " aHR0cHM6Ly9icmlkZ2Uuc2ltcGxl\nZmluLm9yZy9zaW1wbGVmaW4vY2xhaW0vZGVtbw== \r\n", false, "", "https://bridge.simplefin.org/simplefin/claim/demo"},
		{"url alphabet unpadded", url64("https://b.example/claim/ab??c"), false, "", "https://b.example/claim/ab??c"},
		{"blank", " \n ", false, "setup_token_blank", ""},
		{"not base64", "not base64!!", false, "setup_token_not_base64", ""},
		{"not a url", b64("hello world"), false, "setup_token_not_url", ""},
		{"relative", b64("/claim/x"), false, "setup_token_not_url", ""},
		{"not utf-8", base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, 0xfd}), false, "setup_token_not_url", ""},
		{"http refused", b64("http://b.example/claim/x"), false, "claim_url_scheme", ""},
		{"http allowed", b64("http://b.example/claim/x"), true, "", "http://b.example/claim/x"},
		{"ftp", b64("ftp://b.example/claim/x"), true, "claim_url_scheme", ""},
		{"javascript", b64("javascript:alert(1)"), true, "claim_url_scheme", ""},
		{"userinfo", b64("https://u:p@b.example/claim/x"), false, "claim_url_invalid", ""},
		{"fragment", b64("https://b.example/claim/x#y"), false, "claim_url_invalid", ""},
		{"too long", b64("https://b.example/" + strings.Repeat("a", 2100)), false, "claim_url_invalid", ""},
		{"file", b64("file:///etc/passwd"), true, "claim_url_scheme", ""},
		{"no host", b64("https:///claim/x"), false, "claim_url_invalid", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := bridge.ParseSetupToken(tc.token, tc.http)
			var te *bridge.TokenError
			if tc.code == "" {
				if err != nil || u.String() != tc.want {
					t.Fatalf("got %v, %v; want %s", u, err, tc.want)
				}
				return
			}
			if !errors.As(err, &te) || te.Code != tc.code {
				t.Fatalf("err = %v, want code %s", err, tc.code)
			}
		})
	}
}

// FuzzParseSetupToken: whatever the input, no panic, and an accepted
// token is an https URL with a host and no credentials.
func FuzzParseSetupToken(f *testing.F) {
	for _, s := range []string{"aHR0cHM6Ly9icmlkZ2Uuc2ltcGxlZmluLm9yZy9zaW1wbGVmaW4vY2xhaW0vZGVtbw==", "", "====", "a", "aHR0cDovL3g="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		u, err := bridge.ParseSetupToken(token, false)
		if err != nil {
			return
		}
		if u.Scheme != "https" || u.Host == "" || u.User != nil {
			t.Fatalf("accepted %q -> %v", token, u)
		}
	})
}

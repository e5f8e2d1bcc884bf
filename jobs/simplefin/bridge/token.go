// Package bridge is the client of the SimpleFIN Bridge protocol: setup
// tokens, the one-time claim, /info and account data. It never lets an
// access URL's credentials reach an error text or a log line.
package bridge

import (
	"encoding/base64"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TokenError is a refused setup token; Code is the API's error code.
type TokenError struct {
	Code    string
	Message string
}

func (e *TokenError) Error() string { return e.Code + ": " + e.Message }

const maxURLBytes = 2048

// ParseSetupToken decodes a setup token into its claim URL: lenient about
// form (whitespace, either Base64 alphabet, padding or not), strict about
// content (an absolute https URL, or http when allowed, with a host and no
// userinfo or fragment, at most 2 KiB).
func ParseSetupToken(token string, allowHTTP bool) (*url.URL, error) {
	compact := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, token)
	if compact == "" {
		return nil, &TokenError{"setup_token_blank", "The setup token is blank."}
	}
	compact = strings.TrimRight(compact, "=")
	var raw []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if raw, err = enc.DecodeString(compact); err == nil {
			break
		}
	}
	if err != nil {
		return nil, &TokenError{"setup_token_not_base64", "The setup token is not Base64 text. Copy it again from SimpleFIN Bridge."}
	}
	if !utf8.Valid(raw) || len(raw) > 4*maxURLBytes {
		return nil, &TokenError{"setup_token_not_url", "The setup token does not hold a claim URL."}
	}
	u, err := url.Parse(string(raw))
	if err != nil || !u.IsAbs() {
		return nil, &TokenError{"setup_token_not_url", "The setup token does not hold a claim URL."}
	}
	if err := checkURL(u, allowHTTP); err != nil {
		return nil, err
	}
	return u, nil
}

func checkURL(u *url.URL, allowHTTP bool) error {
	if u.Scheme != "https" && !(allowHTTP && u.Scheme == "http") {
		return &TokenError{"claim_url_scheme", "The claim URL must use https."}
	}
	if u.Host == "" || u.User != nil || u.Fragment != "" || len(u.String()) > maxURLBytes {
		return &TokenError{"claim_url_invalid", "The claim URL in the setup token is not valid."}
	}
	return nil
}

package secret_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"coffer/models/secret"
)

func TestSealer(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	old, err := secret.NewSealer(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := old.Seal("https://user:pass@bridge.example/simplefin", "provider_connections", "access_url_enc", "row-1")
	if err != nil || strings.Contains(sealed, "pass") || !strings.HasPrefix(sealed, "enc:v1:") {
		t.Fatalf("sealed %q, %v", sealed, err)
	}
	rotated, _ := secret.NewSealer(newKey, oldKey)
	if got, err := rotated.Open(sealed, "provider_connections", "access_url_enc", "row-1"); err != nil || got != "https://user:pass@bridge.example/simplefin" {
		t.Fatalf("open with the old key: %q %v", got, err)
	}
	for name, open := range map[string]func() (string, error){
		"other row": func() (string, error) { return rotated.Open(sealed, "provider_connections", "access_url_enc", "row-2") },
		"other column": func() (string, error) {
			return rotated.Open(sealed, "provider_connections", "setup_token_enc", "row-1")
		},
		"tampered": func() (string, error) {
			b := []byte(sealed) // one character of the sealed text changed, whatever it was
			i := len(b) / 2
			b[i] = map[bool]byte{true: 'B', false: 'A'}[b[i] == 'A']
			return rotated.Open(string(b), "provider_connections", "access_url_enc", "row-1")
		},
		"unknown key": func() (string, error) {
			n, _ := secret.NewSealer(newKey)
			return n.Open(sealed, "provider_connections", "access_url_enc", "row-1")
		},
		"plaintext": func() (string, error) {
			return rotated.Open("https://x", "provider_connections", "access_url_enc", "row-1")
		},
	} {
		if _, err := open(); !errors.Is(err, secret.ErrSealed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := secret.NewSealer([]byte("short")); err == nil {
		t.Error("a short key was accepted")
	}
}

package sso

import (
	"encoding/base64"
	"errors"
	"testing"
)

// FuzzSAMLResponse feeds XML documents, seeded with valid responses, to
// ParseResponse: it must never panic, and every refusal is a *Failure.
func FuzzSAMLResponse(f *testing.F) {
	c := newCrafter(f)
	for _, b := range []craft{
		{requestID: "id-req", signAssertion: true, signResponse: true},
		{requestID: "id-req", signAssertion: true},
		{requestID: "id-req", signResponse: true},
		{requestID: "id-req"},
	} {
		raw, _ := base64.StdEncoding.DecodeString(c.build(b))
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		id, a, err := c.s.ParseResponse(base64.StdEncoding.EncodeToString(doc), "id-req")
		if err != nil {
			var fl *Failure
			if !errors.As(err, &fl) || id != nil || a != nil {
				t.Fatalf("error %v (%T) with %+v %+v", err, err, id, a)
			}
			return
		}
		if id == nil || a == nil || id.Subject == "" || a.ID == "" {
			t.Fatalf("accepted without an identity: %+v %+v", id, a)
		}
	})
}

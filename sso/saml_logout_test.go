package sso

import (
	"bytes"
	"compress/flate"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"
)

// inflateParam decodes a redirect-binding parameter of u into v.
func inflateParam(t *testing.T, u, param string, v any) {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	deflated, err := base64.StdEncoding.DecodeString(parsed.Query().Get(param))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(deflated)))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

// logoutResponse is the redirect query an IdP sends back: the response
// deflated and encoded by enc, signed by key unless nil.
func logoutResponse(t *testing.T, r *saml.LogoutResponse, key *rsa.PrivateKey, enc func(string) string) string {
	t.Helper()
	raw := elBytes(t, r.Element())
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.DefaultCompression)
	fw.Write(raw)
	fw.Close()
	q := "SAMLResponse=" + enc(base64.StdEncoding.EncodeToString(buf.Bytes())) + "&RelayState=" + enc("/bye")
	if key == nil {
		return q
	}
	q += "&SigAlg=" + enc(dsig.RSASHA256SignatureMethod)
	h := sha256.Sum256([]byte(q))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:])
	if err != nil {
		t.Fatal(err)
	}
	return q + "&Signature=" + enc(base64.StdEncoding.EncodeToString(sig))
}

// lowerEscape escapes like url.QueryEscape but with lower-case hex, as
// some IdPs (AD FS) do; the signature covers these exact bytes.
func lowerEscape(s string) string {
	e := url.QueryEscape(s)
	var b strings.Builder
	for i := 0; i < len(e); i++ {
		if e[i] == '%' && i+2 < len(e) {
			b.WriteString("%" + strings.ToLower(e[i+1:i+3]))
			i += 2
			continue
		}
		b.WriteByte(e[i])
	}
	return b.String()
}

func TestSAMLLogoutRoundTrip(t *testing.T) {
	c := newCrafter(t)
	spCert, spCertPEM := selfSigned(t, spKey(), "sp")
	p := samlProvider(craftIdP, "https://idp.test/sso", c.pems[idpKeyA()])
	p.SignRequests, p.SPCertificate = true, ptr(spCertPEM)
	s := mustSAML(t, p, keyPEM(t, spKey()), Options{BaseURL: "https://coffer.test", Now: func() time.Time { return c.now }, SAMLSkew: 90 * time.Second})

	redirect, reqID, err := s.LogoutRequest("u-1001", "sess-1", "/bye")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(redirect, "https://idp.test/slo?SAMLRequest=") {
		t.Fatalf("redirect %s", redirect)
	}
	checkRedirectSignature(t, redirect, "SAMLRequest", spCert.PublicKey)
	var lr saml.LogoutRequest
	inflateParam(t, redirect, "SAMLRequest", &lr)
	if lr.ID != reqID || lr.NameID.Value != "u-1001" || lr.NameID.Format != string(saml.PersistentNameIDFormat) ||
		lr.SessionIndex == nil || lr.SessionIndex.Value != "sess-1" || lr.Issuer.Value != s.EntityID() || lr.Destination != "https://idp.test/slo" {
		t.Fatalf("logout request %+v", lr)
	}

	answer := func() *saml.LogoutResponse {
		return &saml.LogoutResponse{ID: newSAMLID(), InResponseTo: reqID, Version: "2.0", IssueInstant: c.now,
			Destination: s.SLOURL(), Issuer: &saml.Issuer{Value: craftIdP},
			Status: saml.Status{StatusCode: saml.StatusCode{Value: saml.StatusSuccess}}}
	}
	ok := map[string]string{
		"signed":                     logoutResponse(t, answer(), idpKeyA(), url.QueryEscape),
		"signed, lower-case escapes": logoutResponse(t, answer(), idpKeyA(), lowerEscape),
		"unsigned":                   logoutResponse(t, answer(), nil, url.QueryEscape),
	}
	for name, q := range ok {
		if err := s.ValidateLogoutResponse(q, reqID); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	with := func(edit func(*saml.LogoutResponse)) *saml.LogoutResponse { r := answer(); edit(r); return r }
	signed := logoutResponse(t, answer(), idpKeyA(), url.QueryEscape)
	bad := map[string]string{
		"signed by another key":   logoutResponse(t, answer(), idpKeyC(), url.QueryEscape),
		"tampered RelayState":     strings.Replace(signed, "RelayState=%2Fbye", "RelayState=%2Fevil", 1),
		"other InResponseTo":      logoutResponse(t, with(func(r *saml.LogoutResponse) { r.InResponseTo = "id-other" }), idpKeyA(), url.QueryEscape),
		"status failure":          logoutResponse(t, with(func(r *saml.LogoutResponse) { r.Status.StatusCode.Value = saml.StatusResponder }), idpKeyA(), url.QueryEscape),
		"other issuer":            logoutResponse(t, with(func(r *saml.LogoutResponse) { r.Issuer.Value = "https://evil.test" }), nil, url.QueryEscape),
		"other destination":       logoutResponse(t, with(func(r *saml.LogoutResponse) { r.Destination = "https://evil.test/slo" }), nil, url.QueryEscape),
		"stale":                   logoutResponse(t, with(func(r *saml.LogoutResponse) { r.IssueInstant = c.now.Add(-10 * time.Minute) }), idpKeyA(), url.QueryEscape),
		"no SAMLResponse":         "RelayState=x",
		"not deflated":            "SAMLResponse=" + url.QueryEscape(base64.StdEncoding.EncodeToString([]byte("<x/>"))),
		"SHA-1 query signature":   strings.Replace(signed, url.QueryEscape(dsig.RSASHA256SignatureMethod), url.QueryEscape(dsig.RSASHA1SignatureMethod), 1),
		"repeated parameter":      signed + "&SAMLResponse=x",
		"empty signature present": logoutResponse(t, answer(), nil, url.QueryEscape) + "&SigAlg=x&Signature=",
	}
	for name, q := range bad {
		if err := s.ValidateLogoutResponse(q, reqID); !isSAMLInvalid(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := s.ValidateLogoutResponse(signed, ""); !isSAMLInvalid(err) {
		t.Errorf("no request id: %v", err)
	}

	p.IdPSLOURL = nil
	if _, _, err := s.LogoutRequest("u-1001", "", ""); err == nil {
		t.Error("logout request without an SLO URL")
	}
}

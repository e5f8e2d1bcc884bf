package sso

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"html"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crewjam/saml"
	"github.com/crewjam/saml/samlidp"
	"github.com/google/uuid"
	dsig "github.com/russellhaering/goxmldsig"

	"coffer/models"
)

// Test keys are read from testdata: making RSA keys is slow under -race
// and far slower in a fuzzing build.
var testRSAKeys = sync.OnceValue(func() []*rsa.PrivateKey {
	var keys []*rsa.PrivateKey // IdP A, IdP B, IdP C (never configured), SP
	for _, name := range []string{"idp-a", "idp-b", "idp-c", "sp"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".key"))
		if err != nil {
			panic(err)
		}
		k, err := parsePrivateKey(string(b))
		if err != nil {
			panic(err)
		}
		keys = append(keys, k.(*rsa.PrivateKey))
	}
	return keys
})

func idpKeyA() *rsa.PrivateKey { return testRSAKeys()[0] }
func idpKeyB() *rsa.PrivateKey { return testRSAKeys()[1] }
func idpKeyC() *rsa.PrivateKey { return testRSAKeys()[2] }
func spKey() *rsa.PrivateKey   { return testRSAKeys()[3] }

// selfSigned makes a certificate for key, valid an hour ago to a year on.
func selfSigned(t testing.TB, key crypto.Signer, cn string) (*x509.Certificate, string) {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func keyPEM(t testing.TB, key crypto.Signer) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func ptr(s string) *string { return &s }

// samlProvider is a SAML provider trusting certsPEM, NameID persistent as
// the subject, groups in eduPersonAffiliation.
func samlProvider(idpEntityID, ssoURL, certsPEM string) *models.SSOProvider {
	return &models.SSOProvider{
		ID: uuid.New(), Name: "corp", Strategy: models.StrategySAML, Label: "Corp", Enabled: true,
		IdPEntityID: ptr(idpEntityID), IdPSSOURL: ptr(ssoURL), IdPSLOURL: ptr(strings.TrimSuffix(ssoURL, "/sso") + "/slo"),
		IdPCertificates: ptr(certsPEM), NameIDFormat: ptr("persistent"), SubjectSource: ptr("name_id"),
		GroupAttribute: ptr("eduPersonAffiliation"), DefaultRole: models.RoleMember,
	}
}

func mustSAML(t testing.TB, p *models.SSOProvider, key string, o Options) *SAML {
	t.Helper()
	s, err := NewSAML(p, key, o)
	if err != nil {
		t.Fatalf("NewSAML: %v", err)
	}
	return s
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// startIdP runs crewjam's samlidp on loopback: signing key A with
// SHA-256, a memory store, user alice (password "pw") with two groups.
func startIdP(t *testing.T) (*samlidp.Server, string, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	cert, certPEM := selfSigned(t, idpKeyA(), "idp")
	idp, err := samlidp.New(samlidp.Options{
		URL: mustURL(base), Key: idpKeyA(), Certificate: cert,
		Store: &samlidp.MemoryStore{}, Logger: log.New(testLog{t}, "samlidp: ", 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	idp.IDP.SignatureMethod = dsig.RSASHA256SignatureMethod // SHA-1 by default
	srv.Config.Handler = idp
	srv.Start()
	t.Cleanup(srv.Close)
	password := "pw"
	putJSON(t, base+"/users/alice", `{"name":"alice","password":"`+password+`","email":"Alice@Example.COM",`+
		`"groups":["staff","Admins"],"given_name":"Alice","surname":"Liddell"}`, "application/json")
	return idp, base, certPEM
}

func putJSON(t *testing.T, u, body, ctype string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT %s: HTTP %d", u, resp.StatusCode)
	}
}

var (
	formAction  = regexp.MustCompile(`<form method="post" action="([^"]*)"`)
	formHiddens = regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)"`)
)

// form reads the action and hidden fields of the HTML form in body.
func form(t *testing.T, body string) (string, url.Values) {
	t.Helper()
	m := formAction.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no form in %q", body)
	}
	vals := url.Values{}
	for _, h := range formHiddens.FindAllStringSubmatch(body, -1) {
		vals.Set(h[1], html.UnescapeString(h[2]))
	}
	return html.UnescapeString(m[1]), vals
}

func httpGet(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", u, resp.StatusCode, b)
	}
	return string(b)
}

// loginAtIdP drives an SP-initiated login through samlidp's own login
// form and returns the SAMLResponse form it posts to the ACS.
func loginAtIdP(t *testing.T, redirect string) (string, url.Values) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	action, fields := form(t, httpGet(t, c, redirect))
	fields.Set("user", "alice")
	fields.Set("password", "pw")
	resp, err := c.PostForm(action, fields)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login form: HTTP %d", resp.StatusCode)
	}
	// The form only opens a session; the SSO request, sent again, now
	// answers with the response form.
	return form(t, httpGet(t, c, redirect))
}

func TestSAMLLoginThroughSamlidp(t *testing.T) {
	for _, signed := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "signed requests, encrypted assertion"}[signed], func(t *testing.T) {
			_, base, certPEM := startIdP(t)
			p := samlProvider(base+"/metadata", base+"/sso", certPEM)
			// samlidp sends a transient NameID holding the email: the
			// subject comes from the mail attribute.
			p.NameIDFormat, p.SubjectSource = ptr("email"), ptr("email_attribute")
			key := ""
			var spCert *x509.Certificate
			if signed {
				var certPEM string
				spCert, certPEM = selfSigned(t, spKey(), "sp")
				p.SignRequests, p.SPCertificate, key = true, ptr(certPEM), keyPEM(t, spKey())
			}
			s := mustSAML(t, p, key, Options{BaseURL: "http://127.0.0.1:9", SAMLSkew: 90 * time.Second})
			md, err := s.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			putJSON(t, base+"/services/coffer", string(md), "application/samlmetadata+xml")

			redirect, reqID, err := s.AuthnRequest("/after?x=1")
			if err != nil {
				t.Fatal(err)
			}
			if signed {
				checkRedirectSignature(t, redirect, "SAMLRequest", spCert.PublicKey)
			} else if strings.Contains(redirect, "Signature=") {
				t.Fatalf("unsigned provider signed its request: %s", redirect)
			}
			action, fields := loginAtIdP(t, redirect)
			if action != s.ACSURL() {
				t.Fatalf("IdP posts to %q, want the ACS %q", action, s.ACSURL())
			}
			if fields.Get("RelayState") != "/after?x=1" {
				t.Fatalf("RelayState %q", fields.Get("RelayState"))
			}
			if raw, _ := base64.StdEncoding.DecodeString(fields.Get("SAMLResponse")); signed != strings.Contains(string(raw), "EncryptedAssertion") {
				t.Fatalf("encrypted assertion = %v, want %v", !signed, signed)
			}
			if got, err := InResponseTo(fields.Get("SAMLResponse")); err != nil || got != reqID {
				t.Fatalf("InResponseTo = %q, %v; want %q", got, err, reqID)
			}
			id, a, err := s.ParseResponse(fields.Get("SAMLResponse"), reqID)
			if err != nil {
				t.Fatalf("ParseResponse: %v", err)
			}
			if id.Subject != "alice@example.com" || id.Email != "alice@example.com" || !id.EmailVerified {
				t.Fatalf("identity %+v", id)
			}
			if !slices.Equal(id.Groups, []string{"staff", "Admins"}) || id.GroupsMissing {
				t.Fatalf("groups %v missing=%v", id.Groups, id.GroupsMissing)
			}
			if id.FirstName != "Alice" || id.LastName != "Liddell" || id.NameID == "" || id.SessionIndex == "" {
				t.Fatalf("identity %+v", id)
			}
			if g, _ := id.Claims["groups"].([]string); !slices.Equal(g, id.Groups) || id.Claims["mail"] != "Alice@Example.COM" {
				t.Fatalf("claims %v", id.Claims)
			}
			if a.ID == "" || !a.NotOnOrAfter.After(time.Now()) {
				t.Fatalf("assertion %+v", a)
			}
			// Another request's id is refused.
			if _, _, err := s.ParseResponse(fields.Get("SAMLResponse"), "id-other"); !isSAMLInvalid(err) {
				t.Fatalf("other request id: %v", err)
			}
		})
	}
}

// checkRedirectSignature verifies the redirect binding's query signature.
func checkRedirectSignature(t *testing.T, redirect, param string, pub crypto.PublicKey) {
	t.Helper()
	u, err := url.Parse(redirect)
	if err != nil {
		t.Fatal(err)
	}
	// The signature covers our parameters only, not the IdP URL's own.
	signed, sigPart, ok := strings.Cut(u.RawQuery, "&Signature=")
	i := strings.Index(signed, param+"=")
	if !ok || i < 0 {
		t.Fatalf("no signature in %s", u.RawQuery)
	}
	signed = signed[i:]
	sigB64, _ := url.QueryUnescape(sigPart)
	sig, err := base64.StdEncoding.DecodeString(sigB64)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(signed))
	switch pub := pub.(type) {
	case *rsa.PublicKey:
		if !strings.Contains(signed, "SigAlg="+url.QueryEscape(dsig.RSASHA256SignatureMethod)) {
			t.Fatalf("SigAlg in %s", signed)
		}
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig); err != nil {
			t.Fatalf("request signature: %v", err)
		}
	case *ecdsa.PublicKey:
		if !strings.Contains(signed, "SigAlg="+url.QueryEscape(dsig.ECDSASHA256SignatureMethod)) {
			t.Fatalf("SigAlg in %s", signed)
		}
		n := len(sig) / 2
		if !ecdsa.Verify(pub, h[:], new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])) {
			t.Fatal("ECDSA request signature does not verify")
		}
	}
}

func TestSAMLMetadataAndRequests(t *testing.T) {
	_, idpPEM := selfSigned(t, idpKeyA(), "idp")
	p := samlProvider("https://idp.test/metadata", "https://idp.test/sso?tenant=7", idpPEM)
	s := mustSAML(t, p, "", Options{BaseURL: "https://coffer.test/"})
	base := "https://coffer.test/auth/saml/" + p.ID.String()
	if s.EntityID() != base || s.ACSURL() != base+"/callback" || s.SLOURL() != base+"/logout" {
		t.Fatalf("urls %s %s %s", s.EntityID(), s.ACSURL(), s.SLOURL())
	}
	md, err := s.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	var ed saml.EntityDescriptor
	if err := xml.Unmarshal(md, &ed); err != nil {
		t.Fatal(err)
	}
	d := ed.SPSSODescriptors[0]
	if ed.EntityID != base || !*d.WantAssertionsSigned || *d.AuthnRequestsSigned || len(d.KeyDescriptors) != 0 ||
		len(d.AssertionConsumerServices) != 1 || d.AssertionConsumerServices[0].Location != s.ACSURL() ||
		d.AssertionConsumerServices[0].Binding != saml.HTTPPostBinding || d.NameIDFormats[0] != saml.PersistentNameIDFormat ||
		d.SingleLogoutServices[0].Binding != saml.HTTPRedirectBinding || d.SingleLogoutServices[0].Location != s.SLOURL() {
		t.Fatalf("metadata %s", md)
	}
	redirect, id, err := s.AuthnRequest("")
	if err != nil || !strings.HasPrefix(redirect, "https://idp.test/sso?tenant=7&SAMLRequest=") || strings.Contains(redirect, "RelayState") {
		t.Fatalf("redirect %s, %v", redirect, err)
	}
	var req saml.AuthnRequest
	inflateParam(t, redirect, "SAMLRequest", &req)
	if req.ID != id || req.AssertionConsumerServiceURL != s.ACSURL() || req.Issuer.Value != s.EntityID() ||
		req.Destination != "https://idp.test/sso?tenant=7" || *req.NameIDPolicy.Format != string(saml.PersistentNameIDFormat) {
		t.Fatalf("request %+v", req)
	}

	// ECDSA signing: the metadata carries a signing key and no encryption
	// key; the query signature is r‖s over SHA-256.
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecCert, ecPEM := selfSigned(t, ec, "sp-ec")
	p.SignRequests, p.SPCertificate = true, ptr(ecPEM)
	s = mustSAML(t, p, keyPEM(t, ec), Options{BaseURL: "https://coffer.test"})
	md, _ = s.Metadata()
	ed = saml.EntityDescriptor{}
	if err := xml.Unmarshal(md, &ed); err != nil {
		t.Fatal(err)
	}
	d = ed.SPSSODescriptors[0]
	if !*d.AuthnRequestsSigned || len(d.KeyDescriptors) != 1 || d.KeyDescriptors[0].Use != "signing" {
		t.Fatalf("metadata %s", md)
	}
	redirect, _, err = s.AuthnRequest("r")
	if err != nil {
		t.Fatal(err)
	}
	checkRedirectSignature(t, redirect, "SAMLRequest", ecCert.PublicKey)
}

func TestNewSAMLRefusesBadSettings(t *testing.T) {
	_, idpPEM := selfSigned(t, idpKeyA(), "idp")
	_, otherPEM := selfSigned(t, idpKeyB(), "other")
	cases := map[string]func(p *models.SSOProvider) string{
		"no certificate":      func(p *models.SSOProvider) string { p.IdPCertificates = ptr("not pem"); return "" },
		"no entity id":        func(p *models.SSOProvider) string { p.IdPEntityID = nil; return "" },
		"sign without key":    func(p *models.SSOProvider) string { p.SignRequests = true; return "" },
		"key and cert differ": func(p *models.SSOProvider) string { p.SPCertificate = ptr(otherPEM); return keyPEM(t, spKey()) },
		"bad nameid format":   func(p *models.SSOProvider) string { p.NameIDFormat = ptr("x509"); return "" },
	}
	for name, edit := range cases {
		p := samlProvider("https://idp.test/metadata", "https://idp.test/sso", idpPEM)
		if _, err := NewSAML(p, edit(p), Options{BaseURL: "https://coffer.test"}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func isSAMLInvalid(err error) bool {
	var f *Failure
	return errors.As(err, &f) && f.Reason == ReasonSAMLInvalid
}

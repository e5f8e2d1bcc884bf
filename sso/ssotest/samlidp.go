package ssotest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crewjam/saml/samlidp"
	dsig "github.com/russellhaering/goxmldsig"
)

// SAMLIdP is crewjam's samlidp on loopback: a self-signed RSA key that
// signs with SHA-256 (samlidp's default is SHA-1), a memory store, and
// users with a groups attribute (eduPersonAffiliation) and mail.
type SAMLIdP struct {
	URL         string // base URL; the entity ID is URL + "/metadata"
	EntityID    string
	SSOURL      string
	CertPEM     string
	Key         *rsa.PrivateKey
	Certificate *x509.Certificate
	t           testing.TB
}

// StartSAMLIdP runs a samlidp for the test's lifetime.
func StartSAMLIdP(t testing.TB) *SAMLIdP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "ssotest samlidp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	u, _ := url.Parse(base)
	idp, err := samlidp.New(samlidp.Options{URL: *u, Key: key, Certificate: cert, Store: &samlidp.MemoryStore{},
		Logger: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	idp.IDP.SignatureMethod = dsig.RSASHA256SignatureMethod
	srv.Config.Handler = idp
	srv.Start()
	t.Cleanup(srv.Close)
	return &SAMLIdP{URL: base, EntityID: base + "/metadata", SSOURL: base + "/sso", Key: key, Certificate: cert, t: t,
		CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// AddUser stores a user who signs in with name and password.
func (s *SAMLIdP) AddUser(name, password, email string, groups ...string) {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "password": password, "email": email, "groups": groups,
		"given_name": name, "surname": "Tester"})
	s.put("/users/"+name, string(body), "application/json")
}

// RegisterSP trusts a service provider by its metadata.
func (s *SAMLIdP) RegisterSP(name string, metadata []byte) {
	s.t.Helper()
	s.put("/services/"+name, string(metadata), "application/samlmetadata+xml")
}

// AddShortcut makes /login/<name> an IdP-initiated sign-in to the service
// provider with entityID.
func (s *SAMLIdP) AddShortcut(name, entityID string) {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "service_provider": entityID})
	s.put("/shortcuts/"+name, string(body), "application/json")
}

func (s *SAMLIdP) put(path, body, ctype string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPut, s.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		s.t.Fatalf("samlidp: PUT %s: HTTP %d", path, resp.StatusCode)
	}
}

var (
	formAction  = regexp.MustCompile(`<form method="post" action="([^"]*)"`)
	formHiddens = regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)"`)
)

// Login plays the browser at the IdP: it opens start (the AuthnRequest
// redirect, or /login/<shortcut>), posts the user's credentials to
// samlidp's form and returns the form samlidp then auto-posts to the
// service provider: its action (the ACS) and fields (SAMLResponse,
// RelayState). samlidp's login form only opens a session, so the start
// URL is requested again after it.
func (s *SAMLIdP) Login(start, user, password string) (string, url.Values, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	page, err := get(c, start)
	if err != nil {
		return "", nil, err
	}
	action, fields, err := form(page)
	if err != nil {
		return "", nil, err
	}
	fields.Set("user", user)
	fields.Set("password", password)
	resp, err := c.PostForm(action, fields)
	if err != nil {
		return "", nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("ssotest: samlidp login form: HTTP %d", resp.StatusCode)
	}
	if page, err = get(c, start); err != nil {
		return "", nil, err
	}
	return form(page)
}

func get(c *http.Client, u string) (string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("ssotest: GET %s: HTTP %d %s", u, resp.StatusCode, snippet(b))
	}
	return string(b), nil
}

func form(body string) (string, url.Values, error) {
	m := formAction.FindStringSubmatch(body)
	if m == nil {
		return "", nil, fmt.Errorf("ssotest: no form in %s", snippet([]byte(body)))
	}
	vals := url.Values{}
	for _, h := range formHiddens.FindAllStringSubmatch(body, -1) {
		vals.Set(h[1], html.UnescapeString(h[2]))
	}
	return html.UnescapeString(m[1]), vals, nil
}

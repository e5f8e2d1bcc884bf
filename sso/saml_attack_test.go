package sso

import (
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	"github.com/crewjam/saml/xmlenc"
	dsig "github.com/russellhaering/goxmldsig"
)

const craftIdP = "https://idp.test/metadata"

// crafter makes SAML responses with crewjam's IdP types, as samlidp would
// for our SP, then lets a test alter and sign them.
type crafter struct {
	t     testing.TB
	s     *SAML
	now   time.Time
	certs map[*rsa.PrivateKey]*x509.Certificate
	pems  map[*rsa.PrivateKey]string
}

func newCrafter(t testing.TB) *crafter {
	t.Helper()
	c := &crafter{t: t, now: time.Now().UTC().Truncate(time.Second),
		certs: map[*rsa.PrivateKey]*x509.Certificate{}, pems: map[*rsa.PrivateKey]string{}}
	for _, k := range []*rsa.PrivateKey{idpKeyA(), idpKeyB(), idpKeyC()} {
		c.certs[k], c.pems[k] = selfSigned(t, k, "idp")
	}
	c.s = c.sp(func(*SAML) {}, c.pems[idpKeyA()])
	return c
}

// sp is a service provider trusting certsPEM, on the crafter's clock.
func (c *crafter) sp(edit func(*SAML), certsPEM string) *SAML {
	p := samlProvider(craftIdP, "https://idp.test/sso", certsPEM)
	s := mustSAML(c.t, p, "", Options{BaseURL: "https://coffer.test", Now: func() time.Time { return c.now }, SAMLSkew: 90 * time.Second})
	edit(s)
	return s
}

// assertion is what crewjam's DefaultAssertionMaker writes for a login
// of user u-1001 answering requestID ("" for IdP-initiated).
func (c *crafter) assertion(requestID string) *saml.Assertion {
	c.t.Helper()
	idp := &saml.IdentityProvider{Key: idpKeyA(), Certificate: c.certs[idpKeyA()], MetadataURL: mustURL(craftIdP)}
	req := &saml.IdpAuthnRequest{
		IDP: idp, Now: c.now, HTTPRequest: httptest.NewRequest("POST", "https://idp.test/sso", nil),
		Request:                 saml.AuthnRequest{ID: requestID, IssueInstant: c.now},
		ServiceProviderMetadata: &saml.EntityDescriptor{EntityID: c.s.EntityID()},
		SPSSODescriptor:         &saml.SPSSODescriptor{},
		ACSEndpoint:             &saml.IndexedEndpoint{Binding: saml.HTTPPostBinding, Location: c.s.ACSURL()},
	}
	sess := &saml.Session{NameID: "u-1001", NameIDFormat: string(saml.PersistentNameIDFormat), UserEmail: "Bob@Example.com",
		Groups: []string{"staff", "ops"}, Index: "sess-1", CreateTime: c.now}
	if err := (saml.DefaultAssertionMaker{}).MakeAssertion(req, sess); err != nil {
		c.t.Fatal(err)
	}
	req.Assertion.IssueInstant = c.now // the maker reads the real clock here
	return req.Assertion
}

func (c *crafter) response(requestID string) *saml.Response {
	return &saml.Response{
		ID: newSAMLID(), InResponseTo: requestID, Version: "2.0", IssueInstant: c.now, Destination: c.s.ACSURL(),
		Issuer: &saml.Issuer{Format: entityFormat, Value: craftIdP},
		Status: saml.Status{StatusCode: saml.StatusCode{Value: saml.StatusSuccess}},
	}
}

// sign puts an enveloped signature by key after el's Issuer.
func (c *crafter) sign(el *etree.Element, key *rsa.PrivateKey, method string) *etree.Element {
	c.t.Helper()
	ctx := dsig.NewDefaultSigningContext(dsig.TLSCertKeyStore(tls.Certificate{
		Certificate: [][]byte{c.certs[key].Raw}, PrivateKey: key, Leaf: c.certs[key]}))
	ctx.Canonicalizer = dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("")
	if err := ctx.SetSignatureMethod(method); err != nil {
		c.t.Fatal(err)
	}
	// Sign a parsed tree, as an IdP would: goxmldsig's digest of a tree
	// built in memory can differ from that of its serialisation.
	signed, err := ctx.SignEnveloped(reparse(c.t, el))
	if err != nil {
		c.t.Fatal(err)
	}
	signed = reparse(c.t, signed)
	sig := signed.ChildElements()[len(signed.ChildElements())-1]
	signed.RemoveChild(sig)
	signed.InsertChildAt(1, sig)
	return signed
}

func reparse(t testing.TB, el *etree.Element) *etree.Element {
	t.Helper()
	return decodeEl(t, encodeEl(t, el))
}

// craft is one response: alterations, then which parts are signed by key.
type craft struct {
	requestID     string
	assertion     func(*saml.Assertion)
	response      func(*saml.Response)
	signAssertion bool
	signResponse  bool
	key           *rsa.PrivateKey
	method        string
}

func (c *crafter) build(b craft) string {
	a := c.assertion(b.requestID)
	if b.assertion != nil {
		b.assertion(a)
	}
	r := c.response(b.requestID)
	if b.response != nil {
		b.response(r)
	}
	if b.key == nil {
		b.key = idpKeyA()
	}
	if b.method == "" {
		b.method = dsig.RSASHA256SignatureMethod
	}
	aEl := a.Element()
	if b.signAssertion {
		aEl = c.sign(aEl, b.key, b.method)
	}
	rEl := r.Element()
	rEl.AddChild(aEl)
	if b.signResponse {
		rEl = c.sign(rEl, b.key, b.method)
	}
	return encodeEl(c.t, rEl)
}

func encodeEl(t testing.TB, el *etree.Element) string {
	t.Helper()
	return base64.StdEncoding.EncodeToString(elBytes(t, el))
}

// elBytes is the XML text of el (a copy of it: el keeps its parent).
func elBytes(t testing.TB, el *etree.Element) []byte {
	t.Helper()
	doc := etree.NewDocument()
	doc.SetRoot(el.Copy())
	b, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeEl(t testing.TB, resp string) *etree.Element {
	t.Helper()
	raw, _ := base64.StdEncoding.DecodeString(resp)
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(raw); err != nil {
		t.Fatal(err)
	}
	return doc.Root()
}

// refused checks that a response was refused as saml_invalid with
// nothing returned.
func refused(t *testing.T, id *Identity, a *Assertion, err error, detail string) {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) || f.Reason != ReasonSAMLInvalid {
		t.Fatalf("want a saml_invalid Failure, got %v (identity %+v)", err, id)
	}
	if id != nil || a != nil {
		t.Fatalf("refusal returned content: %+v %+v", id, a)
	}
	if !strings.HasPrefix(f.Detail, detail) {
		t.Fatalf("detail %q, want it to start with %q", f.Detail, detail)
	}
}

func TestSAMLCraftedResponses(t *testing.T) {
	c := newCrafter(t)
	both := func(b craft) craft { b.signAssertion, b.signResponse = true, true; return b }
	req := "id-req"
	other := c.sp(func(*SAML) {}, c.pems[idpKeyA()]) // same IdP, another provider id

	accepted := map[string]craft{
		"both signed":           both(craft{requestID: req}),
		"only assertion signed": {requestID: req, signAssertion: true},
		"only response signed":  {requestID: req, signResponse: true},
		"NotBefore within skew": both(craft{requestID: req, assertion: func(a *saml.Assertion) { a.Conditions.NotBefore = c.now.Add(60 * time.Second) }}),
		"no Destination":        both(craft{requestID: req, response: func(r *saml.Response) { r.Destination = "" }}),
	}
	for name, b := range accepted {
		t.Run("accept/"+name, func(t *testing.T) {
			id, a, err := c.s.ParseResponse(c.build(b), req)
			if err != nil {
				t.Fatal(err)
			}
			if id.Subject != "u-1001" || id.Email != "bob@example.com" || !id.EmailVerified || id.SessionIndex != "sess-1" ||
				strings.Join(id.Groups, ",") != "staff,ops" || a.ID == "" || !a.NotOnOrAfter.Equal(c.now.Add(90*time.Second)) {
				t.Fatalf("identity %+v assertion %+v", id, a)
			}
		})
	}

	rejected := map[string]struct {
		b      craft
		detail string
	}{
		"unsigned response and assertion": {craft{requestID: req}, "signature"},
		"signed by another key":           {both(craft{requestID: req, key: idpKeyC()}), "signature"},
		"assertion by another key":        {craft{requestID: req, signAssertion: true, key: idpKeyC()}, "signature"},
		"SHA-1 signatures":                {both(craft{requestID: req, method: dsig.RSASHA1SignatureMethod}), "signature"},
		"wrong audience": {both(craft{requestID: req, assertion: func(a *saml.Assertion) {
			a.Conditions.AudienceRestrictions[0].Audience.Value = "https://other.test/sp"
		}}), "audience"},
		"second audience restriction for another SP": {both(craft{requestID: req, assertion: func(a *saml.Assertion) {
			a.Conditions.AudienceRestrictions = append(a.Conditions.AudienceRestrictions, saml.AudienceRestriction{Audience: saml.Audience{Value: "https://other.test/sp"}})
		}}), "audience"},
		"no audience restriction": {both(craft{requestID: req, assertion: func(a *saml.Assertion) { a.Conditions.AudienceRestrictions = nil }}), "audience"},
		"response for another provider": {both(craft{requestID: req, assertion: func(a *saml.Assertion) {
			a.Conditions.AudienceRestrictions[0].Audience.Value = other.EntityID()
			a.Subject.SubjectConfirmations[0].SubjectConfirmationData.Recipient = other.ACSURL()
		}, response: func(r *saml.Response) { r.Destination = other.ACSURL() }}), "destination"},
		"expired conditions": {both(craft{requestID: req, assertion: func(a *saml.Assertion) {
			a.Conditions.NotOnOrAfter = c.now.Add(-91 * time.Second)
		}}), "expired"},
		"expired confirmation": {both(craft{requestID: req, assertion: func(a *saml.Assertion) {
			a.Subject.SubjectConfirmations[0].SubjectConfirmationData.NotOnOrAfter = c.now.Add(-91 * time.Second)
		}}), "expired"},
		"NotBefore ahead beyond the skew": {both(craft{requestID: req, assertion: func(a *saml.Assertion) {
			a.Conditions.NotBefore = c.now.Add(2 * time.Minute)
		}}), "not_yet_valid"},
		"assertion IssueInstant too old": {both(craft{requestID: req, assertion: func(a *saml.Assertion) { a.IssueInstant = c.now.Add(-91 * time.Second) }}), "issue_instant"},
		"response IssueInstant too old":  {both(craft{requestID: req, response: func(r *saml.Response) { r.IssueInstant = c.now.Add(-91 * time.Second) }}), "issue_instant"},
		"IssueInstant in the future":     {both(craft{requestID: req, assertion: func(a *saml.Assertion) { a.IssueInstant = c.now.Add(3 * time.Minute) }}), "issue_instant"},
		"wrong Destination":              {both(craft{requestID: req, response: func(r *saml.Response) { r.Destination = "https://evil.test/acs" }}), "destination"},
		"wrong Recipient": {both(craft{requestID: req, assertion: func(a *saml.Assertion) {
			a.Subject.SubjectConfirmations[0].SubjectConfirmationData.Recipient = "https://evil.test/acs"
		}}), "recipient"},
		"wrong assertion Issuer": {both(craft{requestID: req, assertion: func(a *saml.Assertion) { a.Issuer.Value = "https://evil.test/idp" }}), "issuer"},
		"wrong response Issuer":  {both(craft{requestID: req, response: func(r *saml.Response) { r.Issuer.Value = "https://evil.test/idp" }}), "issuer"},
		"InResponseTo mismatch":  {both(craft{requestID: "id-other"}), "in_response_to"},
		"InResponseTo mismatch in the assertion only": {both(craft{requestID: req, assertion: func(a *saml.Assertion) {
			a.Subject.SubjectConfirmations[0].SubjectConfirmationData.InResponseTo = "id-other"
		}}), "in_response_to"},
		"IdP-initiated when a request is expected": {both(craft{requestID: ""}), "in_response_to"},
		"status not success": {both(craft{requestID: req, response: func(r *saml.Response) {
			r.Status.StatusCode.Value = saml.StatusRequester
		}}), "status"},
		"no bearer confirmation": {both(craft{requestID: req, assertion: func(a *saml.Assertion) {
			a.Subject.SubjectConfirmations[0].Method = "urn:oasis:names:tc:SAML:2.0:cm:holder-of-key"
		}}), "confirmation"},
		"transient NameID as subject": {both(craft{requestID: req, assertion: func(a *saml.Assertion) {
			a.Subject.NameID.Format = string(saml.TransientNameIDFormat)
		}}), "subject"},
	}
	for name, tc := range rejected {
		t.Run("reject/"+name, func(t *testing.T) {
			id, a, err := c.s.ParseResponse(c.build(tc.b), req)
			refused(t, id, a, err, tc.detail)
		})
	}

	t.Run("malformed", func(t *testing.T) {
		for _, in := range []string{"%%%", base64.StdEncoding.EncodeToString([]byte("<not xml")),
			base64.StdEncoding.EncodeToString([]byte(`<x:Response xmlns:x="urn:other"/>`)), ""} {
			id, a, err := c.s.ParseResponse(in, req)
			refused(t, id, a, err, "malformed")
		}
	})
}

func TestSAMLCertificatesAndIdPInitiated(t *testing.T) {
	c := newCrafter(t)
	t.Run("the second of two certificates signs", func(t *testing.T) {
		s := c.sp(func(*SAML) {}, c.pems[idpKeyB()]+c.pems[idpKeyA()])
		c.s = s
		if _, _, err := s.ParseResponse(c.build(craft{requestID: "r", signAssertion: true, signResponse: true}), "r"); err != nil {
			t.Fatal(err)
		}
		id, a, err := s.ParseResponse(c.build(craft{requestID: "r", signAssertion: true, key: idpKeyC()}), "r")
		refused(t, id, a, err, "signature")
	})
	t.Run("IdP-initiated", func(t *testing.T) {
		resp := c.build(craft{signAssertion: true, signResponse: true})
		var f *Failure
		if _, _, err := c.s.ParseResponse(resp, ""); !errors.As(err, &f) || f.Reason != ReasonSAMLUnsolicited {
			t.Fatalf("not allowed: %v", err)
		}
		allowed := c.s
		allowed.allowUnasked = true
		if _, _, err := allowed.ParseResponse(resp, ""); err != nil {
			t.Fatalf("allowed: %v", err)
		}
		// An unsolicited post must not claim to answer a request.
		id, a, err := allowed.ParseResponse(c.build(craft{requestID: "id-x", signAssertion: true, signResponse: true}), "")
		refused(t, id, a, err, "in_response_to")
	})
	t.Run("crewjam's own response", func(t *testing.T) {
		c.now = time.Now().UTC() // MakeResponse reads the real clock too
		idp := &saml.IdentityProvider{Key: idpKeyA(), Certificate: c.certs[idpKeyA()], MetadataURL: mustURL(craftIdP),
			SignatureMethod: dsig.RSASHA256SignatureMethod}
		req := &saml.IdpAuthnRequest{IDP: idp, Now: c.now, Assertion: c.assertion("r"), Request: saml.AuthnRequest{ID: "r"},
			SPSSODescriptor: &saml.SPSSODescriptor{}, ServiceProviderMetadata: &saml.EntityDescriptor{EntityID: c.s.EntityID()},
			ACSEndpoint: &saml.IndexedEndpoint{Binding: saml.HTTPPostBinding, Location: c.s.ACSURL()}}
		if err := req.MakeResponse(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.s.ParseResponse(encodeEl(t, req.ResponseEl), "r"); err != nil {
			t.Fatal(err)
		}
	})
}

// Signature wrapping: whatever is added or moved, only the signed
// assertion may be read, and here none is acceptable.
func TestSAMLSignatureWrapping(t *testing.T) {
	c := newCrafter(t)
	req := "id-req"
	legit := c.sign(c.assertion(req).Element(), idpKeyA(), dsig.RSASHA256SignatureMethod)
	evilA := c.assertion(req)
	evilA.Subject.NameID.Value = "admin"
	evilA.ID = legit.SelectAttrValue("ID", "")
	evil := evilA.Element()
	resp := func(children ...*etree.Element) *etree.Element {
		el := c.response(req).Element()
		for _, ch := range children {
			el.AddChild(ch.Copy())
		}
		return el
	}

	signedResp := c.sign(resp(legit), idpKeyA(), dsig.RSASHA256SignatureMethod)
	injected := signedResp.Copy()
	injected.AddChild(evil.Copy())

	evilWithSig := evil.Copy()
	evilWithSig.InsertChildAt(1, legit.FindElement("./Signature").Copy())

	evilHoldingLegit := evil.Copy()
	evilHoldingLegit.FindElement("./Subject").AddChild(legit.Copy())

	ext := resp(evil)
	extensions := ext.CreateElement("samlp:Extensions")
	extensions.AddChild(signedResp.Copy())

	cases := map[string]*etree.Element{
		"signed assertion plus an injected unsigned one": resp(legit, evil),
		"injected unsigned one first":                    resp(evil, legit),
		"signed response plus an injected assertion":     injected,
		"signature copied into the forged assertion":     resp(evilWithSig),
		"signed assertion moved inside the forged one":   resp(evilHoldingLegit),
		"signed response moved into Extensions":          ext,
		"forged assertion inside a signed one's Advice":  resp(withChild(legit, "saml:Advice", evil)),
		"unsigned response with only a forged assertion": resp(evil),
	}
	for name, el := range cases {
		t.Run(name, func(t *testing.T) {
			id, a, err := c.s.ParseResponse(encodeEl(t, el), req)
			var f *Failure
			if !errors.As(err, &f) || f.Reason != ReasonSAMLInvalid || id != nil || a != nil {
				t.Fatalf("accepted or wrong refusal: %v %+v", err, id)
			}
		})
	}
	// The untouched signed response still passes, and yields the signed
	// subject.
	id, _, err := c.s.ParseResponse(encodeEl(t, signedResp), req)
	if err != nil || id.Subject != "u-1001" {
		t.Fatalf("legit: %v %+v", err, id)
	}
}

// withChild is a copy of el with a new child tag holding inner.
func withChild(el *etree.Element, tag string, inner *etree.Element) *etree.Element {
	out := el.Copy()
	out.CreateElement(tag).AddChild(inner.Copy())
	return out
}

// An encrypted assertion opens only with the SP key it was encrypted for.
func TestSAMLEncryptedAssertion(t *testing.T) {
	c := newCrafter(t)
	spCert, spCertPEM := selfSigned(t, spKey(), "sp")
	p := samlProvider(craftIdP, "https://idp.test/sso", c.pems[idpKeyA()])
	p.SPCertificate = ptr(spCertPEM)
	o := Options{BaseURL: "https://coffer.test", Now: func() time.Time { return c.now }, SAMLSkew: 90 * time.Second}
	c.s = mustSAML(t, p, keyPEM(t, spKey()), o)

	signed := c.sign(c.assertion("r").Element(), idpKeyA(), dsig.RSASHA256SignatureMethod)
	plain := elBytes(t, signed)
	enc := xmlenc.OAEP()
	enc.BlockCipher = xmlenc.AES256CBC
	ed, err := enc.Encrypt(spCert, plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	ed.CreateAttr("Type", "http://www.w3.org/2001/04/xmlenc#Element")
	ea := etree.NewElement("saml:EncryptedAssertion")
	ea.AddChild(ed)
	r := c.response("r").Element()
	r.AddChild(ea)
	resp := encodeEl(t, r)

	id, _, err := c.s.ParseResponse(resp, "r")
	if err != nil || id.Subject != "u-1001" {
		t.Fatalf("with the SP key: %v %+v", err, id)
	}
	// A key without a certificate still decrypts; it is not published.
	p.SPCertificate = nil
	noCert := mustSAML(t, p, keyPEM(t, spKey()), o)
	if md, _ := noCert.Metadata(); strings.Contains(string(md), "KeyDescriptor") {
		t.Fatalf("metadata publishes a key without a certificate: %s", md)
	}
	if _, _, err := noCert.ParseResponse(resp, "r"); err != nil {
		t.Fatalf("key without certificate: %v", err)
	}
	for name, key := range map[string]string{"no SP key": "", "another key": keyPEM(t, idpKeyB())} {
		s := mustSAML(t, p, key, o)
		id, a, err := s.ParseResponse(resp, "r")
		t.Run(name, func(t *testing.T) { refused(t, id, a, err, "encrypted assertion") })
	}
}

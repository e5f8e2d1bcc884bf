package sso

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	"github.com/crewjam/saml/xmlenc"
	xrv "github.com/mattermost/xml-roundtrip-validator"
	dsig "github.com/russellhaering/goxmldsig"
	"github.com/russellhaering/goxmldsig/etreeutils"
)

// Assertion is what the caller's replay cache needs of an accepted
// assertion: its id and the end of its validity (the earliest
// NotOnOrAfter of its conditions and bearer confirmation, skew not added).
type Assertion struct {
	ID           string
	NotOnOrAfter time.Time
}

// maxIssueDelay is how old a response or assertion may be when it arrives.
const maxIssueDelay = 90 * time.Second

// maxSAMLResponse bounds the base64 form value (the ACS caps the body at
// 512 KiB; this only keeps direct callers honest).
const maxSAMLResponse = 1 << 20

const (
	nsProtocol  = "urn:oasis:names:tc:SAML:2.0:protocol"
	nsAssertion = "urn:oasis:names:tc:SAML:2.0:assertion"
	nsEnc       = "http://www.w3.org/2001/04/xmlenc#"
	bearer      = "urn:oasis:names:tc:SAML:2.0:cm:bearer"
)

func invalid(format string, args ...any) *Failure { return fail(ReasonSAMLInvalid, format, args...) }

// InResponseTo reads the InResponseTo of a posted SAMLResponse without
// checking anything else, so that the caller can take its stored request
// before ParseResponse (spec/sso.md §6.3 step 2). "" means IdP-initiated.
// Malformed base64 or XML is a saml_invalid *Failure.
func InResponseTo(samlResponse string) (string, error) {
	root, err := decodeResponse(samlResponse)
	if err != nil {
		return "", err
	}
	return root.SelectAttrValue("InResponseTo", ""), nil
}

// ParseResponse checks a posted SAMLResponse (the base64 form value).
// requestID is the id the caller took from its store for the response's
// InResponseTo, "" for an IdP-initiated response (refused with
// saml_unsolicited unless the provider allows them). It requires, with
// the clock of Options and SAMLSkew on NotBefore / NotOnOrAfter:
// a signature by one of the IdP certificates on the Response or the
// Assertion, exactly one assertion, Issuer = IdP entity id, Destination
// (when present) and bearer Recipient = ACS URL, Audience = entity id,
// InResponseTo = requestID on the response and the confirmation, the
// validity window, IssueInstant at most 90 s old, status success. Only
// the content the signature covers is read. Any refusal is a *Failure
// with Reason saml_invalid and the cause in Detail.
func (s *SAML) ParseResponse(samlResponse, requestID string) (*Identity, *Assertion, error) {
	if requestID == "" && !s.allowUnasked {
		return nil, nil, fail(ReasonSAMLUnsolicited, "IdP-initiated sign-in is not allowed")
	}
	now := s.o.now()
	root, err := decodeResponse(samlResponse)
	if err != nil {
		return nil, nil, err
	}
	respEl, respSigned := root, false
	if hasSignature(root) {
		if respEl, err = s.verify(root, now); err != nil {
			return nil, nil, invalid("signature: response: %s", shortErr(err))
		}
		respSigned = true
	}
	var resp saml.Response
	if err := unmarshalEl(respEl, &resp); err != nil {
		return nil, nil, invalid("malformed response: %s", shortErr(err))
	}
	if err := s.checkResponse(&resp, requestID, now); err != nil {
		return nil, nil, err
	}

	els := append(children(respEl, nsAssertion, "Assertion"), children(respEl, nsAssertion, "EncryptedAssertion")...)
	if len(els) != 1 {
		return nil, nil, invalid("assertions: expected exactly one, found %d", len(els))
	}
	aEl := els[0]
	if aEl.Tag == "EncryptedAssertion" {
		if aEl, err = s.decrypt(aEl); err != nil {
			return nil, nil, invalid("encrypted assertion: %s", shortErr(err))
		}
		if aEl.Tag != "Assertion" || aEl.NamespaceURI() != nsAssertion {
			return nil, nil, invalid("encrypted assertion: not an assertion")
		}
	}
	aSigned := false
	if hasSignature(aEl) {
		if aEl, err = s.verify(aEl, now); err != nil {
			return nil, nil, invalid("signature: assertion: %s", shortErr(err))
		}
		aSigned = true
	}
	if !respSigned && !aSigned {
		return nil, nil, invalid("signature: neither the response nor the assertion is signed")
	}
	var a saml.Assertion
	if err := unmarshalEl(aEl, &a); err != nil {
		return nil, nil, invalid("malformed assertion: %s", shortErr(err))
	}
	notOnOrAfter, err := s.checkAssertion(&a, aEl, requestID, now)
	if err != nil {
		return nil, nil, err
	}
	id, err := s.identity(&a)
	if err != nil {
		return nil, nil, err
	}
	return id, &Assertion{ID: a.ID, NotOnOrAfter: notOnOrAfter}, nil
}

func (s *SAML) checkResponse(r *saml.Response, requestID string, now time.Time) error {
	if r.Version != "2.0" {
		return invalid("malformed response: version is not 2.0")
	}
	if r.Issuer != nil && r.Issuer.Value != s.idpEntityID() {
		return invalid("issuer: response issuer is not the IdP entity id")
	}
	if r.Destination != "" && r.Destination != s.acsURL {
		return invalid("destination: not this provider's ACS URL")
	}
	if r.InResponseTo != requestID {
		return invalid("in_response_to: the response does not answer the expected request")
	}
	if err := s.checkIssued("response", r.IssueInstant, now); err != nil {
		return err
	}
	if r.Status.StatusCode.Value != saml.StatusSuccess {
		return invalid("status: %s", clipDetail(r.Status.StatusCode.Value))
	}
	return nil
}

func (s *SAML) checkIssued(what string, t, now time.Time) error {
	switch {
	case t.IsZero():
		return invalid("issue_instant: %s has none", what)
	case now.Sub(t) > maxIssueDelay:
		return invalid("issue_instant: %s issued more than 90 s ago", what)
	case t.Sub(now) > s.o.SAMLSkew:
		return invalid("issue_instant: %s issued in the future", what)
	}
	return nil
}

// checkAssertion checks a verified assertion and returns when it ends.
func (s *SAML) checkAssertion(a *saml.Assertion, el *etree.Element, requestID string, now time.Time) (time.Time, error) {
	skew := s.o.SAMLSkew
	if a.ID == "" || a.Version != "2.0" {
		return time.Time{}, invalid("malformed assertion: no ID or not version 2.0")
	}
	if a.Issuer.Value != s.idpEntityID() {
		return time.Time{}, invalid("issuer: assertion issuer is not the IdP entity id")
	}
	if err := s.checkIssued("assertion", a.IssueInstant, now); err != nil {
		return time.Time{}, err
	}
	if a.Subject == nil {
		return time.Time{}, invalid("malformed assertion: no subject")
	}
	// One bearer confirmation must hold; the first failure is reported.
	var end time.Time
	var why *Failure
	for _, sc := range a.Subject.SubjectConfirmations {
		d := sc.SubjectConfirmationData
		switch {
		case sc.Method != bearer || d == nil:
			why = invalid("confirmation: no bearer confirmation data")
		case d.Recipient != s.acsURL:
			why = invalid("recipient: not this provider's ACS URL")
		case d.InResponseTo != requestID:
			why = invalid("in_response_to: the assertion does not answer the expected request")
		case d.NotOnOrAfter.IsZero():
			why = invalid("confirmation: no NotOnOrAfter")
		case !now.Before(d.NotOnOrAfter.Add(skew)):
			why = invalid("expired: confirmation NotOnOrAfter passed")
		case !d.NotBefore.IsZero() && now.Before(d.NotBefore.Add(-skew)):
			why = invalid("not_yet_valid: confirmation NotBefore ahead")
		default:
			end, why = d.NotOnOrAfter, nil
		}
		if why == nil {
			break
		}
	}
	if end.IsZero() {
		if why == nil {
			why = invalid("confirmation: none")
		}
		return time.Time{}, why
	}
	c := a.Conditions
	if c == nil {
		return time.Time{}, invalid("audience: the assertion has no conditions")
	}
	if !c.NotBefore.IsZero() && now.Before(c.NotBefore.Add(-skew)) {
		return time.Time{}, invalid("not_yet_valid: NotBefore ahead")
	}
	if !c.NotOnOrAfter.IsZero() {
		if !now.Before(c.NotOnOrAfter.Add(skew)) {
			return time.Time{}, invalid("expired: NotOnOrAfter passed")
		}
		if c.NotOnOrAfter.Before(end) {
			end = c.NotOnOrAfter
		}
	}
	if err := s.checkAudience(el); err != nil {
		return time.Time{}, err
	}
	return end, nil
}

// checkAudience requires at least one AudienceRestriction, each naming
// this SP (saml-core §2.5.1.4: every restriction must hold). It reads the
// element, since crewjam keeps one Audience per restriction.
func (s *SAML) checkAudience(aEl *etree.Element) error {
	conds := children(aEl, nsAssertion, "Conditions")
	if len(conds) != 1 {
		return invalid("audience: expected one Conditions")
	}
	restrictions := children(conds[0], nsAssertion, "AudienceRestriction")
	if len(restrictions) == 0 {
		return invalid("audience: no audience restriction")
	}
	for _, r := range restrictions {
		ok := false
		for _, au := range children(r, nsAssertion, "Audience") {
			if strings.TrimSpace(au.Text()) == s.entityID {
				ok = true
			}
		}
		if !ok {
			return invalid("audience: the assertion is for another service provider")
		}
	}
	return nil
}

func (s *SAML) idpEntityID() string {
	if s.p.IdPEntityID == nil {
		return ""
	}
	return *s.p.IdPEntityID
}

// decodeResponse turns the form value into the root element of a
// well-formed samlp:Response.
func decodeResponse(samlResponse string) (*etree.Element, error) {
	if len(samlResponse) > maxSAMLResponse {
		return nil, invalid("malformed: response too large")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Map(dropSpace, samlResponse))
	if err != nil {
		return nil, invalid("malformed: not base64")
	}
	root, err := parseXML(raw)
	if err != nil {
		return nil, invalid("malformed: %s", shortErr(err))
	}
	if root.Tag != "Response" || root.NamespaceURI() != nsProtocol {
		return nil, invalid("malformed: not a SAML Response")
	}
	return root, nil
}

func dropSpace(r rune) rune {
	switch r {
	case ' ', '\t', '\r', '\n':
		return -1
	}
	return r
}

// parseXML parses a document after checking that encoding/xml and etree
// read it alike (xml-roundtrip-validator), as crewjam does.
func parseXML(raw []byte) (*etree.Element, error) {
	if err := xrv.Validate(bytes.NewReader(raw)); err != nil {
		return nil, errors.New("invalid XML")
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(raw); err != nil {
		return nil, errors.New("invalid XML")
	}
	if doc.Root() == nil {
		return nil, errors.New("no root element")
	}
	return doc.Root(), nil
}

// children are the child elements of el named ns:tag.
func children(el *etree.Element, ns, tag string) []*etree.Element {
	var out []*etree.Element
	for _, c := range el.ChildElements() {
		if c.Tag == tag && c.NamespaceURI() == ns {
			out = append(out, c)
		}
	}
	return out
}

func hasSignature(el *etree.Element) bool { return len(children(el, dsig.Namespace, "Signature")) > 0 }

// Accepted signature and digest algorithms: SHA-1 is refused.
var (
	sigAlgs = map[string]bool{
		dsig.RSASHA256SignatureMethod: true, dsig.RSASHA384SignatureMethod: true, dsig.RSASHA512SignatureMethod: true,
		dsig.ECDSASHA256SignatureMethod: true, dsig.ECDSASHA384SignatureMethod: true, dsig.ECDSASHA512SignatureMethod: true,
	}
	digestAlgs = map[string]bool{
		"http://www.w3.org/2001/04/xmlenc#sha256":       true,
		"http://www.w3.org/2001/04/xmldsig-more#sha384": true,
		"http://www.w3.org/2001/04/xmlenc#sha512":       true,
	}
)

// verify checks the enveloped signature of el against each IdP
// certificate in turn and returns the signed content itself (what
// goxmldsig digested), so that nothing outside the signature is read.
// KeyInfo is ignored: trust comes from the configured certificates only.
func (s *SAML) verify(el *etree.Element, now time.Time) (*etree.Element, error) {
	ctx, err := etreeutils.NSBuildParentContext(el)
	if err != nil {
		return nil, err
	}
	el, err = etreeutils.NSDetatch(ctx, el)
	if err != nil {
		return nil, err
	}
	// Only el's own signature loses its KeyInfo: a nested one is part of
	// the signed content.
	for _, sig := range children(el, dsig.Namespace, "Signature") {
		for _, ki := range children(sig, dsig.Namespace, "KeyInfo") {
			sig.RemoveChild(ki)
		}
	}
	for _, sig := range el.FindElements(".//Signature") {
		if sig.NamespaceURI() != dsig.Namespace {
			continue
		}
		for _, si := range children(sig, dsig.Namespace, "SignedInfo") {
			for _, m := range children(si, dsig.Namespace, "SignatureMethod") {
				if !sigAlgs[m.SelectAttrValue("Algorithm", "")] {
					return nil, errors.New("signature algorithm not accepted")
				}
			}
			for _, ref := range children(si, dsig.Namespace, "Reference") {
				for _, m := range children(ref, dsig.Namespace, "DigestMethod") {
					if !digestAlgs[m.SelectAttrValue("Algorithm", "")] {
						return nil, errors.New("digest algorithm not accepted")
					}
				}
			}
		}
	}
	var last error
	for _, c := range s.idpCerts {
		vc := dsig.NewDefaultValidationContext(&dsig.MemoryX509CertificateStore{Roots: []*x509.Certificate{c}})
		vc.IdAttribute = "ID"
		vc.Clock = clock(now)
		signed, err := vc.Validate(el)
		if err == nil {
			return signed, nil
		}
		last = err
	}
	return nil, last
}

// decrypt opens an EncryptedAssertion with the SP key.
func (s *SAML) decrypt(el *etree.Element) (*etree.Element, error) {
	key, ok := s.key.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("no RSA SP key to decrypt it")
	}
	data := children(el, nsEnc, "EncryptedData")
	if len(data) != 1 {
		return nil, errors.New("expected one EncryptedData")
	}
	var k any = key
	if ek := children(el, nsEnc, "EncryptedKey"); len(ek) == 1 {
		sym, err := xmlenc.Decrypt(key, ek[0])
		if err != nil {
			return nil, errors.New("cannot decrypt the key")
		}
		k = sym
	}
	plain, err := xmlenc.Decrypt(k, data[0])
	if err != nil {
		return nil, errors.New("cannot decrypt")
	}
	return parseXML(plain)
}

// unmarshalEl decodes el, with the namespaces in scope, into v.
func unmarshalEl(el *etree.Element, v any) error {
	ctx, err := etreeutils.NSBuildParentContext(el)
	if err != nil {
		return err
	}
	return etreeutils.NSUnmarshalElement(ctx, el, v)
}

func clipDetail(s string) string {
	if len(s) > 100 {
		return s[:100]
	}
	return s
}

package sso

import (
	"bytes"
	"compress/flate"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"

	"coffer/models"
)

// SAML is the service provider of one SAML 2.0 provider, on crewjam/saml:
// it writes the SP metadata and the AuthnRequest and LogoutRequest
// redirects, and checks what the identity provider sends back. It keeps
// no state: the caller stores request ids and assertion ids.
type SAML struct {
	p        *models.SSOProvider
	o        Options
	entityID string
	acsURL   string
	sloURL   string
	format   saml.NameIDFormat

	idpCerts []*x509.Certificate
	key      crypto.Signer     // SP key; nil when none
	cert     *x509.Certificate // SP certificate; nil when none
	sigAlg   string            // signature method of requests; "" when unsigned

	emailAttr    string // "" means the first present of defaultEmailAttrs
	groupAttr    string
	names        map[string]string // custom_mappings
	allowUnasked bool              // IdP-initiated responses allowed
}

// SAML name id formats by their setting (spec/sso.md §4.1).
var nameIDFormats = map[string]saml.NameIDFormat{
	"":            saml.UnspecifiedNameIDFormat,
	"unspecified": saml.UnspecifiedNameIDFormat,
	"email":       saml.EmailAddressNameIDFormat,
	"persistent":  saml.PersistentNameIDFormat,
	"transient":   saml.TransientNameIDFormat,
}

// NewSAML builds the SP of provider p. spKeyPEM is p's opened private key
// ("" when none): it signs requests when p.SignRequests is on and
// decrypts encrypted assertions.
func NewSAML(p *models.SSOProvider, spKeyPEM string, o Options) (*SAML, error) {
	if p.Strategy != models.StrategySAML {
		return nil, fmt.Errorf("sso: %s is not a SAML provider", p.Name)
	}
	s := &SAML{
		p:            p,
		o:            o,
		entityID:     strings.TrimRight(o.BaseURL, "/") + "/auth/saml/" + p.ID.String(),
		groupAttr:    models.Str(p.GroupAttribute),
		emailAttr:    models.Str(p.EmailAttribute),
		names:        customMappings(p),
		allowUnasked: p.AllowIdPInitiated,
	}
	s.acsURL = s.entityID + "/callback"
	s.sloURL = s.entityID + "/logout"
	var ok bool
	if s.format, ok = nameIDFormats[models.Str(p.NameIDFormat)]; !ok {
		return nil, fmt.Errorf("sso: %s: unknown name id format %q", p.Name, models.Str(p.NameIDFormat))
	}
	if models.Str(p.IdPEntityID) == "" || models.Str(p.IdPSSOURL) == "" {
		return nil, fmt.Errorf("sso: %s: IdP entity id and SSO URL are required", p.Name)
	}
	var err error
	if s.idpCerts, err = parseCertificates(models.Str(p.IdPCertificates)); err != nil {
		return nil, fmt.Errorf("sso: %s: IdP certificates: %w", p.Name, err)
	}
	if spKeyPEM != "" {
		if s.key, err = parsePrivateKey(spKeyPEM); err != nil {
			return nil, fmt.Errorf("sso: %s: SP private key: %w", p.Name, err)
		}
	}
	// Without a certificate a key still decrypts, but is not published.
	if s.key != nil && (models.Str(p.SPCertificate) != "" || p.SignRequests) {
		certs, err := parseCertificates(models.Str(p.SPCertificate))
		if err != nil {
			return nil, fmt.Errorf("sso: %s: SP certificate: %w", p.Name, err)
		}
		s.cert = certs[0]
		if !publicKeysEqual(s.key.Public(), s.cert.PublicKey) {
			return nil, fmt.Errorf("sso: %s: the private key does not match the certificate", p.Name)
		}
	}
	if p.SignRequests {
		switch s.key.(type) {
		case *rsa.PrivateKey:
			s.sigAlg = dsig.RSASHA256SignatureMethod
		case *ecdsa.PrivateKey:
			s.sigAlg = dsig.ECDSASHA256SignatureMethod
		default:
			return nil, fmt.Errorf("sso: %s: signing requests needs an RSA or ECDSA key and its certificate", p.Name)
		}
	}
	return s, nil
}

// EntityID is the SP entity id, {BaseURL}/auth/saml/<provider id>; it is
// also the audience assertions must name.
func (s *SAML) EntityID() string { return s.entityID }

// ACSURL is the assertion consumer service (HTTP-POST), …/callback.
func (s *SAML) ACSURL() string { return s.acsURL }

// SLOURL is where the IdP's LogoutResponse arrives (HTTP-Redirect),
// …/logout.
func (s *SAML) SLOURL() string { return s.sloURL }

// Metadata is the SP metadata, served as application/samlmetadata+xml:
// signed assertions wanted, AuthnRequestsSigned = sign_requests, the name
// id format, the ACS (HTTP-POST) and SLO (HTTP-Redirect) endpoints, an
// encryption key when an RSA key is set and a signing key when requests
// are signed.
func (s *SAML) Metadata() ([]byte, error) {
	sp := saml.ServiceProvider{
		EntityID:          s.entityID,
		AcsURL:            mustURL(s.acsURL),
		SloURL:            mustURL(s.sloURL),
		SignatureMethod:   s.sigAlg,
		AuthnNameIDFormat: s.format,
		LogoutBindings:    []string{saml.HTTPRedirectBinding},
	}
	if s.cert != nil {
		sp.Key, sp.Certificate = s.key, s.cert
	}
	ed := sp.Metadata()
	until := s.o.now().Add(saml.DefaultValidDuration).UTC()
	ed.ValidUntil = until
	d := &ed.SPSSODescriptors[0]
	d.ValidUntil = &until
	// Only the POST binding is served: no artifact resolution.
	d.AssertionConsumerServices = d.AssertionConsumerServices[:1]
	if _, rsaKey := s.key.(*rsa.PrivateKey); !rsaKey {
		// xmlenc key transport is RSA only: offer no encryption key.
		kds := d.KeyDescriptors[:0]
		for _, kd := range d.KeyDescriptors {
			if kd.Use != "encryption" {
				kds = append(kds, kd)
			}
		}
		d.KeyDescriptors = kds
	}
	out, err := xml.MarshalIndent(ed, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("sso: saml metadata: %w", err)
	}
	return append([]byte(xml.Header), out...), nil
}

// AuthnRequest returns the HTTP-Redirect URL of a new AuthnRequest to the
// IdP's SSO URL (its query signed with RSA-SHA256 or ECDSA-SHA256 when
// sign_requests is on) and the request id, which the caller stores to
// check the response's InResponseTo.
func (s *SAML) AuthnRequest(relayState string) (redirectURL, requestID string, err error) {
	allowCreate, format := true, s.requestFormat()
	req := saml.AuthnRequest{
		ID:                          newSAMLID(),
		Version:                     "2.0",
		IssueInstant:                s.o.now().UTC(),
		Destination:                 models.Str(s.p.IdPSSOURL),
		AssertionConsumerServiceURL: s.acsURL,
		ProtocolBinding:             saml.HTTPPostBinding,
		Issuer:                      s.issuer(),
		NameIDPolicy:                &saml.NameIDPolicy{Format: &format, AllowCreate: &allowCreate},
	}
	u, err := s.redirect(req.Destination, "SAMLRequest", req.Element(), relayState)
	if err != nil {
		return "", "", err
	}
	return u, req.ID, nil
}

// LogoutRequest returns the HTTP-Redirect URL of an SP-initiated
// LogoutRequest to the IdP's SLO URL for the session nameID and
// sessionIndex (signed when sign_requests is on) and its id, which the
// caller stores to check the LogoutResponse.
func (s *SAML) LogoutRequest(nameID, sessionIndex, relayState string) (redirectURL, requestID string, err error) {
	dest := models.Str(s.p.IdPSLOURL)
	if dest == "" {
		return "", "", fmt.Errorf("sso: %s: no IdP SLO URL", s.p.Name)
	}
	if nameID == "" {
		return "", "", errors.New("sso: saml logout needs the session's NameID")
	}
	req := saml.LogoutRequest{
		ID:           newSAMLID(),
		Version:      "2.0",
		IssueInstant: s.o.now().UTC(),
		Destination:  dest,
		Issuer:       s.issuer(),
		NameID:       &saml.NameID{Format: s.requestFormat(), Value: nameID},
	}
	if sessionIndex != "" {
		req.SessionIndex = &saml.SessionIndex{Value: sessionIndex}
	}
	u, err := s.redirect(dest, "SAMLRequest", req.Element(), relayState)
	if err != nil {
		return "", "", err
	}
	return u, req.ID, nil
}

const entityFormat = "urn:oasis:names:tc:SAML:2.0:nameid-format:entity"

// issuer names this service provider as the issuer of its requests.
func (s *SAML) issuer() *saml.Issuer { return &saml.Issuer{Format: entityFormat, Value: s.entityID} }

// requestFormat is the NameID format the requests name: none for
// unspecified, which leaves the choice to the IdP.
func (s *SAML) requestFormat() string {
	if s.format == saml.UnspecifiedNameIDFormat {
		return ""
	}
	return string(s.format)
}

// redirect encodes el for the HTTP-Redirect binding (DEFLATE, base64) as
// parameter param of dest, and signs the query when requests are signed
// (saml-bindings §3.4.4.1: the signature covers the encoded parameters in
// this order).
func (s *SAML) redirect(dest, param string, el *etree.Element, relayState string) (string, error) {
	doc := etree.NewDocument()
	doc.SetRoot(el)
	raw, err := doc.WriteToBytes()
	if err != nil {
		return "", fmt.Errorf("sso: saml request: %w", err)
	}
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression) // the level is valid
	if _, err := fw.Write(raw); err != nil {
		return "", fmt.Errorf("sso: saml request: %w", err)
	}
	if err := fw.Close(); err != nil {
		return "", fmt.Errorf("sso: saml request: %w", err)
	}
	q := param + "=" + url.QueryEscape(base64.StdEncoding.EncodeToString(buf.Bytes()))
	if relayState != "" {
		q += "&RelayState=" + url.QueryEscape(relayState)
	}
	if s.sigAlg != "" {
		q += "&SigAlg=" + url.QueryEscape(s.sigAlg)
		sig, err := s.signString(q)
		if err != nil {
			return "", err
		}
		q += "&Signature=" + url.QueryEscape(base64.StdEncoding.EncodeToString(sig))
	}
	u, err := url.Parse(dest)
	if err != nil {
		return "", fmt.Errorf("sso: saml destination: %w", err)
	}
	if u.RawQuery != "" {
		q = u.RawQuery + "&" + q
	}
	u.RawQuery = q
	return u.String(), nil
}

// signString signs a redirect-binding query with SHA-256: PKCS #1 v1.5
// for RSA, r‖s for ECDSA (the XML-DSig encoding).
func (s *SAML) signString(q string) ([]byte, error) {
	h := sha256.Sum256([]byte(q))
	switch k := s.key.(type) {
	case *rsa.PrivateKey:
		return rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, h[:])
	case *ecdsa.PrivateKey:
		r, sv, err := ecdsa.Sign(rand.Reader, k, h[:])
		if err != nil {
			return nil, err
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		out := make([]byte, 2*size)
		r.FillBytes(out[:size])
		sv.FillBytes(out[size:])
		return out, nil
	}
	return nil, errors.New("sso: saml: no signing key")
}

func newSAMLID() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "id-" + hex.EncodeToString(b)
}

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		return url.URL{}
	}
	return *u
}

// parseCertificates reads every CERTIFICATE block of a PEM text; there
// must be at least one, and nothing else. The error is readCertificates'
// message.
func parseCertificates(text string) ([]*x509.Certificate, error) {
	certs, msg := readCertificates(text)
	if msg != "" {
		return nil, errors.New(msg)
	}
	return certs, nil
}

// parsePrivateKey reads an RSA or ECDSA key in PKCS #1, SEC 1 or PKCS #8.
func parsePrivateKey(text string) (crypto.Signer, error) {
	b, _ := pem.Decode([]byte(text))
	if b == nil {
		return nil, errors.New("not PEM")
	}
	switch b.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(b.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
		if err != nil {
			return nil, err
		}
		switch k := k.(type) {
		case *rsa.PrivateKey:
			return k, nil
		case *ecdsa.PrivateKey:
			return k, nil
		}
		return nil, errors.New("only RSA and ECDSA keys are supported")
	}
	return nil, fmt.Errorf("unexpected PEM block %q", b.Type)
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	eq, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(b)
}

// clock is the dsig clock at now, for certificate validity.
func clock(now time.Time) *dsig.Clock { return dsig.NewFakeClockAt(now) }

package sso

import (
	"bytes"
	"compress/flate"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"strings"

	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"
)

// ValidateLogoutResponse checks the LogoutResponse the IdP redirected to
// the SLO URL. rawQuery is the request's query string as received: a
// redirect-binding signature covers the parameters as the IdP encoded
// them, which url.Values cannot give back. A Signature parameter or an
// embedded XML signature, when present, must verify with an IdP
// certificate; InResponseTo must be requestID; Issuer (when present) the
// IdP; Destination (when present) the SLO URL; the status success.
// Refusals are saml_invalid *Failures.
func (s *SAML) ValidateLogoutResponse(rawQuery, requestID string) error {
	params := map[string]string{}
	for _, kv := range strings.Split(rawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := params[k]; dup {
			return invalid("malformed: repeated %s", clipDetail(k))
		}
		params[k] = v
	}
	value := func(k string) (string, error) {
		v, err := url.QueryUnescape(params[k])
		if err != nil {
			return "", invalid("malformed: %s is not URL-encoded", k)
		}
		return v, nil
	}
	enc, err := value("SAMLResponse")
	if err != nil {
		return err
	}
	if enc == "" {
		return invalid("malformed: no SAMLResponse")
	}
	if sigB64, ok := params["Signature"]; ok {
		sigAlg, err := value("SigAlg")
		if err != nil {
			return err
		}
		sigv, err := value("Signature")
		if err != nil {
			return err
		}
		sig, err := base64.StdEncoding.DecodeString(sigv)
		if err != nil || sigB64 == "" {
			return invalid("signature: not base64")
		}
		signed := "SAMLResponse=" + params["SAMLResponse"]
		if rs, ok := params["RelayState"]; ok {
			signed += "&RelayState=" + rs
		}
		signed += "&SigAlg=" + params["SigAlg"]
		if err := s.verifyString(sigAlg, signed, sig); err != nil {
			return invalid("signature: %s", shortErr(err))
		}
	}
	deflated, err := base64.StdEncoding.DecodeString(strings.Map(dropSpace, enc))
	if err != nil {
		return invalid("malformed: not base64")
	}
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(deflated)), maxSAMLResponse+1))
	if err != nil || len(raw) > maxSAMLResponse {
		return invalid("malformed: not DEFLATE or too large")
	}
	root, err := parseXML(raw)
	if err != nil {
		return invalid("malformed: %s", shortErr(err))
	}
	if root.Tag != "LogoutResponse" || root.NamespaceURI() != nsProtocol {
		return invalid("malformed: not a LogoutResponse")
	}
	if hasSignature(root) {
		if root, err = s.verify(root, s.o.now()); err != nil {
			return invalid("signature: %s", shortErr(err))
		}
	}
	var r saml.LogoutResponse
	if err := unmarshalEl(root, &r); err != nil {
		return invalid("malformed: %s", shortErr(err))
	}
	switch {
	case requestID == "" || r.InResponseTo != requestID:
		return invalid("in_response_to: the response does not answer the expected request")
	case r.Issuer != nil && r.Issuer.Value != s.idpEntityID():
		return invalid("issuer: not the IdP entity id")
	case r.Destination != "" && r.Destination != s.sloURL:
		return invalid("destination: not this provider's SLO URL")
	case r.Status.StatusCode.Value != saml.StatusSuccess:
		return invalid("status: %s", clipDetail(r.Status.StatusCode.Value))
	}
	return s.checkIssued("logout response", r.IssueInstant, s.o.now())
}

// verifyString checks a redirect-binding signature by one of the IdP
// certificates. ECDSA signatures may be r‖s or ASN.1.
func (s *SAML) verifyString(sigAlg, signed string, sig []byte) error {
	var h crypto.Hash
	switch sigAlg {
	case dsig.RSASHA256SignatureMethod, dsig.ECDSASHA256SignatureMethod:
		h = crypto.SHA256
	case dsig.RSASHA384SignatureMethod, dsig.ECDSASHA384SignatureMethod:
		h = crypto.SHA384
	case dsig.RSASHA512SignatureMethod, dsig.ECDSASHA512SignatureMethod:
		h = crypto.SHA512
	default:
		return fmt.Errorf("signature algorithm %q not accepted", sigAlg)
	}
	hw := h.New()
	hw.Write([]byte(signed))
	digest := hw.Sum(nil)
	for _, c := range s.idpCerts {
		switch pub := c.PublicKey.(type) {
		case *rsa.PublicKey:
			if strings.Contains(sigAlg, "rsa-") && rsa.VerifyPKCS1v15(pub, h, digest, sig) == nil {
				return nil
			}
		case *ecdsa.PublicKey:
			if !strings.Contains(sigAlg, "ecdsa-") {
				continue
			}
			if ecdsa.VerifyASN1(pub, digest, sig) {
				return nil
			}
			if len(sig)%2 == 0 && len(sig) > 0 {
				r := new(big.Int).SetBytes(sig[:len(sig)/2])
				sv := new(big.Int).SetBytes(sig[len(sig)/2:])
				if ecdsa.Verify(pub, digest, r, sv) {
					return nil
				}
			}
		}
	}
	return errors.New("no configured IdP certificate verifies it")
}

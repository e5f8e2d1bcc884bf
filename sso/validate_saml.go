package sso

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"coffer/models"
)

// SAML NameID formats and subject sources of the provider form.
const (
	NameIDEmail       = "email"
	NameIDPersistent  = "persistent"
	NameIDTransient   = "transient"
	NameIDUnspecified = "unspecified"

	SubjectNameID         = "name_id"
	SubjectEmailAttribute = "email_attribute"
)

func validateSAML(ctx context.Context, p *models.SSOProvider, in ProviderSecrets, creating bool, o Options, e FieldErrors) {
	if mu := trim(&p.IdPMetadataURL); mu != "" && optionalURL(mu, "idp_metadata_url", e) {
		if trim(&p.IdPEntityID) == "" || trim(&p.IdPSSOURL) == "" || trim(&p.IdPSLOURL) == "" || trim(&p.IdPCertificates) == "" {
			m, err := fetchMetadata(ctx, mu, o.HTTPClient)
			if err != nil {
				e["idp_metadata_url"] = sentence("Could not read the metadata: %v", err).Error()
			} else {
				fillEmpty(&p.IdPEntityID, m.EntityID)
				fillEmpty(&p.IdPSSOURL, m.SSOURL)
				fillEmpty(&p.IdPSLOURL, m.SLOURL)
				fillEmpty(&p.IdPCertificates, m.Certificates)
			}
		}
	}
	// Entity IDs are URIs but not always https URLs (Okta's start with
	// http://www.okta.com/, others are URNs), so only their presence is
	// checked.
	switch id := trim(&p.IdPEntityID); {
	case id == "":
		e["idp_entity_id"] = MsgRequired
	case len(id) > 1024:
		e["idp_entity_id"] = "Use at most 1024 characters."
	}
	requireURL(&p.IdPSSOURL, "idp_sso_url", e)
	if slo := trim(&p.IdPSLOURL); slo != "" {
		optionalURL(slo, "idp_slo_url", e)
	}
	certs := trim(&p.IdPCertificates)
	if certs == "" {
		e["idp_certificates"] = MsgRequired
	} else if parsed, msg := readCertificates(certs); msg != "" {
		e["idp_certificates"] = msg
	} else if w := expiryWarning(parsed, o.now()); w != "" {
		e[WarningPrefix+"idp_certificates"] = w
	}

	switch trim(&p.NameIDFormat) {
	case "":
		v := NameIDPersistent
		p.NameIDFormat = &v
	case NameIDEmail, NameIDPersistent, NameIDTransient, NameIDUnspecified:
	default:
		e["name_id_format"] = "Choose email, persistent, transient or unspecified."
	}
	switch trim(&p.SubjectSource) {
	case "":
		v := SubjectNameID
		p.SubjectSource = &v
	case SubjectNameID, SubjectEmailAttribute:
	default:
		e["subject_source"] = "Choose name_id or email_attribute."
	}
	if models.Str(p.NameIDFormat) == NameIDTransient && models.Str(p.SubjectSource) == SubjectNameID {
		e["subject_source"] = MsgTransientNameID
	}
	for field, v := range map[string]**string{"email_attribute": &p.EmailAttribute, "group_attribute": &p.GroupAttribute} {
		if utf8.RuneCountInString(trim(v)) > 256 {
			e[field] = "Use at most 256 characters."
		}
	}
	if len(p.GroupMappings) > 0 && p.GroupAttribute == nil {
		e["group_attribute"] = MsgGroupAttribute
	}
	validateSPKey(p, in, creating, o, e)
}

func fillEmpty(v **string, s string) {
	if models.Str(*v) == "" {
		setOptional(v, strings.TrimSpace(s))
	}
}

// validateSPKey checks the SP key pair: both needed to sign requests, a
// key needs its certificate, and they must match.
func validateSPKey(p *models.SSOProvider, in ProviderSecrets, creating bool, o Options, e FieldErrors) {
	keyText := strings.TrimSpace(in.SPPrivateKey)
	storedKey := !creating && p.SPPrivateKeyEnc != nil
	var key crypto.Signer
	if keyText != "" {
		k, ok := readPrivateKey(keyText)
		if !ok {
			e["sp_private_key"] = "Enter an RSA or ECDSA private key in PEM."
		}
		key = k
	} else if p.SignRequests && !storedKey {
		e["sp_private_key"] = MsgRequired
	}
	var cert *x509.Certificate
	if certText := trim(&p.SPCertificate); certText != "" {
		certs, msg := readCertificates(certText)
		switch {
		case msg != "":
			e["sp_certificate"] = msg
		case len(certs) != 1:
			e["sp_certificate"] = "Enter exactly one certificate."
		default:
			cert = certs[0]
			if w := expiryWarning(certs, o.now()); w != "" {
				e[WarningPrefix+"sp_certificate"] = w
			}
		}
	} else if p.SignRequests || keyText != "" || storedKey {
		e["sp_certificate"] = MsgRequired
	}
	if key != nil && cert != nil && !publicKeysEqual(cert.PublicKey, key.Public()) {
		e["sp_private_key"] = MsgKeyMismatch
	}
}

// readPrivateKey reads one PEM private key, and nothing after it, as
// parsePrivateKey does.
func readPrivateKey(text string) (crypto.Signer, bool) {
	if _, rest := pem.Decode([]byte(text)); strings.TrimSpace(string(rest)) != "" {
		return nil, false
	}
	key, err := parsePrivateKey(text)
	return key, err == nil
}

// readCertificates reads one or more PEM certificates. It returns the
// form message for the first that cannot be read.
func readCertificates(text string) ([]*x509.Certificate, string) {
	var certs []*x509.Certificate
	rest := []byte(text)
	for n := 1; ; n++ {
		if strings.TrimSpace(string(rest)) == "" {
			break
		}
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if n == 1 {
				return nil, "Enter one or more PEM certificates (-----BEGIN CERTIFICATE-----)."
			}
			return nil, fmt.Sprintf("The text after certificate %d is not a PEM certificate.", n-1)
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Sprintf("Block %d is a %s, not a CERTIFICATE.", n, block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Sprintf("Certificate %d could not be parsed.", n)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, "Enter one or more PEM certificates (-----BEGIN CERTIFICATE-----)."
	}
	return certs, ""
}

// expiryWarning names the certificates outside their validity at now.
func expiryWarning(certs []*x509.Certificate, now time.Time) string {
	var w []string
	for i, c := range certs {
		switch {
		case now.After(c.NotAfter):
			w = append(w, fmt.Sprintf("Certificate %d expired on %s.", i+1, c.NotAfter.UTC().Format(time.DateOnly)))
		case now.Before(c.NotBefore):
			w = append(w, fmt.Sprintf("Certificate %d is not valid before %s.", i+1, c.NotBefore.UTC().Format(time.DateOnly)))
		}
	}
	return strings.Join(w, " ")
}

// CertificateWarnings are what the provider index warns about a SAML
// provider's certificates: unreadable, outside their validity, or ending
// within 30 days.
func CertificateWarnings(p *models.SSOProvider, now time.Time) []string {
	var out []string
	for _, text := range []string{models.Str(p.IdPCertificates), models.Str(p.SPCertificate)} {
		if strings.TrimSpace(text) == "" {
			continue
		}
		certs, msg := readCertificates(text)
		if msg != "" {
			out = append(out, msg)
			continue
		}
		if w := expiryWarning(certs, now); w != "" {
			out = append(out, w)
		}
		for i, c := range certs {
			if left := c.NotAfter.Sub(now); left > 0 && left < 30*24*time.Hour {
				out = append(out, fmt.Sprintf("Certificate %d expires on %s.", i+1, c.NotAfter.UTC().Format(time.DateOnly)))
			}
		}
	}
	return out
}

package sso

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"coffer/models"
)

// metadataXML is IdP metadata naming entityID, with both bindings for SSO
// and the DER certificate as signing key.
func metadataXML(entityID, base string, der []byte) string {
	return fmt.Sprintf(`<?xml version="1.0"?>
<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="%[1]s">
  <IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <KeyDescriptor use="encryption"><KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data>
      <X509Certificate>bm90IGEgY2VydA==</X509Certificate></X509Data></KeyInfo></KeyDescriptor>
    <KeyDescriptor use="signing"><KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data>
      <X509Certificate>
%[3]s
      </X509Certificate></X509Data></KeyInfo></KeyDescriptor>
    <SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="%[2]s/slo"/>
    <SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="%[2]s/sso/post"/>
    <SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="%[2]s/sso"/>
  </IDPSSODescriptor>
</EntityDescriptor>`, entityID, base, base64.StdEncoding.EncodeToString(der))
}

func TestValidateProviderSAML(t *testing.T) {
	idp := newECKeyPair(t, "idp", testNow.AddDate(-1, 0, 0), testNow.AddDate(1, 0, 0))
	rollover := newECKeyPair(t, "idp-next", testNow.AddDate(0, -1, 0), testNow.AddDate(2, 0, 0))
	expired := newECKeyPair(t, "idp-old", testNow.AddDate(-2, 0, 0), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	sp := newRSAKeyPair(t, "sp")
	other := newECKeyPair(t, "other", testNow.AddDate(-1, 0, 0), testNow.AddDate(1, 0, 0))

	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metadata":
			_, _ = w.Write([]byte(metadataXML("https://idp.example/entity", "https://idp.example", idp.DER)))
		case "/wrapped":
			_, _ = w.Write([]byte(`<EntitiesDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata">` +
				strings.TrimPrefix(metadataXML("urn:idp:wrapped", "https://idp.example", idp.DER), `<?xml version="1.0"?>`) +
				`</EntitiesDescriptor>`))
		case "/html":
			_, _ = w.Write([]byte("<html><body>Sign in</body></html>"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(meta.Close)
	o := Options{HTTPClient: meta.Client(), Now: func() time.Time { return testNow }}

	base := func() *models.SSOProvider {
		return &models.SSOProvider{Name: "corp", Label: "Corp", Strategy: models.StrategySAML, Enabled: true,
			IdPEntityID: strp("http://www.okta.com/exk1"), IdPSSOURL: strp("https://corp.okta.com/app/sso/saml"),
			IdPCertificates: strp(idp.CertPEM)}
	}
	runValidate(t, base, o, []validateCase{
		{name: "valid, defaults filled in", in: func(in *ProviderSecrets) { in.ClientSecret = "" },
			check: func(t *testing.T, p *models.SSOProvider) {
				if models.Str(p.NameIDFormat) != NameIDPersistent || models.Str(p.SubjectSource) != SubjectNameID {
					t.Errorf("name id format %q, subject source %q", models.Str(p.NameIDFormat), models.Str(p.SubjectSource))
				}
			}},
		{name: "URN entity ID", p: func(p *models.SSOProvider) { p.IdPEntityID = strp("urn:corp:idp") }},
		{name: "required fields", p: func(p *models.SSOProvider) { p.IdPEntityID, p.IdPSSOURL, p.IdPCertificates = nil, nil, strp(" ") },
			want: FieldErrors{"idp_entity_id": MsgRequired, "idp_sso_url": MsgRequired, "idp_certificates": MsgRequired}},
		{name: "URL rule", p: func(p *models.SSOProvider) {
			p.IdPSSOURL, p.IdPSLOURL = strp("http://corp.example/sso"), strp("https://corp.example/slo#x")
		}, want: FieldErrors{"idp_sso_url": "Use https (http only for 127.0.0.1, ::1 or localhost).",
			"idp_slo_url": "Remove the query and fragment."}},
		{name: "two certificates for rollover", p: func(p *models.SSOProvider) { p.IdPCertificates = strp(idp.CertPEM + "\n" + rollover.CertPEM) }},
		{name: "certificate not PEM", p: func(p *models.SSOProvider) { p.IdPCertificates = strp("MIIBkTCB+wIJ...") },
			want: FieldErrors{"idp_certificates": "Enter one or more PEM certificates (-----BEGIN CERTIFICATE-----)."}},
		{name: "second certificate garbled", p: func(p *models.SSOProvider) {
			p.IdPCertificates = strp(idp.CertPEM + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
		}, want: FieldErrors{"idp_certificates": "Certificate 2 could not be parsed."}},
		{name: "text after the certificate", p: func(p *models.SSOProvider) { p.IdPCertificates = strp(idp.CertPEM + "junk") },
			want: FieldErrors{"idp_certificates": "The text after certificate 1 is not a PEM certificate."}},
		{name: "a key instead of a certificate", p: func(p *models.SSOProvider) { p.IdPCertificates = strp(other.KeyPEM) },
			want: FieldErrors{"idp_certificates": "Block 1 is a EC PRIVATE KEY, not a CERTIFICATE."}},
		{name: "expired certificate is a warning", p: func(p *models.SSOProvider) { p.IdPCertificates = strp(idp.CertPEM + expired.CertPEM) },
			want: FieldErrors{"warning:idp_certificates": "Certificate 2 expired on 2026-01-02."}},

		{name: "transient with name_id", p: func(p *models.SSOProvider) { p.NameIDFormat, p.SubjectSource = strp("transient"), strp("name_id") },
			want: FieldErrors{"subject_source": MsgTransientNameID}},
		{name: "transient by default subject", p: func(p *models.SSOProvider) { p.NameIDFormat = strp("transient") },
			want: FieldErrors{"subject_source": MsgTransientNameID}},
		{name: "transient with the email attribute", p: func(p *models.SSOProvider) {
			p.NameIDFormat, p.SubjectSource, p.EmailAttribute = strp("transient"), strp("email_attribute"), strp("mail")
		}},
		{name: "unknown formats", p: func(p *models.SSOProvider) { p.NameIDFormat, p.SubjectSource = strp("x509"), strp("upn") },
			want: FieldErrors{"name_id_format": "Choose email, persistent, transient or unspecified.",
				"subject_source": "Choose name_id or email_attribute."}},
		{name: "group mappings need a group attribute", p: func(p *models.SSOProvider) {
			p.GroupMappings = []models.GroupMapping{{Group: "admins", Role: models.RoleAdmin}}
			p.GroupAttribute = strp("  ")
		}, want: FieldErrors{"group_attribute": MsgGroupAttribute}},
		{name: "group mappings with a group attribute", p: func(p *models.SSOProvider) {
			p.GroupMappings = []models.GroupMapping{{Group: "admins", Role: models.RoleAdmin}}
			p.GroupAttribute = strp("eduPersonAffiliation")
		}},
		{name: "groups custom mapping refused for SAML", p: func(p *models.SSOProvider) { p.Rules = strp(`{"custom_mappings": {"groups": "memberOf"}}`) },
			want: FieldErrors{"rules": `rules.custom_mappings: unknown key "groups" (allowed: email, email_verified, first_name, last_name, name)`}},

		{name: "sign requests without key or certificate", p: func(p *models.SSOProvider) { p.SignRequests = true },
			want: FieldErrors{"sp_private_key": MsgRequired, "sp_certificate": MsgRequired}},
		{name: "sign requests with a matching RSA pair", p: func(p *models.SSOProvider) { p.SignRequests, p.SPCertificate = true, strp(sp.CertPEM) },
			in: func(in *ProviderSecrets) { in.SPPrivateKey = sp.KeyPEM }},
		{name: "sign requests with a matching EC pair", p: func(p *models.SSOProvider) { p.SignRequests, p.SPCertificate = true, strp(other.CertPEM) },
			in: func(in *ProviderSecrets) { in.SPPrivateKey = other.KeyPEM }},
		{name: "key of another certificate", p: func(p *models.SSOProvider) { p.SignRequests, p.SPCertificate = true, strp(sp.CertPEM) },
			in: func(in *ProviderSecrets) { in.SPPrivateKey = other.KeyPEM }, want: FieldErrors{"sp_private_key": MsgKeyMismatch}},
		{name: "key without sign requests still checked", p: func(p *models.SSOProvider) { p.SPCertificate = strp(other.CertPEM) },
			in: func(in *ProviderSecrets) { in.SPPrivateKey = sp.KeyPEM }, want: FieldErrors{"sp_private_key": MsgKeyMismatch}},
		{name: "key without its certificate", in: func(in *ProviderSecrets) { in.SPPrivateKey = sp.KeyPEM },
			want: FieldErrors{"sp_certificate": MsgRequired}},
		{name: "key not PEM", p: func(p *models.SSOProvider) { p.SignRequests, p.SPCertificate = true, strp(sp.CertPEM) },
			in: func(in *ProviderSecrets) { in.SPPrivateKey = "secret" }, want: FieldErrors{"sp_private_key": "Enter an RSA or ECDSA private key in PEM."}},
		{name: "two SP certificates", p: func(p *models.SSOProvider) { p.SignRequests, p.SPCertificate = true, strp(sp.CertPEM+other.CertPEM) },
			in: func(in *ProviderSecrets) { in.SPPrivateKey = sp.KeyPEM }, want: FieldErrors{"sp_certificate": "Enter exactly one certificate."}},
		{name: "blank key on edit keeps the stored one", edit: true, p: func(p *models.SSOProvider) {
			p.SignRequests, p.SPCertificate, p.SPPrivateKeyEnc = true, strp(sp.CertPEM), strp("enc:v1:stored")
		}},
		{name: "blank key on create", p: func(p *models.SSOProvider) {
			p.SignRequests, p.SPCertificate, p.SPPrivateKeyEnc = true, strp(sp.CertPEM), strp("enc:v1:stored")
		}, want: FieldErrors{"sp_private_key": MsgRequired}},

		{name: "metadata fills empty fields", p: func(p *models.SSOProvider) {
			p.IdPMetadataURL, p.IdPEntityID, p.IdPSSOURL, p.IdPCertificates = strp(meta.URL+"/metadata"), nil, nil, nil
		}, check: func(t *testing.T, p *models.SSOProvider) {
			got := []string{models.Str(p.IdPEntityID), models.Str(p.IdPSSOURL), models.Str(p.IdPSLOURL), models.Str(p.IdPCertificates)}
			want := []string{"https://idp.example/entity", "https://idp.example/sso", "https://idp.example/slo", strings.TrimSpace(idp.CertPEM)}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("filled %q\n want %q", got, want)
			}
		}},
		{name: "metadata keeps what is set", p: func(p *models.SSOProvider) { p.IdPMetadataURL = strp(meta.URL + "/metadata") },
			check: func(t *testing.T, p *models.SSOProvider) {
				if *p.IdPEntityID != "http://www.okta.com/exk1" || *p.IdPSLOURL != "https://idp.example/slo" {
					t.Errorf("entity %q slo %q", *p.IdPEntityID, models.Str(p.IdPSLOURL))
				}
			}},
		{name: "metadata in an EntitiesDescriptor", p: func(p *models.SSOProvider) {
			p.IdPMetadataURL, p.IdPEntityID = strp(meta.URL+"/wrapped"), nil
		}, check: func(t *testing.T, p *models.SSOProvider) {
			if models.Str(p.IdPEntityID) != "urn:idp:wrapped" {
				t.Errorf("entity %q", models.Str(p.IdPEntityID))
			}
		}},
		{name: "metadata not SAML", p: func(p *models.SSOProvider) { p.IdPMetadataURL, p.IdPSLOURL = strp(meta.URL+"/html"), nil },
			want: FieldErrors{"idp_metadata_url": "Could not read the metadata: not SAML metadata."}},
		{name: "metadata 404", p: func(p *models.SSOProvider) { p.IdPMetadataURL, p.IdPSLOURL = strp(meta.URL+"/none"), nil },
			want: FieldErrors{"idp_metadata_url": "Could not read the metadata: HTTP 404."}},
		{name: "metadata URL rule", p: func(p *models.SSOProvider) { p.IdPMetadataURL = strp("http://idp.example/md") },
			want: FieldErrors{"idp_metadata_url": "Use https (http only for 127.0.0.1, ::1 or localhost)."}},
	})
}

func TestFieldErrorsWarnings(t *testing.T) {
	e := FieldErrors{"warning:idp_certificates": "Certificate 1 expired on 2026-01-02."}
	if e.HasErrors() {
		t.Error("a warning alone blocks saving")
	}
	if w := e.Warnings(); !reflect.DeepEqual(w, map[string]string{"idp_certificates": "Certificate 1 expired on 2026-01-02."}) {
		t.Errorf("Warnings = %q", w)
	}
	e["name"] = MsgRequired
	if !e.HasErrors() {
		t.Error("an error does not block saving")
	}
}

func TestParseMetadataCertificates(t *testing.T) {
	kp := newECKeyPair(t, "idp", testNow.AddDate(-1, 0, 0), testNow.AddDate(1, 0, 0))
	m, err := parseMetadata([]byte(metadataXML("e", "https://idp.example", kp.DER)))
	if err != nil {
		t.Fatal(err)
	}
	certs, msg := readCertificates(m.Certificates)
	if msg != "" || len(certs) != 1 || certs[0].Subject.CommonName != "idp" {
		t.Fatalf("certificates %d, %q", len(certs), msg)
	}
	if _, err := parseMetadata([]byte(`<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="sp"/>`)); err == nil {
		t.Error("metadata without an IdP accepted")
	}
}

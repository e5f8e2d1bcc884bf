package sso

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/crewjam/saml"
)

// maxDocument bounds a discovery document, JWKS or metadata we read.
const maxDocument = 1 << 20

// defaultTimeout is SSO_HTTP_TIMEOUT's default, for a caller without a
// client.
const defaultTimeout = 10 * time.Second

func httpClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: defaultTimeout}
}

// get fetches u and returns its status and at most maxDocument bytes of
// its body. A transport failure is returned with the URL left out (the
// field it concerns already shows it).
func get(ctx context.Context, client *http.Client, u string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := httpClient(client).Do(req)
	if err != nil {
		return 0, nil, transportCause(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return resp.StatusCode, nil, transportCause(err)
	}
	if len(body) > maxDocument {
		return resp.StatusCode, nil, errors.New("response larger than 1 MiB")
	}
	return resp.StatusCode, body, nil
}

// transportCause strips the method and URL that net/http puts in front
// of a transport error, and names a timeout plainly.
func transportCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return errors.New("timed out")
		}
		return ue.Err
	}
	return err
}

// message is an error whose text is a sentence shown beside a form field.
type message string

func (m message) Error() string { return string(m) }

func messagef(format string, args ...any) error { return message(fmt.Sprintf(format, args...)) }

// sentence ends a message that embeds a cause with exactly one period.
func sentence(format string, cause error) error {
	return message(strings.TrimRight(fmt.Sprintf(format, cause), ".") + ".")
}

// discoveryURL is where an issuer's OpenID configuration lives.
func discoveryURL(issuer string) string {
	return strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
}

// CheckDiscovery fetches issuer's OpenID Connect discovery document and
// checks it (spec/sso.md §4.4). The error's text is the message shown
// beside the issuer field.
func CheckDiscovery(ctx context.Context, issuer string, client *http.Client) error {
	_, err := discover(ctx, issuer, client)
	return err
}

func discover(ctx context.Context, issuer string, client *http.Client) (map[string]any, error) {
	status, body, err := get(ctx, client, discoveryURL(issuer))
	if err != nil {
		return nil, sentence("Could not reach the discovery document: %v", err)
	}
	if status < 200 || status > 299 {
		return nil, messagef("The discovery document returned HTTP %d.", status)
	}
	var doc map[string]any
	if json.Unmarshal(body, &doc) != nil || doc == nil {
		return nil, message("The discovery document is not valid JSON.")
	}
	said, ok := doc["issuer"].(string)
	if !ok || said == "" {
		return nil, message("The discovery document lacks issuer.")
	}
	if said != issuer {
		note := ""
		if strings.TrimSuffix(said, "/") == strings.TrimSuffix(issuer, "/") {
			note = " (differs only by a trailing slash)"
		}
		return nil, messagef("Issuer mismatch: configured %s, provider says %s%s.", issuer, said, note)
	}
	for _, field := range []string{"authorization_endpoint", "token_endpoint", "jwks_uri"} {
		if s, _ := doc[field].(string); s == "" {
			return nil, messagef("The discovery document lacks %s.", field)
		}
	}
	return doc, nil
}

// idpMetadata is what an IdP's SAML metadata tells us.
type idpMetadata struct {
	EntityID     string
	SSOURL       string
	SLOURL       string
	Certificates string // PEM blocks
}

// fetchMetadata reads an IdP's SAML metadata: an EntityDescriptor, or an
// EntitiesDescriptor holding one with an IDPSSODescriptor.
func fetchMetadata(ctx context.Context, u string, client *http.Client) (*idpMetadata, error) {
	status, body, err := get(ctx, client, u)
	if err != nil {
		return nil, err
	}
	if status < 200 || status > 299 {
		return nil, fmt.Errorf("HTTP %d", status)
	}
	return parseMetadata(body)
}

func parseMetadata(body []byte) (*idpMetadata, error) {
	var ed saml.EntityDescriptor
	if err := xml.Unmarshal(body, &ed); err != nil || len(ed.IDPSSODescriptors) == 0 {
		var eds saml.EntitiesDescriptor
		if xml.Unmarshal(body, &eds) != nil {
			return nil, errors.New("not SAML metadata")
		}
		found := findIdP(&eds)
		if found == nil {
			return nil, errors.New("no identity provider in the metadata")
		}
		ed = *found
	}
	idp := ed.IDPSSODescriptors[0]
	m := &idpMetadata{EntityID: ed.EntityID}
	m.SSOURL = endpoint(idp.SingleSignOnServices)
	m.SLOURL = endpoint(idp.SingleLogoutServices)
	var certs bytes.Buffer
	for _, kd := range idp.KeyDescriptors {
		if kd.Use != "" && kd.Use != "signing" {
			continue
		}
		for _, c := range kd.KeyInfo.X509Data.X509Certificates {
			der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(c.Data), ""))
			if err != nil {
				return nil, errors.New("a certificate in the metadata is not base64")
			}
			if err := pem.Encode(&certs, &pem.Block{Type: "CERTIFICATE", Bytes: der}); err != nil {
				return nil, err
			}
		}
	}
	m.Certificates = certs.String()
	return m, nil
}

func findIdP(eds *saml.EntitiesDescriptor) *saml.EntityDescriptor {
	for i := range eds.EntityDescriptors {
		if len(eds.EntityDescriptors[i].IDPSSODescriptors) > 0 {
			return &eds.EntityDescriptors[i]
		}
	}
	for i := range eds.EntitiesDescriptors {
		if ed := findIdP(&eds.EntitiesDescriptors[i]); ed != nil {
			return ed
		}
	}
	return nil
}

// endpoint picks the HTTP-Redirect location (the binding our requests
// use), else the first.
func endpoint(es []saml.Endpoint) string {
	for _, e := range es {
		if e.Binding == saml.HTTPRedirectBinding {
			return e.Location
		}
	}
	if len(es) > 0 {
		return es[0].Location
	}
	return ""
}

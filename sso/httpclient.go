package sso

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"

	"coffer/models/publicaddr"
)

// NewHTTPClient is the client that talks to identity providers: bounded
// by timeout, TLS always verified, with the PEM certificates of caFile
// (when not empty) trusted beside the system's. Unless allowPrivate
// (SSO_ALLOW_PRIVATE_HOSTS), it connects only to public unicast addresses,
// as the SimpleFIN client does: an administrator's issuer, metadata or
// Test connection URL must not reach the service's own network.
func NewHTTPClient(timeout time.Duration, caFile string, allowPrivate bool) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = publicaddr.Dialer(allowPrivate).DialContext
	if !allowPrivate {
		// A proxy from the environment would make the connection for us,
		// out of the guard's sight.
		tr.Proxy = nil
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no PEM certificate in %s", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	// No redirects: a 307 from a token endpoint would re-send the client
	// secret wherever it points.
	return &http.Client{Timeout: timeout, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, nil
}

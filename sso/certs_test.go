package sso

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// testNow is the clock of the validation tests.
var testNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// keyPair is a test key with a self-signed certificate, both in PEM.
type keyPair struct {
	Key     crypto.Signer
	KeyPEM  string
	CertPEM string
	DER     []byte
}

func newECKeyPair(t *testing.T, cn string, notBefore, notAfter time.Time) keyPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return certify(t, key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), cn, notBefore, notAfter)
}

func newRSAKeyPair(t *testing.T, cn string) keyPair {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return certify(t, key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), cn,
		testNow.AddDate(-1, 0, 0), testNow.AddDate(1, 0, 0))
}

func certify(t *testing.T, key crypto.Signer, keyPEM []byte, cn string, notBefore, notAfter time.Time) keyPair {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{Key: key, KeyPEM: string(keyPEM), DER: der,
		CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

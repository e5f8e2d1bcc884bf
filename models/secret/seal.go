// Package secret seals values at rest (AES-256-GCM bound to a row) and hashes
// passwords (argon2id, reading imported bcrypt). It imports nothing of ours.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Sealer encrypts secrets at rest (aggregator access URLs, setup tokens,
// SSO client secrets) with AES-256-GCM. A stored value reads
// "enc:v1:<key id>:<base64 nonce and ciphertext>"; the associated data
// names the table, column and row, so a ciphertext moved to another row
// does not open. Old keys only decrypt, during a rotation.
type Sealer struct {
	current string
	keys    map[string]cipher.AEAD
}

// ErrSealed means a stored secret could not be opened: a wrong or missing
// key, or a value moved from another row.
var ErrSealed = errors.New("secret: secret cannot be decrypted")

// NewSealer builds a Sealer from the current 32-byte key and former keys.
func NewSealer(current []byte, old ...[]byte) (*Sealer, error) {
	s := &Sealer{keys: map[string]cipher.AEAD{}}
	for i, k := range append([][]byte{current}, old...) {
		if len(k) != 32 {
			return nil, fmt.Errorf("secret: encryption key %d is %d bytes, want 32", i, len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(k)
		id := hex.EncodeToString(sum[:4])
		if i == 0 {
			s.current = id
		}
		s.keys[id] = aead
	}
	return s, nil
}

// Seal encrypts plaintext for one column of one row.
func (s *Sealer) Seal(plaintext, table, column, rowID string) (string, error) {
	aead := s.keys[s.current]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secret: nonce: %w", err)
	}
	ct := aead.Seal(nonce, nonce, []byte(plaintext), []byte(table+"."+column+":"+rowID))
	return "enc:v1:" + s.current + ":" + base64.RawStdEncoding.EncodeToString(ct), nil
}

// Open decrypts a value sealed for this column of this row.
func (s *Sealer) Open(stored, table, column, rowID string) (string, error) {
	parts := strings.SplitN(stored, ":", 4)
	if len(parts) != 4 || parts[0] != "enc" || parts[1] != "v1" {
		return "", ErrSealed
	}
	aead, ok := s.keys[parts[2]]
	if !ok {
		return "", ErrSealed
	}
	raw, err := base64.RawStdEncoding.DecodeString(parts[3])
	if err != nil || len(raw) < aead.NonceSize() {
		return "", ErrSealed
	}
	pt, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(table+"."+column+":"+rowID))
	if err != nil {
		return "", ErrSealed
	}
	return string(pt), nil
}

// IsSealed reports whether a stored value is in the sealed form; anything
// else is plaintext left from before encryption.
func IsSealed(stored string) bool { return strings.HasPrefix(stored, "enc:v1:") }

// Current reports whether a sealed value uses the current key, so that a
// rotation knows what is left to re-encrypt.
func (s *Sealer) Current(stored string) bool {
	return strings.HasPrefix(stored, "enc:v1:"+s.current+":")
}

package secret

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// Argon2Params are the cost of a password hash.
type Argon2Params struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
}

// DefaultArgon2 is the cost new hashes use: m = 64 MiB, t = 3, p = 2.
var DefaultArgon2 = Argon2Params{MemoryKiB: 64 * 1024, Time: 3, Threads: 2}

// Password length limits, in bytes.
const (
	MinPasswordLen = 12
	MaxPasswordLen = 256
)

// ErrBadHash is returned for a stored hash that is not one we can read.
var ErrBadHash = errors.New("secret: unreadable password hash")

// HashPassword returns an argon2id PHC string for pw.
func HashPassword(pw string, p Argon2Params) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("secret: salt: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.MemoryKiB, p.Threads, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword reports whether pw matches hash, an argon2id PHC string or
// an imported bcrypt hash, and whether the hash should be replaced by one
// made with p (bcrypt, or weaker argon2id parameters).
func CheckPassword(hash, pw string, p Argon2Params) (ok, rehash bool, err error) {
	if strings.HasPrefix(hash, "$2a$") || strings.HasPrefix(hash, "$2b$") || strings.HasPrefix(hash, "$2y$") {
		err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw))
		if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
			return false, false, nil
		}
		return err == nil, true, err
	}
	var version int
	var have Argon2Params
	var saltB64, keyB64 string
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, false, ErrBadHash
	}
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, false, ErrBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &have.MemoryKiB, &have.Time, &have.Threads); err != nil ||
		have.Time == 0 || have.Threads == 0 || have.MemoryKiB > 1<<22 {
		return false, false, ErrBadHash
	}
	saltB64, keyB64 = parts[4], parts[5]
	salt, err1 := base64.RawStdEncoding.DecodeString(saltB64)
	want, err2 := base64.RawStdEncoding.DecodeString(keyB64)
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false, false, ErrBadHash
	}
	got := argon2.IDKey([]byte(pw), salt, have.Time, have.MemoryKiB, have.Threads, uint32(len(want)))
	ok = subtle.ConstantTimeCompare(got, want) == 1
	return ok, ok && have != p, nil
}

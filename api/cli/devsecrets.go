package cli

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// DevelopmentSecrets fills in what development may leave unset: the secret
// key base, kept in dataDir so that sessions and sealed secrets survive a
// restart and every local process agrees, and an encryption key derived
// from it. Production refuses to start without both instead.
func DevelopmentSecrets(dataDir string, keyBase *string, encryptionKey *[]byte, log *slog.Logger) error {
	if *keyBase == "" {
		path := filepath.Join(dataDir, "secret_key_base")
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			raw := make([]byte, 32)
			if _, err := rand.Read(raw); err != nil {
				return err
			}
			b = []byte(hex.EncodeToString(raw))
			if err := os.MkdirAll(dataDir, 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			log.Warn("SECRET_KEY_BASE is not set: generated one for development", "file", path)
		} else if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		*keyBase = strings.TrimSpace(string(b))
	}
	if *encryptionKey == nil {
		log.Warn("SECRETS_ENCRYPTION_KEY is not set: deriving it from SECRET_KEY_BASE (development only)")
		sum := sha256.Sum256([]byte("coffer secrets\x00" + *keyBase))
		*encryptionKey = sum[:]
	}
	return nil
}

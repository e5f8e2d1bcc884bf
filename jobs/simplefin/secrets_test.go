package simplefin_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// lockedBuffer is a log sink shared by concurrent handlers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestNoSecretsLeak runs syncs through success and every failure class
// with logs captured at debug level, then looks for the fake's password
// and claim code in the logs, the stored errors and warnings and the
// connection's messages. The access URL is ciphertext at rest and cannot
// be opened as another row's.
func TestNoSecretsLeak(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	logs := &lockedBuffer{}
	s.h.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s.bridge.SetDataset(bridgetest.Generate(8, 1, 5, 5, time.Now().UTC()))
	behaviours := []bridgetest.AccountsBehaviour{bridgetest.AccountsNormally, bridgetest.AccountsTruncated,
		bridgetest.AccountsRedirect, bridgetest.Accounts402, bridgetest.AccountsReset, bridgetest.Accounts500}
	var texts []string
	for i, b := range behaviours {
		sy := s.first
		if i > 0 {
			if active, err := s.store.ActiveSync(ctx, s.f.Family.ID, s.conn.ID); err == nil {
				if err := s.store.FailSync(ctx, active, "test"); err != nil {
					t.Fatal(err)
				}
			}
			sy = s.newSync(t, false)
		}
		s.bridge.SetAccounts(b, "")
		got, err := s.run(t, sy)
		if err != nil {
			texts = append(texts, err.Error())
		}
		texts = append(texts, got.Warnings...)
		if got.Error != nil {
			texts = append(texts, *got.Error)
		}
	}
	s.bridge.Revoke("c1")
	if active, err := s.store.ActiveSync(ctx, s.f.Family.ID, s.conn.ID); err == nil {
		_ = s.store.FailSync(ctx, active, "test")
	}
	if _, err := s.run(t, s.newSync(t, false)); err != nil {
		texts = append(texts, err.Error())
	}
	c := reload(t, s.store, s.conn)
	if c.StatusMessage != nil {
		texts = append(texts, *c.StatusMessage)
	}
	for _, e := range c.ProviderErrors {
		texts = append(texts, e.Message, e.Code, e.ConnID, e.RemoteAccountID)
	}
	texts = append(texts, logs.String())
	all := strings.Join(texts, "\n")
	for _, secret := range []string{"s3cret", "demo:", "/claim/c1"} {
		if strings.Contains(all, secret) {
			t.Fatalf("%q leaked:\n%s", secret, all)
		}
	}
	var raw string
	if err := s.store.DB().NewSelect().Table("provider_connections").Column("access_url_enc").Where("id = ?", c.ID).Scan(ctx, &raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "s3cret") || !strings.HasPrefix(raw, "enc:v1:") {
		t.Fatalf("access URL stored as %q", raw)
	}
	if _, err := s.store.Secrets.Open(raw, "provider_connections", "access_url_enc", models.NewID().String()); err == nil {
		t.Fatal("the access URL opened as another row's")
	}
}

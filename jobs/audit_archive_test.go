package jobs_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"coffer/jobs"
	"coffer/models"
)

// archiveHandlers are handlers on the test's clock, with the retention
// tier and a fresh archive directory.
func archiveHandlers(t *testing.T, tier string, clock func() time.Time) (*jobs.Handlers, *models.Store) {
	t.Helper()
	h, store, _ := newHandlers(t)
	h.Now = clock
	var ok bool
	if h.Retention, ok = jobs.RetentionTier(tier); !ok {
		t.Fatalf("no retention tier %q", tier)
	}
	h.ArchiveDir = t.TempDir()
	return h, store
}

func seedAudit(t *testing.T, store *models.Store, now time.Time, ages ...time.Duration) []models.AuditLog {
	t.Helper()
	var out []models.AuditLog
	for i, age := range ages {
		at := now.Add(-age)
		store.Now = func() time.Time { return at }
		l := &models.AuditLog{EventType: models.EventLogin, Metadata: map[string]any{"n": i}}
		if err := store.CreateAuditLog(context.Background(), l); err != nil {
			t.Fatal(err)
		}
		out = append(out, *l)
	}
	store.Now = func() time.Time { return now }
	return out
}

func countAudit(t *testing.T, store *models.Store) int {
	t.Helper()
	_, n, err := store.AuditLogs(context.Background(), models.AuditFilter{}, models.Page{Number: 1, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func linesIn(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for sc := bufio.NewScanner(zr); sc.Scan(); n++ {
	}
	return n
}

func TestAuditArchiveExtended(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	h, store := archiveHandlers(t, "extended", func() time.Time { return now })
	const day = 24 * time.Hour
	old := seedAudit(t, store, now, 400*day, 380*day, 367*day, 10*day, time.Hour)

	n, err := h.ArchiveAudit(ctx)
	if err != nil || n != 3 {
		t.Fatalf("first run: moved %d, %v", n, err)
	}
	if left := countAudit(t, store); left != 2 {
		t.Fatalf("%d records left in the database, want 2", left)
	}
	archives, _ := store.AuditArchives(ctx)
	if len(archives) != 1 || archives[0].RecordCount != 3 || len(archives[0].SHA256) != 64 {
		t.Fatalf("archives: %+v", archives)
	}
	path := filepath.Join(h.ArchiveDir, archives[0].FileName)
	if n := linesIn(t, path); n != 3 {
		t.Fatalf("%d lines in the file", n)
	}

	// A second run right after changes nothing.
	if n, err := h.ArchiveAudit(ctx); err != nil || n != 0 {
		t.Fatalf("second run: %d %v", n, err)
	}

	// Killed between writing the file and deleting the rows: the rows are
	// still there. The rerun rewrites the same file and deletes them once.
	for _, l := range old[:3] {
		at := l.CreatedAt
		store.Now = func() time.Time { return at }
		again := l
		if _, err := store.DB().NewInsert().Model(&again).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	store.Now = func() time.Time { return now }
	if n, err := h.ArchiveAudit(ctx); err != nil || n != 3 {
		t.Fatalf("rerun after a crash: %d %v", n, err)
	}
	archives, _ = store.AuditArchives(ctx)
	entries, _ := os.ReadDir(h.ArchiveDir)
	if len(archives) != 1 || len(entries) != 1 || linesIn(t, path) != 3 || countAudit(t, store) != 2 {
		t.Fatalf("after the rerun: %d archives, %d files, %d records", len(archives), len(entries), countAudit(t, store))
	}

	// An orphan file (written, never recorded) from long ago goes too.
	orphan := filepath.Join(h.ArchiveDir, "audit-20230101T000000.000Z-a-b.jsonl.gz")
	if err := os.WriteFile(orphan, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Two years on, the file's newest record is past the extended limit.
	now = now.Add(2*365*day + 60*day)
	if _, err := h.ArchiveAudit(ctx); err != nil {
		t.Fatal(err)
	}
	archives, _ = store.AuditArchives(ctx)
	for _, a := range archives {
		if a.FileName == filepath.Base(path) {
			t.Fatal("the expired archive row is still there")
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the expired archive file is still there: %v", err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("the orphan archive file is still there: %v", err)
	}
}

func TestAuditRetentionStandard(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	h, store := archiveHandlers(t, "standard", func() time.Time { return now })
	const day = 24 * time.Hour
	seedAudit(t, store, now, 200*day, 92*day, 89*day, time.Hour)
	if n, err := h.ArchiveAudit(ctx); err != nil || n != 2 {
		t.Fatalf("moved %d, %v", n, err)
	}
	if countAudit(t, store) != 2 {
		t.Fatal("wrong records left")
	}
	if entries, _ := os.ReadDir(h.ArchiveDir); len(entries) != 0 {
		t.Fatalf("standard wrote %d files", len(entries))
	}
}

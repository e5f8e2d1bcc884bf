package worker_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/jobs"
	"coffer/models"
)

// TestAuditArchiveSurvivesWorkerKill archives 12,000 old audit records
// (two batches) on the extended tier, and kills the worker once after the
// first batch's file was written but before its records went, once after
// the first batch left the database. A fresh worker finishes: the files
// hold every old record exactly once, the recorded files count them all,
// and only the young records are left in the database.
func TestAuditArchiveSurvivesWorkerKill(t *testing.T) {
	const old, young = 12_000, 5
	for _, point := range []string{jobs.HookAuditWritten, jobs.HookAuditBatch} {
		t.Run(point, func(t *testing.T) {
			r := newKillRig(t)
			ctx := context.Background()
			now := time.Now().UTC()
			logs := make([]models.AuditLog, old+young)
			want := map[uuid.UUID]bool{}
			for i := range logs {
				logs[i].ID = models.NewID()
				at := now.Add(-400*24*time.Hour + time.Duration(i)*time.Second)
				if i >= old {
					at = now.Add(-time.Duration(i) * time.Minute)
				} else {
					want[logs[i].ID] = true
				}
				logs[i].EventType, logs[i].CreatedAt, logs[i].Metadata = models.EventLogin, at, map[string]any{"n": i}
			}
			for start := 0; start < len(logs); start += 1000 {
				batch := logs[start:min(start+1000, len(logs))]
				if _, err := r.store.DB().NewInsert().Model(&batch).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
			dir := t.TempDir()
			archiver := func(hook func(context.Context, string)) *jobs.Handlers {
				h := r.handlers(nil, hook)
				h.Retention, _ = jobs.RetentionTier("extended")
				h.ArchiveDir = dir
				return h
			}

			k := newKiller(point, 1)
			var id string
			r.kill(t, r.options(archiver(k.hook), nil), k, func() { id = r.enqueue(t, jobs.NewAuditArchiveTask()) })
			runWorker(t, r.options(archiver(nil), nil))
			r.waitGone(t, jobs.QueueLow, id)

			seen := map[uuid.UUID]int{}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]bool{}
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), "audit-") {
					t.Errorf("stray file %s", e.Name())
					continue
				}
				files[e.Name()] = true
				for _, id := range archivedIDs(t, filepath.Join(dir, e.Name())) {
					seen[id]++
				}
			}
			for id, n := range seen {
				if n != 1 || !want[id] {
					t.Fatalf("record %s archived %d times (old: %t)", id, n, want[id])
				}
			}
			if len(seen) != old {
				t.Fatalf("%d records archived, want %d", len(seen), old)
			}
			archives, err := r.store.AuditArchives(ctx)
			if err != nil {
				t.Fatal(err)
			}
			recorded := 0
			for _, a := range archives {
				if !files[a.FileName] {
					t.Errorf("archive %s recorded without its file", a.FileName)
				}
				recorded += a.RecordCount
			}
			if len(archives) != len(files) || recorded != old {
				t.Fatalf("%d archives recorded for %d files, counting %d records", len(archives), len(files), recorded)
			}
			left, err := r.store.DB().NewSelect().Model((*models.AuditLog)(nil)).Count(ctx)
			if err != nil || left != young {
				t.Fatalf("%d records left in the database, want %d (%v)", left, young, err)
			}
		})
	}
}

// archivedIDs reads the record ids of one archive file.
func archivedIDs(t *testing.T, path string) []uuid.UUID {
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
	var ids []uuid.UUID
	for sc := bufio.NewScanner(zr); sc.Scan(); {
		var line struct {
			ID uuid.UUID `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, line.ID)
	}
	return ids
}

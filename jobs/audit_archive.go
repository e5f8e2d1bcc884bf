package jobs

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/models"
)

// TypeAuditArchive moves audit records past the retention window out of
// the database: into gzip JSON Lines files (extended and compliance tiers)
// or nowhere (standard), then prunes archive files past the tier's limit.
const TypeAuditArchive = "audit:archive"

// Retention is what one tier keeps.
type Retention struct {
	Name     string
	InDB     time.Duration // records stay this long in the database
	Archive  bool          // then go to files (else they are deleted)
	KeepFile time.Duration // files are kept until their newest record is this old
}

// RetentionTier returns the tier named by AUDIT_RETENTION_TIER.
func RetentionTier(name string) (Retention, bool) {
	const day = 24 * time.Hour
	switch name {
	case "standard":
		return Retention{Name: name, InDB: 90 * day}, true
	case "extended":
		return Retention{Name: name, InDB: 365 * day, Archive: true, KeepFile: 2 * 365 * day}, true
	case "compliance":
		return Retention{Name: name, InDB: 365 * day, Archive: true, KeepFile: 7 * 365 * day}, true
	}
	return Retention{}, false
}

const (
	archiveBatch   = 10_000
	archiveLockKey = 7_431_220_003
)

// NewAuditArchiveTask builds the retention run, unique for an hour.
func NewAuditArchiveTask() *asynq.Task {
	return asynq.NewTask(TypeAuditArchive, nil, asynq.Queue(QueueLow), asynq.MaxRetry(3),
		asynq.Timeout(time.Hour), asynq.Unique(time.Hour))
}

// AuditArchive handles TypeAuditArchive. A crash at any step leaves every
// record in the database or in a verified file (possibly both, readers
// dedupe by id), never in neither; running it again right after changes
// nothing.
func (h *Handlers) AuditArchive(ctx context.Context, t *asynq.Task) error {
	n, err := h.ArchiveAudit(ctx)
	if err != nil {
		return err
	}
	h.logger(ctx, t).Info("audit retention done", "tier", h.Retention.Name, "records_moved", n)
	return nil
}

// ArchiveAudit runs the retention once and returns how many records left
// the database; `coffer audit archive` calls it directly.
func (h *Handlers) ArchiveAudit(ctx context.Context) (int, error) {
	release, ok, err := h.Store.TryLock(ctx, archiveLockKey)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, nil // another runner is at it
	}
	defer release()
	now := h.now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	cutoff := today.Add(-h.Retention.InDB)
	moved := 0
	for {
		batch, err := h.Store.AuditLogsBefore(ctx, cutoff, archiveBatch)
		if err != nil || len(batch) == 0 {
			if err == nil && h.Retention.Archive {
				err = h.pruneArchives(ctx, now)
			}
			return moved, err
		}
		ids := make([]uuid.UUID, len(batch))
		for i := range batch {
			ids[i] = batch[i].ID
		}
		if !h.Retention.Archive {
			if err := h.Store.DeleteAuditLogs(ctx, ids); err != nil {
				return moved, err
			}
		} else {
			a, err := h.writeArchive(batch)
			if err != nil {
				return moved, err
			}
			h.hook(ctx, HookAuditWritten)
			if err := h.Store.ArchiveAuditLogs(ctx, a, ids); err != nil {
				return moved, err
			}
		}
		moved += len(batch)
		h.hook(ctx, HookAuditBatch)
	}
}

// archiveLine is one record in an archive file: every column.
type archiveLine struct {
	ID        uuid.UUID      `json:"id"`
	EventType string         `json:"event_type"`
	UserID    *uuid.UUID     `json:"user_id"`
	Provider  *string        `json:"provider"`
	IP        *string        `json:"ip"`
	UserAgent *string        `json:"user_agent"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt string         `json:"created_at"`
}

const archiveTime = "2006-01-02T15:04:05.000Z07:00"

// writeArchive writes a batch to its file (the same name for the same
// batch, so a rerun rewrites it), makes it durable, and reads it back
// before anyone deletes a record.
func (h *Handlers) writeArchive(batch []models.AuditLog) (*models.AuditArchive, error) {
	if err := os.MkdirAll(h.ArchiveDir, 0o700); err != nil {
		return nil, fmt.Errorf("jobs: archive dir: %w", err)
	}
	first, last := batch[0], batch[len(batch)-1]
	name := fmt.Sprintf("audit-%s-%s-%s.jsonl.gz", first.CreatedAt.UTC().Format("20060102T150405.000Z"), first.ID, last.ID)
	tmp, err := os.CreateTemp(h.ArchiveDir, ".audit-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("jobs: archive: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	sum := sha256.New()
	zw := gzip.NewWriter(io.MultiWriter(tmp, sum))
	enc := json.NewEncoder(zw)
	for _, l := range batch {
		if err := enc.Encode(archiveLine{ID: l.ID, EventType: l.EventType, UserID: l.UserID, Provider: l.Provider, IP: l.IP,
			UserAgent: l.UserAgent, Metadata: l.Metadata, CreatedAt: l.CreatedAt.UTC().Format(archiveTime)}); err != nil {
			tmp.Close()
			return nil, fmt.Errorf("jobs: archive: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("jobs: archive: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("jobs: archive: fsync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("jobs: archive: %w", err)
	}
	path := filepath.Join(h.ArchiveDir, name)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("jobs: archive: %w", err)
	}
	if dir, err := os.Open(h.ArchiveDir); err == nil {
		err = dir.Sync()
		dir.Close()
		if err != nil {
			return nil, fmt.Errorf("jobs: archive: fsync dir: %w", err)
		}
	}
	if err := verifyArchive(path, batch); err != nil {
		return nil, err
	}
	return &models.AuditArchive{FileName: name, RecordCount: len(batch), FirstCreatedAt: first.CreatedAt,
		LastCreatedAt: last.CreatedAt, SHA256: hex.EncodeToString(sum.Sum(nil))}, nil
}

// ErrArchiveMismatch means a written file does not hold its batch.
var ErrArchiveMismatch = errors.New("jobs: archive file does not match its batch")

func verifyArchive(path string, batch []models.AuditLog) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("jobs: verify archive: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("jobs: verify archive: %w", err)
	}
	want := make(map[uuid.UUID]bool, len(batch))
	for _, l := range batch {
		want[l.ID] = true
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		var line archiveLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || !want[line.ID] {
			return fmt.Errorf("%w: line %d", ErrArchiveMismatch, n+1)
		}
		delete(want, line.ID)
		n++
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("jobs: verify archive: %w", err)
	}
	if n != len(batch) || len(want) != 0 {
		return fmt.Errorf("%w: %d lines for %d records", ErrArchiveMismatch, n, len(batch))
	}
	return nil
}

// pruneArchives removes files whose newest record is past the tier's
// limit, and their rows.
func (h *Handlers) pruneArchives(ctx context.Context, now time.Time) error {
	old, err := h.Store.AuditArchivesBefore(ctx, now.Add(-h.Retention.KeepFile))
	if err != nil {
		return err
	}
	for _, a := range old {
		if err := os.Remove(filepath.Join(h.ArchiveDir, a.FileName)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("jobs: prune archive: %w", err)
		}
		if err := h.Store.DeleteAuditArchive(ctx, a.ID); err != nil {
			return err
		}
	}
	return h.pruneOrphans(ctx, now)
}

// pruneOrphans removes archive files that no row records (a run died
// between writing a file and recording it, and the rerun's batch got
// another name) once even their first record is past the limit: their
// records are in a recorded file too, or still in the database.
func (h *Handlers) pruneOrphans(ctx context.Context, now time.Time) error {
	entries, err := os.ReadDir(h.ArchiveDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("jobs: prune archive: %w", err)
	}
	recorded, err := h.Store.AuditArchives(ctx)
	if err != nil {
		return err
	}
	known := make(map[string]bool, len(recorded))
	for _, a := range recorded {
		known[a.FileName] = true
	}
	for _, e := range entries {
		name := e.Name()
		if known[name] || !strings.HasPrefix(name, "audit-") || len(name) < len("audit-20060102T150405.000Z") {
			continue
		}
		first, err := time.Parse("20060102T150405.000Z", name[len("audit-"):len("audit-20060102T150405.000Z")])
		if err != nil || now.Sub(first) < h.Retention.KeepFile {
			continue
		}
		if err := os.Remove(filepath.Join(h.ArchiveDir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("jobs: prune archive: %w", err)
		}
	}
	return nil
}

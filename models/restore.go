package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/importfile"
)

// Restore is a restore of a family from the reference app's export: the
// checked file, waiting for its job, then what the job wrote.
type Restore struct {
	bun.BaseModel `bun:"table:restores,alias:rs"`

	ID          uuid.UUID  `bun:"id,pk"`
	FamilyID    uuid.UUID  `bun:"family_id"`
	Status      string     `bun:"status"` // ImportImporting, ImportComplete or ImportFailed
	Filename    *string    `bun:"filename"`
	File        []byte     `bun:"file"`    // dropped once restored
	DryRun      string     `bun:"dry_run"` // the file's records by kind, JSON
	Summary     *string    `bun:"summary"` // RestoreSummary, JSON
	Error       *string    `bun:"error"`
	CreatedAt   time.Time  `bun:"created_at"`
	UpdatedAt   time.Time  `bun:"updated_at"`
	CompletedAt *time.Time `bun:"completed_at"`
}

// Counts reads the restore's dry run.
func (r *Restore) Counts() map[string]int {
	out := map[string]int{}
	_ = json.Unmarshal([]byte(r.DryRun), &out)
	return out
}

// Written reads what the restore wrote; nil until it is complete.
func (r *Restore) Written() *RestoreSummary {
	if r.Summary == nil {
		return nil
	}
	out := &RestoreSummary{}
	if json.Unmarshal([]byte(*r.Summary), out) != nil {
		return nil
	}
	return out
}

// CreateRestore checks file (importfile.ScanSure: a problem is a
// *importfile.SureError and nothing is stored) and stores it, importing,
// for the job (RunRestore) to write.
func (s *Store) CreateRestore(ctx context.Context, familyID uuid.UUID, filename *string, file []byte) (*Restore, *importfile.SureScan, error) {
	scan, err := importfile.ScanSure(file)
	if err != nil {
		return nil, nil, err
	}
	counts := map[string]int{}
	for typ, n := range scan.Counts {
		counts[SureKind(typ)] += n
	}
	dry, err := json.Marshal(counts)
	if err != nil {
		return nil, nil, fmt.Errorf("models: restore dry run: %w", err)
	}
	now := s.now()
	r := &Restore{ID: NewID(), FamilyID: familyID, Status: ImportImporting, Filename: filename, File: file, DryRun: string(dry),
		CreatedAt: now, UpdatedAt: now}
	if _, err := s.db.NewInsert().Model(r).Exec(ctx); err != nil {
		return nil, nil, dbErr("create restore", err)
	}
	return r, scan, nil
}

// Restore returns a restore of the family, without its file.
func (s *Store) Restore(ctx context.Context, familyID, id uuid.UUID) (*Restore, error) {
	r := new(Restore)
	err := s.db.NewSelect().Model(r).ExcludeColumn("file").Where("rs.family_id = ?", familyID).Where("rs.id = ?", id).Scan(ctx)
	if err != nil {
		return nil, dbErr("get restore", err)
	}
	return r, nil
}

// Restores lists the family's latest restores, without their files.
func (s *Store) Restores(ctx context.Context, familyID uuid.UUID, limit int) ([]Restore, error) {
	var out []Restore
	err := s.db.NewSelect().Model(&out).ExcludeColumn("file").Where("rs.family_id = ?", familyID).
		OrderExpr("rs.created_at DESC").Limit(int64(limit)).Scan(ctx)
	return out, dbErr("list restores", err)
}

// RunRestore writes a restore's file into its family, and marks it
// complete in the same database transaction: run twice, it restores
// once. A file the restore refuses marks it failed with the reason (and
// returns nil: trying again cannot help).
func (s *Store) RunRestore(ctx context.Context, familyID, id uuid.UUID) (*Restore, error) {
	r := new(Restore)
	if err := s.db.NewSelect().Model(r).Where("rs.family_id = ?", familyID).Where("rs.id = ?", id).Scan(ctx); err != nil {
		return nil, dbErr("get restore", err)
	}
	if r.Status != ImportImporting {
		return r, nil
	}
	err := s.RunInTx(ctx, func(tx *Store) error {
		sum, err := tx.restoreInto(ctx, familyID, r.File)
		if err != nil {
			return err
		}
		b, err := json.Marshal(sum)
		if err != nil {
			return fmt.Errorf("models: restore summary: %w", err)
		}
		now := tx.now()
		text := string(b)
		r.Status, r.Summary, r.File, r.UpdatedAt, r.CompletedAt = ImportComplete, &text, nil, now, &now
		res, err := tx.db.NewUpdate().Model(r).Column("status", "summary", "file", "updated_at", "completed_at").
			Where("family_id = ?", familyID).Where("id = ?", id).Where("status = ?", ImportImporting).Exec(ctx)
		if err != nil {
			return dbErr("complete restore", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errRestoreRaced
		}
		return nil
	})
	var bad *importfile.SureError
	switch {
	case errors.Is(err, errRestoreRaced):
		return s.Restore(ctx, familyID, id)
	case errors.As(err, &bad):
		return r, s.FailRestore(ctx, familyID, id, bad.Error())
	}
	return r, err
}

var errRestoreRaced = errors.New("models: restore completed by another run")

// FailRestore marks an importing restore failed with a sentence for its
// family.
func (s *Store) FailRestore(ctx context.Context, familyID, id uuid.UUID, reason string) error {
	now := s.now()
	_, err := s.db.NewUpdate().Model((*Restore)(nil)).Set("status = ?", ImportFailed).Set("error = ?", reason).
		Set("file = NULL").Set("updated_at = ?", now).
		Where("family_id = ?", familyID).Where("id = ?", id).Where("status = ?", ImportImporting).Exec(ctx)
	return dbErr("fail restore", err)
}

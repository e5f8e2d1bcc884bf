package models

import (
	"context"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The statuses of a family export, the reference app's.
const (
	ExportPending    = "pending"
	ExportProcessing = "processing"
	ExportCompleted  = "completed"
	ExportFailed     = "failed"
)

// exportChunkSize is the most of an export's ZIP one chunk row holds.
const exportChunkSize = 1 << 20

// FamilyExport is one export of a family's whole data: its progress and,
// once completed, its ZIP (kept as chunks, see WriteFamilyExportFile).
type FamilyExport struct {
	bun.BaseModel `bun:"table:family_exports,alias:fe"`

	ID          uuid.UUID  `bun:"id,pk"`
	FamilyID    uuid.UUID  `bun:"family_id"`
	Status      string     `bun:"status"`
	ByteSize    int64      `bun:"byte_size"`
	Error       *string    `bun:"error"`
	CreatedAt   time.Time  `bun:"created_at"`
	UpdatedAt   time.Time  `bun:"updated_at"`
	CompletedAt *time.Time `bun:"completed_at"`
}

// Filename is the name the ZIP is downloaded as, the reference's.
func (e *FamilyExport) Filename() string {
	return "sure_export_" + e.CreatedAt.UTC().Format("20060102_150405") + ".zip"
}

// Downloadable reports whether the ZIP is there to download.
func (e *FamilyExport) Downloadable() bool { return e.Status == ExportCompleted }

type familyExportChunk struct {
	bun.BaseModel `bun:"table:family_export_chunks,alias:fec"`

	ExportID uuid.UUID `bun:"export_id,pk"`
	FamilyID uuid.UUID `bun:"family_id"`
	Position int       `bun:"position,pk"`
	Data     []byte    `bun:"data"`
}

// CreateFamilyExport records a pending export of the family; its job
// builds the file.
func (s *Store) CreateFamilyExport(ctx context.Context, familyID uuid.UUID) (*FamilyExport, error) {
	now := s.now()
	e := &FamilyExport{ID: NewID(), FamilyID: familyID, Status: ExportPending, CreatedAt: now, UpdatedAt: now}
	_, err := s.db.NewInsert().Model(e).Exec(ctx)
	return e, dbErr("create family export", err)
}

// FamilyExport returns one export of the family.
func (s *Store) FamilyExport(ctx context.Context, familyID, id uuid.UUID) (*FamilyExport, error) {
	return oneOf[FamilyExport](ctx, s, familyID, id, "get family export")
}

// FamilyExports returns one page of the family's exports, newest first.
func (s *Store) FamilyExports(ctx context.Context, familyID uuid.UUID, p Page) ([]FamilyExport, int, error) {
	out := []FamilyExport{}
	q := s.db.NewSelect().Model(&out).Where("fe.family_id = ?", familyID).OrderExpr("fe.created_at DESC, fe.id DESC")
	n, err := p.scan(ctx, q)
	return out, n, dbErr("list family exports", err)
}

// FamilyExportsInFlight returns the exports whose job should be queued or
// running (pending or processing), ids only: `coffer dev` queues them
// again at start, its in-process queue having lost them.
func (s *Store) FamilyExportsInFlight(ctx context.Context) ([]FamilyExport, error) {
	var out []FamilyExport
	err := s.db.NewSelect().Model(&out).Column("id", "family_id", "status").
		Where("status IN (?)", bun.List([]string{ExportPending, ExportProcessing})).OrderExpr("created_at").Scan(ctx)
	return out, dbErr("family exports in flight", err)
}

// StartFamilyExport marks the export processing and removes what an earlier
// attempt wrote of its file. It returns false, and changes nothing, when
// the export is already completed: a retried job has nothing to do.
func (s *Store) StartFamilyExport(ctx context.Context, familyID, id uuid.UUID) (bool, error) {
	start := false
	err := s.RunInTx(ctx, func(tx *Store) error {
		e, err := tx.FamilyExport(ctx, familyID, id)
		if err != nil {
			return err
		}
		if e.Status == ExportCompleted {
			return nil
		}
		start = true
		if _, err := tx.db.NewDelete().Model((*familyExportChunk)(nil)).Where("family_id = ?", familyID).
			Where("export_id = ?", id).Exec(ctx); err != nil {
			return dbErr("clear family export", err)
		}
		_, err = tx.db.NewUpdate().Model((*FamilyExport)(nil)).Set("status = ?", ExportProcessing).Set("error = NULL").
			Set("byte_size = 0").Set("updated_at = ?", tx.now()).Where("family_id = ?", familyID).Where("id = ?", id).Exec(ctx)
		return dbErr("start family export", err)
	})
	return start, err
}

// FinishFamilyExport marks the export completed with a file of size bytes.
func (s *Store) FinishFamilyExport(ctx context.Context, familyID, id uuid.UUID, size int64) error {
	now := s.now()
	_, err := s.db.NewUpdate().Model((*FamilyExport)(nil)).Set("status = ?", ExportCompleted).Set("byte_size = ?", size).
		Set("completed_at = ?", now).Set("updated_at = ?", now).Where("family_id = ?", familyID).Where("id = ?", id).Exec(ctx)
	return dbErr("finish family export", err)
}

// FailFamilyExport marks the export failed with a message for people, and
// removes what was written of its file.
func (s *Store) FailFamilyExport(ctx context.Context, familyID, id uuid.UUID, msg string) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if _, err := tx.db.NewDelete().Model((*familyExportChunk)(nil)).Where("family_id = ?", familyID).
			Where("export_id = ?", id).Exec(ctx); err != nil {
			return dbErr("clear family export", err)
		}
		_, err := tx.db.NewUpdate().Model((*FamilyExport)(nil)).Set("status = ?", ExportFailed).Set("error = ?", msg).
			Set("updated_at = ?", tx.now()).Where("family_id = ?", familyID).Where("id = ?", id).
			Where("status <> ?", ExportCompleted).Exec(ctx)
		return dbErr("fail family export", err)
	})
}

// FamilyExportFile is where an export's ZIP is written: an io.Writer that
// stores every full MiB as a chunk row, so the file is never held whole.
// Close stores the rest.
type FamilyExportFile struct {
	ctx      context.Context
	s        *Store
	familyID uuid.UUID
	id       uuid.UUID
	buf      []byte
	position int
	size     int64
}

// FamilyExportFile starts the file of an export StartFamilyExport started.
func (s *Store) FamilyExportFile(ctx context.Context, familyID, id uuid.UUID) *FamilyExportFile {
	return &FamilyExportFile{ctx: ctx, s: s, familyID: familyID, id: id, buf: make([]byte, 0, exportChunkSize)}
}

// Write keeps p, storing each chunk as it fills.
func (f *FamilyExportFile) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		room := exportChunkSize - len(f.buf)
		take := min(room, len(p))
		f.buf = append(f.buf, p[:take]...)
		p = p[take:]
		if len(f.buf) == exportChunkSize {
			if err := f.flush(); err != nil {
				return 0, err
			}
		}
	}
	f.size += int64(n)
	return n, nil
}

// Close stores what is left; Size is then the file's length.
func (f *FamilyExportFile) Close() error {
	if len(f.buf) == 0 {
		return nil
	}
	return f.flush()
}

// Size is how many bytes were written.
func (f *FamilyExportFile) Size() int64 { return f.size }

func (f *FamilyExportFile) flush() error {
	c := &familyExportChunk{ExportID: f.id, FamilyID: f.familyID, Position: f.position, Data: f.buf}
	if _, err := f.s.db.NewInsert().Model(c).Exec(f.ctx); err != nil {
		return dbErr("write family export", err)
	}
	f.position++
	f.buf = f.buf[:0]
	return nil
}

// WriteFamilyExportFile copies a completed export's ZIP to w, one chunk
// at a time. An export that is not completed is ErrNotFound.
func (s *Store) WriteFamilyExportFile(ctx context.Context, familyID, id uuid.UUID, w io.Writer) error {
	e, err := s.FamilyExport(ctx, familyID, id)
	if err != nil {
		return err
	}
	if !e.Downloadable() {
		return ErrNotFound
	}
	for pos := 0; ; pos++ {
		var c familyExportChunk
		err := s.db.NewSelect().Model(&c).Where("fec.family_id = ?", familyID).Where("fec.export_id = ?", id).
			Where("fec.position = ?", pos).Scan(ctx)
		if err != nil {
			if err = dbErr("read family export", err); err == ErrNotFound {
				return nil
			}
			return err
		}
		if _, err := w.Write(c.Data); err != nil {
			return err
		}
	}
}

package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/importfile"
	"coffer/models/money"
)

// The statuses of an import, the reference app's.
const (
	ImportPending      = "pending"
	ImportImporting    = "importing"
	ImportComplete     = "complete"
	ImportFailed       = "failed"
	ImportReverting    = "reverting"
	ImportRevertFailed = "revert_failed"
)

// ImportStatuses lists the statuses, for filters.
var ImportStatuses = []string{ImportPending, ImportImporting, ImportComplete, ImportFailed, ImportReverting, ImportRevertFailed}

// SourceFileImport is the source of transactions written by a file import.
const SourceFileImport = "file_import"

// Import is one uploaded file, its settings and its progress.
type Import struct {
	bun.BaseModel `bun:"table:imports,alias:im"`

	ID        uuid.UUID `bun:"id,pk"`
	FamilyID  uuid.UUID `bun:"family_id"`
	AccountID uuid.UUID `bun:"account_id"`
	Type      string    `bun:"type"`
	Status    string    `bun:"status"`
	Filename  *string   `bun:"filename"`
	RawFile   string    `bun:"raw_file"`
	// What reading the file found besides its rows, kept with them so
	// that a view does not read the file again: the CSV header as a JSON
	// array, and the problems of the file as a whole, one a line.
	FileHeaders  string `bun:"headers"`
	FileProblems string `bun:"problems"`
	importfile.Settings
	AccountColLabel    *string    `bun:"account_col_label"` // kept as sent; the account is account_id
	RowsCount          int        `bun:"rows_count"`
	InvalidRowsCount   int        `bun:"invalid_rows_count"`
	ProcessedRowsCount int        `bun:"processed_rows_count"` // rows the job has decided, of the valid ones
	ImportedRowsCount  int        `bun:"imported_rows_count"`
	DuplicateRowsCount int        `bun:"duplicate_rows_count"`
	Error              *string    `bun:"error"`
	PublishedAt        *time.Time `bun:"published_at"`
	CompletedAt        *time.Time `bun:"completed_at"`
	CreatedAt          time.Time  `bun:"created_at"`
	UpdatedAt          time.Time  `bun:"updated_at"`
}

// Headers is the file's CSV header, as last read; nil for other types, and
// for an import stored before headers were kept.
func (im *Import) Headers() []string {
	var out []string
	if im.FileHeaders != "" && json.Unmarshal([]byte(im.FileHeaders), &out) != nil {
		return nil
	}
	return out
}

// Problems are the problems of the file as a whole, as last read.
func (im *Import) Problems() []string {
	if im.FileProblems == "" {
		return nil
	}
	return strings.Split(im.FileProblems, "\n")
}

// Configured reports whether the import has rows and no file problems,
// as the reference app's configured?.
func (im *Import) Configured() bool { return im.RowsCount > 0 }

// Publishable reports whether the import may start: pending, with rows,
// every one of them valid.
func (im *Import) Publishable() bool {
	return im.Status == ImportPending && im.RowsCount > 0 && im.InvalidRowsCount == 0
}

// PublishableSkipping reports whether the import may start once its bad
// rows are left out: pending, with bad rows and valid ones.
func (im *Import) PublishableSkipping() bool {
	return im.Status == ImportPending && im.InvalidRowsCount > 0 && im.ValidRows() > 0
}

// Revertable reports whether the import's transactions may be removed.
func (im *Import) Revertable() bool {
	return im.Status == ImportComplete || im.Status == ImportRevertFailed || im.Status == ImportFailed
}

// ValidRows is the number of rows the job will decide.
func (im *Import) ValidRows() int { return im.RowsCount - im.InvalidRowsCount }

// Progress is the share of valid rows decided, 0 to 100.
func (im *Import) Progress() int {
	if im.Status == ImportComplete {
		return 100
	}
	if im.ValidRows() <= 0 {
		return 0
	}
	return min(100, im.ProcessedRowsCount*100/im.ValidRows())
}

// ImportLine is one stored row (a CSV line, an OFX or QIF record) of an import.
type ImportLine struct {
	bun.BaseModel `bun:"table:import_rows,alias:ir"`

	ID            uuid.UUID     `bun:"id,pk"`
	FamilyID      uuid.UUID     `bun:"family_id"`
	ImportID      uuid.UUID     `bun:"import_id"`
	Position      int           `bun:"position"`
	Line          int           `bun:"line"` // of the file, from 1; 0 where the type has no lines (OFX, QIF)
	RawDate       string        `bun:"raw_date"`
	RawAmount     string        `bun:"raw_amount"`
	Name          string        `bun:"name"`
	Category      string        `bun:"category"`
	Tags          string        `bun:"tags"`
	Notes         string        `bun:"notes"`
	ExternalID    string        `bun:"external_id"`
	Date          *civil.Date   `bun:"date"`
	Amount        *money.Amount `bun:"amount"`
	Problems      string        `bun:"problems"` // newline-separated
	Status        string        `bun:"status"`
	TransactionID *uuid.UUID    `bun:"transaction_id"`
}

// The statuses of an import line.
const (
	LinePending   = "pending"
	LineImported  = "imported"
	LineDuplicate = "duplicate"
	LineInvalid   = "invalid"
)

// ImportFilter narrows a list of imports.
type ImportFilter struct {
	Status string
	Type   string
}

// CreateImport stores an import with its parsed rows, in one transaction
// (COPY on PostgreSQL). The account must be an active account of the
// family.
func (s *Store) CreateImport(ctx context.Context, im *Import, p *importfile.File) error {
	return s.createImport(ctx, im, parsedRows(p), false)
}

// ImportRows reads an import's file: it hands each row to each, in file
// order, and returns the file's header and problems (importfile.Each with
// the file and its settings).
type ImportRows func(each func(importfile.Row) error) (*importfile.File, error)

// CreateImportFrom is CreateImport for a file read while it is stored:
// its rows reach the database a batch at a time, so the whole file's
// rows are never held (issue 24). A file that cannot be read, or has
// problems as a whole (an *InvalidError listing them), stores nothing.
func (s *Store) CreateImportFrom(ctx context.Context, im *Import, read ImportRows) error {
	return s.createImport(ctx, im, read, true)
}

// CreateImportKept is CreateImportFrom for the screens: a file with
// problems as a whole is stored without rows, for a person to map again.
func (s *Store) CreateImportKept(ctx context.Context, im *Import, read ImportRows) error {
	return s.createImport(ctx, im, read, false)
}

// FileRows reads a file with settings s as it is stored (importfile.Each).
func FileRows(data []byte, typ string, s importfile.Settings) ImportRows {
	return func(each func(importfile.Row) error) (*importfile.File, error) {
		return importfile.Each(data, typ, s, each)
	}
}

// createImport stores im and its rows; strict refuses a file with
// problems (as the API does), else it is kept for a person to map again.
func (s *Store) createImport(ctx context.Context, im *Import, read ImportRows, strict bool) error {
	if err := s.checkImportAccount(ctx, im.FamilyID, im.AccountID); err != nil {
		return err
	}
	im.ID = NewID()
	im.Status = ImportPending
	im.CreatedAt = s.now()
	im.UpdatedAt = im.CreatedAt
	return s.bulkTx(ctx, func(tx *Store, copyRows copyFunc) error {
		if _, err := tx.db.NewInsert().Model(im).Exec(ctx); err != nil {
			return dbErr("create import", err)
		}
		if err := tx.replaceImportRows(ctx, copyRows, im, read); err != nil {
			return err
		}
		if strict && im.FileProblems != "" {
			return Invalid(strings.Split(im.FileProblems, "\n")...)
		}
		return nil
	})
}

// parsedRows hands out the rows of a file read whole (none when it has
// problems, which stop it being imported).
func parsedRows(p *importfile.File) ImportRows {
	return func(each func(importfile.Row) error) (*importfile.File, error) {
		if len(p.Problems) == 0 {
			for i := range p.Rows {
				if err := each(p.Rows[i]); err != nil {
					return nil, err
				}
			}
		}
		return p, nil
	}
}

func (s *Store) checkImportAccount(ctx context.Context, familyID, accountID uuid.UUID) error {
	a, err := s.Account(ctx, familyID, accountID)
	if errors.Is(err, ErrNotFound) {
		return Invalid("Account not found")
	}
	if err != nil {
		return err
	}
	if a.Status != AccountActive {
		return Invalid("Account is not active")
	}
	return nil
}

// ReconfigureImport changes a pending import's settings and replaces its
// rows with the file read again.
func (s *Store) ReconfigureImport(ctx context.Context, im *Import, p *importfile.File) error {
	return s.ReconfigureImportFrom(ctx, im, parsedRows(p))
}

// ReconfigureImportFrom is ReconfigureImport with the file's rows read as
// they are stored, a batch at a time.
func (s *Store) ReconfigureImportFrom(ctx context.Context, im *Import, read ImportRows) error {
	im.UpdatedAt = s.now()
	return s.bulkTx(ctx, func(tx *Store, copyRows copyFunc) error {
		res, err := tx.db.NewUpdate().Model(im).
			Column("col_sep", "date_col_label", "amount_col_label", "name_col_label", "category_col_label", "tags_col_label",
				"notes_col_label", "external_id_col_label", "debit_col_label", "credit_col_label", "encoding",
				"date_format", "number_format", "signage_convention", "updated_at").
			Where("im.family_id = ?", im.FamilyID).Where("im.id = ?", im.ID).Where("im.status = ?", ImportPending).Exec(ctx)
		if err := affectedOne(res, err, "reconfigure import"); errors.Is(err, ErrNotFound) {
			return Invalid("Only a pending import can be changed")
		} else if err != nil {
			return err
		}
		if _, err := tx.db.NewDelete().Model((*ImportLine)(nil)).Where("family_id = ?", im.FamilyID).Where("import_id = ?", im.ID).Exec(ctx); err != nil {
			return dbErr("clear import rows", err)
		}
		return tx.replaceImportRows(ctx, copyRows, im, read)
	})
}

var importRowColumns = []string{"id", "family_id", "import_id", "position", "line", "raw_date", "raw_amount", "name", "category", "tags",
	"notes", "external_id", "date", "amount", "problems", "status"}

// importRowBatch is how many rows of a file are written at a time.
const importRowBatch = 1000

// replaceImportRows writes the rows of an import's file as read hands
// them out, a batch at a time, and its row counts; a file with problems
// keeps no rows.
func (s *Store) replaceImportRows(ctx context.Context, copyRows copyFunc, im *Import, read ImportRows) error {
	im.RowsCount, im.InvalidRowsCount = 0, 0
	batch := make([]ImportLine, 0, importRowBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := s.insertImportLines(ctx, copyRows, batch); err != nil {
			return err
		}
		clear(batch) // let the written rows' strings go
		batch = batch[:0]
		return nil
	}
	p, err := read(func(r importfile.Row) error {
		status := LinePending
		if len(r.Problems) > 0 {
			status = LineInvalid
			im.InvalidRowsCount++
		}
		im.RowsCount++
		batch = append(batch, ImportLine{ID: NewID(), FamilyID: im.FamilyID, ImportID: im.ID, Position: r.Position, Line: r.Line,
			RawDate: r.RawDate, RawAmount: r.RawAmount, Name: r.Name, Category: r.Category, Tags: r.Tags, Notes: r.Notes,
			ExternalID: r.ExternalID, Date: (*civil.Date)(r.Date), Amount: (*money.Amount)(r.Amount),
			Problems: strings.Join(r.Problems, "\n"), Status: status})
		if len(batch) == importRowBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if len(p.Problems) > 0 && im.RowsCount > 0 {
		// Rows handed out before the problems were known are not kept.
		if _, err := s.db.NewDelete().Model((*ImportLine)(nil)).Where("family_id = ?", im.FamilyID).Where("import_id = ?", im.ID).Exec(ctx); err != nil {
			return dbErr("clear import rows", err)
		}
		im.RowsCount, im.InvalidRowsCount = 0, 0
	}
	im.FileHeaders, im.FileProblems = "", strings.Join(p.Problems, "\n")
	if p.Headers != nil {
		h, err := json.Marshal(p.Headers)
		if err != nil {
			return fmt.Errorf("models: import headers: %w", err)
		}
		im.FileHeaders = string(h)
	}
	_, err = s.db.NewUpdate().Model(im).Column("rows_count", "invalid_rows_count", "headers", "problems").
		Where("im.family_id = ?", im.FamilyID).Where("im.id = ?", im.ID).Exec(ctx)
	return dbErr("count import rows", err)
}

// insertImportLines writes a batch of import rows: by COPY on PostgreSQL,
// else by one INSERT.
func (s *Store) insertImportLines(ctx context.Context, copyRows copyFunc, rows []ImportLine) error {
	if copyRows == nil {
		_, err := s.db.NewInsert().Model(&rows).Exec(ctx)
		return dbErr("create import rows", err)
	}
	values := make([][]any, len(rows))
	for i := range rows {
		r := &rows[i]
		var date, amount any
		if r.Date != nil {
			date = string(*r.Date)
		}
		if r.Amount != nil {
			amount = int64(*r.Amount)
		}
		values[i] = []any{r.ID, r.FamilyID, r.ImportID, r.Position, r.Line, r.RawDate, r.RawAmount, r.Name, r.Category, r.Tags,
			r.Notes, r.ExternalID, date, amount, r.Problems, r.Status}
	}
	return dbErr("copy import rows", copyRows(ctx, "import_rows", importRowColumns, values))
}

// Import returns one import of the family.
func (s *Store) Import(ctx context.Context, familyID, id uuid.UUID) (*Import, error) {
	return oneOf[Import](ctx, s, familyID, id, "get import")
}

// Imports returns one page of the family's imports, newest first, without
// their files.
func (s *Store) Imports(ctx context.Context, familyID uuid.UUID, f ImportFilter, p Page) ([]Import, int, error) {
	var out []Import
	q := s.db.NewSelect().Model(&out).ExcludeColumn("raw_file", "headers", "problems").Where("im.family_id = ?", familyID).
		OrderExpr("im.created_at DESC, im.id DESC")
	if f.Status != "" {
		q.Where("im.status = ?", f.Status)
	}
	if f.Type != "" {
		q.Where("im.type = ?", f.Type)
	}
	n, err := p.scan(ctx, q)
	return out, n, dbErr("list imports", err)
}

// ImportLines returns one page of an import's rows in file order.
func (s *Store) ImportLines(ctx context.Context, familyID, importID uuid.UUID, p Page) ([]ImportLine, int, error) {
	return s.ImportLinesWithStatus(ctx, familyID, importID, "", p)
}

// ImportLinesWithStatus is ImportLines of one status (LineInvalid: the
// bad rows), or of every status when status is empty.
func (s *Store) ImportLinesWithStatus(ctx context.Context, familyID, importID uuid.UUID, status string, p Page) ([]ImportLine, int, error) {
	if _, err := s.Import(ctx, familyID, importID); err != nil {
		return nil, 0, err
	}
	var out []ImportLine
	q := s.db.NewSelect().Model(&out).Where("ir.family_id = ?", familyID).Where("ir.import_id = ?", importID).
		OrderExpr("ir.position")
	if status != "" {
		q.Where("ir.status = ?", status)
	}
	n, err := p.scan(ctx, q)
	return out, n, dbErr("list import rows", err)
}

// DeleteImport removes a pending or failed-to-start import and its rows;
// the transactions of an import that ran are removed by a revert first.
func (s *Store) DeleteImport(ctx context.Context, familyID, id uuid.UUID) error {
	res, err := s.db.NewDelete().Model((*Import)(nil)).Where("family_id = ?", familyID).Where("id = ?", id).
		Where("status = ?", ImportPending).Exec(ctx)
	return affectedOne(res, err, "delete import")
}

// PublishImport moves a publishable import to importing; the caller then
// queues the import job. Anything else is an InvalidError saying why.
func (s *Store) PublishImport(ctx context.Context, familyID, id uuid.UUID) (*Import, error) {
	return s.PublishImportSkipping(ctx, familyID, id, false)
}

// PublishImportSkipping is PublishImport that, with skipInvalid, starts an
// import that has bad rows too: its valid rows are imported and the bad
// ones left out (the job takes only pending rows; a bad row stays invalid).
func (s *Store) PublishImportSkipping(ctx context.Context, familyID, id uuid.UUID, skipInvalid bool) (*Import, error) {
	im, err := s.Import(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	switch {
	case im.Status != ImportPending:
		return nil, Invalid("Only a pending import can be published; this one is " + im.Status)
	case im.RowsCount == 0:
		return nil, Invalid("The import has no rows: check its column settings")
	case im.InvalidRowsCount > 0 && !skipInvalid:
		return nil, Invalid("The import has " + strconv.Itoa(im.InvalidRowsCount) + " rows that cannot be imported; fix the file or its settings, or skip them (skip_invalid)")
	case im.ValidRows() == 0:
		return nil, Invalid("None of the import's rows can be imported; fix the file or its settings")
	}
	now := s.now()
	res, err := s.db.NewUpdate().Model((*Import)(nil)).Set("status = ?", ImportImporting).Set("published_at = ?", now).
		Set("error = NULL").Set("updated_at = ?", now).
		Where("family_id = ?", familyID).Where("id = ?", id).Where("status = ?", ImportPending).Exec(ctx)
	if err := affectedOne(res, err, "publish import"); errors.Is(err, ErrNotFound) {
		return nil, Invalid("Only a pending import can be published")
	} else if err != nil {
		return nil, err
	}
	im.Status, im.PublishedAt, im.UpdatedAt, im.Error = ImportImporting, &now, now, nil
	return im, nil
}

// StartRevert moves a revertable import to reverting; the caller then
// queues the revert job. An import some of whose rows a finished
// reconciliation holds is refused, saying so: a revert never removes a
// reconciled row.
func (s *Store) StartRevert(ctx context.Context, familyID, id uuid.UUID) (*Import, error) {
	im, err := s.Import(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	if !im.Revertable() {
		return nil, Invalid("Only a complete or failed import can be reverted; this one is " + im.Status)
	}
	if err := s.checkImportUnreconciled(ctx, familyID, id); err != nil {
		return nil, err
	}
	now := s.now()
	res, err := s.db.NewUpdate().Model((*Import)(nil)).Set("status = ?", ImportReverting).Set("updated_at = ?", now).
		Where("family_id = ?", familyID).Where("id = ?", id).Where("status = ?", im.Status).Exec(ctx)
	if err := affectedOne(res, err, "start revert"); errors.Is(err, ErrNotFound) {
		return nil, Invalid("The import changed meanwhile; try again")
	} else if err != nil {
		return nil, err
	}
	im.Status, im.UpdatedAt = ImportReverting, now
	return im, nil
}

// FailImport records that an import's job gave up.
func (s *Store) FailImport(ctx context.Context, familyID, id uuid.UUID, status, msg string) error {
	_, err := s.db.NewUpdate().Model((*Import)(nil)).Set("status = ?", status).Set("error = ?", msg).Set("updated_at = ?", s.now()).
		Where("family_id = ?", familyID).Where("id = ?", id).Exec(ctx)
	return dbErr("fail import", err)
}

// ImportsInFlight returns the imports whose job should be running:
// importing or reverting. `coffer dev` queues them again at start.
func (s *Store) ImportsInFlight(ctx context.Context) ([]Import, error) {
	var out []Import
	err := s.db.NewSelect().Model(&out).Column("id", "family_id", "account_id", "status", "published_at", "updated_at").
		Where("status IN (?)", bun.List([]string{ImportImporting, ImportReverting})).Scan(ctx)
	return out, dbErr("imports in flight", err)
}

// ImportLinesByID returns the import's rows of the given ids, in file order.
func (s *Store) ImportLinesByID(ctx context.Context, familyID, importID uuid.UUID, ids []uuid.UUID) ([]ImportLine, error) {
	var out []ImportLine
	if len(ids) == 0 {
		return out, nil
	}
	err := s.db.NewSelect().Model(&out).Where("ir.family_id = ?", familyID).Where("ir.import_id = ?", importID).
		Where("ir.id IN (?)", bun.List(ids)).OrderExpr("ir.position").Scan(ctx)
	return out, dbErr("list import rows", err)
}

package models

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"coffer/models/civil"
	"coffer/models/importfile"
	"coffer/models/money"
)

// CorrectImportLine sets a bad row of a pending CSV import to the date,
// amount and name a person typed, reads it again with the import's
// settings and keeps the import's counts right. The row may still be bad
// (its new problems say why). Mapping the file again reads it from the
// file and drops the correction.
func (s *Store) CorrectImportLine(ctx context.Context, familyID, importID, lineID uuid.UUID, rawDate, rawAmount, name string) (*ImportLine, error) {
	var line ImportLine
	err := s.RunInTx(ctx, func(tx *Store) error {
		im, err := tx.Import(ctx, familyID, importID)
		if err != nil {
			return err
		}
		if im.Status != ImportPending || im.Type != importfile.CSV {
			return Invalid("Only a row of a CSV import waiting to be imported can be corrected")
		}
		q := tx.db.NewSelect().Model(&line).Where("ir.family_id = ?", familyID).Where("ir.import_id = ?", importID).Where("ir.id = ?", lineID)
		if tx.Postgres() {
			q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return dbErr("get import row", err)
		}
		if line.Status != LineInvalid && line.Status != LinePending {
			return Invalid("This row is already imported")
		}
		was := line.Status
		r := importfile.Correct(importfile.Row{Position: line.Position, Line: line.Line, RawDate: rawDate, RawAmount: rawAmount,
			Name: name, Category: line.Category, Tags: line.Tags, Notes: line.Notes, ExternalID: line.ExternalID}, im.Settings)
		line.RawDate, line.RawAmount, line.Name = r.RawDate, r.RawAmount, r.Name
		line.Date, line.Amount = (*civil.Date)(r.Date), (*money.Amount)(r.Amount)
		line.Problems, line.Status = strings.Join(r.Problems, "\n"), LinePending
		if len(r.Problems) > 0 {
			line.Status = LineInvalid
		}
		if _, err := tx.db.NewUpdate().Model(&line).Column("raw_date", "raw_amount", "name", "date", "amount", "problems", "status").
			Where("ir.family_id = ?", familyID).Where("ir.id = ?", lineID).Exec(ctx); err != nil {
			return dbErr("correct import row", err)
		}
		delta := 0
		switch {
		case was == LineInvalid && line.Status == LinePending:
			delta = -1
		case was == LinePending && line.Status == LineInvalid:
			delta = 1
		}
		if delta != 0 {
			if _, err := tx.db.NewUpdate().Model((*Import)(nil)).Set("invalid_rows_count = invalid_rows_count + ?", delta).
				Set("updated_at = ?", tx.now()).Where("family_id = ?", familyID).Where("id = ?", importID).Exec(ctx); err != nil {
				return dbErr("count import rows", err)
			}
		}
		return nil
	})
	return &line, err
}

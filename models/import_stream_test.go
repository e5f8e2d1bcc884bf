package models_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/modelstest"
)

// TestCreateImportFrom: rows read while they are stored reach the
// database in batches, all of them with their counts; a file that fails
// part way, or that lacks a mapped column, leaves nothing behind.
func TestCreateImportFrom(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "stream")
	var b strings.Builder
	b.WriteString("date,amount,name\n")
	for i := range 2_500 {
		if i == 1_700 {
			b.WriteString("02/30/2024,1,Bad day\n")
			continue
		}
		fmt.Fprintf(&b, "01/%02d/2024,%d.50,Shop %d\n", i%28+1, i, i)
	}
	file := []byte(b.String())
	set := csvSettings(nil)
	read := func(data []byte) models.ImportRows {
		return func(each func(importfile.Row) error) (*importfile.File, error) {
			return importfile.Each(data, importfile.CSV, set, each)
		}
	}
	im := &models.Import{FamilyID: f.Family.ID, AccountID: f.Account.ID, Type: importfile.CSV, RawFile: string(file), Settings: set}
	if err := s.CreateImportFrom(ctx, im, read(file)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Import(ctx, f.Family.ID, im.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.RowsCount != 2_500 || got.InvalidRowsCount != 1 {
		t.Fatalf("rows %d, invalid %d", got.RowsCount, got.InvalidRowsCount)
	}
	lines, total, err := s.ImportLines(ctx, f.Family.ID, im.ID, models.Page{Number: 18, Size: 100})
	if err != nil || total != 2_500 || len(lines) != 100 || lines[0].Position != 1_701 || lines[0].Status != models.LineInvalid {
		t.Fatalf("lines %d of %d, first %+v, %v", len(lines), total, lines[0], err)
	}

	count := func() int {
		n, err := s.DB().NewSelect().Table("imports").Where("family_id = ?", f.Family.ID).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	before := count()
	// Past the first batches, the reading fails: nothing is kept.
	stop := errors.New("stop")
	n := 0
	failing := func(each func(importfile.Row) error) (*importfile.File, error) {
		return importfile.Each(file, importfile.CSV, set, func(r importfile.Row) error {
			if n++; n == 2_100 {
				return stop
			}
			return each(r)
		})
	}
	im2 := &models.Import{FamilyID: f.Family.ID, AccountID: f.Account.ID, Type: importfile.CSV, RawFile: string(file), Settings: set}
	if err := s.CreateImportFrom(ctx, im2, failing); !errors.Is(err, stop) {
		t.Fatalf("err = %v", err)
	}
	// A mapped column the file lacks: its problems, and nothing kept.
	im3 := &models.Import{FamilyID: f.Family.ID, AccountID: f.Account.ID, Type: importfile.CSV, RawFile: "x", Settings: set}
	noName := []byte(strings.Replace(b.String(), "date,amount,name", "when,amount,name", 1))
	var inv *models.InvalidError
	if err := s.CreateImportFrom(ctx, im3, read(noName)); !errors.As(err, &inv) || !strings.Contains(inv.Problems[0], "date_col_label") {
		t.Fatalf("err = %v", err)
	}
	if after := count(); after != before {
		t.Fatalf("imports %d, then %d", before, after)
	}
	rows, err := s.DB().NewSelect().Table("import_rows").Where("family_id = ?", f.Family.ID).Count(ctx)
	if err != nil || rows != 2_500 {
		t.Fatalf("import rows %d, want the first import's 2500 (%v)", rows, err)
	}
}

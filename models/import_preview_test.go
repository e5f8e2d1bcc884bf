package models_test

import (
	"context"
	"slices"
	"testing"

	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/modelstest"
)

// TestImportKeepsWhatTheFileHeld: the header and the file's problems are
// stored with the rows when the file is read, so that the import's page
// shows them (and pages its rows) without reading the file again.
func TestImportKeepsWhatTheFileHeld(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "preview")
	im := newImport(t, s, f, importfile.CSV, "date,amount,name\n01/15/2024,1,A\n01/16/2024,2,B\n")
	got, err := s.Import(ctx, f.Family.ID, im.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Headers(), []string{"date", "amount", "name"}) || len(got.Problems()) != 0 || got.RowsCount != 2 {
		t.Fatalf("stored: headers %v problems %v rows %d", got.Headers(), got.Problems(), got.RowsCount)
	}
	// Mapped to a column the file lacks: the problem is kept, no rows.
	set := got.Settings
	set.AmountColLabel = models.Ptr("value")
	p, err := importfile.Parse([]byte(got.RawFile), got.Type, set)
	if err != nil {
		t.Fatal(err)
	}
	got.Settings = set
	if err := s.ReconfigureImport(ctx, got, p); err != nil {
		t.Fatal(err)
	}
	again, err := s.Import(ctx, f.Family.ID, im.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Problems()) != 1 || again.RowsCount != 0 || len(again.Headers()) != 3 {
		t.Fatalf("reconfigured: headers %v problems %v rows %d", again.Headers(), again.Problems(), again.RowsCount)
	}
	list, _, err := s.Imports(ctx, f.Family.ID, models.ImportFilter{}, models.Page{Number: 1, Size: 10})
	if err != nil || len(list) != 1 || list[0].FileHeaders != "" || list[0].RawFile != "" {
		t.Fatalf("a list carries no file, header or problems: %+v %v", list, err)
	}
}

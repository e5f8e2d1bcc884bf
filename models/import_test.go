package models_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
)

// newImport parses and stores a file for the fixture's account.
func newImport(t *testing.T, s *models.Store, f *modelstest.FamilyFixture, typ, file string) *models.Import {
	t.Helper()
	set := csvSettings(nil)
	p, err := models.ParseImportFile([]byte(file), typ, set)
	if err != nil {
		t.Fatal(err)
	}
	im := &models.Import{FamilyID: f.Family.ID, AccountID: f.Account.ID, Type: typ, RawFile: file, ImportSettings: set}
	if err := s.CreateImport(context.Background(), im, p); err != nil {
		t.Fatal(err)
	}
	return im
}

// runImport publishes an import and runs its steps to the end.
func runImport(t *testing.T, s *models.Store, im *models.Import) *models.Import {
	t.Helper()
	ctx := context.Background()
	if _, err := s.PublishImport(ctx, im.FamilyID, im.ID); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		got, done, err := s.ImportStep(ctx, im.FamilyID, im.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			return got
		}
	}
	t.Fatal("import never finished")
	return nil
}

func countImported(t *testing.T, s *models.Store, f *modelstest.FamilyFixture) int {
	t.Helper()
	n, err := s.DB().NewSelect().Table("transactions").Where("family_id = ?", f.Family.ID).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func TestImportDuplicatesAndRevert(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	a := modelstest.NewFamily(t, s, "alpha")
	b := modelstest.NewFamily(t, s, "beta")

	// One coffee already in the ledger (typed by hand, other case and
	// spacing); the file has it twice: one is new.
	src := "api"
	if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: a.Family.ID, AccountID: a.Account.ID, Date: "2024-01-15",
		Amount: 125000, Currency: "USD", Name: "coffee  SHOP", Source: &src}, nil); err != nil {
		t.Fatal(err)
	}
	file := "date,amount,name\n01/15/2024,-12.50,Coffee Shop\n01/15/2024,-12.50,Coffee Shop\n01/16/2024,-3,Bus\n01/15/2024,-12.51,Coffee Shop\n"
	im := runImport(t, s, newImport(t, s, a, models.ImportCSV, file))
	if im.Status != models.ImportComplete || im.ImportedRowsCount != 3 || im.DuplicateRowsCount != 1 || im.Progress() != 100 {
		t.Fatalf("first import: %+v", im)
	}
	if n := countImported(t, s, a); n != 4 {
		t.Fatalf("%d transactions, want 4", n)
	}
	// The same file again: everything is already there.
	again := runImport(t, s, newImport(t, s, a, models.ImportCSV, file))
	if again.ImportedRowsCount != 0 || again.DuplicateRowsCount != 4 {
		t.Fatalf("second import: %+v", again)
	}
	lines, total, err := s.ImportLines(ctx, a.Family.ID, again.ID, models.Page{Number: 1, Size: 10})
	if err != nil || total != 4 || lines[0].Status != models.LineDuplicate || lines[0].TransactionID == nil {
		t.Fatalf("lines = %+v, %d, %v", lines, total, err)
	}
	// Another family sees neither.
	if _, err := s.Import(ctx, b.Family.ID, im.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("other family: %v", err)
	}
	if _, _, err := s.ImportLines(ctx, b.Family.ID, im.ID, models.Page{Number: 1, Size: 10}); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("other family lines: %v", err)
	}
	if _, err := s.StartRevert(ctx, b.Family.ID, im.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("other family revert: %v", err)
	}

	// Revert removes exactly the first import's three rows; twice is once.
	if _, err := s.StartRevert(ctx, a.Family.ID, im.ID); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := s.RevertImport(ctx, a.Family.ID, im.ID)
		if err != nil || got.Status != models.ImportPending {
			t.Fatalf("revert: %+v %v", got, err)
		}
	}
	if n := countImported(t, s, a); n != 1 {
		t.Fatalf("%d transactions after revert, want the hand-typed one", n)
	}
	if _, err := s.StartRevert(ctx, a.Family.ID, im.ID); err == nil {
		t.Fatal("a pending import was reverted")
	}
}

func TestImportOFXByFITID(t *testing.T) {
	s := modelstest.NewStore(t)
	a := modelstest.NewFamily(t, s, "alpha")
	// A FITID twice in one file is one transaction; a second import of
	// the statement adds nothing.
	first := runImport(t, s, newImport(t, s, a, models.ImportOFX, ofxSGML))
	if first.ImportedRowsCount != 4 || first.DuplicateRowsCount != 0 {
		t.Fatalf("first: %+v", first)
	}
	second := runImport(t, s, newImport(t, s, a, models.ImportOFX, ofxSGML))
	if second.ImportedRowsCount != 0 || second.DuplicateRowsCount != 4 {
		t.Fatalf("second: %+v", second)
	}
	if n := countImported(t, s, a); n != 4 {
		t.Fatalf("%d transactions, want 4", n)
	}
}

func TestImportRefusals(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	a := modelstest.NewFamily(t, s, "alpha")
	b := modelstest.NewFamily(t, s, "beta")
	p, err := models.ParseImportFile([]byte("date,amount\n01/15/2024,1\n"), models.ImportCSV, csvSettings(nil))
	if err != nil {
		t.Fatal(err)
	}
	// Another family's account is not an account of this family.
	im := &models.Import{FamilyID: a.Family.ID, AccountID: b.Account.ID, Type: models.ImportCSV, RawFile: "x", ImportSettings: csvSettings(nil)}
	var inv *models.InvalidError
	if err := s.CreateImport(ctx, im, p); !errors.As(err, &inv) {
		t.Fatalf("foreign account: %v", err)
	}
	// A file with a bad row cannot be published.
	bad := newImport(t, s, a, models.ImportCSV, "date,amount,name\n01/15/2024,x,A\n")
	if _, err := s.PublishImport(ctx, a.Family.ID, bad.ID); !errors.As(err, &inv) {
		t.Fatalf("publish with invalid rows: %v", err)
	}
	if _, err := s.PublishImport(ctx, a.Family.ID, uuid.New()); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("publish unknown: %v", err)
	}
}

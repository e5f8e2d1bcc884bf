package models_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/modelstest"
)

// csvSettings are the reference defaults with a name column.
func csvSettings(mod func(*importfile.Settings)) importfile.Settings {
	s := importfile.DefaultSettings()
	s.NameColLabel = models.Ptr("name")
	if mod != nil {
		mod(&s)
	}
	return s
}

// ofxSGML is a bank statement as banks write it: SGML headers, leaves
// left open.
const ofxSGML = "OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\nENCODING:USASCII\r\nCHARSET:1252\r\nCOMPRESSION:NONE\r\nOLDFILEUID:NONE\r\nNEWFILEUID:NONE\r\n\r\n" +
	"<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20240120<LANGUAGE>ENG</SONRS></SIGNONMSGSRSV1>" +
	"<BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS><STMTRS><CURDEF>USD" +
	"<BANKACCTFROM><BANKID>1<ACCTID>2<ACCTTYPE>CHECKING</BANKACCTFROM><BANKTRANLIST><DTSTART>20240101<DTEND>20240120\n" +
	"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240105120000[-5:EST]<TRNAMT>-12.34<FITID>F1<NAME>COFFEE SHOP<MEMO>card 1234</STMTTRN>\n" +
	"<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20240106<TRNAMT>1500.00<FITID>F2<PAYEE><NAME>EMPLOYER INC<ADDR1>1 Road<CITY>X<STATE>Y<POSTALCODE>1</PAYEE></STMTTRN>\n" +
	"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240107<TRNAMT>-5<FITID>F3<MEMO>ATM FEE</STMTTRN>\n" +
	"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240108<TRNAMT>+2.5<FITID>F4<NAME>REFUND AS SENT</STMTTRN>\n" +
	"</BANKTRANLIST><LEDGERBAL><BALAMT>100.00<DTASOF>20240120</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"

// newImport parses and stores a file for the fixture's account.
func newImport(t *testing.T, s *models.Store, f *modelstest.FamilyFixture, typ, file string) *models.Import {
	t.Helper()
	set := csvSettings(nil)
	p, err := importfile.Parse([]byte(file), typ, set)
	if err != nil {
		t.Fatal(err)
	}
	im := &models.Import{FamilyID: f.Family.ID, AccountID: f.Account.ID, Type: typ, RawFile: file, Settings: set}
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
	im := runImport(t, s, newImport(t, s, a, importfile.CSV, file))
	if im.Status != models.ImportComplete || im.ImportedRowsCount != 3 || im.DuplicateRowsCount != 1 || im.Progress() != 100 {
		t.Fatalf("first import: %+v", im)
	}
	if n := countImported(t, s, a); n != 4 {
		t.Fatalf("%d transactions, want 4", n)
	}
	// The same file again: everything is already there.
	again := runImport(t, s, newImport(t, s, a, importfile.CSV, file))
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
	first := runImport(t, s, newImport(t, s, a, importfile.OFX, ofxSGML))
	if first.ImportedRowsCount != 4 || first.DuplicateRowsCount != 0 {
		t.Fatalf("first: %+v", first)
	}
	second := runImport(t, s, newImport(t, s, a, importfile.OFX, ofxSGML))
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
	p, err := importfile.Parse([]byte("date,amount\n01/15/2024,1\n"), importfile.CSV, csvSettings(nil))
	if err != nil {
		t.Fatal(err)
	}
	// Another family's account is not an account of this family.
	im := &models.Import{FamilyID: a.Family.ID, AccountID: b.Account.ID, Type: importfile.CSV, RawFile: "x", Settings: csvSettings(nil)}
	var inv *models.InvalidError
	if err := s.CreateImport(ctx, im, p); !errors.As(err, &inv) {
		t.Fatalf("foreign account: %v", err)
	}
	// A file with a bad row cannot be published.
	bad := newImport(t, s, a, importfile.CSV, "date,amount,name\n01/15/2024,x,A\n")
	if _, err := s.PublishImport(ctx, a.Family.ID, bad.ID); !errors.As(err, &inv) {
		t.Fatalf("publish with invalid rows: %v", err)
	}
	if _, err := s.PublishImport(ctx, a.Family.ID, uuid.New()); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("publish unknown: %v", err)
	}
}

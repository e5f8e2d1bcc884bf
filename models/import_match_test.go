package models_test

import (
	"context"
	"testing"

	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// usChecking is a US bank's checking export: posting dates month-first,
// money out negative, the bank's long descriptions.
const usChecking = "Posting Date,Description,Amount,Type,Balance\n" +
	"01/02/2024,\"PAYROLL ACME CORP DIRECT DEP PPD ID: 9000123\",2500.00,ACH_CREDIT,3100.00\n" +
	"01/03/2024,\"AMAZON MKTPLACE PMTS AMZN.COM/BILL WA\",-42.17,DEBIT_CARD,3057.83\n" +
	"01/05/2024,\"SHELL OIL 57444 SPRINGFIELD IL\",-38.50,DEBIT_CARD,3019.33\n" +
	"01/05/2024,\"SHELL OIL 57444 SPRINGFIELD IL\",-38.50,DEBIT_CARD,2980.83\n"

// usCheckingLater overlaps usChecking by its last three rows.
const usCheckingLater = "Posting Date,Description,Amount,Type,Balance\n" +
	"01/03/2024,\"AMAZON MKTPLACE PMTS AMZN.COM/BILL WA\",-42.17,DEBIT_CARD,3057.83\n" +
	"01/05/2024,\"SHELL OIL 57444 SPRINGFIELD IL\",-38.50,DEBIT_CARD,3019.33\n" +
	"01/05/2024,\"SHELL OIL 57444 SPRINGFIELD IL\",-38.50,DEBIT_CARD,2980.83\n" +
	"01/09/2024,\"NETFLIX.COM 866-579-7172 CA\",-15.49,DEBIT_CARD,2965.34\n"

// usCheckingOFX is the same account's OFX download for the same days: the
// NAME cut at 32 characters, a FITID on every movement.
const usCheckingOFX = "OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\nENCODING:USASCII\r\nCHARSET:1252\r\nCOMPRESSION:NONE\r\nOLDFILEUID:NONE\r\nNEWFILEUID:NONE\r\n\r\n" +
	"<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20240110<LANGUAGE>ENG</SONRS></SIGNONMSGSRSV1>" +
	"<BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS><STMTRS><CURDEF>USD" +
	"<BANKACCTFROM><BANKID>021000021<ACCTID>000123456789<ACCTTYPE>CHECKING</BANKACCTFROM><BANKTRANLIST><DTSTART>20240101<DTEND>20240110\n" +
	"<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20240102120000[0:GMT]<TRNAMT>2500.00<FITID>202401020001<NAME>PAYROLL ACME CORP DIRECT DEP PPD</STMTTRN>\n" +
	"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240103120000[0:GMT]<TRNAMT>-42.17<FITID>202401030001<NAME>AMAZON MKTPLACE PMTS AMZN.COM/BI</STMTTRN>\n" +
	"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240105120000[0:GMT]<TRNAMT>-38.50<FITID>202401050001<NAME>SHELL OIL 57444 SPRINGFIELD IL</STMTTRN>\n" +
	"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240105120000[0:GMT]<TRNAMT>-38.50<FITID>202401050002<NAME>SHELL OIL 57444 SPRINGFIELD IL</STMTTRN>\n" +
	"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240110120000[0:GMT]<TRNAMT>-9.99<FITID>202401100001<NAME>SPOTIFY USA</STMTTRN>\n" +
	"</BANKTRANLIST><LEDGERBAL><BALAMT>2970.84<DTASOF>20240110</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"

func usCheckingSettings(s *importfile.Settings) {
	s.DateColLabel, s.NameColLabel = models.Ptr("Posting Date"), models.Ptr("Description")
	s.AmountColLabel = models.Ptr("Amount")
}

// importWith parses and stores a file with settings for the fixture's account.
func importWith(t *testing.T, s *models.Store, f *modelstest.FamilyFixture, typ, file string, set importfile.Settings) *models.Import {
	t.Helper()
	p, err := importfile.Parse([]byte(file), typ, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Problems) > 0 || p.InvalidRows() > 0 {
		t.Fatalf("file problems %v, %d invalid rows", p.Problems, p.InvalidRows())
	}
	im := &models.Import{FamilyID: f.Family.ID, AccountID: f.Account.ID, Type: typ, RawFile: file, Settings: set}
	if err := s.CreateImport(context.Background(), im, p); err != nil {
		t.Fatal(err)
	}
	return im
}

// renameAll renames and re-categorises every transaction of the family, as
// a person tidying up after a first import.
func renameAll(t *testing.T, s *models.Store, f *modelstest.FamilyFixture) {
	t.Helper()
	ctx := context.Background()
	cat := &models.Category{FamilyID: f.Family.ID, Name: "Household", Color: "#000000", Icon: "home", Classification: "expense"}
	if err := s.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	var txs []models.Transaction
	if err := s.DB().NewSelect().Model(&txs).Where("family_id = ?", f.Family.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range txs {
		tx := txs[i]
		tx.Name, tx.CategoryID = "Renamed "+string(tx.Date), &cat.ID
		if _, err := s.UpdateTransaction(ctx, &tx, []string{"name", "category_id"}, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReimportAfterRenameDoubles: an overlapping CSV imported again after
// the person renamed and re-categorised the rows of the first skips them
// all (they were matched by their current name, and every one came in
// again).
func TestReimportAfterRenameDoubles(t *testing.T) {
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "rename")
	set := csvSettings(usCheckingSettings)
	first := runImport(t, s, importWith(t, s, f, importfile.CSV, usChecking, set))
	if first.ImportedRowsCount != 4 {
		t.Fatalf("first import wrote %d rows, want 4", first.ImportedRowsCount)
	}
	renameAll(t, s, f)
	second := runImport(t, s, importWith(t, s, f, importfile.CSV, usCheckingLater, set))
	if second.ImportedRowsCount != 1 || second.DuplicateRowsCount != 3 {
		t.Fatalf("second import: %d imported, %d skipped; want 1 and 3", second.ImportedRowsCount, second.DuplicateRowsCount)
	}
	if n := countImported(t, s, f); n != 5 {
		t.Fatalf("%d transactions, want 5", n)
	}
}

// TestOFXAfterCSVDoubles: the OFX download of an account already imported
// from its CSV skips the overlap (it checked only its own FITIDs), its
// names cut at 32 characters; then the same OFX again skips by FITID.
func TestOFXAfterCSVDoubles(t *testing.T) {
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "ofxcsv")
	runImport(t, s, importWith(t, s, f, importfile.CSV, usChecking, csvSettings(usCheckingSettings)))
	renameAll(t, s, f)
	ofx := runImport(t, s, importWith(t, s, f, importfile.OFX, usCheckingOFX, csvSettings(nil)))
	if ofx.ImportedRowsCount != 1 || ofx.DuplicateRowsCount != 4 {
		t.Fatalf("OFX after CSV: %d imported, %d skipped; want 1 and 4", ofx.ImportedRowsCount, ofx.DuplicateRowsCount)
	}
	again := runImport(t, s, importWith(t, s, f, importfile.OFX, usCheckingOFX, csvSettings(nil)))
	if again.ImportedRowsCount != 0 || again.DuplicateRowsCount != 5 {
		t.Fatalf("OFX again: %d imported, %d skipped; want 0 and 5", again.ImportedRowsCount, again.DuplicateRowsCount)
	}
	if n := countImported(t, s, f); n != 5 {
		t.Fatalf("%d transactions, want 5", n)
	}
}

// TestImportSkipsPreview: before it runs, a pending import says which rows
// it will skip as already there, each with the transaction it matches
// (found by the fingerprint: the API-created row was renamed since), and
// running it skips exactly those.
func TestImportSkipsPreview(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "skips")
	made, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2024-01-09",
		Amount: money.Amount(154900), Currency: f.Account.Currency, Name: "NETFLIX.COM 866-579-7172 CA"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	made.Name = "Netflix"
	if _, err := s.UpdateTransaction(ctx, made, []string{"name"}, nil); err != nil {
		t.Fatal(err)
	}
	im := importWith(t, s, f, importfile.CSV, usCheckingLater, csvSettings(usCheckingSettings))
	skips, err := s.ImportSkips(ctx, f.Family.ID, im.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(skips) != 1 {
		t.Fatalf("%d skips, want 1: %+v", len(skips), skips)
	}
	for _, sk := range skips {
		if sk.Position != 4 || sk.Transaction.ID != made.ID || sk.Transaction.Name != "Netflix" {
			t.Fatalf("skip %+v, want row 4 matching %s", sk, made.ID)
		}
	}
	if _, err := s.ImportSkips(ctx, modelstest.NewFamily(t, s, "other").Family.ID, im.ID); err == nil {
		t.Fatal("another family's import answered")
	}
	done := runImport(t, s, im)
	if done.DuplicateRowsCount != 1 || done.ImportedRowsCount != 3 {
		t.Fatalf("run: %d imported, %d skipped; want 3 and 1", done.ImportedRowsCount, done.DuplicateRowsCount)
	}
}

package models_test

import (
	"context"
	"testing"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/importfile"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// keyedRow is an API client's row carrying its bank's id.
func keyedRow(f *modelstest.FamilyFixture, ext, day string, amount int64, name string) *models.NewTransaction {
	return &models.NewTransaction{Row: &models.Transaction{AccountID: f.Account.ID, Date: civil.Date(day),
		Amount: money.Amount(amount), Currency: f.Account.Currency, Name: name, ExternalID: &ext}}
}

// TestBulkAfterFileDoubles: an app sending its bank's movements with their
// ids, after the family imported the same days from the bank's CSV and
// renamed every row, doubled the overlap (only its own ids were checked).
// Now each keyed row the account holds from the file is answered with
// that row, a repeat of the key too; two identical purchases in the file
// answer for two rows and no more; a row without an id (a person's entry)
// is always written.
func TestBulkAfterFileDoubles(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "arrivals")
	runImport(t, s, importWith(t, s, f, importfile.CSV, usChecking, csvSettings(usCheckingSettings)))
	renameAll(t, s, f)

	rows := []*models.NewTransaction{
		keyedRow(f, "b1", "2024-01-03", 421700, "AMAZON MKTPLACE PMTS AMZN.COM/BILL WA"),
		keyedRow(f, "b2", "2024-01-05", 385000, "SHELL OIL 57444 SPRINGFIELD IL"),
		keyedRow(f, "b3", "2024-01-05", 385000, "SHELL OIL 57444 SPRINGFIELD IL"),
		keyedRow(f, "b4", "2024-01-05", 385000, "SHELL OIL 57444 SPRINGFIELD IL"), // a third: not in the file
		keyedRow(f, "b5", "2024-01-09", 154900, "NETFLIX.COM 866-579-7172 CA"),
	}
	if _, err := s.IngestTransactions(ctx, f.Family.ID, rows); err != nil {
		t.Fatal(err)
	}
	want := []models.IngestStatus{models.IngestDuplicate, models.IngestDuplicate, models.IngestDuplicate, models.IngestCreated, models.IngestCreated}
	for i, r := range rows {
		if r.Status != want[i] {
			t.Errorf("row %d: %s %v, want %s", i, r.Status, r.Problems, want[i])
		}
	}
	if rows[0].Row.Name != "Renamed 2024-01-03" || rows[1].Row.ID == rows[2].Row.ID {
		t.Errorf("duplicates answered with %q, %s and %s", rows[0].Row.Name, rows[1].Row.ID, rows[2].Row.ID)
	}
	if n := countImported(t, s, f); n != 6 {
		t.Fatalf("%d transactions, want 4 from the file and 2 new", n)
	}

	// The same keys again: the same rows, nothing written.
	again := []*models.NewTransaction{keyedRow(f, "b1", "2024-01-03", 421700, "AMAZON MKTPLACE PMTS AMZN.COM/BILL WA"),
		keyedRow(f, "b4", "2024-01-05", 385000, "SHELL OIL 57444 SPRINGFIELD IL")}
	if _, err := s.IngestTransactions(ctx, f.Family.ID, again); err != nil {
		t.Fatal(err)
	}
	if again[0].Status != models.IngestDuplicate || again[0].Row.ID != rows[0].Row.ID || again[1].Status != models.IngestExisting {
		t.Errorf("replays: %s %s, %s", again[0].Status, again[0].Row.ID, again[1].Status)
	}
	// Another id for a movement already claimed is another movement.
	other := []*models.NewTransaction{keyedRow(f, "b9", "2024-01-03", 421700, "AMAZON MKTPLACE PMTS AMZN.COM/BILL WA")}
	if _, err := s.IngestTransactions(ctx, f.Family.ID, other); err != nil || other[0].Status != models.IngestCreated {
		t.Fatalf("a second id for a claimed movement: %s %v", other[0].Status, err)
	}
	// A person's entry looking like a file row is written.
	typed, created, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
		Date: "2024-01-02", Amount: -25000000, Currency: "USD", Name: "PAYROLL ACME CORP DIRECT DEP PPD ID: 9000123"}, nil)
	if err != nil || !created || typed == nil {
		t.Fatalf("a person's entry: created %v, %v", created, err)
	}
	if n := countImported(t, s, f); n != 8 {
		t.Fatalf("%d transactions, want 8", n)
	}
}

// TestMatchedKeyAnswersWhenCorrected: an arriving row is compared only
// with the account's rows of its own amount (the check reads that amount's
// rows, not every row of its days), yet a key matched once stays matched:
// sent again after the bank corrected its amount or its day, alone or in a
// batch, it answers with the same transaction and writes nothing. A lone
// keyed row of another amount on a file row's day is another movement.
func TestMatchedKeyAnswersWhenCorrected(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "corrected")
	const amazon = "AMAZON MKTPLACE PMTS AMZN.COM/BILL WA"
	runImport(t, s, importWith(t, s, f, importfile.CSV, usChecking, csvSettings(usCheckingSettings)))

	first := keyedRow(f, "c1", "2024-01-03", 421700, amazon)
	if _, err := s.IngestTransactions(ctx, f.Family.ID, []*models.NewTransaction{first}); err != nil || first.Status != models.IngestDuplicate {
		t.Fatalf("a lone keyed row of a file's movement: %s %v", first.Status, err)
	}
	before := countImported(t, s, f)
	for _, again := range [][]*models.NewTransaction{
		{keyedRow(f, "c1", "2024-01-03", 431700, amazon)}, // amount corrected, alone
		{keyedRow(f, "c1", "2024-01-17", 421700, amazon)}, // day moved, alone
		{keyedRow(f, "c1", "2024-02-03", 431700, amazon), // both, in a batch
			keyedRow(f, "c2", "2024-02-10", 100, "ANOTHER")},
	} {
		if _, err := s.IngestTransactions(ctx, f.Family.ID, again); err != nil {
			t.Fatal(err)
		}
		if r := again[0]; r.Status != models.IngestDuplicate || r.Row.ID != first.Row.ID {
			t.Errorf("%s %s: %s %s, want the matched row %s", r.Row.Date, r.Row.Amount, r.Status, r.Row.ID, first.Row.ID)
		}
	}
	if n := countImported(t, s, f); n != before+1 {
		t.Fatalf("%d transactions after the replays, want %d (one new)", n, before+1)
	}
	other := keyedRow(f, "c3", "2024-01-03", 421600, amazon)
	if _, err := s.IngestTransactions(ctx, f.Family.ID, []*models.NewTransaction{other}); err != nil || other.Status != models.IngestCreated {
		t.Fatalf("another amount on the same day: %s %v", other.Status, err)
	}
}

// TestCardPaymentMirroredBeforeCardFileDoubles: a payment to the card,
// recorded as a transfer from checking (by a person or a rule), wrote the
// card's side; the card's own file then brought the same payment, dated
// two days later under the bank's text, and the card showed it twice.
// Now the file's row is the side already there; another payment of the
// same amount a week later is another movement and comes in.
func TestCardPaymentMirroredBeforeCardFileDoubles(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "cardpay")
	card := &models.Account{FamilyID: f.Family.ID, Name: "Visa", AccountType: "credit_card", Currency: "USD"}
	if err := s.CreateAccount(ctx, card); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTransfer(ctx, f.Family.ID, models.NewTransfer{FromAccountID: f.Account.ID, ToAccountID: card.ID,
		Date: "2024-01-10", Amount: 5000000}); err != nil {
		t.Fatal(err)
	}
	file := "date,name,amount\n" +
		"01/08/2024,GROCERY OUTLET,-52.45\n" +
		"01/12/2024,PAYMENT THANK YOU,500.00\n" +
		"01/19/2024,PAYMENT THANK YOU,500.00\n"
	p, err := importfile.Parse([]byte(file), importfile.CSV, csvSettings(nil))
	if err != nil || p.InvalidRows() > 0 {
		t.Fatalf("parse: %v %d invalid", err, p.InvalidRows())
	}
	im := &models.Import{FamilyID: f.Family.ID, AccountID: card.ID, Type: importfile.CSV, RawFile: file, Settings: csvSettings(nil)}
	if err := s.CreateImport(ctx, im, p); err != nil {
		t.Fatal(err)
	}
	done := runImport(t, s, im)
	if done.ImportedRowsCount != 2 || done.DuplicateRowsCount != 1 {
		t.Fatalf("card file: %d imported, %d skipped; want 2 and 1", done.ImportedRowsCount, done.DuplicateRowsCount)
	}
	n, err := s.DB().NewSelect().Table("transactions").Where("account_id = ?", card.ID).Count(ctx)
	if err != nil || n != 3 {
		t.Fatalf("%d card rows (%v), want the transfer's side and 2 from the file", n, err)
	}
}

// TestReimportAfterSplit: a row split into parts is still the row the
// bank sent: the same file imported again skips it, and no part is taken
// for a movement of the file.
func TestReimportAfterSplit(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "splitre")
	set := csvSettings(usCheckingSettings)
	runImport(t, s, importWith(t, s, f, importfile.CSV, usChecking, set))
	var amazon models.Transaction
	if err := s.DB().NewSelect().Model(&amazon).Where("family_id = ?", f.Family.ID).Where("amount = ?", 421700).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SplitTransaction(ctx, f.Family.ID, amazon.ID, []models.SplitPart{
		{Name: "Books", Amount: 211700}, {Name: "Toys", Amount: 210000}}); err != nil {
		t.Fatal(err)
	}
	again := runImport(t, s, importWith(t, s, f, importfile.CSV, usCheckingLater, set))
	if again.ImportedRowsCount != 1 || again.DuplicateRowsCount != 3 {
		t.Fatalf("after the split: %d imported, %d skipped; want 1 and 3", again.ImportedRowsCount, again.DuplicateRowsCount)
	}
}

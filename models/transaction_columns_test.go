package models_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestTransactionColumns: the one list of transactions columns names
// every column of the table as the migrations left it, on this database,
// and nothing else; and every write built from it stores each column it
// says it sets, with the value it was given: the pipeline's lone row (one
// prepared statement on PostgreSQL, insertTransactionSQL inside a
// transaction and on SQLite), its batches (a multi-row INSERT, COPY from
// 50 rows on PostgreSQL), a file import's rows and a SimpleFIN import's
// new and changed rows (a staging table and one upsert on PostgreSQL).
func TestTransactionColumns(t *testing.T) {
	s := modelstest.NewStore(t)
	s.Rules = nil // the rows are stored as given
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "columns")
	fam := f.Family.ID

	all, writes := models.TransactionColumns()
	table := tableColumns(t, s)
	if err := sameColumns(table, all); err != nil {
		t.Fatal(err)
	}
	// A slip in the list is caught: a column left out, or one the table
	// lacks.
	if sameColumns(table, slices.DeleteFunc(slices.Clone(all), func(c string) bool { return c == "notes" })) == nil {
		t.Fatal("a list without notes passes")
	}
	if sameColumns(table, append(slices.Clone(all), "split_id")) == nil {
		t.Fatal("a list with a column the table lacks passes")
	}

	cat := &models.Category{FamilyID: fam, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	if err := s.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	mer := &models.Merchant{FamilyID: fam, Name: "Cafe"}
	if err := s.CreateMerchant(ctx, mer); err != nil {
		t.Fatal(err)
	}
	rule := &models.Rule{FamilyID: fam, Active: false,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "nothing")},
		Actions:    []models.RuleAction{action(models.ActSetCategory, cat.ID.String())}}
	if err := s.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	im := newImport(t, s, f, "TransactionImport", "date,amount,name\n2024-01-15,1.00,x\n")

	n := 0
	// full is a row with every column a write may set given a value of
	// its own.
	full := func() *models.Transaction {
		n++
		ext, src, notes, reason := fmt.Sprintf("ext-%d", n), "columns", fmt.Sprintf("notes %d", n), "by_test"
		key, meta, conn := fmt.Sprintf("key-%d", n), `{"n": 1}`, uuid.New()
		at := time.Date(2024, 2, 3, 4, 5, 6, 789000, time.UTC)
		return &models.Transaction{ID: models.NewID(), FamilyID: fam, AccountID: f.Account.ID, Date: "2024-01-17",
			Amount: money.Amount(1000 + n), Currency: "USD", Name: fmt.Sprintf("row %d", n), Notes: &notes, ExternalID: &ext,
			Source: &src, Pending: true, CategoryID: &cat.ID, MerchantID: &mer.ID, Excluded: true, ExcludedReason: &reason,
			RuleID: &rule.ID, ProviderConnectionID: &conn, ContentKey: &key, ProviderMeta: &meta, CreatedAt: at,
			UpdatedAt: at.Add(time.Hour)}
	}
	// stored checks that every column of cols holds what want says.
	stored := func(t *testing.T, want *models.Transaction, cols []string) {
		t.Helper()
		got := new(models.Transaction)
		if err := s.DB().NewSelect().Model(got).Column(all...).Where("id = ?", want.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			if w, g := models.TransactionColumnText(want, c), models.TransactionColumnText(got, c); w != g {
				t.Errorf("%s: stored %s, written %s", c, g, w)
			}
		}
	}
	ingest := func(t *testing.T, st *models.Store, count int) {
		t.Helper()
		rows := make([]*models.NewTransaction, count)
		for i := range rows {
			rows[i] = &models.NewTransaction{Row: full()}
		}
		if _, err := st.IngestTransactions(ctx, fam, rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Status != models.IngestCreated {
				t.Fatalf("%s %v", r.Status, r.Problems)
			}
			stored(t, r.Row, writes["new"])
		}
	}

	t.Run("one row", func(t *testing.T) { ingest(t, s, 1) })
	t.Run("one row in a transaction", func(t *testing.T) {
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
		rows := []*models.NewTransaction{{Row: full()}}
		if _, err := tx.IngestTransactions(ctx, fam, rows); err != nil || rows[0].Status != models.IngestCreated {
			t.Fatalf("%v %s %v", err, rows[0].Status, rows[0].Problems)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		stored(t, rows[0].Row, writes["new"])
	})
	t.Run("batch", func(t *testing.T) { ingest(t, s, 3) })
	t.Run("copy", func(t *testing.T) { ingest(t, s, 60) })
	t.Run("file import", func(t *testing.T) {
		for _, count := range []int{2, 60} {
			rows := make([]*models.NewTransaction, count)
			for i := range rows {
				rows[i] = &models.NewTransaction{Row: full()}
			}
			if err := s.InsertRows(ctx, fam, rows, &im.ID); err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				r.Row.ImportID = &im.ID
				stored(t, r.Row, writes["file"])
			}
		}
	})
	t.Run("sync", func(t *testing.T) {
		row := full()
		if err := s.WriteImported(ctx, []models.Transaction{*row}); err != nil {
			t.Fatal(err)
		}
		stored(t, row, writes["sync"])
		// A changed row takes the provider's columns and keeps the rest.
		next := full()
		next.ID, next.FamilyID, next.AccountID = row.ID, row.FamilyID, row.AccountID
		next.Currency, next.Source, next.CategoryID, next.MerchantID, next.RuleID = "EUR", nil, nil, nil, nil
		next.CreatedAt, next.Pending, next.Excluded = row.CreatedAt.Add(time.Minute), false, false
		next.UpdatedAt = row.UpdatedAt.Add(time.Hour)
		if err := s.WriteImported(ctx, []models.Transaction{*next}); err != nil {
			t.Fatal(err)
		}
		stored(t, next, writes["sync update"])
		var kept []string
		for _, c := range writes["sync"] {
			if !slices.Contains(writes["sync update"], c) {
				kept = append(kept, c)
			}
		}
		stored(t, row, kept)
	})
}

// tableColumns are the columns of transactions on the store's database.
func tableColumns(t *testing.T, s *models.Store) []string {
	t.Helper()
	var cols []string
	q := "SELECT name FROM pragma_table_info('transactions')"
	if s.Postgres() {
		q = "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'transactions'"
	}
	if err := s.DB().NewRaw(q).Scan(context.Background(), &cols); err != nil {
		t.Fatal(err)
	}
	if len(cols) == 0 {
		t.Fatal("no columns read")
	}
	return cols
}

// sameColumns reports a column of the table the list lacks, or one of the
// list the table lacks.
func sameColumns(table, list []string) error {
	for _, c := range table {
		if !slices.Contains(list, c) {
			return fmt.Errorf("transactions.%s is not in transactionColumns: add its line (writeNone if no bulk write sets it)", c)
		}
	}
	for _, c := range list {
		if !slices.Contains(table, c) {
			return fmt.Errorf("transactionColumns names %s, which transactions lacks", c)
		}
	}
	if len(list) != len(table) {
		return fmt.Errorf("transactionColumns names a column twice")
	}
	return nil
}

package models_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models"
	"coffer/models/modelstest"
)

// ingestFixture is a family with a category, two tags and a disabled
// account, and another family's account.
type ingestFixture struct {
	s        *models.Store
	f        *modelstest.FamilyFixture
	cat      *models.Category
	tag, tg2 *models.Tag
	disabled *models.Account
	foreign  *models.Account
}

func newIngestFixture(t *testing.T) *ingestFixture {
	t.Helper()
	ctx := context.Background()
	s := modelstest.NewStore(t)
	x := &ingestFixture{s: s, f: modelstest.NewFamily(t, s, "ingest")}
	x.foreign = modelstest.NewFamily(t, s, "other").Account
	x.cat = &models.Category{FamilyID: x.f.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	x.tag = &models.Tag{FamilyID: x.f.Family.ID, Name: "beans", Color: "#111111"}
	x.tg2 = &models.Tag{FamilyID: x.f.Family.ID, Name: "Auto", Color: "#222222"}
	x.disabled = &models.Account{FamilyID: x.f.Family.ID, Name: "Old", AccountType: "depository", Currency: "USD"}
	for _, err := range []error{s.CreateCategory(ctx, x.cat), s.CreateTag(ctx, x.tag), s.CreateTag(ctx, x.tg2),
		s.CreateAccount(ctx, x.disabled)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().NewUpdate().Model((*models.Account)(nil)).Set("status = ?", models.AccountDisabled).
		Where("id = ?", x.disabled.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return x
}

func (x *ingestFixture) row(account uuid.UUID, name, key string) *models.NewTransaction {
	t := &models.Transaction{AccountID: account, Date: "2024-05-01", Amount: 1000, Currency: "USD", Name: name}
	if key != "" {
		t.ExternalID = &key
	}
	return &models.NewTransaction{Row: t}
}

// TestIngestTransactions runs one batch holding every case a bulk create
// meets and checks each row's outcome, what was written and what was not.
func TestIngestTransactions(t *testing.T) {
	x := newIngestFixture(t)
	ctx := context.Background()
	fam := x.f.Family.ID
	acct := x.f.Account.ID
	stored, _, err := x.s.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: acct, Date: "2024-01-01",
		Amount: 500, Currency: "USD", Name: "Stored", ExternalID: ptr("stored")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gone := uuid.New()

	type want struct {
		status   models.IngestStatus
		problems []string
		sameAs   int // for existing: the index whose row it is (-1: the stored row)
	}
	cases := []struct {
		name string
		row  *models.NewTransaction
		want want
	}{
		{"plain", x.row(acct, "  Lunch  ", ""), want{status: models.IngestCreated}},
		{"keyed", x.row(acct, "Keyed", "k1"), want{status: models.IngestCreated}},
		{"the same key again in the batch", x.row(acct, "Keyed twice", "k1"), want{status: models.IngestExisting, sameAs: 1}},
		{"the same key on another account is another key", x.row(x.disabled.ID, "Keyed", "k1"),
			want{status: models.IngestInvalid, problems: []string{"Account is not active"}}},
		{"another family's account", x.row(x.foreign.ID, "Foreign", ""),
			want{status: models.IngestInvalid, problems: []string{"Account not found"}}},
		{"another family's account with a key", x.row(x.foreign.ID, "Foreign", "stored"),
			want{status: models.IngestInvalid, problems: []string{"Account not found"}}},
		{"a stored key, with a category that is gone", func() *models.NewTransaction {
			r := x.row(acct, "Replay", "stored")
			r.Row.CategoryID = &gone
			return r
		}(), want{status: models.IngestExisting, sameAs: -1}},
		{"a category that is gone", func() *models.NewTransaction {
			r := x.row(acct, "Bad", "")
			r.Row.CategoryID = &gone
			r.TagIDs = []uuid.UUID{gone}
			return r
		}(), want{status: models.IngestInvalid, problems: []string{"Category " + gone.String() + " not found", "Tag " + gone.String() + " not found"}}},
		{"tags, one twice", func() *models.NewTransaction {
			r := x.row(acct, "Tagged", "")
			r.Row.CategoryID = &x.cat.ID
			r.TagIDs = []uuid.UUID{x.tag.ID, x.tg2.ID, x.tag.ID}
			return r
		}(), want{status: models.IngestCreated}},
		{"the caller's own problems, no key", func() *models.NewTransaction {
			r := x.row(acct, "", "")
			r.Problems = []string{"name can't be blank"}
			return r
		}(), want{status: models.IngestInvalid, problems: []string{"name can't be blank"}}},
		{"the caller's own problems, a stored key", func() *models.NewTransaction {
			r := x.row(acct, "", "stored")
			r.Problems = []string{"amount is required"}
			return r
		}(), want{status: models.IngestExisting, sameAs: -1}},
	}
	rows := make([]*models.NewTransaction, len(cases))
	for i, c := range cases {
		rows[i] = c.row
	}
	changed, err := x.s.IngestTransactions(ctx, fam, rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 1 || changed[0] != acct {
		t.Errorf("changed accounts %v, want [%s]", changed, acct)
	}
	for i, c := range cases {
		r := rows[i]
		if r.Status != c.want.status || !slices.Equal(r.Problems, c.want.problems) {
			t.Errorf("%s: %s %q, want %s %q", c.name, r.Status, r.Problems, c.want.status, c.want.problems)
			continue
		}
		switch r.Status {
		case models.IngestExisting:
			id := stored.ID
			if c.want.sameAs >= 0 {
				id = rows[c.want.sameAs].Row.ID
			}
			if r.Row.ID != id || r.Row.Account == nil || r.Row.Tags == nil {
				t.Errorf("%s: row %s, want %s with its links", c.name, r.Row.ID, id)
			}
		case models.IngestCreated:
			got, err := x.s.Transaction(ctx, fam, r.Row.ID)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got.Name != strings.TrimSpace(r.Row.Name) || r.Row.Account == nil || r.Row.Account.ID != acct ||
				len(got.Tags) != len(r.Row.Tags) {
				t.Errorf("%s: stored %+v, answered %+v", c.name, got, r.Row)
			}
			for k := range got.Tags {
				if got.Tags[k].ID != r.Row.Tags[k].ID {
					t.Errorf("%s: tags %v, answered %v", c.name, got.Tags, r.Row.Tags)
				}
			}
		}
	}
	if names := tagNames(rows[8].Row.Tags); !slices.Equal(names, []string{"Auto", "beans"}) || rows[8].Row.Category == nil {
		t.Errorf("tagged row: tags %v category %v", names, rows[8].Row.Category)
	}
	// Nothing but the three created rows and the stored one was written.
	n, err := x.s.DB().NewSelect().Model((*models.Transaction)(nil)).Where("family_id = ?", fam).Count(ctx)
	if err != nil || n != 4 {
		t.Errorf("%d rows in the family (%v), want 4", n, err)
	}
	// The whole batch again: every keyed row is a replay, the rest new.
	again := []*models.NewTransaction{x.row(acct, "Keyed", "k1"), x.row(acct, "Lunch", "")}
	if _, err := x.s.IngestTransactions(ctx, fam, again); err != nil {
		t.Fatal(err)
	}
	if again[0].Status != models.IngestExisting || again[0].Row.ID != rows[1].Row.ID || again[1].Status != models.IngestCreated {
		t.Errorf("again: %s %s", again[0].Status, again[1].Status)
	}
}

func tagNames(tags []models.Tag) []string {
	var out []string
	for _, t := range tags {
		out = append(out, t.Name)
	}
	return out
}

// coffeeRule is a stand-in for the rules engine: rows named like coffee
// get the category, the tag and a tidy name, unless a person locked them.
func coffeeRule(cat, tag uuid.UUID, calls *int) models.RulesStep {
	return func(ctx context.Context, tx *models.Store, familyID uuid.UUID, rows []*models.NewTransaction) error {
		*calls++
		for _, r := range rows {
			if r.Row.FamilyID != familyID {
				panic("a row of another family reached the rules")
			}
			if !strings.Contains(strings.ToLower(r.Row.Name), "coffee") {
				continue
			}
			if !slices.Contains(r.Row.LockedFields, "category") {
				r.Row.CategoryID = &cat
			}
			if !slices.Contains(r.Row.LockedFields, "name") {
				r.Row.Name = "Coffee"
			}
			r.TagIDs = append(r.TagIDs, tag)
		}
		return nil
	}
}

// TestIngestRules checks the rules seam through the single create and a
// batch: the rules see the rows about to be written (once per batch, no
// replay, no refused row) and what they set is stored and answered.
func TestIngestRules(t *testing.T) {
	x := newIngestFixture(t)
	ctx := context.Background()
	fam, acct := x.f.Family.ID, x.f.Account.ID
	calls := 0
	x.s.Rules = coffeeRule(x.cat.ID, x.tag.ID, &calls)

	single, created, err := x.s.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: acct, Date: "2024-05-01",
		Amount: 450, Currency: "USD", Name: "POS COFFEE 123"}, []uuid.UUID{x.tag.ID})
	if err != nil || !created {
		t.Fatal(created, err)
	}
	batch := []*models.NewTransaction{x.row(acct, "coffee shop", "c1"), x.row(acct, "Rent", ""), x.row(x.foreign.ID, "coffee", ""),
		x.row(acct, "coffee again", "c1")}
	if _, err := x.s.IngestTransactions(ctx, fam, batch); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("rules called %d times, want once per door's batch (2)", calls)
	}
	for _, tc := range []struct {
		name  string
		row   *models.Transaction
		ruled bool
	}{{"single", single, true}, {"batch", batch[0].Row, true}, {"batch, no match", batch[1].Row, false}} {
		got, err := x.s.Transaction(ctx, fam, tc.row.ID)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		ruled := got.CategoryID != nil && *got.CategoryID == x.cat.ID && got.Name == "Coffee" &&
			slices.Equal(tagNames(got.Tags), []string{"beans"})
		if ruled != tc.ruled || tc.row.Name != got.Name || (got.Category == nil) != (tc.row.Category == nil) {
			t.Errorf("%s: stored %q %v %v, answered %q; want ruled %v", tc.name, got.Name, got.CategoryID, tagNames(got.Tags), tc.row.Name, tc.ruled)
		}
	}
	if batch[2].Status != models.IngestInvalid || batch[3].Status != models.IngestExisting || batch[3].Row.Name != "Coffee" {
		t.Errorf("foreign %s, duplicate %s %q", batch[2].Status, batch[3].Status, batch[3].Row.Name)
	}

	// A rule naming a record that is not the family's is dropped, not
	// written and not failing the row.
	x.s.Rules = func(ctx context.Context, tx *models.Store, familyID uuid.UUID, rows []*models.NewTransaction) error {
		for _, r := range rows {
			id := uuid.New()
			r.Row.CategoryID, r.Row.MerchantID = &id, &id
			r.TagIDs = append(r.TagIDs, id)
		}
		return nil
	}
	row, created, err := x.s.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: acct, Date: "2024-05-01",
		Amount: 1, Currency: "USD", Name: "stale rule"}, nil)
	if err != nil || !created || row.CategoryID != nil || row.MerchantID != nil || len(row.Tags) != 0 {
		t.Fatalf("stale rule: %+v %v %v", row, created, err)
	}
}

// BenchmarkIngestTransactions writes batches of 1,000 keyed rows through
// the pipeline, without HTTP, and reports rows per second.
func BenchmarkIngestTransactions(b *testing.B) {
	s := modelstest.NewStore(b)
	f := modelstest.NewFamily(b, s, "bench")
	ctx := context.Background()
	const size = 1000
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		rows := make([]*models.NewTransaction, size)
		for k := range rows {
			key := fmt.Sprintf("bench-%d-%d", i, k)
			rows[k] = &models.NewTransaction{Row: &models.Transaction{AccountID: f.Account.ID, Date: "2024-01-15", Amount: 125000,
				Currency: "USD", Name: "Coffee", ExternalID: &key}}
		}
		b.StartTimer()
		if _, err := s.IngestTransactions(ctx, f.Family.ID, rows); err != nil {
			b.Fatal(err)
		}
		if rows[size-1].Status != models.IngestCreated {
			b.Fatalf("status %s %v", rows[size-1].Status, rows[size-1].Problems)
		}
	}
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "rows/s")
}

// TestIngestConcurrentBatches: two batches large enough for COPY, with the
// same keys, written at once make each row once; every row is created in
// one batch and existing in the other, and a key stored by the other
// batch mid-way never fails a batch.
func TestIngestConcurrentBatches(t *testing.T) {
	x := newIngestFixture(t)
	ctx := context.Background()
	fam, acct := x.f.Family.ID, x.f.Account.ID
	const size = 120
	batches := make([][]*models.NewTransaction, 4)
	errs := make(chan error, len(batches))
	for b := range batches {
		batches[b] = make([]*models.NewTransaction, size)
		for k := range size {
			r := x.row(acct, fmt.Sprintf("row %d", k), fmt.Sprintf("race-%d", k))
			if k%10 == 0 {
				r.TagIDs = []uuid.UUID{x.tag.ID}
			}
			batches[b][k] = r
		}
	}
	for _, batch := range batches {
		go func() {
			_, err := x.s.IngestTransactions(ctx, fam, batch)
			errs <- err
		}()
	}
	for range batches {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for k := range size {
		created, id := 0, batches[0][k].Row.ID
		for _, batch := range batches {
			r := batch[k]
			switch r.Status {
			case models.IngestCreated:
				created++
			case models.IngestExisting:
			default:
				t.Fatalf("row %d: %s %v", k, r.Status, r.Problems)
			}
			if r.Row.ID != id {
				t.Fatalf("row %d: ids %s and %s", k, r.Row.ID, id)
			}
		}
		if created != 1 {
			t.Fatalf("row %d created %d times", k, created)
		}
	}
	n, err := x.s.DB().NewSelect().Model((*models.Transaction)(nil)).Where("family_id = ?", fam).Count(ctx)
	if err != nil || n != size {
		t.Fatalf("%d rows (%v), want %d", n, err, size)
	}
	tagged, err := x.s.DB().NewSelect().Model((*models.TransactionTag)(nil)).Where("family_id = ?", fam).Count(ctx)
	if err != nil || tagged != size/10 {
		t.Fatalf("%d tag links (%v), want %d", tagged, err, size/10)
	}
}

// TestPersonEditsLock: a person's edit of any row, imported or not, locks
// the fields it changed (tags only when the set changes), so that the
// rules never overwrite them.
func TestPersonEditsLock(t *testing.T) {
	x := newIngestFixture(t)
	ctx := context.Background()
	fam := x.f.Family.ID
	row, _, err := x.s.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: x.f.Account.ID, Date: "2024-05-01",
		Amount: 1, Currency: "USD", Name: "x"}, []uuid.UUID{x.tag.ID})
	if err != nil {
		t.Fatal(err)
	}
	locked := func() []string {
		t.Helper()
		var got models.Transaction
		if err := x.s.DB().NewSelect().Model(&got).Column("locked_fields").Where("id = ?", row.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		return got.LockedFields
	}
	for _, step := range []struct {
		name string
		cols []string
		tags []uuid.UUID // nil: not given
		want []string
	}{
		{"the same tags again", nil, []uuid.UUID{x.tag.ID, x.tag.ID}, nil},
		{"a category and a name", []string{"category_id", "name"}, nil, []string{"category", "name"}},
		{"other tags", nil, []uuid.UUID{x.tg2.ID}, []string{"category", "name", "tags"}},
		{"a merchant and the name again", []string{"merchant_id", "name"}, nil, []string{"category", "name", "tags", "merchant"}},
	} {
		upd := *row
		upd.CategoryID = &x.cat.ID
		upd.Name = "edited"
		var tags *[]uuid.UUID
		if step.tags != nil {
			tags = &step.tags
		}
		if _, err := x.s.UpdateTransaction(ctx, &upd, step.cols, tags); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := locked(); !slices.Equal(got, step.want) {
			t.Errorf("%s: locked %v, want %v", step.name, got, step.want)
		}
	}
}

// TestBulkEditsLock: the screens' bulk category and bulk tags are a
// person's edits too: each row gets the field locked, once.
func TestBulkEditsLock(t *testing.T) {
	x := newIngestFixture(t)
	ctx := context.Background()
	fam := x.f.Family.ID
	var ids []uuid.UUID
	for range 2 {
		row, _, err := x.s.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: x.f.Account.ID, Date: "2024-05-01",
			Amount: 1, Currency: "USD", Name: "x"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, row.ID)
	}
	for range 2 {
		if _, err := x.s.BulkSetCategory(ctx, fam, ids, &x.cat.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := x.s.BulkAddTags(ctx, fam, ids, []uuid.UUID{x.tag.ID}); err != nil {
			t.Fatal(err)
		}
	}
	var rows []models.Transaction
	if err := x.s.DB().NewSelect().Model(&rows).Column("locked_fields").Where("id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !slices.Equal(r.LockedFields, []string{"category", "tags"}) {
			t.Errorf("locked %v, want [category tags]", r.LockedFields)
		}
	}
}

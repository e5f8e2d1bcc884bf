package models_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
)

func countWhere(t *testing.T, s *models.Store, model any, where string, args ...any) int {
	t.Helper()
	n, err := s.DB().NewSelect().Model(model).Where(where, args...).Count(context.Background())
	must(t, err)
	return int(n)
}

func TestMergeCategories(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	fam := l.f.Family.ID
	jan, err := l.s.EnsureBudget(ctx, fam, "2024-01-01")
	must(t, err)
	lines := budgetLines(t, l, jan.ID)
	must(t, l.s.UpdateBudgetCategory(ctx, fam, lines[l.groceries.ID].ID, mustAmount(t, "100"), false))
	must(t, l.s.UpdateBudgetCategory(ctx, fam, lines[l.food.ID].ID, mustAmount(t, "40"), false))
	stranger := modelstest.NewFamily(t, l.s, "stranger")

	if _, err := l.s.MergeCategories(ctx, stranger.Family.ID, l.groceries.ID, l.food.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another family's categories: %v", err)
	}
	if _, err := l.s.MergeCategories(ctx, fam, l.food.ID, l.food.ID); err == nil {
		t.Fatal("merging a category into itself was accepted")
	}
	// Food has a subcategory: it cannot go under another parent's child.
	sub := &models.Category{FamilyID: fam, Name: "Snacks", Color: "#000000", Icon: "x", Classification: "expense", ParentID: &l.groceries.ID}
	must(t, l.s.CreateCategory(ctx, sub))
	var inv *models.InvalidError
	if _, err := l.s.MergeCategories(ctx, fam, l.food.ID, sub.ID); !errors.As(err, &inv) {
		t.Fatalf("into another parent's subcategory: %v", err)
	}

	groceries := countWhere(t, l.s, (*models.Transaction)(nil), "category_id = ?", l.groceries.ID)
	moved, err := l.s.MergeCategories(ctx, fam, l.groceries.ID, l.food.ID)
	must(t, err)
	if moved != groceries || moved == 0 || countWhere(t, l.s, (*models.Transaction)(nil), "category_id = ?", l.groceries.ID) != 0 {
		t.Fatalf("moved %d of %d", moved, groceries)
	}
	if _, err := l.s.Category(ctx, fam, l.groceries.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("source still there: %v", err)
	}
	if snacks, err := l.s.Category(ctx, fam, sub.ID); err != nil || snacks.ParentID == nil || *snacks.ParentID != l.food.ID {
		t.Errorf("subcategory not moved: %+v %v", snacks, err)
	}
	lines = budgetLines(t, l, jan.ID)
	if len(lines) != 2 || lines[l.food.ID].BudgetedSpending != mustAmount(t, "140") {
		t.Errorf("budget lines after merge: %+v", lines)
	}

	// Merging a parent into its own child puts the child in its place.
	moved, err = l.s.MergeCategories(ctx, fam, l.food.ID, l.dining.ID)
	must(t, err)
	dining, err := l.s.Category(ctx, fam, l.dining.ID)
	must(t, err)
	if dining.ParentID != nil || dining.SubcategoriesCount != 1 || moved == 0 {
		t.Errorf("dining after taking food's place: %+v, moved %d", dining, moved)
	}
	if lines = budgetLines(t, l, jan.ID); lines[l.dining.ID].BudgetedSpending != mustAmount(t, "140") {
		t.Errorf("dining's budget %+v", lines[l.dining.ID])
	}
}

func TestMergeMerchantsAndTags(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "alpha")
	stranger := modelstest.NewFamily(t, s, "beta")
	fam := f.Family.ID
	a, b := &models.Merchant{FamilyID: fam, Name: "Amazon"}, &models.Merchant{FamilyID: fam, Name: "AMZN Mktp"}
	must(t, s.CreateMerchant(ctx, a))
	must(t, s.CreateMerchant(ctx, b))
	x, y := &models.Tag{FamilyID: fam, Name: "trip", Color: "#000000"}, &models.Tag{FamilyID: fam, Name: "travel", Color: "#000000"}
	must(t, s.CreateTag(ctx, x))
	must(t, s.CreateTag(ctx, y))
	var txs []uuid.UUID
	for i, m := range []*models.Merchant{a, b, b} {
		tx := &models.Transaction{FamilyID: fam, AccountID: f.Account.ID, Date: "2024-01-01", Amount: 1, Currency: "USD", Name: "t", MerchantID: &m.ID}
		tags := [][]uuid.UUID{{x.ID, y.ID}, {y.ID}, nil}[i]
		_, _, err := s.CreateTransaction(ctx, tx, tags)
		must(t, err)
		txs = append(txs, tx.ID)
	}
	if _, err := s.MergeMerchants(ctx, stranger.Family.ID, b.ID, a.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another family's merchants: %v", err)
	}
	moved, err := s.MergeMerchants(ctx, fam, b.ID, a.ID)
	must(t, err)
	if moved != 2 || countWhere(t, s, (*models.Transaction)(nil), "merchant_id = ?", a.ID) != 3 {
		t.Errorf("merchants: moved %d", moved)
	}
	if _, err := s.Merchant(ctx, fam, b.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("source merchant left: %v", err)
	}

	if _, err := s.MergeTags(ctx, stranger.Family.ID, y.ID, x.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another family's tags: %v", err)
	}
	tagged, err := s.MergeTags(ctx, fam, y.ID, x.ID)
	must(t, err)
	if tagged != 2 || countWhere(t, s, (*models.TransactionTag)(nil), "tag_id = ?", x.ID) != 2 ||
		countWhere(t, s, (*models.TransactionTag)(nil), "tag_id = ?", y.ID) != 0 {
		t.Errorf("tags: tagged %d", tagged)
	}
	got, err := s.Transaction(ctx, fam, txs[0])
	must(t, err)
	if len(got.Tags) != 1 || got.Tags[0].ID != x.ID {
		t.Errorf("first transaction's tags %+v", got.Tags)
	}
}

func TestBulkEdits(t *testing.T) {
	l := newLedger(t)
	ctx := context.Background()
	fam := l.f.Family.ID
	stranger := modelstest.NewFamily(t, l.s, "stranger")
	theirs := &models.Transaction{FamilyID: stranger.Family.ID, AccountID: stranger.Account.ID, Date: "2024-01-01", Amount: 1, Currency: "USD", Name: "t"}
	_, _, err := l.s.CreateTransaction(ctx, theirs, nil)
	must(t, err)
	rows, _, err := l.s.Transactions(ctx, fam, models.TransactionFilter{AccountIDs: []uuid.UUID{l.checking.ID}}, models.Page{Number: 1, Size: 3})
	must(t, err)
	ids := []uuid.UUID{rows[0].ID, rows[1].ID, rows[2].ID, theirs.ID, uuid.New()}

	n, err := l.s.BulkSetCategory(ctx, fam, ids, &l.food.ID)
	must(t, err)
	if n != 3 || countWhere(t, l.s, (*models.Transaction)(nil), "id = ? AND category_id IS NULL", theirs.ID) != 1 {
		t.Fatalf("set category: %d", n)
	}
	var inv *models.InvalidError
	theirCategory := &models.Category{FamilyID: stranger.Family.ID, Name: "X", Color: "#000000", Icon: "x", Classification: "expense"}
	must(t, l.s.CreateCategory(ctx, theirCategory))
	if _, err := l.s.BulkSetCategory(ctx, fam, ids, &theirCategory.ID); !errors.As(err, &inv) {
		t.Fatalf("another family's category: %v", err)
	}
	if _, err := l.s.BulkSetCategory(ctx, fam, nil, nil); !errors.As(err, &inv) {
		t.Fatalf("no ids: %v", err)
	}
	if n, err = l.s.BulkSetCategory(ctx, fam, ids[:1], nil); err != nil || n != 1 {
		t.Fatalf("clear category: %d %v", n, err)
	}

	tag := &models.Tag{FamilyID: fam, Name: "review", Color: "#000000"}
	must(t, l.s.CreateTag(ctx, tag))
	theirTag := &models.Tag{FamilyID: stranger.Family.ID, Name: "review", Color: "#000000"}
	must(t, l.s.CreateTag(ctx, theirTag))
	if _, err := l.s.BulkAddTags(ctx, fam, ids, []uuid.UUID{tag.ID, theirTag.ID}); !errors.As(err, &inv) {
		t.Fatalf("another family's tag: %v", err)
	}
	for range 2 { // twice: the second adds nothing
		n, err = l.s.BulkAddTags(ctx, fam, ids, []uuid.UUID{tag.ID})
		must(t, err)
		if n != 3 || countWhere(t, l.s, (*models.TransactionTag)(nil), "tag_id = ?", tag.ID) != 3 {
			t.Fatalf("add tags: %d", n)
		}
	}
	if countWhere(t, l.s, (*models.TransactionTag)(nil), "transaction_id = ?", theirs.ID) != 0 {
		t.Error("another family's transaction was tagged")
	}
}

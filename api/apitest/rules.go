package apitest

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
)

// RuleFixtures are a category and a few transactions of alpha.
func RuleFixtures(t *testing.T, e *Env) (cat *models.Category, ids []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	cat = &models.Category{FamilyID: e.Alpha.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	if err := e.Store.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"Starbucks 1", "Grocer", "STARBUCKS 2", "Rent"} {
		tx := &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Date: "2024-02-01",
			Amount: models.Amount(10000 * (i + 1)), Currency: "USD", Name: name}
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tx.ID)
	}
	return cat, ids
}

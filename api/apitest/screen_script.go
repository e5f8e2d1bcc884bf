package apitest

import (
	"testing"

	"github.com/google/uuid"

	"coffer/models"
)

// smallLedger is alpha's checking account and a card, two categories and
// a transaction in each account, the market run tagged.
type smallLedger struct {
	Card           *models.Account
	Groceries, Fun *models.Category
	tag            *models.Tag
	Market, coffee *models.Transaction
}

func NewSmallLedger(t *testing.T, e *Env) smallLedger {
	t.Helper()
	ctx, fam := t.Context(), e.Alpha.Family.ID
	l := smallLedger{
		Card:      &models.Account{FamilyID: fam, Name: "Visa", AccountType: "credit_card", Currency: "USD"},
		Groceries: &models.Category{FamilyID: fam, Name: "Groceries", Color: "#112233", Classification: "expense"},
		Fun:       &models.Category{FamilyID: fam, Name: "Fun", Color: "#112233", Classification: "expense"},
		tag:       &models.Tag{FamilyID: fam, Name: "weekly", Color: "#112233"},
	}
	for _, err := range []error{e.Store.CreateAccount(ctx, l.Card), e.Store.CreateCategory(ctx, l.Groceries),
		e.Store.CreateCategory(ctx, l.Fun), e.Store.CreateTag(ctx, l.tag)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	l.Market = &models.Transaction{FamilyID: fam, AccountID: e.Alpha.Account.ID, Date: "2026-01-05", Amount: 42_5000, Currency: "USD", Name: "Corner market"}
	l.coffee = &models.Transaction{FamilyID: fam, AccountID: l.Card.ID, Date: "2026-01-06", Amount: 4_5000, Currency: "USD", Name: "Coffee"}
	for _, tx := range []struct {
		t    *models.Transaction
		tags []uuid.UUID
	}{{l.Market, []uuid.UUID{l.tag.ID}}, {l.coffee, nil}} {
		if _, _, err := e.Store.CreateTransaction(ctx, tx.t, tx.tags); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// Stored is the alpha family's transaction id as the database has it now.
func Stored(t *testing.T, e *Env, id uuid.UUID) *models.Transaction {
	t.Helper()
	tx, err := e.Store.Transaction(t.Context(), e.Alpha.Family.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

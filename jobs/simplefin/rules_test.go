package simplefin_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// TestRulesOnImport: the import is a door of the ingestion pipeline like
// the API: its new rows go through the store's rules step, inside the
// import's transaction, and what the rules set is written with them. A
// re-sync updates provider fields only and keeps what the rules set.
func TestRulesOnImport(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	cat := &models.Category{FamilyID: s.f.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	tag := &models.Tag{FamilyID: s.f.Family.ID, Name: "auto", Color: "#111111"}
	if err := s.store.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	if err := s.store.CreateTag(ctx, tag); err != nil {
		t.Fatal(err)
	}
	var seen int
	s.store.Rules = func(ctx context.Context, tx *models.Store, familyID uuid.UUID, rows []*models.NewTransaction) error {
		seen += len(rows)
		for _, r := range rows {
			if strings.Contains(r.Row.Name, "COFFEE") && !slices.Contains(r.Row.LockedFields, "category") {
				r.Row.CategoryID = &cat.ID
				r.TagIDs = append(r.TagIDs, tag.ID)
			}
		}
		return nil
	}
	day := time.Now().UTC().Add(-48 * time.Hour).Unix()
	s.bridge.SetDataset(oneAccount(bridgetest.Txn{ID: "C1", Posted: day, Amount: "-4.50", Description: "POS COFFEE BAR"},
		bridgetest.Txn{ID: "R1", Posted: day, Amount: "-900.00", Description: "RENT"}))
	for round := 1; round <= 2; round++ {
		sy := s.first
		if round == 2 {
			sy = s.newSync(t, false)
		}
		if _, err := s.run(t, sy); err != nil {
			t.Fatal(err)
		}
		rows := byExternalID(s.imported(t))
		c1, r1 := rows["C1"], rows["R1"]
		if c1.CategoryID == nil || *c1.CategoryID != cat.ID || r1.CategoryID != nil {
			t.Fatalf("round %d: C1 category %v, R1 %v", round, c1.CategoryID, r1.CategoryID)
		}
		full, err := s.store.Transaction(ctx, s.f.Family.ID, c1.ID)
		if err != nil || len(full.Tags) != 1 || full.Tags[0].ID != tag.ID {
			t.Fatalf("round %d: C1 tags %v %v", round, full, err)
		}
	}
	if seen != 2 {
		t.Errorf("the rules saw %d rows, want the 2 new ones once", seen)
	}
}

package worker_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/importfile"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestFamilyPurgeSurvivesWorkerKill purges a family whose last user was
// deleted, with a ledger, tags, a rule, an import and a connection (its
// chat went with the user), and kills the worker once as the purge's statement starts
// (so it rolls back) and once after the purge committed. A fresh worker
// finishes: no table holds a row of the family, and the other family's
// rows are all there.
func TestFamilyPurgeSurvivesWorkerKill(t *testing.T) {
	for _, point := range []string{"family:purge_statement", jobs.HookFamilyPurged} {
		t.Run(point, func(t *testing.T) {
			r := newKillRig(t)
			ctx := context.Background()
			kept := richFamily(t, r.store, "purge-kept")
			gone := richFamily(t, r.store, "purge-gone")
			super := &models.User{FamilyID: kept.Family.ID, Email: "root-" + kept.Family.ID.String()[:8] + "@example.com", Role: models.RoleSuperAdmin}
			if err := r.store.CreateUser(ctx, super); err != nil {
				t.Fatal(err)
			}
			if err := r.store.DeleteUser(ctx, models.AdminChange{ActorID: super.ID, ActorRole: models.RoleSuperAdmin, TargetID: gone.User.ID}); err != nil {
				t.Fatal(err)
			}
			keptRows, goneRows := familyRows(t, r.store, kept.Family.ID), familyRows(t, r.store, gone.Family.ID)
			if goneRows["transactions"] == 0 || goneRows["imports"] == 0 || goneRows["provider_connections"] == 0 {
				t.Fatalf("the family to purge holds too little: %v", goneRows)
			}

			k := newKiller(point, 1)
			h := r.handlers(nil, k.hook)
			if point == "family:purge_statement" {
				h = r.handlers(hookedStore(r.store, &killQuery{k: k, before: true,
					match: func(q string) bool { return strings.HasPrefix(q, `DELETE FROM "families"`) }}), nil)
			}
			task, err := jobs.NewFamilyPurgeTask(gone.Family.ID)
			if err != nil {
				t.Fatal(err)
			}
			var id string
			r.kill(t, r.options(h, nil), k, func() { id = r.enqueue(t, task) })
			runWorker(t, r.options(r.handlers(nil, nil), nil))
			r.waitGone(t, jobs.QueueLow, id)

			if left := familyRows(t, r.store, gone.Family.ID); len(left) != 0 {
				t.Errorf("left of the purged family: %v", left)
			}
			if _, err := r.store.Family(ctx, gone.Family.ID); err == nil {
				t.Error("the purged family is still there")
			}
			if after := familyRows(t, r.store, kept.Family.ID); !maps.Equal(after, keptRows) {
				t.Errorf("the other family changed: %v, was %v", after, keptRows)
			}
		})
	}
}

// richFamily is a family fixture with 500 transactions, a category, a
// merchant, a tag on every transaction, a rule, a chat, an import waiting
// to be published and a connection.
func richFamily(t *testing.T, store *models.Store, name string) *modelstest.FamilyFixture {
	t.Helper()
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, name)
	cat := &models.Category{FamilyID: f.Family.ID, Name: "Food", Color: "#000000", Icon: "shapes", Classification: "expense"}
	merchant := &models.Merchant{FamilyID: f.Family.ID, Name: "Grocer"}
	tag := &models.Tag{FamilyID: f.Family.ID, Name: "weekly", Color: "#000000"}
	for _, err := range []error{store.CreateCategory(ctx, cat), store.CreateMerchant(ctx, merchant), store.CreateTag(ctx, tag)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	rows := make([]models.Transaction, 500)
	type link struct {
		TransactionID uuid.UUID `bun:"transaction_id"`
		TagID         uuid.UUID `bun:"tag_id"`
		FamilyID      uuid.UUID `bun:"family_id"`
	}
	links := make([]link, len(rows))
	for i := range rows {
		rows[i] = models.Transaction{ID: models.NewID(), FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2024-02-01",
			Amount: money.Amount(1000 + i), Currency: "USD", Name: fmt.Sprintf("Grocer %d", i), CategoryID: &cat.ID,
			MerchantID: &merchant.ID, CreatedAt: now, UpdatedAt: now}
		links[i] = link{rows[i].ID, tag.ID, f.Family.ID}
	}
	if _, err := store.DB().NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := store.DB().NewInsert().Model(&links).ModelTableExpr("transaction_tags").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	value := "Groceries"
	rule := &models.Rule{FamilyID: f.Family.ID, Active: true,
		Conditions: []models.RuleCondition{{ConditionType: models.CondName, Operator: "regex", Value: ptr(`^grocer \d+$`)}},
		Actions:    []models.RuleAction{{ActionType: models.ActRename, Value: &value}}}
	if err := store.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateChat(ctx, &models.Chat{FamilyID: f.Family.ID, UserID: f.User.ID, Title: "t"}, "hello"); err != nil {
		t.Fatal(err)
	}
	set := importfile.DefaultSettings()
	set.NameColLabel = models.Ptr("name")
	file := importFile(20)
	p, err := importfile.Parse([]byte(file), importfile.CSV, set)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateImport(ctx, &models.Import{FamilyID: f.Family.ID, AccountID: f.Account.ID, Type: importfile.CSV,
		RawFile: file, Settings: set}, p); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateConnection(ctx, &models.Connection{FamilyID: f.Family.ID, Name: "Bridge"}, "setup-token"); err != nil {
		t.Fatal(err)
	}
	return f
}

// familyRows counts the rows of the family in every table with a
// family_id column (and the family's own row), leaving out empty tables.
func familyRows(t *testing.T, store *models.Store, familyID uuid.UUID) map[string]int {
	t.Helper()
	ctx := context.Background()
	var tables []string
	q := `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'family_id'`
	if store.Postgres() {
		q = `SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'family_id'`
	}
	if err := store.DB().NewRaw(q).Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("only %d tables with a family_id: %v", len(tables), tables)
	}
	out := map[string]int{}
	for _, table := range append(tables, "families") {
		col := "family_id"
		if table == "families" {
			col = "id"
		}
		var n int
		if err := store.DB().NewRaw("SELECT count(*) FROM ? WHERE ? = ?", bun.Ident(table), bun.Ident(col), familyID).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			out[table] = n
		}
	}
	return out
}

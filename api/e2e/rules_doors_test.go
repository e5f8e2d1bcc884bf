package e2e_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/api/apitest"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/money"
)

// doorRow is one transaction as every door sends it.
type doorRow struct {
	name   string
	amount string // an expense, in the currency unit
}

// filed is what the rules made of a row, as the ledger holds it.
type filed struct {
	Amount   money.Amount
	Name     string
	Category string
	Merchant string
	Tags     string
	Excluded bool
	Rule     string
}

// TestRulesEveryDoor: the same transactions sent through each door of the
// ingestion pipeline (POST /api/v1/transactions, the bulk endpoint, a
// SimpleFIN sync from a fake Bridge run by a real worker, and a CSV file
// import published through POST /api/v1/imports and run by that worker)
// are filed identically by the family's rules: category, merchant, tags,
// name, exclusion and rule_id, a stop_processing rule ending the run. Then
// a person's edit of a row from each door locks the field: applying the
// rules again leaves it.
func TestRulesEveryDoor(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	runWorker(t, e)
	ctx := t.Context()
	fam := e.Alpha.Family.ID

	cat := &models.Category{FamilyID: fam, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	mine := &models.Category{FamilyID: fam, Name: "Treats", Color: "#000000", Icon: "cake", Classification: "expense"}
	for _, c := range []*models.Category{cat, mine} {
		if err := e.Store.CreateCategory(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	merchant := &models.Merchant{FamilyID: fam, Name: "Starbucks"}
	if err := e.Store.CreateMerchant(ctx, merchant); err != nil {
		t.Fatal(err)
	}
	tags := map[string]*models.Tag{}
	for _, name := range []string{"caffeine", "late", "subscriptions"} {
		tags[name] = &models.Tag{FamilyID: fam, Name: name, Color: "#111111"}
		if err := e.Store.CreateTag(ctx, tags[name]); err != nil {
			t.Fatal(err)
		}
	}
	text := func(s string) *string { return &s }
	like := func(s string) []models.RuleCondition {
		return []models.RuleCondition{{ConditionType: models.CondName, Operator: "like", Value: text(s)}}
	}
	act := func(typ, value string) models.RuleAction {
		return models.RuleAction{ActionType: typ, Value: text(value)}
	}
	coffee := &models.Rule{FamilyID: fam, Active: true, StopProcessing: true, Conditions: like("starbucks"),
		Actions: []models.RuleAction{act(models.ActSetCategory, cat.ID.String()), act(models.ActSetMerchant, merchant.ID.String()),
			act(models.ActAddTag, tags["caffeine"].ID.String()), act(models.ActRename, "Starbucks Coffee")}}
	stopped := &models.Rule{FamilyID: fam, Active: true, Conditions: like("starbucks"),
		Actions: []models.RuleAction{act(models.ActAddTag, tags["late"].ID.String())}}
	subs := &models.Rule{FamilyID: fam, Active: true, Conditions: like("netflix"),
		Actions: []models.RuleAction{{ActionType: models.ActExclude}, act(models.ActAddTag, tags["subscriptions"].ID.String())}}
	for _, r := range []*models.Rule{coffee, stopped, subs} {
		if err := e.Store.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	ruleName := map[uuid.UUID]string{coffee.ID: "coffee", stopped.ID: "stopped", subs.ID: "subs"}

	rows := []doorRow{{"STARBUCKS #1234", "4.50"}, {"NETFLIX.COM", "15.99"}, {"Corner grocer", "30.00"}}
	want := map[string]filed{
		"4.5000":  {Name: "Starbucks Coffee", Category: "Coffee", Merchant: "Starbucks", Tags: "caffeine", Rule: "coffee"},
		"15.9900": {Name: "NETFLIX.COM", Tags: "subscriptions", Excluded: true, Rule: "subs"},
		"30.0000": {Name: "Corner grocer"},
	}
	day := time.Now().UTC().AddDate(0, 0, -3)
	date := day.Format(time.DateOnly)
	newAccount := func(name string) uuid.UUID {
		a := &models.Account{FamilyID: fam, Name: name, AccountType: "depository", Currency: "USD"}
		if err := e.Store.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	item := func(acct uuid.UUID, r doorRow) map[string]any {
		return map[string]any{"account_id": acct.String(), "date": date, "amount": r.amount, "name": r.name, "nature": "expense"}
	}

	// Each door writes to an account of its own, so that no door's rows
	// are another's duplicates.
	doors := map[string]uuid.UUID{"api": e.Alpha.Account.ID, "bulk": newAccount("Bulk"), "file": newAccount("File")}
	for _, r := range rows {
		if res := e.Do("POST", "/api/v1/transactions", e.Alpha.Key, map[string]any{"transaction": item(doors["api"], r)}); res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
	}
	var batch []map[string]any
	for _, r := range rows {
		batch = append(batch, item(doors["bulk"], r))
	}
	if res := e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, map[string]any{"transactions": batch}); res.Status != 200 && res.Status != 201 && res.Status != 207 {
		t.Fatalf("bulk: %d %s", res.Status, res.Body)
	}

	var csv strings.Builder
	csv.WriteString("date,amount,name\n")
	for _, r := range rows {
		fmt.Fprintf(&csv, "%s,-%s,%s\n", day.Format("01/02/2006"), r.amount, r.name)
	}
	up := e.Upload("/api/v1/imports", e.Alpha.Key, "doors.csv", []byte(csv.String()), map[string]string{
		"account_id": doors["file"].String(), "date_col_label": "date", "amount_col_label": "amount", "name_col_label": "name",
		"publish": "true"})
	if up.Status != 201 {
		t.Fatalf("import: %d %s", up.Status, up.Body)
	}

	var txns []bridgetest.Txn
	for i, r := range rows {
		txns = append(txns, bridgetest.Txn{ID: fmt.Sprintf("T%d", i), Posted: day.Unix(), Amount: "-" + r.amount,
			Description: r.name, Payee: r.name})
	}
	bridge.SetDataset(&bridgetest.Dataset{Accounts: []bridgetest.Account{{ID: "A1", Name: "Checking", Currency: "USD",
		Balance: "100.00", BalanceDate: time.Now().Unix(), Org: "Bank", Transactions: txns}}})
	if res := e.Do("POST", "/api/v1/provider_connections", e.Alpha.Key, map[string]any{"setup_token": bridge.Token("doors")}); res.Status != 202 {
		t.Fatalf("connect: %d %s", res.Status, res.Body)
	}

	// The worker claims, syncs and imports: wait for both doors' rows.
	deadline := time.Now().Add(60 * time.Second)
	for {
		var sf []uuid.UUID
		if err := e.Store.DB().NewSelect().Table("transactions").Column("account_id").Where("family_id = ?", fam).
			Where("source = ?", models.SourceSimpleFIN).Scan(ctx, &sf); err != nil {
			t.Fatal(err)
		}
		n, err := e.Store.DB().NewSelect().Table("transactions").Where("family_id = ?", fam).
			Where("account_id = ?", doors["file"]).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(sf) == len(rows) && int(n) == len(rows) {
			doors["simplefin"] = sf[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for the worker: %d SimpleFIN rows, %d file rows", len(sf), n)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// read gives a door's rows by amount, as the rules filed them.
	read := func(acct uuid.UUID) map[string]filed {
		t.Helper()
		var ids []uuid.UUID
		if err := e.Store.DB().NewSelect().Table("transactions").Column("id").Where("family_id = ?", fam).
			Where("account_id = ?", acct).Scan(ctx, &ids); err != nil {
			t.Fatal(err)
		}
		out := map[string]filed{}
		for _, id := range ids {
			tx, err := e.Store.Transaction(ctx, fam, id)
			if err != nil {
				t.Fatal(err)
			}
			f := filed{Amount: tx.Amount, Name: tx.Name, Excluded: tx.Excluded}
			if tx.Category != nil {
				f.Category = tx.Category.Name
			}
			if tx.Merchant != nil {
				f.Merchant = tx.Merchant.Name
			}
			var names []string
			for _, tg := range tx.Tags {
				names = append(names, tg.Name)
			}
			slices.Sort(names)
			f.Tags = strings.Join(names, ",")
			if tx.RuleID != nil {
				f.Rule = ruleName[*tx.RuleID]
			}
			out[tx.Amount.String()] = f
		}
		return out
	}
	byDoor := map[string]map[string]filed{}
	for door, acct := range doors {
		byDoor[door] = read(acct)
	}
	for door, got := range byDoor {
		t.Run(door, func(t *testing.T) {
			if len(got) != len(want) {
				t.Fatalf("%d rows: %+v", len(got), got)
			}
			for amount, w := range want {
				g := got[amount]
				w.Amount = g.Amount
				if g != w {
					t.Errorf("row of %s: got %+v, want %+v", amount, g, w)
				}
			}
		})
	}

	// A person files each door's coffee row by hand; the rules run again
	// over the whole ledger (the apply job, by the worker) and leave it.
	var edited []uuid.UUID
	for _, acct := range doors {
		var id uuid.UUID
		if err := e.Store.DB().NewSelect().Table("transactions").Column("id").Where("family_id = ?", fam).
			Where("account_id = ?", acct).Where("name = ?", "Starbucks Coffee").Scan(ctx, &id); err != nil {
			t.Fatal(err)
		}
		if res := e.Do("PATCH", "/api/v1/transactions/"+id.String(), e.Alpha.Key,
			map[string]any{"transaction": map[string]any{"category_id": mine.ID.String()}}); res.Status != 200 {
			t.Fatalf("edit: %d %s", res.Status, res.Body)
		}
		edited = append(edited, id)
	}
	run := e.Do("POST", "/api/v1/rules/"+coffee.ID.String()+"/apply", e.Alpha.Key, nil).WantJSON(t, 202)["data"].(map[string]any)
	runID := uuid.MustParse(run["id"].(string))
	deadline = time.Now().Add(60 * time.Second)
	for {
		got, err := e.Store.RuleRun(ctx, fam, runID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != models.RuleRunPending {
			if got.Status != models.RuleRunSuccess {
				t.Fatalf("rule run: %+v", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rule run still %s", got.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, id := range edited {
		tx, err := e.Store.Transaction(ctx, fam, id)
		if err != nil {
			t.Fatal(err)
		}
		if tx.CategoryID == nil || *tx.CategoryID != mine.ID {
			t.Errorf("the rules overwrote a person's category: %+v", tx)
		}
	}
}

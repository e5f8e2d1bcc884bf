package models_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
)

// exportBook is a family with a bit of everything the export writes: three
// accounts, a category, a tag, a merchant, a plain tagged transaction, a
// split one, a transfer, a valuation, a rule, a budget, a chat and two
// recurring transactions (a subscription at the merchant whose price went
// up, and a dismissed weekly income without an account).
type exportBook struct {
	s        *models.Store
	f        *modelstest.FamilyFixture
	savings  *models.Account
	card     *models.Account
	food     *models.Category
	tag      *models.Tag
	shop     *models.Merchant
	plain    *models.Transaction
	split    *models.Transaction
	transfer uuid.UUID
	rule     *models.Rule
	box      *models.RecurringTransaction
}

func newExportBook(t *testing.T, s *models.Store, name string) *exportBook {
	t.Helper()
	ctx := context.Background()
	b := &exportBook{s: s, f: modelstest.NewFamily(t, s, name)}
	fam := b.f.Family.ID
	b.savings = &models.Account{FamilyID: fam, Name: "Savings", AccountType: "depository", Currency: "USD"}
	must(t, s.CreateAccount(ctx, b.savings))
	b.card = &models.Account{FamilyID: fam, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	must(t, s.CreateAccount(ctx, b.card))
	b.food = &models.Category{FamilyID: fam, Name: "Food", Color: "#123456", Classification: "expense"}
	must(t, s.CreateCategory(ctx, b.food))
	b.tag = &models.Tag{FamilyID: fam, Name: "Trip, 2026", Color: "#654321"}
	must(t, s.CreateTag(ctx, b.tag))
	b.shop = &models.Merchant{FamilyID: fam, Name: "Shop"}
	must(t, s.CreateMerchant(ctx, b.shop))

	notes := "weekly"
	b.plain = &models.Transaction{FamilyID: fam, AccountID: b.f.Account.ID, Date: "2026-01-05", Amount: mustAmount(t, "12.5"),
		Currency: "USD", Name: "Groceries", Notes: &notes, CategoryID: &b.food.ID, MerchantID: &b.shop.ID}
	_, _, err := s.CreateTransaction(ctx, b.plain, []uuid.UUID{b.tag.ID})
	must(t, err)
	b.split = &models.Transaction{FamilyID: fam, AccountID: b.f.Account.ID, Date: "2026-01-06", Amount: mustAmount(t, "100"),
		Currency: "USD", Name: "Costco"}
	_, _, err = s.CreateTransaction(ctx, b.split, nil)
	must(t, err)
	_, err = s.SplitTransaction(ctx, fam, b.split.ID, []models.SplitPart{
		{Name: "Costco food", Amount: mustAmount(t, "60"), CategoryID: &b.food.ID, TagIDs: []uuid.UUID{b.tag.ID}},
		{Name: "Costco other", Amount: mustAmount(t, "40")},
	})
	must(t, err)
	b.transfer, err = s.CreateTransfer(ctx, fam, models.NewTransfer{FromAccountID: b.f.Account.ID, ToAccountID: b.card.ID,
		Amount: mustAmount(t, "250.25"), Date: "2026-01-10"})
	must(t, err)
	day := civil.Date("2026-01-31")
	_, err = s.CreateValuation(ctx, &models.Valuation{FamilyID: fam, AccountID: b.savings.ID, Date: &day, Amount: mustAmount(t, "1000")})
	must(t, err)
	cat := b.food.ID.String()
	b.rule = &models.Rule{FamilyID: fam, ResourceType: "transaction", Active: true,
		Conditions: []models.RuleCondition{{ConditionType: models.CondName, Operator: "like", Value: ptrTo("costco")}},
		Actions:    []models.RuleAction{{ActionType: models.ActSetCategory, Value: &cat}}}
	must(t, s.CreateRule(ctx, b.rule))
	budget, err := s.EnsureBudget(ctx, fam, "2026-01-01")
	must(t, err)
	spend := mustAmount(t, "500")
	budget.Budget.BudgetedSpending = &spend
	must(t, s.UpdateBudget(ctx, &budget.Budget))
	lines, _, err := s.BudgetLines(ctx, fam, models.BudgetLineFilter{BudgetID: &budget.ID}, models.Page{Number: 1, Size: 10})
	must(t, err)
	for _, l := range lines {
		must(t, s.UpdateBudgetCategory(ctx, fam, l.ID, mustAmount(t, "300"), false))
	}
	_, err = s.CreateChat(ctx, &models.Chat{FamilyID: fam, UserID: b.f.User.ID, Title: "Spending"}, "How much on food?")
	must(t, err)
	was, lo, hi, last, boxNotes := mustAmount(t, "11.99"), mustAmount(t, "11.99"), mustAmount(t, "12.5"), civil.Date("2026-01-05"), "price went up"
	b.box = &models.RecurringTransaction{FamilyID: fam, AccountID: &b.f.Account.ID, MerchantID: &b.shop.ID, Name: "Shop box",
		Amount: mustAmount(t, "12.5"), PreviousAmount: &was, AmountMin: &lo, AmountMax: &hi, Currency: "USD", Cadence: "monthly",
		ExpectedDay: 31, LastDate: &last, NextDate: "2026-01-31", Occurrences: 4, Status: models.RecurringActive, Autopay: true, Notes: &boxNotes}
	must(t, s.CreateRecurringTransaction(ctx, b.box))
	must(t, s.CreateRecurringTransaction(ctx, &models.RecurringTransaction{FamilyID: fam, Name: "Lessons", Amount: mustAmount(t, "-20"),
		Currency: "USD", Cadence: "weekly", ExpectedDay: 3, NextDate: "2026-02-03", Status: models.RecurringEnded, Manual: true}))
	return b
}

func ptrTo[T any](v T) *T { return &v }

// unzipExport reads an export's files by name, and their order.
func unzipExport(t *testing.T, data []byte) (map[string]string, []string) {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	must(t, err)
	files, names := map[string]string{}, []string{}
	for _, f := range z.File {
		r, err := f.Open()
		must(t, err)
		b, err := io.ReadAll(r)
		must(t, err)
		files[f.Name] = string(b)
		names = append(names, f.Name)
	}
	return files, names
}

// jsonKeys lists an object's keys in the order they are written.
func jsonKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	var keys []string
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	for d.More() {
		tok, err := d.Token()
		must(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		must(t, d.Decode(&skip))
	}
	return keys
}

// referenceKeys are the keys of each line type's data, in order, as the
// reference's Family::DataExporter writes them (as_json of its columns
// where it writes a whole record).
var referenceKeys = map[string]string{
	"Account": "id subtype family_id name created_at updated_at accountable_type accountable_id balance currency " +
		"classification import_id plaid_account_id cash_balance locked_attributes status simplefin_account_id " +
		"institution_name institution_domain notes owner_id disabled_at exclude_from_reports account_providers_count " +
		"enable_category_matcher accountable",
	"Category":         "id name color family_id created_at updated_at parent_id classification_unused lucide_icon",
	"Tag":              "id name color family_id created_at updated_at",
	"Merchant":         "id name color family_id created_at updated_at logo_url website_url type",
	"Transaction":      "id entry_id account_id date amount currency name notes excluded category_id merchant_id tag_ids kind created_at updated_at",
	"Transfer":         "id inflow_transaction_id outflow_transaction_id status notes created_at updated_at",
	"RejectedTransfer": "id inflow_transaction_id outflow_transaction_id created_at updated_at",
	"Valuation":        "id entry_id account_id date amount currency name kind created_at updated_at",
	"Budget":           "id family_id start_date end_date budgeted_spending expected_income currency created_at updated_at",
	"BudgetCategory":   "id budget_id category_id budgeted_spending currency created_at updated_at",
	"Rule":             "id name resource_type active effective_date conditions actions",
	// The reference's keys, then coffer's own (its series are all monthly).
	"RecurringTransaction": "id account_id merchant_id amount currency expected_day_of_month last_occurrence_date " +
		"next_expected_date status occurrence_count name manual expected_amount_min expected_amount_max expected_amount_avg " +
		"created_at updated_at cadence previous_amount autopay notes",
	"Chat":    "id user_id title instructions error latest_assistant_response_id created_at updated_at",
	"Message": "id chat_id type status content ai_model created_at updated_at",
}

func TestWriteFamilyDataShapes(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	b := newExportBook(t, s, "alpha")
	other := newExportBook(t, s, "beta")

	var buf bytes.Buffer
	must(t, s.WriteFamilyData(ctx, b.f.Family.ID, &buf))
	files, names := unzipExport(t, buf.Bytes())
	want := []string{"version.txt", "accounts.csv", "transactions.csv", "trades.csv", "categories.csv", "merchants.csv",
		"rules.csv", "attachments.json", "all.ndjson"}
	if !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	if files["version.txt"] != "export_version: 2\n" {
		t.Errorf("version.txt %q", files["version.txt"])
	}
	if files["attachments.json"] != `{"version":1,"binary_included":false,"attachments":[]}` {
		t.Errorf("attachments.json %q", files["attachments.json"])
	}
	if strings.Contains(buf.String(), other.f.Family.ID.String()) {
		t.Fatal("another family's id is in the export")
	}

	lines := strings.Split(files["all.ndjson"], "\n")
	byType := map[string][]map[string]any{}
	var order []string
	for _, line := range lines {
		var l struct {
			Type    string          `json:"type"`
			Version *int            `json:"version"`
			Data    json.RawMessage `json:"data"`
		}
		must(t, json.Unmarshal([]byte(line), &l))
		top := strings.Join(jsonKeys(t, json.RawMessage(line)), " ")
		if wantTop := "type data"; l.Type == "Rule" {
			if top != "type version data" || l.Version == nil || *l.Version != 1 {
				t.Errorf("rule line keys %q", top)
			}
		} else if top != wantTop {
			t.Errorf("%s line keys %q", l.Type, top)
		}
		keys := jsonKeys(t, l.Data)
		wantKeys := referenceKeys[l.Type]
		if l.Type == "Transaction" && slices.Contains(keys, "split_lines") {
			wantKeys += " split_lines"
		}
		if got := strings.Join(keys, " "); got != wantKeys {
			t.Errorf("%s keys\n got %s\nwant %s", l.Type, got, wantKeys)
		}
		var data map[string]any
		must(t, json.Unmarshal(l.Data, &data))
		byType[l.Type] = append(byType[l.Type], data)
		if len(order) == 0 || order[len(order)-1] != l.Type {
			order = append(order, l.Type)
		}
	}
	wantOrder := []string{"Account", "Category", "Tag", "Merchant", "RecurringTransaction", "Transaction", "Transfer", "Valuation", "Budget",
		"BudgetCategory", "Rule", "Chat", "Message"}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("line types in order %v, want %v", order, wantOrder)
	}
	counts := map[string]int{"Account": 3, "Category": 1, "Tag": 1, "Merchant": 1, "Transaction": 4, "Transfer": 1,
		"Valuation": 4, "Budget": 1, "BudgetCategory": 1, "Rule": 1, "Chat": 1, "Message": 1, "RecurringTransaction": 2}
	for typ, n := range counts {
		if len(byType[typ]) != n {
			t.Errorf("%d %s lines, want %d", len(byType[typ]), typ, n)
		}
	}

	box := byType["RecurringTransaction"][0]
	if box["id"] != b.box.ID.String() {
		box = byType["RecurringTransaction"][1]
	}
	if box["amount"] != "12.5" || box["previous_amount"] != "11.99" || box["expected_amount_avg"] != "12.245" ||
		box["merchant_id"] != b.shop.ID.String() || box["account_id"] != b.f.Account.ID.String() || box["cadence"] != "monthly" ||
		box["next_expected_date"] != "2026-01-31" || box["expected_day_of_month"] != 31.0 || box["status"] != "active" ||
		box["autopay"] != true || box["notes"] != "price went up" || box["occurrence_count"] != 4.0 {
		t.Errorf("recurring transaction %v", box)
	}

	txs := map[string]map[string]any{}
	for _, tx := range byType["Transaction"] {
		txs[tx["id"].(string)] = tx
	}
	plain := txs[b.plain.ID.String()]
	if plain["amount"] != "12.5" || plain["date"] != "2026-01-05" || plain["kind"] != "standard" ||
		plain["category_id"] != b.food.ID.String() || plain["merchant_id"] != b.shop.ID.String() || plain["notes"] != "weekly" {
		t.Errorf("plain transaction %v", plain)
	}
	if tags, _ := plain["tag_ids"].([]any); len(tags) != 1 || tags[0] != b.tag.ID.String() {
		t.Errorf("plain transaction tag_ids %v", plain["tag_ids"])
	}
	split := txs[b.split.ID.String()]
	parts, _ := split["split_lines"].([]any)
	if split["amount"] != "100.0" || len(parts) != 2 {
		t.Fatalf("split transaction %v", split)
	}
	first := parts[0].(map[string]any)
	if first["amount"] != "60.0" || first["name"] != "Costco food" || first["category_id"] != b.food.ID.String() {
		t.Errorf("first split line %v", first)
	}
	if got := strings.Join(jsonKeys(t, mustJSON(t, first)), " "); got == "" {
		t.Error("split line without keys")
	}
	tr := byType["Transfer"][0]
	in, out := txs[tr["inflow_transaction_id"].(string)], txs[tr["outflow_transaction_id"].(string)]
	if in == nil || out == nil || in["kind"] != "funds_movement" || out["kind"] != "cc_payment" || tr["status"] != "confirmed" {
		t.Errorf("transfer %v: inflow %v outflow %v", tr, in, out)
	}
	var valued bool
	for _, v := range byType["Valuation"] {
		if v["account_id"] == b.savings.ID.String() && v["date"] == "2026-01-31" && v["amount"] == "1000.0" {
			valued = v["kind"] == "reconciliation" && v["currency"] == "USD"
		}
		if _, err := civil.ParseDate(v["date"].(string)); err != nil {
			t.Errorf("valuation without a date: %v", v)
		}
	}
	if !valued {
		t.Errorf("savings valuation missing: %v", byType["Valuation"])
	}
	rule := byType["Rule"][0]
	acts := rule["actions"].([]any)
	act := acts[0].(map[string]any)
	ref, _ := act["value_ref"].(map[string]any)
	if act["action_type"] != "set_transaction_category" || act["value"] != "Food" || ref["type"] != "Category" ||
		ref["id"] != b.food.ID.String() || ref["name"] != "Food" {
		t.Errorf("rule action %v", act)
	}
	if cond := rule["conditions"].([]any)[0].(map[string]any); cond["condition_type"] != "transaction_name" ||
		cond["value"] != "costco" || cond["operator"] != "like" {
		t.Errorf("rule condition %v", cond)
	}
	if bud := byType["Budget"][0]; bud["budgeted_spending"] != "500.0" || bud["start_date"] != "2026-01-01" || bud["end_date"] != "2026-01-31" {
		t.Errorf("budget %v", bud)
	}
	if bc := byType["BudgetCategory"][0]; bc["budgeted_spending"] != "300.0" || bc["category_id"] != b.food.ID.String() {
		t.Errorf("budget category %v", bc)
	}
	acct := byType["Account"][0]
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", acct["created_at"].(string)); err != nil {
		t.Errorf("account created_at %v", acct["created_at"])
	}
	if m := byType["Message"][0]; m["type"] != "UserMessage" || m["content"] != "How much on food?" {
		t.Errorf("message %v", m)
	}

	// transactions.csv: a split's parts instead of the split row, tags
	// escaped the reference's way.
	rows, err := csv.NewReader(strings.NewReader(files["transactions.csv"])).ReadAll()
	must(t, err)
	if got := strings.Join(rows[0], ","); got != "date,account_name,amount,name,category,tags,notes,currency" {
		t.Errorf("transactions.csv header %q", got)
	}
	var names2 []string
	for _, r := range rows[1:] {
		names2 = append(names2, r[3])
		if r[3] == "Groceries" && (r[1] != "Checking" || r[2] != "12.5" || r[4] != "Food" || r[5] != `Trip\, 2026` || r[7] != "USD") {
			t.Errorf("groceries row %q", r)
		}
	}
	slices.Sort(names2)
	if len(names2) != 5 || slices.Contains(names2, "Costco") || !slices.Contains(names2, "Costco food") {
		t.Errorf("transactions.csv rows %v", names2)
	}
	rules, err := csv.NewReader(strings.NewReader(files["rules.csv"])).ReadAll()
	must(t, err)
	if len(rules) != 2 || rules[1][1] != "transaction" || rules[1][2] != "true" || !strings.Contains(rules[1][5], `"value":"Food"`) {
		t.Errorf("rules.csv %q", rules)
	}
	accounts, err := csv.NewReader(strings.NewReader(files["accounts.csv"])).ReadAll()
	must(t, err)
	if len(accounts) != 4 || strings.Join(accounts[0], ",") != "id,name,type,subtype,balance,currency,created_at" {
		t.Errorf("accounts.csv %q", accounts)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return b
}

// An export's file goes in and out in chunks, and a family reads only its
// own exports.
func TestFamilyExportFile(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	alpha, beta := modelstest.NewFamily(t, s, "alpha"), modelstest.NewFamily(t, s, "beta")
	e, err := s.CreateFamilyExport(ctx, alpha.Family.ID)
	must(t, err)
	if _, err := s.FamilyExport(ctx, beta.Family.ID, e.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("beta reads alpha's export: %v", err)
	}
	if err := s.WriteFamilyExportFile(ctx, alpha.Family.ID, e.ID, io.Discard); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("a pending export's file: %v", err)
	}
	started, err := s.StartFamilyExport(ctx, alpha.Family.ID, e.ID)
	must(t, err)
	if !started {
		t.Fatal("a pending export did not start")
	}
	data := make([]byte, 5<<19+123) // two and a half chunks
	_, _ = rand.Read(data)
	f := s.FamilyExportFile(ctx, alpha.Family.ID, e.ID)
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 70000)
		_, err := f.Write(rest[:n])
		must(t, err)
		rest = rest[n:]
	}
	must(t, f.Close())
	must(t, s.FinishFamilyExport(ctx, alpha.Family.ID, e.ID, f.Size()))
	var got bytes.Buffer
	must(t, s.WriteFamilyExportFile(ctx, alpha.Family.ID, e.ID, &got))
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("read %d bytes back, wrote %d", got.Len(), len(data))
	}
	if err := s.WriteFamilyExportFile(ctx, beta.Family.ID, e.ID, io.Discard); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("beta downloads alpha's export: %v", err)
	}
	again, err := s.StartFamilyExport(ctx, alpha.Family.ID, e.ID)
	must(t, err)
	if again {
		t.Fatal("a completed export started again")
	}
	list, total, err := s.FamilyExports(ctx, beta.Family.ID, models.Page{Number: 1, Size: 10})
	must(t, err)
	if total != 0 || len(list) != 0 {
		t.Fatalf("beta lists %d exports", total)
	}
	list, total, err = s.FamilyExports(ctx, alpha.Family.ID, models.Page{Number: 1, Size: 10})
	must(t, err)
	if total != 1 || list[0].Status != models.ExportCompleted || list[0].ByteSize != int64(len(data)) {
		t.Fatalf("alpha's exports %+v", list)
	}

	// A reset removes the exports with the data they hold, as the
	// reference's does; another family's stay.
	kept, err := s.CreateFamilyExport(ctx, beta.Family.ID)
	must(t, err)
	must(t, s.ResetFamily(ctx, alpha.Family.ID))
	if _, total, _ := s.FamilyExports(ctx, alpha.Family.ID, models.Page{Number: 1, Size: 10}); total != 0 {
		t.Fatalf("%d exports after the reset", total)
	}
	if _, err := s.FamilyExport(ctx, beta.Family.ID, kept.ID); err != nil {
		t.Fatalf("beta's export went with alpha's reset: %v", err)
	}
}

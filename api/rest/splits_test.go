package rest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/money"
)

// splitEnv is a family with one 100.00 grocery expense, a category of its
// own and one of the other family's.
type splitEnv struct {
	*apitest.Env
	tx       *models.Transaction
	food     *models.Category
	betaFood *models.Category
}

func newSplitEnv(t *testing.T) *splitEnv {
	t.Helper()
	e := apitest.NewEnv(t)
	ctx := context.Background()
	s := &splitEnv{Env: e}
	s.food = &models.Category{FamilyID: e.Alpha.Family.ID, Name: "Food", Color: "#00aa00", Icon: "apple", Classification: "expense"}
	s.betaFood = &models.Category{FamilyID: e.Beta.Family.ID, Name: "Food", Color: "#00aa00", Icon: "apple", Classification: "expense"}
	for _, c := range []*models.Category{s.food, s.betaFood} {
		if err := e.Store.CreateCategory(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	s.tx = s.add(t, e.Alpha.Account.ID, 100_0000, "Grocery Store")
	return s
}

func (s *splitEnv) add(t *testing.T, acct uuid.UUID, amount int64, name string) *models.Transaction {
	t.Helper()
	row, _, err := s.Store.CreateTransaction(context.Background(), &models.Transaction{FamilyID: s.Alpha.Family.ID, AccountID: acct,
		Date: "2026-01-10", Amount: money.Amount(amount), Currency: "USD", Name: name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

func splitPath(id uuid.UUID) string { return "/api/v1/transactions/" + id.String() + "/split" }

func splitPayload(parts ...map[string]any) map[string]any {
	return map[string]any{"split": map[string]any{"splits": append([]map[string]any{}, parts...)}}
}

func part(name string, amount any) map[string]any {
	return map[string]any{"name": name, "amount": amount}
}

// ledger is every row of the alpha family (split parents included), as
// "name amount excluded", and the account's balance once recalculated:
// what a refused request must leave exactly as it was.
func (s *splitEnv) ledger(t *testing.T) string {
	t.Helper()
	rows, _, err := s.Store.Transactions(context.Background(), s.Alpha.Family.ID,
		models.TransactionFilter{WithSplitParents: true}, models.Page{Number: 1, Size: 500})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s %d %v %v|", r.Name, r.Amount, r.Excluded, r.SplitParentID != nil)
	}
	s.RunBalanceTasks(t)
	fmt.Fprintf(&b, "balance %d", s.Balance(t, s.Alpha.Family.ID, s.Alpha.Account.ID))
	return b.String()
}

// parts is the names of the split parts of parent id, oldest first.
func (s *splitEnv) parts(t *testing.T, id uuid.UUID) string {
	t.Helper()
	var names []string
	for _, p := range apitest.Stored(t, s.Env, id).Splits {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// TestSplitAPI is the reference's splits_controller tests, and what the
// issue adds: a split answers the parent with its parts, the parent stops
// counting and the parts count in its place, the list shows the parts and
// not the parent, a part's id names its parent, and the balance does not
// move.
func TestSplitAPI(t *testing.T) {
	s := newSplitEnv(t)
	s.RunBalanceTasks(t)
	balance := s.Balance(t, s.Alpha.Family.ID, s.Alpha.Account.ID)

	q0, _ := s.Balances.Counts()
	r := s.Do("POST", splitPath(s.tx.ID), s.Alpha.Key, splitPayload(
		map[string]any{"name": "Groceries", "amount": 70, "category_id": s.food.ID.String()},
		map[string]any{"name": "Household", "amount": "30.00"},
	)).WantJSON(t, 201)
	if r["id"] != s.tx.ID.String() || r["split_needs_review"] != false {
		t.Fatalf("answer: %v", r)
	}
	splits, _ := r["splits"].([]any)
	if len(splits) != 2 {
		t.Fatalf("splits: %v", r["splits"])
	}
	first := splits[0].(map[string]any)
	if first["name"] != "Groceries" || first["amount"] != "$70.00" || first["split_parent_id"] != s.tx.ID.String() ||
		first["category"].(map[string]any)["id"] != s.food.ID.String() || first["excluded"] != false {
		t.Errorf("first part: %v", first)
	}
	parent := apitest.Stored(t, s.Env, s.tx.ID)
	if !parent.IsSplitParent() || !parent.Excluded {
		t.Errorf("parent after split: excluded %v reason %v", parent.Excluded, parent.ExcludedReason)
	}
	if got := s.parts(t, s.tx.ID); got != "Groceries,Household" {
		t.Errorf("parts = %q", got)
	}
	// The balance is recalculated from the parts, and comes to the same.
	if q1, _ := s.Balances.Counts(); q1 == q0 {
		t.Error("a split reported no balance change")
	}
	s.RunBalanceTasks(t)
	if got := s.Balance(t, s.Alpha.Family.ID, s.Alpha.Account.ID); got != balance {
		t.Errorf("balance %v after the split, %v before", got, balance)
	}

	// The list shows the parts, never the parent: a sum of it never doubles.
	list := s.Do("GET", "/api/v1/transactions?per_page=100", s.Alpha.Key, nil).WantJSON(t, 200)
	var names []string
	sum := 0.0
	for _, it := range list["transactions"].([]any) {
		m := it.(map[string]any)
		names = append(names, m["name"].(string))
		sum += m["signed_amount_cents"].(float64)
	}
	if strings.Join(names, ",") != "Household,Groceries" || sum != -10000 {
		t.Errorf("list: %v, sum %v", names, sum)
	}

	// A part names its parent; its own GET shows it.
	childID := uuid.MustParse(first["id"].(string))
	child := s.Do("GET", "/api/v1/transactions/"+childID.String(), s.Alpha.Key, nil).WantJSON(t, 200)
	if child["split_parent_id"] != s.tx.ID.String() {
		t.Errorf("part: %v", child)
	}

	// Already split, or a part: refused as the reference words it.
	for _, id := range []uuid.UUID{s.tx.ID, childID} {
		m := apitest.WantError(t, s.Do("POST", splitPath(id), s.Alpha.Key, splitPayload(part("X", 100))), 422, "validation_failed")
		if m["message"] != models.MsgNotSplittable {
			t.Errorf("split again: %v", m)
		}
	}

	// Update: replaces the parts, and a part's id resolves to its parent.
	s.Do("PATCH", splitPath(s.tx.ID), s.Alpha.Key, splitPayload(
		map[string]any{"name": "Dining", "amount": 80, "category_id": s.food.ID.String()}, part("Tip", 20))).WantJSON(t, 200)
	if got := s.parts(t, s.tx.ID); got != "Dining,Tip" {
		t.Errorf("after update: %q", got)
	}
	anyPart := apitest.Stored(t, s.Env, s.tx.ID).Splits[0].ID
	u := s.Do("PATCH", splitPath(anyPart), s.Alpha.Key, splitPayload(part("A", "50.5"), part("B", "49.5"))).WantJSON(t, 200)
	if u["id"] != s.tx.ID.String() || s.parts(t, s.tx.ID) != "A,B" {
		t.Errorf("update through a part: %v, parts %q", u["id"], s.parts(t, s.tx.ID))
	}

	// A part is edited as any transaction, but its amount, date and
	// account follow the split; it is not deleted on its own.
	partA := apitest.Stored(t, s.Env, s.tx.ID).Splits[0]
	s.Do("PATCH", "/api/v1/transactions/"+partA.ID.String(), s.Alpha.Key,
		map[string]any{"transaction": map[string]any{"name": "Apples", "notes": "market"}}).WantJSON(t, 200)
	for _, body := range []map[string]any{{"amount": "60"}, {"date": "2026-02-01"}} {
		apitest.WantError(t, s.Do("PATCH", "/api/v1/transactions/"+partA.ID.String(), s.Alpha.Key,
			map[string]any{"transaction": body}), 422, "validation_failed")
		apitest.WantError(t, s.Do("PATCH", "/api/v1/transactions/"+s.tx.ID.String(), s.Alpha.Key,
			map[string]any{"transaction": body}), 422, "validation_failed")
	}
	s.Do("PATCH", "/api/v1/transactions/"+partA.ID.String(), s.Alpha.Key,
		map[string]any{"transaction": map[string]any{"amount": "50.5"}}).WantJSON(t, 200) // the same amount is no change
	apitest.WantError(t, s.Do("DELETE", "/api/v1/transactions/"+partA.ID.String(), s.Alpha.Key, nil), 422, "validation_failed")

	// Destroy through a part's id: the parts go, the parent counts again.
	d := s.Do("DELETE", splitPath(partA.ID), s.Alpha.Key, nil).WantJSON(t, 200)
	if d["id"] != s.tx.ID.String() || d["splits"] != nil || d["split_needs_review"] != nil {
		t.Errorf("unsplit answer: %v", d)
	}
	after := apitest.Stored(t, s.Env, s.tx.ID)
	if after.Excluded || after.IsSplitParent() || s.Count(t, s.Alpha) != 1 {
		t.Errorf("after unsplit: excluded %v, %d rows", after.Excluded, s.Count(t, s.Alpha))
	}
	apitest.WantError(t, s.Do("PATCH", splitPath(s.tx.ID), s.Alpha.Key, splitPayload(part("X", 100))), 422, "validation_failed")
	apitest.WantError(t, s.Do("DELETE", splitPath(s.tx.ID), s.Alpha.Key, nil), 422, "validation_failed")

	// Deleting a split parent deletes its parts.
	s.Do("POST", splitPath(s.tx.ID), s.Alpha.Key, splitPayload(part("A", 60), part("B", 40))).WantJSON(t, 201)
	s.Do("DELETE", "/api/v1/transactions/"+s.tx.ID.String(), s.Alpha.Key, nil).WantJSON(t, 200)
	if n := s.Count(t, s.Alpha); n != 0 {
		t.Errorf("%d rows left after deleting a split parent", n)
	}
}

// TestSplitAPIRefused: every refused split answers 422 (404 for a
// transaction that is not the family's, 403 for a read key) and leaves the
// ledger exactly as it was, a refused replacement included: its old parts
// stay.
func TestSplitAPIRefused(t *testing.T) {
	s := newSplitEnv(t)
	ctx := context.Background()
	card := &models.Account{FamilyID: s.Alpha.Family.ID, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	if err := s.Store.CreateAccount(ctx, card); err != nil {
		t.Fatal(err)
	}
	out := s.add(t, s.Alpha.Account.ID, 50_0000, "Card payment")
	in := s.add(t, card.ID, -50_0000, "Payment received")
	if _, err := s.Store.PairTransfer(ctx, s.Alpha.Family.ID, out.ID, in.ID); err != nil {
		t.Fatal(err)
	}
	pending := s.add(t, s.Alpha.Account.ID, 12_0000, "Pending")
	if _, err := s.Store.DB().NewUpdate().Model((*models.Transaction)(nil)).Set("pending = ?", true).
		Where("id = ?", pending.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	beta, _, err := s.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: s.Beta.Family.ID, AccountID: s.Beta.Account.ID,
		Date: "2026-01-10", Amount: 100_0000, Currency: "USD", Name: "Other family"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	many := func(n int) []map[string]any {
		parts := make([]map[string]any, n)
		for i := range parts {
			parts[i] = part(fmt.Sprintf("P%d", i), "0.2")
		}
		return parts
	}
	before := s.ledger(t)

	cases := []struct {
		name   string
		method string
		id     uuid.UUID
		key    string
		body   any
		status int
		msg    string // in the message
	}{
		{"sum short", "POST", s.tx.ID, s.Alpha.Key, splitPayload(part("Part 1", 60), part("Part 2", 20)), 422, "they add up to $80.00, $20.00 short"},
		{"sum over", "POST", s.tx.ID, s.Alpha.Key, splitPayload(part("Part 1", 60), part("Part 2", "40.01")), 422, "$0.01 over"},
		{"missing amount", "POST", s.tx.ID, s.Alpha.Key, splitPayload(map[string]any{"name": "No amount"}), 422, "Each split requires an amount"},
		{"bad amount", "POST", s.tx.ID, s.Alpha.Key, splitPayload(part("A", "1e2")), 422, "amount must be"},
		{"empty", "POST", s.tx.ID, s.Alpha.Key, splitPayload(), 422, models.MsgSplitEmpty},
		{"101 parts", "POST", s.tx.ID, s.Alpha.Key, map[string]any{"split": map[string]any{"splits": many(101)}}, 422, "at most 100 parts"},
		{"500 parts", "POST", s.tx.ID, s.Alpha.Key, map[string]any{"split": map[string]any{"splits": many(500)}}, 422, "at most 100 parts"},
		{"unknown category", "POST", s.tx.ID, s.Alpha.Key, splitPayload(part("A", 50),
			map[string]any{"name": "B", "amount": 50, "category_id": uuid.NewString()}), 422, "not found"},
		{"other family's category", "POST", s.tx.ID, s.Alpha.Key, splitPayload(part("A", 50),
			map[string]any{"name": "B", "amount": 50, "category_id": s.betaFood.ID.String()}), 422, s.betaFood.ID.String() + " not found"},
		{"transfer", "POST", out.ID, s.Alpha.Key, splitPayload(part("A", 25), part("B", 25)), 422, models.MsgNotSplittable},
		{"pending", "POST", pending.ID, s.Alpha.Key, splitPayload(part("A", 6), part("B", 6)), 422, models.MsgNotSplittable},
		{"not split", "PATCH", s.tx.ID, s.Alpha.Key, splitPayload(part("A", 100)), 422, models.MsgNotSplit},
		{"no split object", "POST", s.tx.ID, s.Alpha.Key, map[string]any{"splits": []any{}}, 400, ""},
		{"read key create", "POST", s.tx.ID, s.Alpha.ReadKey, splitPayload(part("A", 100)), 403, ""},
		{"read key update", "PATCH", s.tx.ID, s.Alpha.ReadKey, splitPayload(part("A", 100)), 403, ""},
		{"read key delete", "DELETE", s.tx.ID, s.Alpha.ReadKey, nil, 403, ""},
		{"no key", "POST", s.tx.ID, "", splitPayload(part("A", 100)), 401, ""},
		{"unknown", "POST", uuid.New(), s.Alpha.Key, splitPayload(part("A", 100)), 404, "Transaction not found"},
		{"other family", "POST", beta.ID, s.Alpha.Key, splitPayload(part("A", 100)), 404, "Transaction not found"},
		{"other family update", "PATCH", beta.ID, s.Alpha.Key, splitPayload(part("A", 100)), 404, ""},
		{"other family delete", "DELETE", beta.ID, s.Alpha.Key, nil, 404, ""},
	}
	codes := map[int]string{400: "bad_request", 401: "unauthorized", 403: "insufficient_scope", 404: "not_found", 422: "validation_failed"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := apitest.WantError(t, s.Do(c.method, splitPath(c.id), c.key, c.body), c.status, codes[c.status])
			if msg, _ := m["message"].(string); !strings.Contains(msg, c.msg) {
				t.Errorf("message %q, want it to contain %q", msg, c.msg)
			}
			if got := s.ledger(t); got != before {
				t.Errorf("the ledger changed:\n%s\nwas\n%s", got, before)
			}
		})
	}

	// A refused replacement keeps the parts it would have replaced: the
	// old parts are deleted inside the transaction that then fails.
	s.Do("POST", splitPath(s.tx.ID), s.Alpha.Key, splitPayload(part("A", 60), part("B", 40))).WantJSON(t, 201)
	split := s.ledger(t)
	for _, body := range []any{
		splitPayload(part("C", 60), part("D", 30)),
		splitPayload(part("C", 60), map[string]any{"name": "D", "amount": 40, "category_id": s.betaFood.ID.String()}),
	} {
		apitest.WantError(t, s.Do("PATCH", splitPath(s.tx.ID), s.Alpha.Key, body), 422, "validation_failed")
		if got := s.ledger(t); got != split || s.parts(t, s.tx.ID) != "A,B" {
			t.Errorf("a refused replacement changed the ledger:\n%s\nwas\n%s", got, split)
		}
	}
	// A split transaction cannot be a transfer, nor can its part.
	other := s.add(t, card.ID, -100_0000, "Mirror")
	for _, id := range []uuid.UUID{s.tx.ID, apitest.Stored(t, s.Env, s.tx.ID).Splits[0].ID} {
		apitest.WantError(t, s.Do("PATCH", "/api/v1/transactions/"+id.String()+"/transfer", s.Alpha.Key,
			map[string]any{"transfer": map[string]any{"other_transaction_id": other.ID.String()}}), 422, "validation_failed")
	}
}

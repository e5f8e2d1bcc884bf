package screens_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
)

// TestSplitEditorScreen: the split editor works as plain forms, with
// amounts in the family's number format ("1.234,56" here): "Add a row"
// and "Remove" draw the form again with what was typed and the amount
// left to allocate; a save that does not add up is refused beside the
// total, with the rows kept; a save that does splits the transaction, and
// the list and the register show the parts beneath their parent; a part's
// delete is turned into the split; "Unsplit" counts it whole again.
func TestSplitEditorScreen(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	if _, err := e.Store.DB().NewUpdate().Model((*models.Family)(nil)).Set("number_format = ?", "1.234,56").
		Where("id = ?", fam).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	food := &models.Category{FamilyID: fam, Name: "Food", Color: "#112233", Icon: "utensils", Classification: "expense"}
	home := &models.Category{FamilyID: fam, Name: "Household", Color: "#223344", Icon: "home", Classification: "expense"}
	for _, c := range []*models.Category{food, home} {
		if err := e.Store.CreateCategory(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	tx, _, err := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: e.Alpha.Account.ID,
		Date: "2026-01-10", Amount: 1_180_0000, Currency: "USD", Name: "Warehouse store", CategoryID: &food.ID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := apitest.SignedInBrowser(t, e)
	path := "/transactions/" + tx.ID.String() + "/split"

	page := string(b.Get(path).Body)
	for _, want := range []string{`value="1180,00"`, `name="rows" value="2"`, "Every amount is allocated.", `value="add"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the editor lacks %q:\n%s", want, page)
		}
	}
	updated := regexpValue(page, "updated")
	rows := func(action string, lines ...[3]string) url.Values {
		v := url.Values{"action": {action}, "updated": {updated}, "return_to": {"/transactions"}}
		v.Set("rows", string(rune('0'+len(lines))))
		for i, l := range lines {
			k := string(rune('0' + i))
			v.Set("name_"+k, l[0])
			v.Set("category_"+k, l[1])
			v.Set("amount_"+k, l[2])
		}
		return v
	}
	// Add a row: the typed values stay, a third row appears, the rest is shown.
	r := b.Post(path, rows("add", [3]string{"Groceries", food.ID.String(), "1.000,50"}, [3]string{"Soap", home.ID.String(), "100"}))
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, `name="rows" value="3"`) || !strings.Contains(body, `value="1.000,50"`) ||
		!strings.Contains(body, "$79.50 left to allocate.") || !strings.Contains(body, `id="name_2"`) {
		t.Fatalf("add a row: %d\n%s", r.Status, body)
	}
	// Remove the first row: the second moves up with its values.
	r = b.Post(path, rows("remove_0", [3]string{"Groceries", food.ID.String(), "1.000,50"}, [3]string{"Soap", home.ID.String(), "100"}))
	body = string(r.Body)
	if !strings.Contains(body, `name="rows" value="1"`) || !strings.Contains(body, `id="name_0" name="name_0" maxlength="255" value="Soap"`) ||
		!strings.Contains(body, "$1,080.00 left to allocate.") {
		t.Fatalf("remove a row:\n%s", body)
	}
	// A save that does not add up is refused beside the total.
	r = b.Post(path, rows("save", [3]string{"Groceries", food.ID.String(), "1.000,50"}, [3]string{"Soap", home.ID.String(), "100"}))
	body = string(r.Body)
	if r.Status != 422 || !strings.Contains(body, "$79.50 short") || !strings.Contains(body, `value="1.000,50"`) {
		t.Fatalf("a split that does not add up: %d\n%s", r.Status, body)
	}
	if got := apitest.Stored(t, e, tx.ID); got.IsSplitParent() {
		t.Fatal("a refused split was saved")
	}
	// A bad amount is named beside its field.
	r = b.Post(path, rows("save", [3]string{"Groceries", food.ID.String(), "12.3.4"}, [3]string{"Soap", home.ID.String(), "100"}))
	if r.Status != 422 || !strings.Contains(string(r.Body), `id="amount_0"`) || !strings.Contains(string(r.Body), "Amount must be a positive amount") {
		t.Fatalf("a bad amount: %d\n%s", r.Status, r.Body)
	}
	// A save that adds up.
	r = b.Post(path, rows("save", [3]string{"Groceries", food.ID.String(), "1.080"}, [3]string{"Soap", home.ID.String(), "100"}))
	if r.Status != 303 {
		t.Fatalf("save: %d\n%s", r.Status, r.Body)
	}
	parent := apitest.Stored(t, e, tx.ID)
	if !parent.IsSplitParent() || len(parent.Splits) != 2 || parent.Splits[0].Amount != 1_080_0000 || *parent.Splits[1].CategoryID != home.ID {
		t.Fatalf("after the save: %+v", parent.Splits)
	}
	// The list and the register: the parent, its parts beneath it.
	for _, p := range []string{"/transactions", "/accounts/" + e.Alpha.Account.ID.String()} {
		list := string(b.Get(p).Body)
		i, j, k := strings.Index(list, `class="split-parent"`), strings.Index(list, ">Groceries<"), strings.Index(list, ">Soap<")
		if i < 0 || j < i || k < i || strings.Count(list, `class="split-part"`) != 2 {
			t.Errorf("%s does not show the parts beneath the parent:\n%s", p, list)
		}
	}
	// A split a bank sync changed is flagged in the list, the register and the editor.
	if _, err := e.Store.DB().NewUpdate().Model((*models.Transaction)(nil)).Set("split_needs_review = ?", true).
		Where("id = ?", tx.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/transactions", "/accounts/" + e.Alpha.Account.ID.String()} {
		if list := string(b.Get(p).Body); !strings.Contains(list, "amount changed: review the split") {
			t.Errorf("%s does not flag the split for review", p)
		}
	}
	if page := string(b.Get(path).Body); !strings.Contains(page, `id="review-note"`) {
		t.Errorf("the editor does not say the split needs review:\n%s", page)
	}
	if r := e.Do("GET", "/api/v1/transactions/"+tx.ID.String(), e.Alpha.ReadKey, nil).WantJSON(t, 200); r["split_needs_review"] != true {
		t.Errorf("the API does not say the split needs review: %v", r["split_needs_review"])
	}
	// The edit screen of the parent links to the editor; a part says what it is.
	if edit := string(b.Get("/transactions/" + tx.ID.String() + "/edit").Body); !strings.Contains(edit, "split into 2 parts") || !strings.Contains(edit, "Unsplit") {
		t.Errorf("the parent's edit screen:\n%s", edit)
	}
	partID := parent.Splits[0].ID.String()
	if edit := string(b.Get("/transactions/" + partID + "/edit").Body); !strings.Contains(edit, "one part of a split") || strings.Contains(edit, "Delete this transaction") {
		t.Errorf("a part's edit screen:\n%s", edit)
	}
	// A part's delete is refused: the person is sent to the split.
	if r := b.Post("/transactions/"+partID+"/delete", url.Values{}); r.Status != 303 || !strings.Contains(r.Header.Get("Location"), "/split") {
		t.Errorf("deleting a part: %d %s", r.Status, r.Header.Get("Location"))
	}
	// The editor opened from a part edits its parent's split.
	if page := string(b.Get("/transactions/" + partID + "/split").Body); !strings.Contains(page, `value="1080,00"`) || !strings.Contains(page, "Unsplit") {
		t.Errorf("the editor from a part:\n%s", page)
	}
	// Unsplit.
	if r := b.Post("/transactions/"+tx.ID.String()+"/unsplit", url.Values{"return_to": {"/transactions"}}); r.Status != 303 {
		t.Fatalf("unsplit: %d %s", r.Status, r.Body)
	}
	if got := apitest.Stored(t, e, tx.ID); got.IsSplitParent() || got.Excluded || e.Count(t, e.Alpha) != 1 {
		t.Errorf("after unsplit: excluded %v, %d rows", got.Excluded, e.Count(t, e.Alpha))
	}
}

// regexpValue is the value of the hidden field name in page.
func regexpValue(page, name string) string {
	i := strings.Index(page, `name="`+name+`" value="`)
	if i < 0 {
		return ""
	}
	rest := page[i+len(`name="`+name+`" value="`):]
	return rest[:strings.IndexByte(rest, '"')]
}

package screens_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/api/apitest"
	"coffer/models"
)

var importLink = regexp.MustCompile(`^/imports/([0-9a-f-]{36})$`)

// TestImportScreens walks the /imports screens without JavaScript: upload
// a CSV whose columns do not have the usual names, see the problem, map
// the columns (saving the mapping), check the preview, import, watch the
// progress, and revert.
func TestImportScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	page := b.Get("/imports")
	if page.Status != 200 || !strings.Contains(string(page.Body), `<label for="file">`) || !strings.Contains(string(page.Body), `enctype="multipart/form-data"`) {
		t.Fatalf("imports page: %d %s", page.Status, page.Body)
	}
	file := "When;What;How much\n15.01.2024;Rent;-1.234,50\n16.01.2024;Salary;2.000,00\n"
	r := b.UploadFile("/imports", map[string]string{"account_id": e.Alpha.Account.ID.String(), "type": "TransactionImport"}, "bank.csv", []byte(file))
	if r.Status != 303 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	loc := r.Header.Get("Location")
	m := importLink.FindStringSubmatch(loc)
	if m == nil {
		t.Fatalf("redirected to %q", loc)
	}
	page = b.Get(loc)
	body := string(page.Body)
	// Said for a person: no setting's name (date_col_label) on the screen.
	if !strings.Contains(body, "The file has no column named “date” for the date") || strings.Contains(body, "date_col_label \"") ||
		!strings.Contains(body, "<option>When</option>") {
		t.Fatalf("mapping page does not say what is wrong: %s", body)
	}
	for _, field := range []string{"date_col_label", "amount_col_label", "date_format", "number_format", "signage_convention", "col_sep", "mapping_name"} {
		if !strings.Contains(body, `<label for="`+field+`">`) {
			t.Errorf("no label for %s", field)
		}
	}
	r = b.Post(loc, url.Values{"date_col_label": {"When"}, "amount_col_label": {"How much"}, "name_col_label": {"What"},
		"col_sep": {";"}, "date_format": {"%d.%m.%Y"}, "number_format": {"1.234,56"}, "signage_convention": {"inflows_positive"},
		"mapping_name": {"My bank"}})
	if r.Status != 303 {
		t.Fatalf("configure: %d %s", r.Status, r.Body)
	}
	body = string(b.Get(loc).Body)
	// Amounts as the other screens show them: money out plain, money in
	// with its plus sign, in the account's currency.
	if !strings.Contains(body, "2024-01-15") || !strings.Contains(body, "$1,234.50") || !strings.Contains(body, `<span class="in">+$2,000.00</span>`) ||
		strings.Contains(body, "1234.5000") || !strings.Contains(body, "Import 2 rows") {
		t.Fatalf("preview: %s", body)
	}
	if r = b.Post(loc+"/publish", nil); r.Status != 303 {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	body = string(b.Get(loc).Body)
	if !strings.Contains(body, `http-equiv="refresh"`) || !strings.Contains(body, "Importing") {
		t.Fatalf("progress page: %s", body)
	}
	e.FinishImport(t, e.Alpha.Family.ID.String(), m[1])
	body = string(b.Get(loc).Body)
	if strings.Contains(body, `http-equiv="refresh"`) || !strings.Contains(body, "2 imported") || !strings.Contains(body, "Revert") {
		t.Fatalf("done page: %s", body)
	}
	// The saved mapping is offered for the next upload.
	if !strings.Contains(string(b.Get("/imports").Body), ">My bank</option>") {
		t.Fatal("saved mapping not offered")
	}
	if r = b.Post(loc+"/revert", nil); r.Status != 303 {
		t.Fatalf("revert: %d %s", r.Status, r.Body)
	}
	if _, err := e.Store.RevertImport(context.Background(), e.Alpha.Family.ID, uuidOf(t, m[1])); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.Store.DB().NewSelect().Table("transactions").Where("family_id = ?", e.Alpha.Family.ID).Count(context.Background()); n != 0 {
		t.Fatalf("%d transactions after the revert", n)
	}
	// Another family's member gets a 404 for it.
	apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
	other := e.Browser(t)
	other.Login(e.Beta.User.Email, "correct horse battery")
	if r := other.Get(loc); r.Status != 404 {
		t.Fatalf("other family: %d", r.Status)
	}
	// A binary file is refused with the reason, on the form.
	b.Get("/imports")
	r = b.UploadFile("/imports", map[string]string{"account_id": e.Alpha.Account.ID.String(), "type": "TransactionImport"}, "photo.csv",
		[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00"))
	if r.Status != 422 || !strings.Contains(string(r.Body), "not a text file") {
		t.Fatalf("binary upload: %d %s", r.Status, r.Body)
	}
}

// A bad row is corrected on the screen: the date, amount and name a person
// types are read again with the import's settings, and the import's counts
// follow. Another family cannot touch it.
func TestImportCorrectRow(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := t.Context()
	file := "Date,Name,Amount\n2024-01-15,Rent,-100.00\n2024-01-17,Shop,-5.00\n2024-13-45,Bad day,-7.50\n"
	r := b.UploadFile("/imports", map[string]string{"account_id": e.Alpha.Account.ID.String(), "type": "TransactionImport"}, "bank.csv", []byte(file))
	m := importLink.FindStringSubmatch(r.Header.Get("Location"))
	if r.Status != 303 || m == nil {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	id := uuid.MustParse(m[1])
	bad, _, err := e.Store.ImportLinesWithStatus(ctx, e.Alpha.Family.ID, id, models.LineInvalid, models.Page{Number: 1, Size: 10})
	if err != nil || len(bad) != 1 {
		t.Fatalf("bad rows: %+v %v", bad, err)
	}
	row := "/imports/" + id.String() + "/rows/" + bad[0].ID.String()
	page := string(b.Get("/imports/" + id.String() + "?rows=invalid").Body)
	if !strings.Contains(page, `action="`+row+`"`) || !strings.Contains(page, "Correct line 4") {
		t.Fatalf("no correction form: %s", page)
	}
	invalidRows := func() int {
		im, err := e.Store.Import(ctx, e.Alpha.Family.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return im.InvalidRowsCount
	}
	if r := b.Post(row, url.Values{"raw_date": {"2024-02-30"}, "raw_amount": {"-7.50"}, "name": {"Bad \xff\x00day"}}); r.Status != 303 ||
		invalidRows() != 1 || !strings.Contains(string(b.Get(r.Header.Get("Location")).Body), "still cannot be imported") {
		t.Fatalf("a date still wrong: %d, %d bad", r.Status, invalidRows())
	}
	other := e.Browser(t)
	apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
	if r := other.Login(e.Beta.User.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("beta login: %d", r.Status)
	}
	other.Get("/imports")
	if r := other.Post(row, url.Values{"raw_date": {"2024-01-16"}, "raw_amount": {"1"}, "name": {"x"}}); r.Status != 404 {
		t.Fatalf("another family corrects the row: %d", r.Status)
	}
	if r := b.Post(row, url.Values{"raw_date": {"2024-01-16"}, "raw_amount": {"-7.50"}, "name": {"Corner shop"}}); r.Status != 303 || invalidRows() != 0 {
		t.Fatalf("corrected: %d, %d bad", r.Status, invalidRows())
	}
	lines, _, _ := e.Store.ImportLinesWithStatus(ctx, e.Alpha.Family.ID, id, models.LinePending, models.Page{Number: 1, Size: 10})
	found := false
	for _, l := range lines {
		if l.ID == bad[0].ID {
			found = l.Date != nil && *l.Date == "2024-01-16" && l.Amount != nil && *l.Amount == 7_5000 && l.Name == "Corner shop"
		}
	}
	if !found {
		t.Fatalf("the corrected row: %+v", lines)
	}
}

package api_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// uploadFile posts a multipart form with the CSRF token of the last page,
// the fields and a file, with the browser's cookies.
func (b *browser) uploadFile(path string, fields map[string]string, filename string, file []byte) response {
	b.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("csrf_token", b.csrf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	fw, _ := w.CreateFormFile("file", filename)
	_, _ = fw.Write(file)
	_ = w.Close()
	req := httptest.NewRequest("POST", path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("X-Forwarded-For", b.ip)
	for k, v := range b.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := b.e.app.Test(req, -1)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 500 {
		b.t.Fatalf("POST %s: 500 %s", path, out)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: out}
}

var importLink = regexp.MustCompile(`^/imports/([0-9a-f-]{36})$`)

// TestImportScreens walks the /imports screens without JavaScript: upload
// a CSV whose columns do not have the usual names, see the problem, map
// the columns (saving the mapping), check the preview, import, watch the
// progress, and revert.
func TestImportScreens(t *testing.T) {
	e := newEnv(t)
	b := signedInBrowser(t, e)
	page := b.get("/imports")
	if page.status != 200 || !strings.Contains(string(page.body), `<label for="file">`) || !strings.Contains(string(page.body), `enctype="multipart/form-data"`) {
		t.Fatalf("imports page: %d %s", page.status, page.body)
	}
	file := "When;What;How much\n15.01.2024;Rent;-1.234,50\n16.01.2024;Salary;2.000,00\n"
	r := b.uploadFile("/imports", map[string]string{"account_id": e.alpha.Account.ID.String(), "type": "TransactionImport"}, "bank.csv", []byte(file))
	if r.status != 303 {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	loc := r.header.Get("Location")
	m := importLink.FindStringSubmatch(loc)
	if m == nil {
		t.Fatalf("redirected to %q", loc)
	}
	page = b.get(loc)
	body := string(page.body)
	if !strings.Contains(body, "is not a column of the file") || !strings.Contains(body, "<option>When</option>") {
		t.Fatalf("mapping page does not say what is wrong: %s", body)
	}
	for _, field := range []string{"date_col_label", "amount_col_label", "date_format", "number_format", "signage_convention", "col_sep", "mapping_name"} {
		if !strings.Contains(body, `<label for="`+field+`">`) {
			t.Errorf("no label for %s", field)
		}
	}
	r = b.post(loc, url.Values{"date_col_label": {"When"}, "amount_col_label": {"How much"}, "name_col_label": {"What"},
		"col_sep": {";"}, "date_format": {"%d.%m.%Y"}, "number_format": {"1.234,56"}, "signage_convention": {"inflows_positive"},
		"mapping_name": {"My bank"}})
	if r.status != 303 {
		t.Fatalf("configure: %d %s", r.status, r.body)
	}
	body = string(b.get(loc).body)
	// Amounts as the other screens show them: money out plain, money in
	// with its plus sign, in the account's currency.
	if !strings.Contains(body, "2024-01-15") || !strings.Contains(body, "$1,234.50") || !strings.Contains(body, `<span class="in">+$2,000.00</span>`) ||
		strings.Contains(body, "1234.5000") || !strings.Contains(body, "Import 2 rows") {
		t.Fatalf("preview: %s", body)
	}
	if r = b.post(loc+"/publish", nil); r.status != 303 {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	body = string(b.get(loc).body)
	if !strings.Contains(body, `http-equiv="refresh"`) || !strings.Contains(body, "importing") {
		t.Fatalf("progress page: %s", body)
	}
	e.finishImport(t, e.alpha.Family.ID.String(), m[1])
	body = string(b.get(loc).body)
	if strings.Contains(body, `http-equiv="refresh"`) || !strings.Contains(body, "2 imported") || !strings.Contains(body, "Revert") {
		t.Fatalf("done page: %s", body)
	}
	// The saved mapping is offered for the next upload.
	if !strings.Contains(string(b.get("/imports").body), ">My bank</option>") {
		t.Fatal("saved mapping not offered")
	}
	if r = b.post(loc+"/revert", nil); r.status != 303 {
		t.Fatalf("revert: %d %s", r.status, r.body)
	}
	if _, err := e.store.RevertImport(context.Background(), e.alpha.Family.ID, uuidOf(t, m[1])); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.store.DB().NewSelect().Table("transactions").Where("family_id = ?", e.alpha.Family.ID).Count(context.Background()); n != 0 {
		t.Fatalf("%d transactions after the revert", n)
	}
	// Another family's member gets a 404 for it.
	setPassword(t, e, e.beta.User, "correct horse battery")
	other := e.browser(t)
	other.login(e.beta.User.Email, "correct horse battery")
	if r := other.get(loc); r.status != 404 {
		t.Fatalf("other family: %d", r.status)
	}
	// A binary file is refused with the reason, on the form.
	b.get("/imports")
	r = b.uploadFile("/imports", map[string]string{"account_id": e.alpha.Account.ID.String(), "type": "TransactionImport"}, "photo.csv",
		[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00"))
	if r.status != 422 || !strings.Contains(string(r.body), "not a text file") {
		t.Fatalf("binary upload: %d %s", r.status, r.body)
	}
}

package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/text/encoding/charmap"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/money"
)

// germanBank is a German bank's export as it is sent: Windows-1252, ";",
// "1.234,56", DD.MM.YYYY, the posting day before the value day; one line
// has a date that does not exist and one more fields than its header.
const germanBank = "Buchungstag;Valuta;Auftraggeber/Empfänger;Verwendungszweck;Betrag (EUR)\r\n" +
	"02.01.2024;02.01.2024;Stadtwerke München;Abschlag Strom Januar;-85,00\r\n" +
	"03.01.2024;03.01.2024;Bäckerei Müller;Kartenzahlung;-4,35\r\n" +
	"05.01.2024;05.01.2024;Arbeitgeber GmbH;Gehalt Januar;2.345,67\r\n" +
	"31.02.2024;31.02.2024;Falsches Datum;Test;-1,00\r\n" +
	"08.01.2024;08.01.2024;Drogerie;Einkauf;Rabatt;-12,99\r\n" +
	"09.01.2024;09.01.2024;Café Größenwahn;Frühstück;-18,40\r\n"

// TestBrowserImportBankFile imports a German bank's Windows-1252 file in
// Chromium, at phone and desktop width, typing nothing: the columns,
// separator, encoding and formats are guessed; the page says which row is
// already in the account (renamed since) and which lines are bad and why;
// a checkbox imports the valid rows and leaves out the bad ones.
func TestBrowserImportBankFile(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	ctx := context.Background()
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	there, _, err := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID,
		Date: "2024-01-02", Amount: money.Amount(850000), Currency: e.Alpha.Account.Currency, Name: "Abschlag Strom Januar"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	there.Name = "Electricity"
	if _, err := e.Store.UpdateTransaction(ctx, there, []string{"name"}, nil); err != nil {
		t.Fatal(err)
	}
	data, err := charmap.Windows1252.NewEncoder().Bytes([]byte(germanBank))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "umsaetze.csv")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := apitest.NewChrome(t)
	c.Run("sign in and upload",
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(base+"/imports"),
		chromedp.WaitVisible(`#email`),
		chromedp.SendKeys(`#email`, e.Alpha.User.Email),
		chromedp.SendKeys(`#password`, "correct horse battery"),
		chromedp.Submit(`#password`),
		chromedp.WaitVisible(`#file`),
		chromedp.SetUploadFiles(`#file`, []string{file}),
		chromedp.Submit(`#file`),
		chromedp.WaitVisible(`#import-summary`),
	)
	c.Shoot("imports-bank-01-phone")
	summary := c.Text(`#import-summary`)
	if !strings.Contains(summary, "1 row is already in the account") || !strings.Contains(summary, "2 rows cannot be imported") {
		t.Fatalf("summary: %q", summary)
	}
	table := c.Text(`table tbody`)
	for _, want := range []string{"Frühstück", "Already there: 2024-01-02 Electricity", "does not match the format", "has 6 fields but the header has 5"} {
		if !strings.Contains(table, want) && !strings.Contains(c.Text(`body`), want) {
			t.Errorf("the page does not show %q: %s", want, table)
		}
	}
	c.Run("desktop", chromedp.EmulateViewport(1280, 900), chromedp.Reload(), chromedp.WaitVisible(`#import-summary`))
	c.Shoot("imports-bank-02-desktop")
	c.Run("the bad rows", chromedp.Click(`a[href$="?rows=invalid"]`), chromedp.WaitVisible(`#skip_invalid`))
	if bad := c.Text(`table tbody`); !strings.Contains(bad, "31.02.2024") || strings.Contains(bad, "Bäckerei") {
		t.Fatalf("bad rows: %q", bad)
	}
	c.Shoot("imports-bank-03-bad-rows")
	c.Run("import the valid rows", chromedp.Click(`#skip_invalid`), chromedp.Click(`form[action$="/publish"] button`))
	// The page before the post shows a status too: wait for the new one.
	c.WaitFor(`(document.querySelector('#import-status') || {}).textContent || ''`, "Importing", "Done")
	loc, err := chromedp.Run(c.Ctx, chromedp.Location())
	if err != nil {
		c.Fail("location", err)
	}
	id := loc[strings.LastIndex(loc, "/")+1:]
	if i := strings.Index(id, "?"); i >= 0 {
		id = id[:i]
	}
	e.FinishImport(t, e.Alpha.Family.ID.String(), id)
	var names []string
	if err := e.Store.DB().NewSelect().Table("transactions").Column("name").Where("family_id = ?", e.Alpha.Family.ID).
		OrderExpr("name").Scan(ctx, &names); err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "Electricity,Frühstück,Gehalt Januar,Kartenzahlung" {
		t.Fatalf("transactions: %q", names)
	}
}

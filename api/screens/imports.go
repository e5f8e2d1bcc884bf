package screens

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/api/web"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/importfile"
)

// The /imports screens: upload a file into an account, map its columns
// with a preview of the first rows, publish, follow the progress (the page
// refreshes itself while the job runs, no script needed), and revert.

type importsData struct {
	Restores []models.Restore
	Imports  []models.Import
	Accounts []models.Account
	Mappings []models.ImportMapping
	Types    []string
	Form     importForm
	Refresh  bool // a restore is running: the page reloads itself
}

type importForm struct {
	AccountID string
	Type      string
	MappingID string
}

type importData struct {
	Import     *models.Import
	Account    *models.Account
	Headers    []string
	Problems   []string
	Preview    []models.ImportLine
	Lines      []models.ImportLine
	Pager      pager
	Mappings   []models.ImportMapping
	Formats    []string
	Separators [][2]string
	Encodings  [][2]string
	Refresh    bool
	// Skips are the rows of a pending import already in the account, by
	// row id, with the transaction each matches; Show picks the rows
	// listed: "" every row, "invalid" the bad ones, "skipped" those.
	Skips        map[uuid.UUID]models.ImportSkip
	SkippedLines []models.ImportLine
	Show         string
	// Ledger is an OFX statement's closing balance, offered once published.
	Ledger *ledgerOffer
}

func (h *Handler) listImportsScreen(c *fiber.Ctx) error {
	return h.importsPage(c, fiber.StatusOK, importForm{Type: importfile.CSV}, "")
}

func (h *Handler) importsPage(c *fiber.Ctx, status int, form importForm, msg string) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	d := importsData{Types: importfile.Types, Form: form}
	var err error
	if d.Imports, _, err = h.store.Imports(ctx, fam, models.ImportFilter{}, models.Page{Number: 1, Size: 50}); err != nil {
		return err
	}
	if d.Accounts, _, err = h.store.Accounts(ctx, fam, models.Page{Number: 1, Size: 500}); err != nil {
		return err
	}
	if d.Mappings, err = h.store.ImportMappings(ctx, fam); err != nil {
		return err
	}
	if d.Restores, err = h.store.Restores(ctx, fam, 10); err != nil {
		return err
	}
	d.Refresh = slices.ContainsFunc(d.Restores, func(r models.Restore) bool { return r.Status == models.ImportImporting })
	return h.pages.Render(c, status, "imports", web.Page{Nav: "imports", Title: "Imports", Error: msg, Data: d})
}

// uploadImport stores the file as a pending import with the chosen saved
// mapping (or the defaults) and shows it for mapping, even when the
// settings do not fit the file yet.
func (h *Handler) uploadImport(c *fiber.Ctx) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	form := importForm{AccountID: strings.Clone(c.FormValue("account_id")), Type: strings.Clone(c.FormValue("type")),
		MappingID: strings.Clone(c.FormValue("mapping_id"))}
	fail := func(msg string) error { return h.importsPage(c, fiber.StatusUnprocessableEntity, form, msg) }
	accountID, err := uuid.Parse(form.AccountID)
	if err != nil {
		return fail("Choose an account.")
	}
	set := importfile.DefaultSettings()
	if form.MappingID != "" {
		id, err := uuid.Parse(form.MappingID)
		if err != nil {
			return fail("Choose a saved mapping from the list.")
		}
		m, err := h.store.ImportMapping(ctx, fam, id)
		if errors.Is(err, models.ErrNotFound) {
			return fail("Choose a saved mapping from the list.")
		} else if err != nil {
			return err
		}
		set = m.Settings
	}
	data, name, problem, err := uploaded(c, "Choose a file to upload.")
	if err != nil {
		return err
	} else if problem != "" {
		return fail(problem)
	}
	var guess importfile.Guess
	if form.MappingID == "" && form.Type == importfile.CSV {
		// A known bank's file needs no typing: encoding, separator,
		// columns and formats are read off the file.
		set, guess = importfile.GuessSettings(data, set)
	}
	// Read once to refuse an unreadable file, then again as its rows are
	// stored: the rows are never all held (issue 24).
	read := models.FileRows(data, form.Type, set)
	_, err = read(func(importfile.Row) error { return nil })
	var bad *importfile.Error
	if errors.As(err, &bad) {
		return fail("The file cannot be imported: " + strings.Join(bad.Problems, "; ") + ".")
	} else if err != nil {
		return err
	}
	var inv *models.InvalidError
	im := &models.Import{FamilyID: fam, AccountID: accountID, Type: form.Type, Filename: &name, RawFile: string(data), Settings: set}
	if err := h.store.CreateImportKept(ctx, im, read); errors.As(err, &inv) {
		return fail(strings.Join(inv.Problems, " ") + ".")
	} else if err != nil {
		return err
	}
	flash := "Uploaded " + name + ". Check the columns and the preview, then import."
	if len(guess.Notes) > 0 {
		flash += " " + strings.Join(guess.Notes, " ")
	}
	return h.site.Redirect(c, "/imports/"+im.ID.String(), flash)
}

func (h *Handler) showImportScreen(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	im, err := h.store.Import(c.UserContext(), web.SessionOf(c).User.FamilyID, id)
	if err != nil {
		return err
	}
	return h.importPage(c, fiber.StatusOK, im, "")
}

func (h *Handler) importPage(c *fiber.Ctx, status int, im *models.Import, msg string) error {
	ctx, fam := c.UserContext(), im.FamilyID
	d := importData{Import: im, Formats: importfile.NumberFormatNames,
		Separators: [][2]string{{",", "Comma (,)"}, {";", "Semicolon (;)"}, {"\t", "Tab"}, {"|", "Pipe (|)"}},
		Show:       c.Query("rows"),
		Refresh:    im.Status == models.ImportImporting || im.Status == models.ImportReverting}
	var err error
	if d.Account, err = h.store.Account(ctx, fam, im.AccountID); err != nil && !errors.Is(err, models.ErrNotFound) {
		return err
	}
	f, err := h.amountForm(c)
	if err != nil {
		return err
	}
	if d.Ledger, err = h.offerLedger(ctx, f, im, d.Account); err != nil {
		return err
	}
	if d.Mappings, err = h.store.ImportMappings(ctx, fam); err != nil {
		return err
	}
	if f, err := h.amountForm(c); err != nil {
		return err
	} else if d.Ledger, err = h.offerLedger(ctx, f, im, d.Account); err != nil {
		return err
	}
	// The header, the file's problems and its rows were kept when the file
	// was last read with the current settings: a view reads a page of
	// them, never the file. (An import stored before headers were kept
	// has its file read once more here.)
	for _, e := range append([]string{""}, importfile.Encodings...) {
		d.Encodings = append(d.Encodings, [2]string{e, importfile.EncodingNames[e]})
	}
	d.Headers, d.Problems = im.Headers(), personProblems(im.Problems())
	if im.Status == models.ImportPending && im.Type == importfile.CSV && im.FileHeaders == "" {
		if p, err := importfile.Each([]byte(im.RawFile), im.Type, im.Settings, func(importfile.Row) error { return nil }); err == nil {
			d.Headers, d.Problems = p.Headers, personProblems(p.Problems)
		}
	}
	page := models.Page{Number: 1, Size: 50}
	if n, err := strconv.Atoi(c.Query("page")); err == nil && n > 1 {
		page.Number = min(n, 1_000_000)
	}
	if im.Status == models.ImportPending {
		if d.Skips, err = h.store.ImportSkips(ctx, fam, im.ID); err != nil {
			return err
		}
	}
	var total int
	q := url.Values{}
	switch d.Show {
	case "invalid":
		q.Set("rows", "invalid")
		d.Lines, total, err = h.store.ImportLinesWithStatus(ctx, fam, im.ID, models.LineInvalid, page)
	case "skipped":
		q.Set("rows", "skipped")
		d.Lines, total, err = h.skippedLines(c, im, d.Skips, page)
	default:
		d.Show = ""
		d.Lines, total, err = h.store.ImportLines(ctx, fam, im.ID, page)
	}
	if err != nil {
		return err
	}
	d.Pager = newPager(q, page, total)
	if im.Status == models.ImportPending {
		d.Preview = d.Lines // the rows as they would be imported
	}
	return h.pages.Render(c, status, "import", web.Page{Nav: "imports", Title: "Import", Error: msg, Data: d})
}

// configureImport reads the mapping form, reads the file again with it,
// and saves the mapping under a name when one is given.
func (h *Handler) configureImport(c *fiber.Ctx) error {
	ctx, fam := c.UserContext(), web.SessionOf(c).User.FamilyID
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	im, err := h.store.Import(ctx, fam, id)
	if err != nil {
		return err
	}
	set := im.Settings
	label := func(name string) *string {
		v := strings.TrimSpace(c.FormValue(name))
		if v == "" {
			return nil
		}
		return models.Ptr(strings.Clone(v))
	}
	set.DateColLabel, set.AmountColLabel, set.NameColLabel = label("date_col_label"), label("amount_col_label"), label("name_col_label")
	set.CategoryColLabel, set.TagsColLabel, set.NotesColLabel = label("category_col_label"), label("tags_col_label"), label("notes_col_label")
	set.ExternalIDColLabel = label("external_id_col_label")
	set.DebitColLabel, set.CreditColLabel = label("debit_col_label"), label("credit_col_label")
	set.Encoding = strings.Clone(c.FormValue("encoding"))
	if (set.DebitColLabel == nil) != (set.CreditColLabel == nil) {
		im.Settings = set
		return h.importPage(c, fiber.StatusUnprocessableEntity, im, "Choose both the money out and the money in columns, or neither.")
	}
	for name, dst := range map[string]*string{"col_sep": &set.ColSep, "date_format": &set.DateFormat,
		"number_format": &set.NumberFormat, "signage_convention": &set.SignageConvention} {
		if v := c.FormValue(name); v != "" {
			*dst = strings.Clone(v)
		}
	}
	if problems := set.Check(); len(problems) > 0 {
		im.Settings = set
		return h.importPage(c, fiber.StatusUnprocessableEntity, im, strings.Join(problems, "; ")+".")
	}
	read := models.FileRows([]byte(im.RawFile), im.Type, set)
	_, err = read(func(importfile.Row) error { return nil })
	var bad *importfile.Error
	if errors.As(err, &bad) { // another encoding may not read the file
		im.Settings = set
		return h.importPage(c, fiber.StatusUnprocessableEntity, im, "The file cannot be read that way: "+strings.Join(bad.Problems, "; ")+".")
	} else if err != nil {
		return err
	}
	im.Settings = set
	var inv *models.InvalidError
	if err := h.store.ReconfigureImportFrom(ctx, im, read); errors.As(err, &inv) {
		return h.importPage(c, fiber.StatusUnprocessableEntity, im, strings.Join(inv.Problems, " ")+".")
	} else if err != nil {
		return err
	}
	flash := "Settings applied."
	if name := strings.TrimSpace(c.FormValue("mapping_name")); name != "" {
		if len([]rune(name)) > maxName || strings.ContainsRune(name, 0) {
			return h.importPage(c, fiber.StatusUnprocessableEntity, im, "A mapping name is 1 to 255 characters.")
		}
		if err := h.store.SaveImportMapping(ctx, fam, strings.Clone(name), set); err != nil {
			return err
		}
		flash = "Settings applied and saved as " + name + "."
	}
	return h.site.Redirect(c, "/imports/"+im.ID.String(), flash)
}

func (h *Handler) publishImportScreen(c *fiber.Ctx) error {
	skip := c.FormValue("skip_invalid") == "1"
	return h.startImportJob(c, func(ctx context.Context, familyID, id uuid.UUID) (*models.Import, error) {
		return h.store.PublishImportSkipping(ctx, familyID, id, skip)
	}, "Importing…")
}

func (h *Handler) revertImportScreen(c *fiber.Ctx) error {
	return h.startImportJob(c, h.store.StartRevert, "Reverting: the import's transactions are being removed.")
}

// startImportJob is the publish and revert forms: start moves the import
// to its next state (a refusal is the flash), its job is queued, and the
// import's page says started.
func (h *Handler) startImportJob(c *fiber.Ctx, start func(ctx context.Context, familyID, id uuid.UUID) (*models.Import, error), started string) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	im, err := start(c.UserContext(), web.SessionOf(c).User.FamilyID, id)
	var inv *models.InvalidError
	if errors.As(err, &inv) {
		return h.site.Redirect(c, "/imports/"+id.String(), strings.Join(inv.Problems, " ")+".")
	} else if err != nil {
		return err
	}
	if err := h.enqueueImport(c, im); err != nil {
		return err
	}
	return h.site.Redirect(c, "/imports/"+id.String(), started)
}

func (h *Handler) deleteImportScreen(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	if err := h.store.DeleteImport(c.UserContext(), web.SessionOf(c).User.FamilyID, id); errors.Is(err, models.ErrNotFound) {
		return h.site.Redirect(c, "/imports/"+id.String(), "Only a pending import can be deleted; revert it first.")
	} else if err != nil {
		return err
	}
	return h.site.Redirect(c, "/imports", "The import was deleted.")
}

func (h *Handler) enqueueImport(c *fiber.Ctx, im *models.Import) error {
	task, err := jobs.ImportTask(im)
	if err != nil {
		return err
	}
	return jobs.EnqueueImport(c.UserContext(), h.queue, task)
}

// correctImportRow sets a bad row's date, amount and name to what the
// person typed and reads it again; the list of bad rows says how it went.
func (h *Handler) correctImportRow(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	rowID, err := httperr.ParamID(c, "row_id")
	if err != nil {
		return err
	}
	back := "/imports/" + id.String() + "?rows=invalid"
	// What was typed is made storable first: valid UTF-8 without control
	// characters, which PostgreSQL would refuse with an error page.
	field := func(name string) string { return strings.TrimSpace(web.CleanText(c.FormValue(name), 255)) }
	line, err := h.store.CorrectImportLine(c.UserContext(), web.SessionOf(c).User.FamilyID, id, rowID,
		field("raw_date"), field("raw_amount"), field("name"))
	var inv *models.InvalidError
	if errors.As(err, &inv) {
		return h.site.Redirect(c, back, strings.Join(inv.Problems, " ")+".")
	} else if err != nil {
		return err
	}
	if line.Status == models.LineInvalid {
		return h.site.Redirect(c, back, "Line "+strconv.Itoa(line.Line)+" still cannot be imported: "+
			strings.ReplaceAll(line.Problems, "\n", "; ")+".")
	}
	return h.site.Redirect(c, back, "Line "+strconv.Itoa(line.Line)+" corrected; it will be imported.")
}

// uploaded reads the form's file, at most importfile.MaxFileBytes of it,
// and its name as text of at most 255 characters. problem says what the
// person must change (missing: no file was chosen), err what went wrong
// on the server.
func uploaded(c *fiber.Ctx, missing string) (data []byte, name, problem string, err error) {
	fh, err := c.FormFile("file")
	if err != nil {
		return nil, "", missing, nil
	}
	if fh.Size > importfile.MaxFileBytes {
		return nil, "", fmt.Sprintf("The file is larger than %d MiB.", importfile.MaxFileBytes>>20), nil
	}
	f, err := fh.Open()
	if err != nil {
		return nil, "", "", err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, importfile.MaxFileBytes+1))
	name = strings.ToValidUTF8(fh.Filename, "")
	if r := []rune(name); len(r) > 255 {
		name = string(r[:255])
	}
	return data, name, "", err
}

package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/api/httperr"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/importfile"
	"coffer/models/money"
)

// The file imports, with the reference app's parameters and answers
// (api/v1/imports: {data: …}, and {data: […], meta: …} for the list),
// plus our OfxImport and QifImport types, preflight, rows, publish and
// revert.

type importConfigJSON struct {
	DateColLabel       *string `json:"date_col_label"`
	AmountColLabel     *string `json:"amount_col_label"`
	NameColLabel       *string `json:"name_col_label"`
	CategoryColLabel   *string `json:"category_col_label"`
	TagsColLabel       *string `json:"tags_col_label"`
	NotesColLabel      *string `json:"notes_col_label"`
	ExternalIDColLabel *string `json:"external_id_col_label"`
	DebitColLabel      *string `json:"debit_col_label"`
	CreditColLabel     *string `json:"credit_col_label"`
	AccountColLabel    *string `json:"account_col_label"`
	Encoding           string  `json:"encoding"` // "" reads the file in the encoding its bytes show
	DateFormat         string  `json:"date_format"`
	NumberFormat       string  `json:"number_format"`
	SignageConvention  string  `json:"signage_convention"`
	ColSep             string  `json:"col_sep"`
}

type importStatsJSON struct {
	RowsCount          int `json:"rows_count"`
	ValidRowsCount     int `json:"valid_rows_count"`
	InvalidRowsCount   int `json:"invalid_rows_count"`
	ProcessedRowsCount int `json:"processed_rows_count"`
	ImportedRowsCount  int `json:"imported_rows_count"`
	DuplicateRowsCount int `json:"duplicate_rows_count"`
	Progress           int `json:"progress"` // percent of the valid rows decided
}

type importJSON struct {
	ID            string           `json:"id"`
	Type          string           `json:"type"`
	Status        string           `json:"status"`
	CreatedAt     string           `json:"created_at"`
	UpdatedAt     string           `json:"updated_at"`
	AccountID     string           `json:"account_id"`
	Error         *string          `json:"error,omitempty"`
	Filename      *string          `json:"filename"`
	PublishedAt   *string          `json:"published_at"`
	CompletedAt   *string          `json:"completed_at"`
	RowsCount     *int             `json:"rows_count,omitempty"` // list items, as the reference's index
	Configuration importConfigJSON `json:"configuration"`
	Stats         importStatsJSON  `json:"stats"`
}

func config(s importfile.Settings, account *string) importConfigJSON {
	return importConfigJSON{DateColLabel: s.DateColLabel, AmountColLabel: s.AmountColLabel, NameColLabel: s.NameColLabel,
		CategoryColLabel: s.CategoryColLabel, TagsColLabel: s.TagsColLabel, NotesColLabel: s.NotesColLabel,
		ExternalIDColLabel: s.ExternalIDColLabel, DebitColLabel: s.DebitColLabel, CreditColLabel: s.CreditColLabel,
		Encoding: s.Encoding, AccountColLabel: account, DateFormat: s.DateFormat,
		NumberFormat: s.NumberFormat, SignageConvention: s.SignageConvention, ColSep: s.ColSep}
}

func renderImport(im *models.Import) importJSON {
	return importJSON{ID: im.ID.String(), Type: im.Type, Status: im.Status, CreatedAt: timestamp(im.CreatedAt),
		UpdatedAt: timestamp(im.UpdatedAt), AccountID: im.AccountID.String(), Error: im.Error, Filename: im.Filename,
		PublishedAt: optTimestamp(im.PublishedAt), CompletedAt: optTimestamp(im.CompletedAt),
		Configuration: config(im.Settings, im.AccountColLabel),
		Stats: importStatsJSON{RowsCount: im.RowsCount, ValidRowsCount: im.ValidRows(), InvalidRowsCount: im.InvalidRowsCount,
			ProcessedRowsCount: im.ProcessedRowsCount, ImportedRowsCount: im.ImportedRowsCount,
			DuplicateRowsCount: im.DuplicateRowsCount, Progress: im.Progress()}}
}

func renderImportItem(im *models.Import) importJSON {
	out := renderImport(im)
	out.RowsCount = &im.RowsCount
	return out
}

type importRowJSON struct {
	Position      int      `json:"position"`
	Line          int      `json:"line"` // of the file, from 1; 0 for OFX and QIF
	Date          *string  `json:"date"`
	Amount        *string  `json:"amount"` // the ledger's sign: positive is money out
	RawDate       string   `json:"raw_date"`
	RawAmount     string   `json:"raw_amount"`
	Name          string   `json:"name"`
	Category      string   `json:"category"`
	Tags          string   `json:"tags"`
	Notes         string   `json:"notes"`
	ExternalID    string   `json:"external_id"`
	Status        string   `json:"status"`
	Errors        []string `json:"errors"`
	TransactionID *string  `json:"transaction_id"`
	// DuplicateOf is, for a pending row of an import not yet published,
	// the transaction of the account it will be skipped as.
	DuplicateOf *duplicateOfJSON `json:"duplicate_of"`
}

type duplicateOfJSON struct {
	ID     string `json:"id"`
	Date   string `json:"date"`
	Amount string `json:"amount"`
	Name   string `json:"name"`
}

func renderRow(pos, line int, date *civil.Date, amount *money.Amount, raw importfile.Row, status string, problems []string, tx *uuid.UUID) importRowJSON {
	out := importRowJSON{Position: pos, Line: line, RawDate: raw.RawDate, RawAmount: raw.RawAmount, Name: raw.Name, Category: raw.Category,
		Tags: raw.Tags, Notes: raw.Notes, ExternalID: raw.ExternalID, Status: status, Errors: problems, TransactionID: optID(tx)}
	if date != nil {
		d := string(*date)
		out.Date = &d
	}
	if amount != nil {
		a := amount.String()
		out.Amount = &a
	}
	if out.Errors == nil {
		out.Errors = []string{}
	}
	return out
}

func renderImportLine(l *models.ImportLine) importRowJSON {
	var problems []string
	if l.Problems != "" {
		problems = strings.Split(l.Problems, "\n")
	}
	return renderRow(l.Position, l.Line, l.Date, l.Amount, importfile.Row{RawDate: l.RawDate, RawAmount: l.RawAmount, Name: l.Name,
		Category: l.Category, Tags: l.Tags, Notes: l.Notes, ExternalID: l.ExternalID}, l.Status, problems, l.TransactionID)
}

type dataJSON[T any] struct {
	Data T `json:"data"`
}

type dataListJSON[T any] struct {
	Data []T      `json:"data"`
	Meta pageMeta `json:"meta"`
}

// importParams are the parameters of POST /imports and /imports/preflight:
// a multipart or URL-encoded form (the file as the part "file"), or a JSON
// object (the file as raw_file_content).
type importParams struct {
	values   map[string]string
	file     []byte
	filename *string
	publish  bool
	skip     bool // skip_invalid: publish the valid rows of a file with bad ones
	problems []string
}

var importParamNames = []string{"type", "account_id", "raw_file_content", "date_col_label", "amount_col_label", "name_col_label",
	"category_col_label", "tags_col_label", "notes_col_label", "external_id_col_label", "account_col_label", "date_format",
	"number_format", "signage_convention", "col_sep", "debit_col_label", "credit_col_label", "encoding"}

// fileTooLarge is the answer to a file over the limit.
func fileTooLarge() error {
	return httperr.New(fiber.StatusRequestEntityTooLarge, "payload_too_large",
		fmt.Sprintf("The file is larger than %d MiB", importfile.MaxFileBytes>>20))
}

func readImportParams(c *fiber.Ctx) (*importParams, error) {
	p := &importParams{values: map[string]string{}}
	if strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), fiber.MIMEApplicationJSON) {
		body := c.Body()
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil || top == nil {
			return nil, httperr.BadRequest("The request body must be a JSON object")
		}
		for _, name := range append(importParamNames, "publish", "skip_invalid") {
			raw, ok := top[name]
			if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
				continue
			}
			flag := name == "publish" || name == "skip_invalid"
			if flag && bytes.Equal(bytes.TrimSpace(raw), []byte("true")) {
				p.values[name] = "true"
				continue
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				if flag && bytes.Equal(bytes.TrimSpace(raw), []byte("false")) {
					continue
				}
				p.problems = append(p.problems, name+" must be a string")
				continue
			}
			p.values[name] = s
		}
		p.publish, p.skip = p.values["publish"] == "true", p.values["skip_invalid"] == "true"
		delete(p.values, "publish")
		delete(p.values, "skip_invalid")
		if s, ok := p.values["raw_file_content"]; ok {
			p.file = []byte(s)
		}
	} else {
		for _, name := range importParamNames {
			if v := c.FormValue(name); v != "" {
				p.values[name] = strings.Clone(v)
			}
		}
		p.publish, p.skip = c.FormValue("publish") == "true", c.FormValue("skip_invalid") == "true"
		fh, err := c.FormFile("file")
		switch {
		case err == nil:
			if fh.Size > importfile.MaxFileBytes {
				return nil, fileTooLarge()
			}
			f, err := fh.Open()
			if err != nil {
				return nil, fmt.Errorf("rest: open upload: %w", err)
			}
			defer f.Close()
			if p.file, err = io.ReadAll(io.LimitReader(f, importfile.MaxFileBytes+1)); err != nil {
				return nil, fmt.Errorf("rest: read upload: %w", err)
			}
			name := clipName(fh.Filename)
			p.filename = &name
		case p.values["raw_file_content"] != "":
			p.file = []byte(p.values["raw_file_content"])
		}
	}
	delete(p.values, "raw_file_content")
	if len(p.file) > importfile.MaxFileBytes {
		return nil, fileTooLarge()
	}
	for k, v := range p.values {
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			p.problems = append(p.problems, k+" must be text")
		}
	}
	return p, nil
}

// clipName keeps a file name displayable: its base, valid UTF-8, at most
// 255 characters.
func clipName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "")
	if r := []rune(name); len(r) > 255 {
		name = string(r[:255])
	}
	return name
}

// settings reads the import type and settings, with the reference app's
// defaults for what is not sent.
func (p *importParams) settings() (string, importfile.Settings) {
	s := importfile.DefaultSettings()
	typ := importfile.CSV
	if v, ok := p.values["type"]; ok {
		typ = v
		if typ != importfile.CSV && typ != importfile.OFX && typ != importfile.QIF && typ != importfile.Sure {
			p.problems = append(p.problems, "type must be one of: "+strings.Join(importfile.Types, ", ")+", "+importfile.Sure)
		}
	}
	label := func(name string, dst **string) {
		if v, ok := p.values[name]; ok {
			*dst = models.Ptr(strings.TrimSpace(v))
		}
	}
	label("date_col_label", &s.DateColLabel)
	label("amount_col_label", &s.AmountColLabel)
	label("name_col_label", &s.NameColLabel)
	label("category_col_label", &s.CategoryColLabel)
	label("tags_col_label", &s.TagsColLabel)
	label("notes_col_label", &s.NotesColLabel)
	label("external_id_col_label", &s.ExternalIDColLabel)
	label("debit_col_label", &s.DebitColLabel)
	label("credit_col_label", &s.CreditColLabel)
	for name, dst := range map[string]*string{"date_format": &s.DateFormat, "number_format": &s.NumberFormat,
		"signage_convention": &s.SignageConvention, "col_sep": &s.ColSep, "encoding": &s.Encoding} {
		if v, ok := p.values[name]; ok {
			*dst = v
		}
	}
	if s.ColSep == `\t` {
		s.ColSep = "\t"
	}
	if enc, ok := importfile.NormalizeEncoding(s.Encoding); ok {
		s.Encoding = enc
	}
	p.problems = append(p.problems, s.Check()...)
	return typ, s
}

// checked is the import's type and settings, once the request holds a
// file and no problem; every problem of the request is one 422.
func (p *importParams) checked() (string, importfile.Settings, error) {
	typ, s := p.settings()
	if p.file == nil {
		p.problems = append(p.problems, "file (a multipart upload) or raw_file_content is required")
	}
	if len(p.problems) > 0 {
		return "", s, httperr.Invalid(p.problems)
	}
	return typ, s, nil
}

func (h *Handler) createImport(c *fiber.Ctx) error {
	p, err := readImportParams(c)
	if err != nil {
		return err
	}
	if p.values["type"] == importfile.Sure {
		return h.restoreSure(c, p)
	}
	var accountID uuid.UUID
	if v, ok := p.values["account_id"]; !ok {
		p.problems = append(p.problems, "account_id is required")
	} else if accountID, err = uuid.Parse(v); err != nil {
		p.problems = append(p.problems, "account_id must be a UUID")
	}
	typ, s, err := p.checked()
	if err != nil {
		return err
	}
	// A first reading that keeps nothing: a file that cannot be read or
	// lacks a mapped column is a 422 before anything is written. The
	// store reads it again, a batch of rows at a time (CreateImportFrom).
	parsed, err := importfile.Each(p.file, typ, s, func(importfile.Row) error { return nil })
	if err != nil {
		return err
	}
	if len(parsed.Problems) > 0 {
		return httperr.Invalid(parsed.Problems)
	}
	key := KeyOf(c)
	im := &models.Import{FamilyID: key.FamilyID, AccountID: accountID, Type: typ, Filename: p.filename,
		RawFile: string(p.file), Settings: s}
	if v, ok := p.values["account_col_label"]; ok {
		im.AccountColLabel = &v
	}
	ctx := c.UserContext()
	// The rows go to the store as they are read, a batch at a time; a
	// file with problems (a mapped column it lacks) is a 422.
	read := func(each func(importfile.Row) error) (*importfile.File, error) {
		return importfile.Each(p.file, typ, s, each)
	}
	if err := h.store.CreateImportFrom(ctx, im, read); err != nil {
		return err
	}
	// As the reference app: publish=true starts an import that can start,
	// and leaves one with invalid rows pending for a person to look at,
	// unless skip_invalid=true says to import its valid rows without them.
	if p.publish && (im.Publishable() || (p.skip && im.PublishableSkipping())) {
		if im, err = h.publishImport(c, im.ID, p.skip); err != nil {
			return err
		}
	}
	return c.Status(fiber.StatusCreated).JSON(dataJSON[importJSON]{renderImport(im)})
}

// publishImport starts an import: the store moves it to importing, then
// the job is queued (after the commit, so the worker finds it).
func (h *Handler) publishImport(c *fiber.Ctx, id uuid.UUID, skipInvalid bool) (*models.Import, error) {
	im, err := h.store.PublishImportSkipping(c.UserContext(), KeyOf(c).FamilyID, id, skipInvalid)
	if err != nil {
		return nil, err
	}
	return im, h.enqueueImport(c, im)
}

func (h *Handler) enqueueImport(c *fiber.Ctx, im *models.Import) error {
	task, err := jobs.ImportTask(im)
	if err != nil {
		return err
	}
	// The status is committed first: `coffer dev` queues what is still
	// importing again at start (jobs.Requeue).
	return jobs.EnqueueImport(c.UserContext(), h.queue, task)
}

func importFilter(c *fiber.Ctx) (models.ImportFilter, error) {
	f := models.ImportFilter{Status: c.Query("status"), Type: c.Query("type")}
	var problems []string
	if f.Status != "" && !contains(models.ImportStatuses, f.Status) {
		problems = append(problems, "status must be one of: "+strings.Join(models.ImportStatuses, ", "))
	}
	if f.Type != "" && !contains(importfile.Types, f.Type) {
		problems = append(problems, "type must be one of: "+strings.Join(importfile.Types, ", "))
	}
	if len(problems) > 0 {
		return f, httperr.Invalid(problems)
	}
	return models.ImportFilter{Status: strings.Clone(f.Status), Type: strings.Clone(f.Type)}, nil
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

func (h *Handler) listImports(c *fiber.Ctx) error {
	f, err := importFilter(c)
	if err != nil {
		return err
	}
	page, err := parsePage(c)
	if err != nil {
		return err
	}
	ims, total, err := h.store.Imports(c.UserContext(), KeyOf(c).FamilyID, f, page)
	if err != nil {
		return err
	}
	return c.JSON(dataListJSON[importJSON]{Data: renderAll(ims, renderImportItem), Meta: metaOf(page, total)})
}

func (h *Handler) showImport(c *fiber.Ctx) error {
	im, err := byPathID(c, h.store.Import)
	if err != nil {
		return err
	}
	return c.JSON(dataJSON[importJSON]{renderImport(im)})
}

func (h *Handler) listImportRows(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	page, err := parsePage(c)
	if err != nil {
		return err
	}
	lines, total, err := h.store.ImportLines(c.UserContext(), KeyOf(c).FamilyID, id, page)
	if err != nil {
		return err
	}
	skips, err := h.store.ImportSkips(c.UserContext(), KeyOf(c).FamilyID, id)
	if err != nil {
		return err
	}
	out := renderAll(lines, renderImportLine)
	for i := range lines {
		if sk, ok := skips[lines[i].ID]; ok {
			t := sk.Transaction
			out[i].DuplicateOf = &duplicateOfJSON{ID: t.ID.String(), Date: string(t.Date), Amount: t.Amount.String(), Name: t.Name}
		}
	}
	return c.JSON(dataListJSON[importRowJSON]{Data: out, Meta: metaOf(page, total)})
}

func (h *Handler) publishImportNow(c *fiber.Ctx) error {
	id, err := httperr.PathID(c)
	if err != nil {
		return err
	}
	im, err := h.publishImport(c, id, c.Query("skip_invalid") == "true")
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(dataJSON[importJSON]{renderImport(im)})
}

func (h *Handler) revertImport(c *fiber.Ctx) error {
	im, err := byPathID(c, h.store.StartRevert)
	if err != nil {
		return err
	}
	if err := h.enqueueImport(c, im); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(dataJSON[importJSON]{renderImport(im)})
}

package rest

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/importfile"
	"coffer/models/money"
)

// POST /imports/preflight reads a file without storing it and answers in
// the reference app's shape (its Import::Preflight: valid, content,
// stats.rows_count, headers, required_headers, missing_required_headers,
// errors as {code, message}, warnings), with ours beside it: the rows'
// counts, the first rows as read, the encoding the file was read in.

type preflightContentJSON struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	ByteSize    int    `json:"byte_size"`
}

type preflightStatsJSON struct {
	RowsCount        int `json:"rows_count"`
	ValidRowsCount   int `json:"valid_rows_count"`
	InvalidRowsCount int `json:"invalid_rows_count"`
}

type preflightErrorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type preflightJSON struct {
	Type                   string               `json:"type"`
	Valid                  bool                 `json:"valid"`
	Content                preflightContentJSON `json:"content"`
	Stats                  preflightStatsJSON   `json:"stats"`
	Headers                []string             `json:"headers"`
	RequiredHeaders        []string             `json:"required_headers"`
	MissingRequiredHeaders []string             `json:"missing_required_headers"`
	Errors                 []preflightErrorJSON `json:"errors"`
	Warnings               []string             `json:"warnings"`
	Encoding               string               `json:"encoding"`           // the encoding the file was read in
	Problems               []string             `json:"problems"`           // of the file as a whole: a mapped column it lacks
	RowsCount              int                  `json:"rows_count"`         // stats.rows_count, as before
	ValidRowsCount         int                  `json:"valid_rows_count"`   // stats.valid_rows_count, as before
	InvalidRowsCount       int                  `json:"invalid_rows_count"` // stats.invalid_rows_count, as before
	Configuration          importConfigJSON     `json:"configuration"`
	SampleRows             []importRowJSON      `json:"sample_rows"`
	// DryRun is, for a SureImport, the records of each kind the file
	// holds (the reference's dry_run: accounts, transactions, …).
	DryRun map[string]int `json:"dry_run,omitempty"`
}

func (h *Handler) preflightImport(c *fiber.Ctx) error {
	p, err := readImportParams(c)
	if err != nil {
		return err
	}
	if p.values["type"] == importfile.Sure {
		return h.preflightSure(c, p)
	}
	// As the reference: an account named must be one of the family's.
	if v, ok := p.values["account_id"]; ok {
		id, err := uuid.Parse(v)
		if err != nil {
			return models.ErrNotFound
		}
		if _, err := h.store.Account(c.UserContext(), KeyOf(c).FamilyID, id); err != nil {
			return err
		}
	}
	typ, s, err := p.checked()
	if err != nil {
		return err
	}
	// Counted as read: only the sample rows are kept.
	var sample []importfile.Row
	rows, invalidRows := 0, 0
	parsed, err := importfile.Each(p.file, typ, s, func(r importfile.Row) error {
		rows++
		if len(r.Problems) > 0 {
			invalidRows++
		}
		if len(sample) < 10 {
			sample = append(sample, r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	out := preflightJSON{Type: typ, Headers: parsed.Headers, Problems: parsed.Problems, RowsCount: rows,
		InvalidRowsCount: invalidRows, Configuration: config(s, nil), SampleRows: []importRowJSON{},
		Errors: []preflightErrorJSON{}, Warnings: []string{}, MissingRequiredHeaders: []string{}, RequiredHeaders: []string{}}
	out.Encoding = s.Encoding
	if out.Encoding == "" {
		out.Encoding = importfile.DetectEncoding(p.file)
	}
	name := "import.csv"
	if p.filename != nil {
		name = *p.filename
	}
	out.Content = preflightContentJSON{Filename: name, ContentType: contentTypeOf(typ), ByteSize: len(p.file)}
	if out.Headers == nil {
		out.Headers = []string{}
	}
	if out.Problems == nil {
		out.Problems = []string{}
	}
	out.ValidRowsCount = out.RowsCount - out.InvalidRowsCount
	out.Stats = preflightStatsJSON{RowsCount: out.RowsCount, ValidRowsCount: out.ValidRowsCount, InvalidRowsCount: out.InvalidRowsCount}
	if typ == importfile.CSV {
		out.RequiredHeaders, out.MissingRequiredHeaders = requiredHeaders(s, parsed.Headers)
	}
	for _, pr := range parsed.Problems {
		out.Errors = append(out.Errors, preflightErrorJSON{Code: "validation_failed", Message: pr})
	}
	if len(out.MissingRequiredHeaders) > 0 {
		out.Errors = append(out.Errors, preflightErrorJSON{Code: "missing_required_headers",
			Message: "Missing required columns: " + strings.Join(out.MissingRequiredHeaders, ", ")})
	}
	if rows == 0 {
		out.Errors = append(out.Errors, preflightErrorJSON{Code: "no_data_rows", Message: "No data rows were found."})
	}
	if out.InvalidRowsCount > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d of %d rows cannot be imported (see sample_rows and the import's rows); "+
			"publish with skip_invalid=true to import the others.", out.InvalidRowsCount, out.RowsCount))
	}
	out.Valid = len(out.Errors) == 0
	for i := range sample {
		r := &sample[i]
		status := models.LinePending
		if len(r.Problems) > 0 {
			status = models.LineInvalid
		}
		out.SampleRows = append(out.SampleRows, renderRow(r.Position, r.Line, (*civil.Date)(r.Date), (*money.Amount)(r.Amount), *r, status, r.Problems, nil))
	}
	return c.JSON(dataJSON[preflightJSON]{out})
}

func contentTypeOf(typ string) string {
	switch typ {
	case importfile.OFX:
		return "application/x-ofx"
	case importfile.QIF:
		return "application/qif"
	}
	return "text/csv"
}

// requiredHeaders are the labels of the columns a CSV import needs (the
// date and the amount, or the debit and the credit), and those the file's
// header lacks, compared as the reference compares them (case, spaces,
// dashes and asterisks aside).
func requiredHeaders(s importfile.Settings, headers []string) (required, missing []string) {
	labels := []*string{s.DateColLabel, s.AmountColLabel}
	names := []string{"date", "amount"}
	if s.DebitColLabel != nil && s.CreditColLabel != nil {
		labels = []*string{s.DateColLabel, s.DebitColLabel, s.CreditColLabel}
		names = []string{"date", "debit", "credit"}
	}
	have := map[string]bool{}
	for _, h := range headers {
		have[normalizedHeader(h)] = true
	}
	required, missing = []string{}, []string{}
	for i, l := range labels {
		label := names[i]
		if l != nil && strings.TrimSpace(*l) != "" {
			label = strings.TrimSpace(*l)
		}
		required = append(required, label)
		if !have[normalizedHeader(label)] {
			missing = append(missing, label)
		}
	}
	return required, missing
}

func normalizedHeader(h string) string {
	h = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(h)), "*", "")
	return strings.Join(strings.FieldsFunc(h, func(r rune) bool { return r == ' ' || r == '-' || r == '_' || r == '\t' }), "_")
}

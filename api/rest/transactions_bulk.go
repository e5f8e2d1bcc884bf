package rest

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
	"coffer/jobs"
	"coffer/models"
)

// maxBulkCreate is the most transactions one bulk create may carry.
const maxBulkCreate = 1000

// bulkResultJSON is one item's outcome, at its index in the request.
type bulkResultJSON struct {
	Index       int              `json:"index"`
	Status      string           `json:"status"`
	Transaction *transactionJSON `json:"transaction"`
	Errors      []string         `json:"errors"`
}

type bulkResultsJSON struct {
	Results []bulkResultJSON `json:"results"`
}

// createTransactions is POST /transactions/bulk: each item is what POST
// /transactions takes inside "transaction", and gets the answer that
// would have had, in order, without one item's problems failing another.
// The items go through the ingestion pipeline as one batch.
func (h *Handler) createTransactions(c *fiber.Ctx) error {
	key := KeyOf(c)
	items, err := decodeBulk(c)
	if err != nil {
		return err
	}
	rows := make([]*models.NewTransaction, len(items))
	for i, obj := range items {
		if obj == nil {
			rows[i] = &models.NewTransaction{Row: &models.Transaction{}, Problems: []string{"transaction must be a JSON object"}}
			continue
		}
		f := &fields{raw: obj}
		rows[i] = newTransaction(parseTransaction(f, true), f.problems, key.Family.Currency)
	}
	if _, err := h.store.IngestTransactions(c.UserContext(), key.FamilyID, rows); err != nil {
		return err
	}
	if slices.ContainsFunc(rows, func(r *models.NewTransaction) bool { return r.Status == models.IngestCreated }) {
		// New rows may complete a recurring series, as after an import; one
		// detection waits per family, and the nightly sweep catches one
		// that could not be queued.
		if err := jobs.QueueRecurringDetect(c.UserContext(), h.queue, key.FamilyID); err != nil {
			h.log.Warn("recurring detection not queued", "family_id", key.FamilyID, "error", err)
		}
	}
	out := bulkResultsJSON{Results: make([]bulkResultJSON, len(rows))}
	for i, r := range rows {
		res := bulkResultJSON{Index: i, Status: string(r.Status), Errors: []string{}}
		if r.Status == models.IngestInvalid {
			res.Errors = r.Problems
		} else {
			t := renderTransaction(r.Row)
			res.Transaction = &t
		}
		out.Results[i] = res
	}
	return c.Status(fiber.StatusOK).JSON(out)
}

// decodeBulk reads {"transactions": [...]} into one member map per item
// (nil for an item that is not an object): a body of another shape is a
// 400, an empty or oversized list a 422.
func decodeBulk(c *fiber.Ctx) ([]map[string]json.RawMessage, error) {
	body := c.Body()
	if !utf8.Valid(body) {
		return nil, httperr.BadRequest("The request body must be valid UTF-8")
	}
	items, ok := bulkItems(body)
	if ok {
		return checkBulkSize(items)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, httperr.BadRequest("The request body must be a JSON object")
	}
	if err := json.Unmarshal(top["transactions"], &items); err != nil {
		// An item that is not an object: read them one by one, so that
		// only that item is refused.
		var raw []json.RawMessage
		if err := json.Unmarshal(top["transactions"], &raw); err != nil {
			return nil, httperr.BadRequest("The request body must contain a \"transactions\" array")
		}
		items = make([]map[string]json.RawMessage, len(raw))
		for i, r := range raw {
			items[i], _ = objectMembers(r)
		}
	}
	return checkBulkSize(items)
}

// checkBulkSize refuses a missing, empty or oversized list of items.
func checkBulkSize(items []map[string]json.RawMessage) ([]map[string]json.RawMessage, error) {
	switch {
	case items == nil:
		return nil, httperr.BadRequest("The request body must contain a \"transactions\" array")
	case len(items) == 0:
		return nil, httperr.Invalid([]string{"transactions must contain at least one transaction"})
	case len(items) > maxBulkCreate:
		return nil, httperr.Invalid([]string{"transactions has too many items (maximum is " + strconv.Itoa(maxBulkCreate) + ")"})
	}
	return items, nil
}

// bulkItems reads the common body, an object whose "transactions" member
// is an array of objects, in one pass over it: a decode of the whole
// object and then of its member would read the 1,000 items twice. ok is
// false for any other body, which decodeBulk then reads again to say what
// is wrong with it.
func bulkItems(body []byte) (items []map[string]json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return nil, false
		}
		if key != "transactions" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil, false
			}
			continue
		}
		items = nil // of members named twice, the last counts, as in a map
		if dec.Decode(&items) != nil {
			return nil, false
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // something after the object
	}
	return items, items != nil
}

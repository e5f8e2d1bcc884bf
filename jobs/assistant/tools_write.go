package assistant

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

const maxName = 255

var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

var updateTransaction = Tool{
	Name:  "update_transaction",
	Write: true,
	Description: `Changes one transaction. Find its id with get_transactions first, and the ids of categories, merchants
and tags with get_categories, get_merchants and get_tags. Omit a field to leave it unchanged. Only do this when the
person asked for the change.`,
	Schema: object([]string{"id"}, map[string]any{
		"id":          str("Transaction id from get_transactions"),
		"name":        str("New name"),
		"amount":      map[string]any{"type": []string{"string", "number"}, "description": "New positive amount, a decimal such as 12.50"},
		"date":        str("New date, YYYY-MM-DD"),
		"nature":      map[string]any{"type": "string", "enum": []string{"expense", "income"}, "description": "Whether it is money out or money in"},
		"notes":       map[string]any{"type": []string{"string", "null"}, "description": "New notes; null clears them"},
		"category_id": map[string]any{"type": []string{"string", "null"}, "description": "Category id from get_categories; null clears it"},
		"merchant_id": map[string]any{"type": []string{"string", "null"}, "description": "Merchant id from get_merchants; null clears it"},
		"tag_ids":     strList("The full list of tag ids to set; an empty list clears the tags"),
	}),
	Run: func(ctx context.Context, s *models.Store, c Caller, raw json.RawMessage) (any, error) {
		p, err := planTransactionUpdate(ctx, s, c, raw)
		if err != nil {
			return nil, err
		}
		t, cols, tags, id := p.after, p.cols, p.tags, p.before.ID
		// The store reports the balance change to the one policy (see
		// jobs.Balances): the tool neither queues nor recalculates.
		if _, err := s.UpdateTransaction(ctx, t, cols, tags); err != nil {
			return nil, err
		}
		t, err = s.Transaction(ctx, c.FamilyID, id)
		if err != nil {
			return nil, err
		}
		return map[string]any{"success": true, "transaction": renderTransaction(t),
			"message": "Transaction updated."}, nil
	},
	Propose: func(ctx context.Context, s *models.Store, c Caller, raw json.RawMessage) (*Plan, error) {
		p, err := planTransactionUpdate(ctx, s, c, raw)
		if err != nil {
			return nil, err
		}
		return p.describe(ctx, s, c)
	},
}

// transactionUpdate is an update_transaction call checked against the
// ledger: the transaction as it is, as it would be, and what changes.
type transactionUpdate struct {
	before, after *models.Transaction
	cols          []string
	tags          *[]uuid.UUID
}

// planTransactionUpdate reads and checks update_transaction's arguments
// and changes nothing.
func planTransactionUpdate(ctx context.Context, s *models.Store, c Caller, raw json.RawMessage) (*transactionUpdate, error) {
	var present map[string]json.RawMessage
	var a struct {
		ID         string    `json:"id"`
		Name       *string   `json:"name"`
		Date       *string   `json:"date"`
		Nature     string    `json:"nature"`
		Notes      *string   `json:"notes"`
		CategoryID *string   `json:"category_id"`
		MerchantID *string   `json:"merchant_id"`
		TagIDs     *[]string `json:"tag_ids"`
	}
	if err := decode(raw, &present); err != nil {
		return nil, err
	}
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	id, err := parseID("Transaction", a.ID)
	if err != nil {
		return nil, err
	}
	t, err := s.Transaction(ctx, c.FamilyID, id)
	if err != nil {
		return nil, refuse("not_found", "Transaction %q was not found; use an id from get_transactions.", truncate(a.ID, 64))
	}
	before := *t
	var cols []string
	if a.Name != nil {
		name := strings.TrimSpace(*a.Name)
		if name == "" || len(name) > maxName {
			return nil, refuse("invalid_name", "name must be 1 to %d characters.", maxName)
		}
		t.Name, cols = name, append(cols, "name")
	}
	if a.Date != nil {
		d, err := civil.ParseDate(*a.Date)
		if err != nil {
			return nil, refuse("invalid_date", "date must be a real day in YYYY-MM-DD format.")
		}
		t.Date, cols = d, append(cols, "date")
	}
	if a.Nature != "" && a.Nature != "expense" && a.Nature != "income" {
		return nil, refuse("invalid_nature", "nature must be expense or income.")
	}
	size := t.Amount.Abs()
	if amt, ok := present["amount"]; ok {
		v, err := money.ParseAmountJSON(amt)
		if err != nil || v <= 0 {
			return nil, refuse("invalid_amount", "amount must be a positive decimal with at most 4 places.")
		}
		size = v
	}
	if _, ok := present["amount"]; ok || a.Nature != "" {
		nature := a.Nature
		if nature == "" {
			nature = map[bool]string{true: "income", false: "expense"}[t.Amount < 0]
		}
		t.Amount, cols = size, append(cols, "amount")
		if nature == "income" {
			t.Amount = -size
		}
	}
	if _, ok := present["notes"]; ok {
		t.Notes, cols = a.Notes, append(cols, "notes")
	}
	for _, ref := range []struct {
		key, what string
		in        *string
		out       **uuid.UUID
	}{{"category_id", "Category", a.CategoryID, &t.CategoryID}, {"merchant_id", "Merchant", a.MerchantID, &t.MerchantID}} {
		if _, ok := present[ref.key]; !ok {
			continue
		}
		*ref.out, cols = nil, append(cols, ref.key)
		if ref.in != nil && *ref.in != "" {
			rid, err := parseID(ref.what, *ref.in)
			if err != nil {
				return nil, err
			}
			*ref.out = &rid
		}
	}
	var tags *[]uuid.UUID
	if a.TagIDs != nil {
		ids := []uuid.UUID{}
		for _, tid := range *a.TagIDs {
			v, err := parseID("Tag", tid)
			if err != nil {
				return nil, err
			}
			ids = append(ids, v)
		}
		tags = &ids
	}
	if len(cols) == 0 && tags == nil {
		return nil, refuse("no_changes", "Provide at least one field to change.")
	}
	return &transactionUpdate{before: &before, after: t, cols: cols, tags: tags}, nil
}

var createCategory = Tool{
	Name:  "create_category",
	Write: true,
	Description: `Creates a category. Give parent_id (a top-level category from get_categories) to make a subcategory.
Names are unique in the household. Only do this when the person asked for it.`,
	Schema: object([]string{"name"}, map[string]any{
		"name":           str("Category name"),
		"color":          str("Hex color such as #e99537"),
		"classification": map[string]any{"type": "string", "enum": []string{"expense", "income"}, "description": "Defaults to expense"},
		"parent_id":      str("Id of a top-level category to nest under"),
	}),
	Run: func(ctx context.Context, s *models.Store, c Caller, raw json.RawMessage) (any, error) {
		cat, err := planCategory(raw, c)
		if err != nil {
			return nil, err
		}
		if err := s.CreateCategory(ctx, cat); err != nil {
			return nil, err
		}
		return map[string]any{"success": true, "category": map[string]any{"id": cat.ID.String(), "name": cat.Name,
			"parent_id": cat.ParentID, "classification": cat.Classification}, "message": "Category created."}, nil
	},
	Propose: func(ctx context.Context, s *models.Store, c Caller, raw json.RawMessage) (*Plan, error) {
		cat, err := planCategory(raw, c)
		if err != nil {
			return nil, err
		}
		p := &Plan{Summary: fmt.Sprintf("Create the category %q", cat.Name)}
		p.add("name", nil, &cat.Name)
		p.add("classification", nil, &cat.Classification)
		p.add("color", nil, &cat.Color)
		if cat.ParentID != nil {
			parent, err := s.Category(ctx, c.FamilyID, *cat.ParentID)
			if err != nil {
				return nil, refuse("not_found", "Parent category %q was not found; use an id from get_categories.", cat.ParentID.String())
			}
			p.add("parent", nil, &parent.Name)
		}
		return p, nil
	},
}

// planCategory reads and checks create_category's arguments.
func planCategory(raw json.RawMessage, c Caller) (*models.Category, error) {
	var a struct {
		Name           string `json:"name"`
		Color          string `json:"color"`
		Classification string `json:"classification"`
		ParentID       string `json:"parent_id"`
	}
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	cat := &models.Category{FamilyID: c.FamilyID, Name: strings.TrimSpace(a.Name), Color: "#6172f3", Icon: "shapes",
		Classification: cmp.Or(a.Classification, "expense")}
	if cat.Name == "" || len(cat.Name) > maxName {
		return nil, refuse("name_required", "Give the category a name of 1 to %d characters.", maxName)
	}
	if a.Color != "" {
		if !hexColor.MatchString(a.Color) {
			return nil, refuse("invalid_color", "color must look like #e99537.")
		}
		cat.Color = a.Color
	}
	if cat.Classification != "expense" && cat.Classification != "income" {
		return nil, refuse("invalid_classification", "classification must be expense or income.")
	}
	if a.ParentID != "" {
		pid, err := parseID("Parent category", a.ParentID)
		if err != nil {
			return nil, err
		}
		cat.ParentID = &pid
	}
	return cat, nil
}

var createTag = Tool{
	Name:        "create_tag",
	Write:       true,
	Description: "Creates a tag. Names are unique in the household. Only do this when the person asked for it.",
	Schema: object([]string{"name"}, map[string]any{
		"name":  str("Tag name"),
		"color": str("Hex color such as #e99537"),
	}),
	Run: func(ctx context.Context, s *models.Store, c Caller, raw json.RawMessage) (any, error) {
		t, err := planTag(raw, c)
		if err != nil {
			return nil, err
		}
		if err := s.CreateTag(ctx, t); err != nil {
			return nil, err
		}
		return map[string]any{"success": true, "tag": map[string]any{"id": t.ID.String(), "name": t.Name, "color": t.Color},
			"message": "Tag created."}, nil
	},
	Propose: func(ctx context.Context, s *models.Store, c Caller, raw json.RawMessage) (*Plan, error) {
		t, err := planTag(raw, c)
		if err != nil {
			return nil, err
		}
		p := &Plan{Summary: fmt.Sprintf("Create the tag %q", t.Name)}
		p.add("name", nil, &t.Name)
		p.add("color", nil, &t.Color)
		return p, nil
	},
}

// planTag reads and checks create_tag's arguments.
func planTag(raw json.RawMessage, c Caller) (*models.Tag, error) {
	var a struct {
		Name  string `json:"name"`
		Color string `json:"color"`
	}
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	t := &models.Tag{FamilyID: c.FamilyID, Name: strings.TrimSpace(a.Name), Color: "#e99537"}
	if t.Name == "" || len(t.Name) > maxName {
		return nil, refuse("name_required", "Give the tag a name of 1 to %d characters.", maxName)
	}
	if a.Color != "" {
		if !hexColor.MatchString(a.Color) {
			return nil, refuse("invalid_color", "color must look like #e99537.")
		}
		t.Color = a.Color
	}
	return t, nil
}

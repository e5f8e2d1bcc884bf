package models_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
)

var uuidText = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// canonicalLines is an export's all.ndjson with every id replaced by its
// order of first appearance and the times a restore sets anew dropped, so
// that two exports of the same records read the same.
func canonicalLines(t *testing.T, zipped []byte) []string {
	t.Helper()
	files, _ := unzipExport(t, zipped)
	ids := map[string]string{}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(files["all.ndjson"]), "\n") {
		var m map[string]any
		must(t, json.Unmarshal([]byte(line), &m))
		if data, ok := m["data"].(map[string]any); ok {
			dropTimes(data)
		}
		b, err := json.Marshal(m)
		must(t, err)
		out = append(out, uuidText.ReplaceAllStringFunc(string(b), func(id string) string {
			if ids[id] == "" {
				ids[id] = "id" + string(rune('A'+len(ids)%26)) + strings.Repeat("'", len(ids)/26)
			}
			return ids[id]
		}))
	}
	return out
}

func dropTimes(m map[string]any) {
	for k, v := range m {
		if k == "created_at" || k == "updated_at" {
			delete(m, k)
		}
		switch v := v.(type) {
		case map[string]any:
			dropTimes(v)
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					dropTimes(em)
				}
			}
		}
	}
}

// The round trip of issue 28: a family exported, restored into an empty
// family, and exported again gives the same records, line for line.
func TestExportRestoreRoundTrip(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	b := newExportBook(t, s, "alpha")
	var first bytes.Buffer
	must(t, s.WriteFamilyData(ctx, b.f.Family.ID, &first))

	empty := &models.Family{Name: "restored", Currency: "USD"}
	must(t, s.CreateFamily(ctx, empty))
	u := &models.User{FamilyID: empty.ID, Email: "restorer@example.test", Role: models.RoleAdmin}
	must(t, s.CreateUser(ctx, u))
	if _, err := s.RestoreSure(ctx, empty.ID, first.Bytes()); err != nil {
		t.Fatal(err)
	}
	// The balances are derived after the restore commits (its job, run
	// here), as every write's are.
	accounts, _, err := s.Accounts(ctx, empty.ID, models.Page{Number: 1, Size: 100})
	must(t, err)
	for _, a := range accounts {
		must(t, s.RecalculateBalance(ctx, empty.ID, a.ID))
	}
	var second bytes.Buffer
	must(t, s.WriteFamilyData(ctx, empty.ID, &second))

	a, c := canonicalLines(t, first.Bytes()), canonicalLines(t, second.Bytes())
	if !slices.Equal(a, c) {
		for i := range max(len(a), len(c)) {
			var x, y string
			if i < len(a) {
				x = a[i]
			}
			if i < len(c) {
				y = c[i]
			}
			if x != y {
				t.Errorf("line %d:\n  first:  %s\n  second: %s", i+1, x, y)
			}
		}
	}
}

package apitest

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
)

// DoKeyed is e.do with an Idempotency-Key header and a body sent as is.
func (e *Env) DoKeyed(method, path, key, idem, body string) Response {
	e.T.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Idempotency-Key", idem)
	resp, err := e.App.Test(req, -1)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	e.Validate(req, r)
	return r
}

// ForgetKeys removes the idempotency records of the test's families when
// it ends (they would otherwise stay 24 hours).
func (e *Env) ForgetKeys(t *testing.T) {
	t.Cleanup(func() {
		ctx := context.Background()
		for _, f := range []*modelstest.FamilyFixture{e.Alpha, e.Beta} {
			keys, _ := e.RDB.Keys(ctx, "coffer:idempotency:"+f.Family.ID.String()+":*").Result()
			if len(keys) > 0 {
				e.RDB.Del(ctx, keys...)
			}
		}
	})
}

func (e *Env) Count(t *testing.T, f *modelstest.FamilyFixture) int {
	t.Helper()
	_, total, err := e.Store.Transactions(t.Context(), f.Family.ID, models.TransactionFilter{}, models.Page{Number: 1, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

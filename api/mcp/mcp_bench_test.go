package mcp_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// BenchmarkMCPToolCall is one tools/call of get_transactions (a page of
// 25 of 100) on /mcp with an API key, through the app as a request:
// authentication (cached), the SDK's stateless session, the queries.
func BenchmarkMCPToolCall(b *testing.B) {
	e := apitest.BenchEnv(b)
	for i := range 100 {
		tx := models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Date: civil.Date(fmt.Sprintf("2026-10-%02d", i%28+1)),
			Amount: money.Amount(i*10_000 + 1), Currency: "USD", Name: fmt.Sprintf("Purchase %d", i)}
		if _, _, err := e.Store.CreateTransaction(b.Context(), &tx, nil); err != nil {
			b.Fatal(err)
		}
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_transactions","arguments":{"page_size":25}}}`
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Api-Key", e.Alpha.Key)
		resp, err := e.App.Test(req, -1)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(out), `total_results\":100`) {
			b.Fatalf("%d %s", resp.StatusCode, out)
		}
	}
}

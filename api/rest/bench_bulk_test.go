package rest_test

import (
	"coffer/api/apitest"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkBulkCreateTransactions posts batches of 1,000 new transactions
// (each with an external id, as an importing script sends them) and
// reports rows per second through the whole request path.
func BenchmarkBulkCreateTransactions(b *testing.B) {
	e := apitest.BenchEnv(b)
	acct := e.Alpha.Account.ID.String()
	const size = 1000
	e.Bench(b, "POST", "/api/v1/transactions/bulk", e.Alpha.Key, func(i int) string {
		var sb strings.Builder
		sb.WriteString(`{"transactions":[`)
		for k := range size {
			if k > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"account_id":%q,"date":"2024-01-15","amount":"12.50","name":"Coffee %d","nature":"expense","external_id":"bulk-%d-%d"}`, acct, k, i, k)
		}
		sb.WriteString(`]}`)
		return sb.String()
	}, 200)
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "rows/s")
}

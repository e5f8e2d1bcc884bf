package rest_test

import (
	"fmt"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
)

// BenchmarkBulkCreateTransactions posts batches of 1,000 new transactions
// (each with an external id, as an importing script sends them) and
// reports rows per second through the whole request path.
func BenchmarkBulkCreateTransactions(b *testing.B) {
	benchBulk(b, apitest.BenchEnv(b))
}

// BenchmarkBulkCreateWebhookEndpoint is the same bulk create without and
// with a webhook endpoint subscribed to transaction.created (and a person
// asking for email about large transactions): the two stay within 10%,
// since deliveries and emails are decided by the worker's sweep, never in
// the request (issue 29).
func BenchmarkBulkCreateWebhookEndpoint(b *testing.B) {
	for _, subscribed := range []bool{false, true} {
		name := "without"
		if subscribed {
			name = "with"
		}
		b.Run(name, func(b *testing.B) {
			e := apitest.BenchEnv(b)
			if subscribed {
				ctx := b.Context()
				if _, err := e.Store.CreateWebhook(ctx, e.Alpha.Family.ID, nil, models.WebhookInput{URL: models.Ptr("https://hooks.example.com/coffer"),
					Events: []string{models.EventTransactionCreated}}, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"); err != nil {
					b.Fatal(err)
				}
				if err := e.Store.SaveNotificationPreference(ctx, &models.NotificationPreference{FamilyID: e.Alpha.Family.ID,
					UserID: e.Alpha.User.ID, BillDueDays: 3, LargeTransaction: true, LargeAmount: 100000}); err != nil {
					b.Fatal(err)
				}
			}
			benchBulk(b, e)
		})
	}
}

func benchBulk(b *testing.B, e *apitest.Env) {
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

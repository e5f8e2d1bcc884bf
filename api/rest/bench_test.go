package rest_test

import (
	"fmt"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

func BenchmarkCreateTransaction(b *testing.B) {
	e := apitest.BenchEnv(b)
	acct := e.Alpha.Account.ID.String()
	e.Bench(b, "POST", "/api/v1/transactions", e.Alpha.Key, func(i int) string {
		return fmt.Sprintf(`{"transaction":{"account_id":%q,"date":"2024-01-15","amount":"12.50","name":"Coffee","nature":"expense","external_id":"bench-%d"}}`, acct, i)
	}, 201)
}

func BenchmarkListTransactions(b *testing.B) {
	e := apitest.BenchEnv(b)
	ctx := b.Context()
	for i := 0; i < 500; i++ {
		t := &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Date: civil.Date(fmt.Sprintf("2024-01-%02d", i%28+1)),
			Amount: money.Amount(i * 1000), Currency: "USD", Name: fmt.Sprintf("item %d", i)}
		if _, _, err := e.Store.CreateTransaction(ctx, t, nil); err != nil {
			b.Fatal(err)
		}
	}
	e.Bench(b, "GET", "/api/v1/transactions?per_page=25&page=3", e.Alpha.Key, nil, 200)
}

func BenchmarkListChats(b *testing.B) {
	e := apitest.BenchEnv(b)
	ctx := b.Context()
	for i := 0; i < 1000; i++ {
		c := &models.Chat{FamilyID: e.Alpha.Family.ID, UserID: e.Alpha.User.ID, Title: fmt.Sprintf("chat %d", i)}
		if _, err := e.Store.CreateChat(ctx, c, "hello"); err != nil {
			b.Fatal(err)
		}
	}
	e.Bench(b, "GET", "/api/v1/chats?page=2", e.Alpha.Key, nil, 200)
}

// BenchmarkSignedInPage renders a screen for a signed-in user: session
// lookup, role check and template.
func BenchmarkSignedInPage(b *testing.B) {
	e := apitest.BenchEnv(b)
	u := e.Alpha.User
	sess := &models.Session{FamilyID: u.FamilyID, UserID: u.ID, Method: models.MethodPassword}
	token, err := e.Store.CreateSession(b.Context(), sess, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	e.BenchPage(b, "/admin/users", token)
}

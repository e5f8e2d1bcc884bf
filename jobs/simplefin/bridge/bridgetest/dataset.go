package bridgetest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// Account is a remote account of a dataset; Transactions hold the JSON
// fields the Bridge sends.
type Account struct {
	ID           string
	Name         string
	Currency     string
	Balance      string
	BalanceDate  int64
	Org          string
	Transactions []Txn
}

// Txn is one remote transaction. Amount is the literal decimal text.
type Txn struct {
	ID           string
	Posted       int64 // 0 while pending
	Amount       string
	Description  string
	Payee        string
	Memo         string
	TransactedAt int64
	Pending      bool
}

// Dataset is what /accounts answers from when set: each request gets
// the transactions of its window, as the protocol says.
type Dataset struct {
	Accounts []Account
	Errors   []string  // v1 messages; in the v2 shape, gen.* items
	Problems []Problem // partial errors, rendered in either shape
}

// Problem is a partial error of an answer: a v2 errlist item, or a v1
// errors string prefixed with the bank's name.
type Problem struct {
	Code      string // gen.*, con.* or act.*
	Message   string
	Bank      string // the Org of the bank login a con.* item is about
	AccountID string // the account an act.* item is about
}

// Generate builds a seeded dataset: n accounts (USD, CAD, EUR) holding
// perAccount transactions each over the days before now, about 5 % of
// them pending, with varied payees and memos.
func Generate(seed uint64, n, perAccount, days int, now time.Time) *Dataset {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	payees := []string{"Grocer", "Coffee Bar", "Fuel Stop", "Bookshop", "Pharmacy", "Cinema", "Rail", "Bakery", "Hardware", "Payroll"}
	currencies := []string{"USD", "CAD", "EUR"}
	d := &Dataset{}
	for a := 0; a < n; a++ {
		acct := Account{ID: fmt.Sprintf("ACT-%04d", a), Name: fmt.Sprintf("Account %d", a), Currency: currencies[a%3],
			Balance: fmt.Sprintf("%d.%02d", r.IntN(100000), r.IntN(100)), BalanceDate: now.Unix(), Org: "Bank " + strconv.Itoa(a%4)}
		for i := 0; i < perAccount; i++ {
			at := now.Add(-time.Duration(r.Int64N(int64(days) * int64(24*time.Hour))))
			t := Txn{ID: fmt.Sprintf("TRN-%04d-%06d", a, i), Posted: at.Unix(), TransactedAt: at.Unix() - 3600,
				Amount:      fmt.Sprintf("-%d.%02d", r.IntN(500), r.IntN(100)),
				Description: fmt.Sprintf("%s #%d", payees[i%len(payees)], r.IntN(1000)), Payee: payees[i%len(payees)]}
			if i%7 == 0 {
				t.Memo = "memo " + strconv.Itoa(i)
			}
			if r.IntN(100) < 5 {
				t.Posted, t.Pending = 0, true
			}
			acct.Transactions = append(acct.Transactions, t)
		}
		d.Accounts = append(d.Accounts, acct)
	}
	return d
}

// Count is the number of transactions in the dataset.
func (d *Dataset) Count() int {
	n := 0
	for _, a := range d.Accounts {
		n += len(a.Transactions)
	}
	return n
}

package simplefintest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
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
	Errors   []string
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

// render answers one /accounts query from the dataset: start inclusive,
// end exclusive on posted (transacted_at for pending rows); pending rows
// only when the pending key is present, whatever its value.
func (d *Dataset) render(q url.Values) string {
	start, _ := strconv.ParseInt(q.Get("start-date"), 10, 64)
	end, err := strconv.ParseInt(q.Get("end-date"), 10, 64)
	if err != nil {
		end = 1 << 62
	}
	_, pending := q["pending"]
	type txJSON struct {
		ID           string `json:"id"`
		Posted       int64  `json:"posted"`
		Amount       string `json:"amount"`
		Description  string `json:"description"`
		Payee        string `json:"payee,omitempty"`
		Memo         string `json:"memo,omitempty"`
		TransactedAt int64  `json:"transacted_at,omitempty"`
		Pending      bool   `json:"pending,omitempty"`
	}
	type acctJSON struct {
		Org          map[string]string `json:"org"`
		ID           string            `json:"id"`
		Name         string            `json:"name"`
		Currency     string            `json:"currency"`
		Balance      string            `json:"balance"`
		BalanceDate  int64             `json:"balance-date"`
		Transactions []txJSON          `json:"transactions"`
	}
	out := struct {
		Errors   []string   `json:"errors"`
		Accounts []acctJSON `json:"accounts"`
	}{Errors: d.Errors, Accounts: []acctJSON{}}
	if out.Errors == nil {
		out.Errors = []string{}
	}
	for _, a := range d.Accounts {
		aj := acctJSON{Org: map[string]string{"name": a.Org, "sfin-url": "https://bridge.example/simplefin"}, ID: a.ID, Name: a.Name,
			Currency: a.Currency, Balance: a.Balance, BalanceDate: a.BalanceDate, Transactions: []txJSON{}}
		for _, t := range a.Transactions {
			when := t.Posted
			if t.Pending || t.Posted == 0 {
				if !pending {
					continue
				}
				when = t.TransactedAt
			}
			if when < start || when >= end {
				continue
			}
			aj.Transactions = append(aj.Transactions, txJSON(t))
		}
		out.Accounts = append(out.Accounts, aj)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

package bridgetest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// lastDayOnly is the hint the Bridge adds when a request has no start-date.
const lastDayOnly = "No start-date given: only transactions of about the last day are returned."

// shape is the answer shape for a request: its version parameter, else
// the fake's setting, else v1. The caller holds s.mu.
func (s *Server) shape(r *http.Request) string {
	if r != nil {
		switch r.URL.Query().Get("version") {
		case "1", "2":
			return r.URL.Query().Get("version")
		}
	}
	switch s.version {
	case "2", "both":
		return s.version
	}
	return "1"
}

func window(q url.Values) (start, end int64, ok bool) {
	start, err1 := strconv.ParseInt(q.Get("start-date"), 10, 64)
	end, err2 := strconv.ParseInt(q.Get("end-date"), 10, 64)
	return start, end, err1 == nil && err2 == nil
}

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
	Org          map[string]string `json:"org,omitempty"`
	ConnID       string            `json:"conn_id,omitempty"`
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Currency     string            `json:"currency"`
	Balance      string            `json:"balance"`
	BalanceDate  int64             `json:"balance-date"`
	Transactions *[]txJSON         `json:"transactions,omitempty"` // absent with balances-only
}

type errJSON struct {
	Code      string `json:"code"`
	Msg       string `json:"msg"`
	ConnID    string `json:"conn_id,omitempty"`
	AccountID string `json:"account_id,omitempty"`
}

type connJSON struct {
	ConnID  string `json:"conn_id"`
	Name    string `json:"name"`
	OrgID   string `json:"org_id"`
	OrgURL  string `json:"org_url,omitempty"`
	SfinURL string `json:"sfin_url"`
}

type setJSON struct {
	Errors      *[]string   `json:"errors,omitempty"` // pointers: an empty list is sent, a missing one is not
	ErrList     *[]errJSON  `json:"errlist,omitempty"`
	Connections *[]connJSON `json:"connections,omitempty"`
	Accounts    []acctJSON  `json:"accounts"`
	APIMessages []string    `json:"x-api-message,omitempty"`
}

// connID is the v2 id of the bank login of an org name.
func connID(org string) string {
	return "CON-" + strings.ToUpper(strings.Join(strings.Fields(org), "-"))
}

// render answers one /accounts query from the dataset, in the shape asked
// for ("1", "2" or "both"): start inclusive, end exclusive on posted
// (transacted_at for pending rows); pending rows only when the pending
// key is present, whatever its value; without start-date, the last day
// only and a hint; account and balances-only honoured.
func (d *Dataset) render(q url.Values, shape string, now time.Time, hints []string) string {
	v1, v2 := shape != "2", shape != "1"
	start, err := strconv.ParseInt(q.Get("start-date"), 10, 64)
	if err != nil {
		start = now.Add(-24 * time.Hour).Unix()
		hints = append(hints, lastDayOnly)
	}
	end, err := strconv.ParseInt(q.Get("end-date"), 10, 64)
	if err != nil {
		end = 1 << 62
	}
	_, pending := q["pending"]
	only := q["account"]
	balancesOnly := q.Get("balances-only") == "1"
	out := setJSON{Accounts: []acctJSON{}, APIMessages: hints}
	errs, errlist, conns := append([]string{}, d.Errors...), []errJSON{}, []connJSON{}
	for _, e := range d.Errors {
		errlist = append(errlist, errJSON{Code: "gen", Msg: e})
	}
	for _, p := range d.Problems {
		msg, e := p.Message, errJSON{Code: p.Code, Msg: p.Message, AccountID: p.AccountID}
		if p.Bank != "" {
			msg, e.ConnID = p.Bank+": "+msg, connID(p.Bank)
		}
		errs, errlist = append(errs, msg), append(errlist, e)
	}
	if v1 {
		out.Errors = &errs
	}
	if v2 {
		out.ErrList, out.Connections = &errlist, &conns
	}
	for _, a := range d.Accounts {
		if len(only) > 0 && !slices.Contains(only, a.ID) {
			continue
		}
		aj := acctJSON{ID: a.ID, Name: a.Name, Currency: a.Currency, Balance: a.Balance, BalanceDate: a.BalanceDate}
		if v1 {
			aj.Org = map[string]string{"name": a.Org, "sfin-url": "https://bridge.example/simplefin"}
		}
		if v2 {
			aj.ConnID = connID(a.Org)
			if !slices.ContainsFunc(conns, func(c connJSON) bool { return c.ConnID == aj.ConnID }) {
				conns = append(conns, connJSON{ConnID: aj.ConnID, Name: a.Org, OrgID: "org-" + aj.ConnID,
					SfinURL: "https://bridge.example/simplefin"})
			}
		}
		if !balancesOnly {
			txs := []txJSON{}
			aj.Transactions = &txs
			for _, t := range a.Transactions {
				when := t.Posted
				if t.Pending || t.Posted == 0 {
					if !pending {
						continue
					}
					when = t.TransactedAt
				}
				if when >= start && when < end {
					txs = append(txs, txJSON(t))
				}
			}
		}
		out.Accounts = append(out.Accounts, aj)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// fxAccount makes an active depository account of f in currency.
func fxAccount(t *testing.T, s *models.Store, f *modelstest.FamilyFixture, name, currency string) *models.Account {
	t.Helper()
	a := &models.Account{FamilyID: f.Family.ID, Name: name, AccountType: "depository", Currency: currency}
	if err := s.CreateAccount(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

// setRate stores f's own rate of one unit of from in to on day.
func setRate(t *testing.T, s *models.Store, f *modelstest.FamilyFixture, from, to, day, rate string) {
	t.Helper()
	r := &models.ExchangeRate{FromCurrency: from, ToCurrency: to, Date: civil.Date(day), Rate: rateOf(t, rate)}
	if _, err := s.SetRate(context.Background(), f.Family.ID, r); err != nil {
		t.Fatal(err)
	}
}

// TestTransferTwoCurrencies: a transfer between accounts of two
// currencies keeps what left (in the source's currency) and what arrived
// (in the destination's), and implies their rate; without what arrived it
// is refused, naming to_amount. Within one currency one amount still does.
func TestTransferTwoCurrencies(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "fx-transfer")
	euros := fxAccount(t, s, f, "Euro savings", "EUR")
	setRate(t, s, f, "EUR", "USD", "2026-03-01", "1.08") // so that a euro row could count

	nt := models.NewTransfer{FromAccountID: f.Account.ID, ToAccountID: euros.ID, Amount: 100_0000, Date: "2026-03-02"}
	for _, to := range []money.Amount{0, -5_0000} {
		nt.ToAmount = to
		_, err := s.CreateTransfer(ctx, f.Family.ID, nt)
		var inv *models.InvalidError
		if !errors.As(err, &inv) || !strings.Contains(strings.Join(inv.Problems, " "), "to_amount") {
			t.Fatalf("to_amount %d: %v", to, err)
		}
	}
	nt.ToAmount = 92_3500
	id, err := s.CreateTransfer(ctx, f.Family.ID, nt)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Transfer(ctx, f.Family.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outflow.Amount != 100_0000 || tr.Outflow.Currency != "USD" || tr.Inflow.Amount != -92_3500 || tr.Inflow.Currency != "EUR" {
		t.Fatalf("sides: out %d %s, in %d %s", tr.Outflow.Amount, tr.Outflow.Currency, tr.Inflow.Amount, tr.Inflow.Currency)
	}
	if r, ok := tr.ImpliedRate(); !ok || r.String() != "0.9235" {
		t.Fatalf("implied rate %q %v", r.String(), ok)
	}
	// Neither side is income or spending, in either currency.
	if tot, err := s.PeriodTotals(ctx, f.Family.ID, models.Period{From: "2026-03-01", To: "2026-03-31"}); err != nil ||
		tot.Income != 0 || tot.Spending != 0 || tot.IncomeCount+tot.SpendingCount != 0 {
		t.Fatalf("totals of March: %+v %v", tot, err)
	}
	in, err := s.Transaction(ctx, f.Family.ID, tr.InflowTransactionID)
	if err != nil || in.Transfer == nil || in.Transfer.Rate.String() != "0.9235" || in.Transfer.SentAmount != 100_0000 ||
		in.Transfer.SentCurrency != "USD" || in.Transfer.Currency != "EUR" {
		t.Fatalf("inflow's link: %+v %v", in.Transfer, err)
	}

	// Within one currency the arrived amount is the amount, whatever was sent.
	dollars := fxAccount(t, s, f, "Dollar savings", "USD")
	id, err = s.CreateTransfer(ctx, f.Family.ID, models.NewTransfer{FromAccountID: f.Account.ID, ToAccountID: dollars.ID,
		Amount: 40_0000, ToAmount: 1, Date: "2026-03-02"})
	if err != nil {
		t.Fatal(err)
	}
	if same, _ := s.Transfer(ctx, f.Family.ID, id); same.Inflow.Amount != -40_0000 {
		t.Fatalf("same currency inflow %d", same.Inflow.Amount)
	} else if _, ok := same.ImpliedRate(); ok {
		t.Fatal("a rate within one currency")
	}
}

// TestPairTransferTwoCurrencies: two bank rows in different currencies
// pair when the rate they imply is within TransferRateTolerance of the
// family's rate of the day, and are refused with the rates named when not.
func TestPairTransferTwoCurrencies(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "fx-pair")
	euros := fxAccount(t, s, f, "Euro savings", "EUR")
	setRate(t, s, f, "EUR", "USD", "2026-03-01", "1.08") // 1 USD buys 0.9259 EUR
	add := func(acct uuid.UUID, amount int64, cur string) uuid.UUID {
		t.Helper()
		row, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: acct, Date: "2026-03-02",
			Amount: money.Amount(amount), Currency: cur, Name: "wire"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return row.ID
	}
	out := add(f.Account.ID, 100_0000, "USD")
	far := add(euros.ID, -80_0000, "EUR") // 0.80: 13.6% off
	near := add(euros.ID, -91_5000, "EUR")
	cands, err := s.TransferCandidates(ctx, f.Family.ID, out)
	if err != nil || len(cands) != 1 || cands[0].ID != near {
		t.Fatalf("candidates of the dollar side: %v %v", cands, err)
	}
	_, err = s.PairTransfer(ctx, f.Family.ID, out, far)
	var inv *models.InvalidError
	if !errors.As(err, &inv) || !strings.Contains(inv.Problems[0], "0.8 EUR per USD") {
		t.Fatalf("far pair: %v", err)
	}
	id, err := s.PairTransfer(ctx, f.Family.ID, near, out)
	if err != nil {
		t.Fatal(err)
	}
	if tr, _ := s.Transfer(ctx, f.Family.ID, id); tr.InflowTransactionID != near {
		t.Fatalf("paired %+v", tr)
	}
}

// TestRuleTransferTwoCurrencies: the transfer action into an account of
// another currency writes the other side at the family's rate of the
// row's day; with no rate it makes no transfer, and a rule run says why.
func TestRuleTransferTwoCurrencies(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "fx-rule")
	euros := fxAccount(t, s, f, "Euro savings", "EUR")
	pounds := fxAccount(t, s, f, "Sterling", "GBP")
	setRate(t, s, f, "USD", "EUR", "2026-03-01", "0.9")
	for _, r := range []*models.Rule{
		{FamilyID: f.Family.ID, Active: true, Conditions: []models.RuleCondition{cond(models.CondName, "like", "to euros")},
			Actions: []models.RuleAction{action(models.ActTransfer, euros.ID.String())}},
		{FamilyID: f.Family.ID, Active: true, Conditions: []models.RuleCondition{cond(models.CondName, "like", "to pounds")},
			Actions: []models.RuleAction{action(models.ActTransfer, pounds.ID.String())}},
	} {
		if err := s.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	ingest := func(name string) *models.Transaction {
		t.Helper()
		rows := []*models.NewTransaction{{Row: &models.Transaction{AccountID: f.Account.ID, Date: "2026-03-05",
			Amount: 50_0000, Currency: "USD", Name: name}}}
		if _, err := s.IngestTransactions(ctx, f.Family.ID, rows); err != nil || rows[0].Status != models.IngestCreated {
			t.Fatalf("%s: %v %s %v", name, err, rows[0].Status, rows[0].Problems)
		}
		got, err := s.Transaction(ctx, f.Family.ID, rows[0].Row.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	moved := ingest("Move to euros")
	if moved.Transfer == nil || moved.Transfer.Currency != "EUR" || moved.Transfer.Amount != 45_0000 || moved.Transfer.Rate.String() != "0.9" {
		t.Fatalf("to euros: %+v", moved.Transfer)
	}
	stuck := ingest("Move to pounds")
	if stuck.Transfer != nil {
		t.Fatalf("to pounds without a rate: %+v", stuck.Transfer)
	}
	run, err := s.CreateAllRulesRun(ctx, f.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		if done, _, err = s.RuleRunStep(ctx, f.Family.ID, run.ID, 10); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RuleRun(ctx, f.Family.ID, run.ID)
	if err != nil || got.Status != models.RuleRunSuccess || got.ErrorMessage == nil ||
		!strings.Contains(*got.ErrorMessage, "no USD rate in GBP on or before 2026-03-05") {
		t.Fatalf("run: %+v %v", got, err)
	}
}

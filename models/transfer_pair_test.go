package models_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// cardFamily is a family with a checking account (the fixture's) and a
// credit card, whose bank files were imported: the card's own payments
// received are there before any rule runs.
type cardFamily struct {
	s    *models.Store
	f    *modelstest.FamilyFixture
	card *models.Account
}

func newCardFamily(t *testing.T) *cardFamily {
	t.Helper()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "cards")
	card := &models.Account{FamilyID: f.Family.ID, Name: "Visa", AccountType: "credit_card", Currency: "USD"}
	if err := s.CreateAccount(context.Background(), card); err != nil {
		t.Fatal(err)
	}
	return &cardFamily{s: s, f: f, card: card}
}

func (c *cardFamily) ingest(t *testing.T, account uuid.UUID, rows ...models.Transaction) []*models.Transaction {
	t.Helper()
	in := make([]*models.NewTransaction, len(rows))
	for i := range rows {
		r := rows[i]
		r.FamilyID, r.AccountID, r.Currency = c.f.Family.ID, account, "USD"
		in[i] = &models.NewTransaction{Row: &r}
	}
	if _, err := c.s.IngestTransactions(context.Background(), c.f.Family.ID, in); err != nil {
		t.Fatal(err)
	}
	out := make([]*models.Transaction, len(in))
	for i, r := range in {
		if r.Status != models.IngestCreated {
			t.Fatalf("row %d: %s %v", i, r.Status, r.Problems)
		}
		out[i] = r.Row
	}
	return out
}

func (c *cardFamily) rows(t *testing.T, account uuid.UUID) []*models.Transaction {
	t.Helper()
	ts, _, err := c.s.Transactions(context.Background(), c.f.Family.ID, models.TransactionFilter{AccountIDs: []uuid.UUID{account}},
		models.Page{Number: 1, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// balances recalculates both accounts and returns their balances.
func (c *cardFamily) balances(t *testing.T) [2]money.Amount {
	t.Helper()
	var out [2]money.Amount
	for i, id := range []uuid.UUID{c.f.Account.ID, c.card.ID} {
		if err := c.s.RecalculateBalance(context.Background(), c.f.Family.ID, id); err != nil {
			t.Fatal(err)
		}
		a, err := c.s.Account(context.Background(), c.f.Family.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = a.Balance
	}
	return out
}

// noFalseIncome checks that January and February count no income and
// only the card's groceries as spending: in the income statement, the
// cash flow and the budget.
func (c *cardFamily) noFalseIncome(t *testing.T, spending money.Amount) {
	t.Helper()
	ctx := context.Background()
	p := models.Period{From: "2026-01-01", To: "2026-02-28"}
	cells, err := c.s.IncomeStatement(ctx, c.f.Family.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	var spent money.Amount
	for _, cell := range cells {
		if cell.Classification == "income" {
			t.Errorf("income statement counts income %v in %s", cell.Total, cell.Month)
		} else {
			spent += cell.Total
		}
	}
	if spent != spending {
		t.Errorf("income statement spending %v, want %v", spent, spending)
	}
	flow, err := c.s.CashFlow(ctx, c.f.Family.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range flow {
		if m.Income != 0 {
			t.Errorf("cash flow of %s has income %v", m.Month, m.Income)
		}
	}
	for _, month := range []civil.Date{"2026-01-15", "2026-02-15"} {
		b, err := c.s.EnsureBudget(ctx, c.f.Family.ID, month)
		if err != nil {
			t.Fatal(err)
		}
		if b.ActualIncome != 0 {
			t.Errorf("budget of %s counts income %v", month, b.ActualIncome)
		}
	}
}

// TestMarkAsTransferPairsTheCardsPayment is issue 25's case: a "mark as
// transfer" rule on the checking side pairs the card's own imported
// payment instead of writing a second one on the card, so the card shows
// each payment once and no payment counts as income. Through ingestion
// (a new row) and through applying the rule to stored rows.
func TestMarkAsTransferPairsTheCardsPayment(t *testing.T) {
	ctx := context.Background()
	c := newCardFamily(t)
	fam := c.f.Family.ID
	card := c.ingest(t, c.card.ID,
		models.Transaction{Date: "2026-01-03", Amount: -500_0000, Name: "PAYMENT THANK YOU"},
		models.Transaction{Date: "2026-01-10", Amount: 40_0000, Name: "Groceries"},
		models.Transaction{Date: "2026-02-04", Amount: -650_0000, Name: "PAYMENT THANK YOU"})
	before := c.balances(t)

	rule := &models.Rule{FamilyID: fam, Active: true,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "card payment")},
		Actions:    []models.RuleAction{action(models.ActTransfer, c.card.ID.String())}}
	if err := c.s.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	// January's payment comes in with the rule active.
	jan := c.ingest(t, c.f.Account.ID, models.Transaction{Date: "2026-01-02", Amount: 500_0000, Name: "CARD PAYMENT VISA"})[0]
	if jan.Transfer == nil || jan.Transfer.OtherAccount == nil || jan.Transfer.OtherAccount.ID != c.card.ID {
		t.Fatalf("January's payment not paired: %+v", jan.Transfer)
	}
	// February's was stored before the rule ran on it (the rule applied
	// to stored rows).
	rule.Active = false
	if err := c.s.UpdateRule(ctx, rule, false, false); err != nil {
		t.Fatal(err)
	}
	feb := c.ingest(t, c.f.Account.ID, models.Transaction{Date: "2026-02-02", Amount: 650_0000, Name: "CARD PAYMENT VISA"})[0]
	rule.Active = true
	if err := c.s.UpdateRule(ctx, rule, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.s.ApplyRulesTo(ctx, fam, []uuid.UUID{feb.ID}); err != nil {
		t.Fatal(err)
	}

	rows := c.rows(t, c.card.ID)
	if len(rows) != 3 {
		t.Fatalf("the card holds %d rows, want its own 3 (each payment once)", len(rows))
	}
	for _, r := range rows {
		if (r.ID == card[0].ID || r.ID == card[2].ID) && r.Transfer == nil {
			t.Errorf("card payment %s %v not paired", r.Date, r.Amount)
		}
		if r.ID == card[1].ID && r.Transfer != nil {
			t.Errorf("the groceries were paired")
		}
	}
	for _, r := range c.rows(t, c.f.Account.ID) {
		if r.Transfer == nil {
			t.Errorf("checking's %s payment not paired", r.Date)
		}
	}
	trs, n, err := c.s.Transfers(ctx, fam, models.Page{Number: 1, Size: 10})
	if err != nil || n != 2 {
		t.Fatalf("%d transfers (%v), want 2", n, err)
	}
	for _, tr := range trs {
		if tr.Inflow.AccountID != c.card.ID || tr.Outflow.AccountID != c.f.Account.ID {
			t.Errorf("transfer %s goes the wrong way", tr.ID)
		}
	}
	c.noFalseIncome(t, 40_0000)
	after := c.balances(t)
	// The card's balance is what its own rows say: pairing wrote nothing.
	if after[1] != before[1] {
		t.Errorf("card balance %v after pairing, %v before", after[1], before[1])
	}
}

// TestMarkAsTransferWritesTheSideOnlyWhenMissing: with no matching row in
// the card (another amount, too far in time, or turned down as this
// row's pair), the rule writes the other side as before.
func TestMarkAsTransferWritesTheSideOnlyWhenMissing(t *testing.T) {
	ctx := context.Background()
	c := newCardFamily(t)
	fam := c.f.Family.ID
	c.ingest(t, c.card.ID,
		models.Transaction{Date: "2026-01-03", Amount: -499_0000, Name: "PAYMENT THANK YOU"},
		models.Transaction{Date: "2026-01-20", Amount: -500_0000, Name: "PAYMENT THANK YOU"})
	rule := &models.Rule{FamilyID: fam, Active: true,
		Conditions: []models.RuleCondition{cond(models.CondName, "like", "card payment")},
		Actions:    []models.RuleAction{action(models.ActTransfer, c.card.ID.String())}}
	if err := c.s.CreateRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	row := c.ingest(t, c.f.Account.ID, models.Transaction{Date: "2026-01-02", Amount: 500_0000, Name: "CARD PAYMENT"})[0]
	if row.Transfer == nil {
		t.Fatal("not made a transfer")
	}
	if n := len(c.rows(t, c.card.ID)); n != 3 {
		t.Fatalf("the card holds %d rows, want its 2 and the new side", n)
	}
}

// TestPairAndUnpairKeepBalances: pairing two stored rows and unpairing
// them change no balance, and each balance stays the opening balance
// moved by the account's rows. An unpaired pair is not suggested again.
func TestPairAndUnpairKeepBalances(t *testing.T) {
	ctx := context.Background()
	c := newCardFamily(t)
	fam := c.f.Family.ID
	out := c.ingest(t, c.f.Account.ID, models.Transaction{Date: "2026-01-02", Amount: 300_0000, Name: "To Visa"})[0]
	in := c.ingest(t, c.card.ID, models.Transaction{Date: "2026-01-04", Amount: -300_0000, Name: "Payment"},
		models.Transaction{Date: "2026-01-05", Amount: 25_0000, Name: "Fuel"})[0]
	before := c.balances(t)
	if before[0] != -300_0000 || before[1] != -275_0000 {
		t.Fatalf("balances %v, want the rows' sums", before)
	}
	sugg, err := c.s.SuggestedTransfers(ctx, fam, 10)
	if err != nil || len(sugg) != 1 || sugg[0].Outflow.ID != out.ID || sugg[0].Inflow.ID != in.ID {
		t.Fatalf("suggestions %+v (%v), want the one pair", sugg, err)
	}
	id, err := c.s.PairTransfer(ctx, fam, in.ID, out.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.balances(t); got != before {
		t.Fatalf("balances %v after pairing, %v before", got, before)
	}
	if sugg, _ := c.s.SuggestedTransfers(ctx, fam, 10); len(sugg) != 0 {
		t.Fatalf("a paired pair is still suggested")
	}
	if err := c.s.UnpairTransfer(ctx, fam, id); err != nil {
		t.Fatal(err)
	}
	if got := c.balances(t); got != before {
		t.Fatalf("balances %v after unpairing, %v before", got, before)
	}
	if n := len(c.rows(t, c.card.ID)) + len(c.rows(t, c.f.Account.ID)); n != 3 {
		t.Fatalf("%d rows after unpairing, want all 3", n)
	}
	if sugg, _ := c.s.SuggestedTransfers(ctx, fam, 10); len(sugg) != 0 {
		t.Fatalf("an unpaired pair is suggested again")
	}
	// Pairing it again by hand is still possible.
	if _, err := c.s.PairTransfer(ctx, fam, out.ID, in.ID); err != nil {
		t.Fatal(err)
	}
}

package models

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/importfile"
)

// sureAccountTypes maps the reference's accountable types to ours.
var sureAccountTypes = map[string]string{"Depository": "depository", "Investment": "investment", "Crypto": "crypto",
	"Property": "property", "Vehicle": "vehicle", "OtherAsset": "other_asset", "CreditCard": "credit_card", "Loan": "loan",
	"OtherLiability": "other_liability"}

// problem is what is wrong with one record; the restore answers it as a
// *importfile.SureError on the record's line.
type problem string

func (p problem) Error() string { return string(p) }

func (r *restore) account(ctx context.Context, v *importfile.SureAccount) error {
	typ, ok := sureAccountTypes[v.AccountableType]
	if !ok {
		return problem("accountable_type " + v.AccountableType + " is not one coffer keeps")
	}
	cur := v.Currency
	if cur == "" {
		f, err := r.tx.Family(ctx, r.familyID)
		if err != nil {
			return err
		}
		cur = f.Currency
	}
	status := AccountActive
	if v.Status == AccountDisabled {
		status = AccountDisabled
	}
	now := r.tx.now()
	a := &Account{ID: NewID(), FamilyID: r.familyID, Name: v.Name, AccountType: typ, Subtype: v.Subtype, Currency: cur,
		Status: status, InstitutionName: v.InstitutionName, InstitutionDomain: v.InstitutionDomain, BalanceUpdatedAt: &now,
		CreatedAt: now, UpdatedAt: now}
	if _, err := r.tx.db.NewInsert().Model(a).Exec(ctx); err != nil {
		return dbErr("restore account", err)
	}
	if err := r.tx.writeOpening(ctx, a, nil); err != nil {
		return err
	}
	r.mapID("Account", v.ID, a.ID)
	r.accounts[a.ID] = &restoredAccount{balance: v.Balance, currency: cur}
	r.sum.Created["accounts"]++
	return nil
}

// named matches a record to the family's of the same name, or reports
// that it is new.
func (r *restore) named(kind, old, name string) bool {
	if id, ok := r.names[kind][strings.ToLower(name)]; ok {
		r.mapID(kind, old, id)
		r.sum.Matched[SureKind(kind)]++
		return true
	}
	return false
}

func (r *restore) created(kind, old, name string, id uuid.UUID) {
	r.mapID(kind, old, id)
	r.names[kind][strings.ToLower(name)] = id
	r.sum.Created[SureKind(kind)]++
}

func color(c, fallback string) string {
	if len(c) == 7 && c[0] == '#' {
		return c
	}
	return fallback
}

func (r *restore) category(ctx context.Context, v *importfile.SureCategory) error {
	if r.named("Category", v.ID, v.Name) {
		return nil
	}
	class := "expense"
	if v.Classification == "income" {
		class = "income"
	}
	icon := v.Icon
	if icon == "" || len(icon) > 64 {
		icon = "shapes"
	}
	now := r.tx.now()
	c := &Category{ID: NewID(), FamilyID: r.familyID, Name: v.Name, Color: color(v.Color, "#737373"), Icon: icon,
		Classification: class, CreatedAt: now, UpdatedAt: now}
	if _, err := r.tx.db.NewInsert().Model(c).Exec(ctx); err != nil {
		return dbErr("restore category", err)
	}
	if v.ParentID != nil {
		r.parents[c.ID] = *v.ParentID
	}
	r.created("Category", v.ID, v.Name, c.ID)
	return nil
}

// linkParents sets the parents of the new categories, once all are
// written (a child may come before its parent).
func (r *restore) linkParents(ctx context.Context) error {
	for id, old := range r.parents {
		parent := r.id("Category", old)
		if parent == id {
			continue
		}
		if _, err := r.tx.db.NewUpdate().Model((*Category)(nil)).Set("parent_id = ?", parent).
			Where("family_id = ?", r.familyID).Where("id = ?", id).Exec(ctx); err != nil {
			return dbErr("restore category parent", err)
		}
	}
	return nil
}

func (r *restore) tag(ctx context.Context, v *importfile.SureTag) error {
	if r.named("Tag", v.ID, v.Name) {
		return nil
	}
	now := r.tx.now()
	t := &Tag{ID: NewID(), FamilyID: r.familyID, Name: v.Name, Color: color(v.Color, "#e99537"), CreatedAt: now, UpdatedAt: now}
	if _, err := r.tx.db.NewInsert().Model(t).Exec(ctx); err != nil {
		return dbErr("restore tag", err)
	}
	r.created("Tag", v.ID, v.Name, t.ID)
	return nil
}

func (r *restore) merchant(ctx context.Context, v *importfile.SureMerchant) error {
	if r.named("Merchant", v.ID, v.Name) {
		return nil
	}
	now := r.tx.now()
	m := &Merchant{ID: NewID(), FamilyID: r.familyID, Name: v.Name, CreatedAt: now, UpdatedAt: now}
	if _, err := r.tx.db.NewInsert().Model(m).Exec(ctx); err != nil {
		return dbErr("restore merchant", err)
	}
	r.created("Merchant", v.ID, v.Name, m.ID)
	return nil
}

func (r *restore) budget(ctx context.Context, v *importfile.SureBudget) error {
	var have []uuid.UUID
	if err := r.tx.db.NewSelect().Model((*Budget)(nil)).Column("id").Where("family_id = ?", r.familyID).
		Where("start_date = ?", v.StartDate).Scan(ctx, &have); err != nil {
		return dbErr("restore: read budget", err)
	}
	if len(have) > 0 {
		r.mapID("Budget", v.ID, have[0])
		r.sum.Matched["budgets"]++
		return nil
	}
	cur := v.Currency
	if cur == "" {
		f, err := r.tx.Family(ctx, r.familyID)
		if err != nil {
			return err
		}
		cur = f.Currency
	}
	now := r.tx.now()
	b := &Budget{ID: NewID(), FamilyID: r.familyID, StartDate: v.StartDate, EndDate: v.EndDate, Currency: cur,
		BudgetedSpending: v.BudgetedSpending, ExpectedIncome: v.ExpectedIncome, CreatedAt: now, UpdatedAt: now}
	if _, err := r.tx.db.NewInsert().Model(b).Exec(ctx); err != nil {
		return dbErr("restore budget", err)
	}
	r.mapID("Budget", v.ID, b.ID)
	r.sum.Created["budgets"]++
	return nil
}

func (r *restore) budgetCategory(ctx context.Context, v *importfile.SureBudgetCategory) error {
	budgetID := r.id("Budget", v.BudgetID)
	var cur string
	if err := r.tx.db.NewSelect().Model((*Budget)(nil)).Column("currency").Where("family_id = ?", r.familyID).
		Where("id = ?", budgetID).Scan(ctx, &cur); err != nil {
		return dbErr("restore: read budget", err)
	}
	now := r.tx.now()
	rows := []BudgetCategory{{ID: NewID(), FamilyID: r.familyID, BudgetID: budgetID, CategoryID: r.id("Category", v.CategoryID),
		BudgetedSpending: v.BudgetedSpending, Currency: cur, CreatedAt: now, UpdatedAt: now}}
	res, err := r.tx.db.NewInsert().Model(&rows).On("CONFLICT (budget_id, category_id) DO NOTHING").Exec(ctx)
	if err != nil {
		return dbErr("restore budget category", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		r.sum.Matched["budget_categories"]++
		return nil
	}
	r.sum.Created["budget_categories"]++
	return nil
}

func (r *restore) valuation(ctx context.Context, v *importfile.SureValuation) error {
	accountID := r.id("Account", v.AccountID)
	ra := r.accounts[accountID]
	date := v.Date
	if v.Kind == "opening_anchor" && !ra.opening {
		ra.opening = true
		a := &Account{ID: accountID, FamilyID: r.familyID, OpeningBalance: v.Amount}
		if err := r.tx.writeOpening(ctx, a, &date); err != nil {
			return err
		}
		if _, err := r.tx.db.NewUpdate().Model((*Account)(nil)).Set("opening_balance = ?", v.Amount).
			Where("family_id = ?", r.familyID).Where("id = ?", accountID).Exec(ctx); err != nil {
			return dbErr("restore opening balance", err)
		}
		r.sum.Created["valuations"]++
		return nil
	}
	ra.valued = true
	now := r.tx.now()
	val := &Valuation{ID: NewID(), FamilyID: r.familyID, AccountID: accountID, Date: &date, Amount: v.Amount,
		Kind: ValuationReconciliation, CreatedAt: now, UpdatedAt: now}
	if v.Name != "" && !strings.EqualFold(v.Name, "valuation") {
		val.Notes = &v.Name
	}
	if _, err := r.tx.db.NewInsert().Model(val).Exec(ctx); err != nil {
		if errors.Is(dbErr("", err), ErrConflict) {
			return problem("the account is valued twice on " + string(date))
		}
		return dbErr("restore valuation", err)
	}
	r.sum.Created["valuations"]++
	return nil
}

// valueAccounts gives an account the file values on no day its
// balance, on its last transaction's day.
func (r *restore) valueAccounts(ctx context.Context) error {
	ids := make([]uuid.UUID, 0, len(r.accounts))
	for id, ra := range r.accounts {
		ids = append(ids, id)
		if ra.opening || ra.valued {
			continue
		}
		day := ra.last
		if day == "" {
			day = civil.DateOf(r.tx.now())
		}
		now := r.tx.now()
		val := &Valuation{ID: NewID(), FamilyID: r.familyID, AccountID: id, Date: &day, Amount: ra.balance,
			Kind: ValuationReconciliation, CreatedAt: now, UpdatedAt: now}
		if _, err := r.tx.db.NewInsert().Model(val).Exec(ctx); err != nil {
			return dbErr("restore balance", err)
		}
	}
	r.tx.balanceChange(ctx, r.familyID, ids...)
	return nil
}

// chat restores a chat of coffer's own export. The file's people are not
// in it, so a chat goes to the family's first admin (its oldest member
// when none is an admin).
func (r *restore) chat(ctx context.Context, v *importfile.SureChat) error {
	var owner uuid.UUID
	err := r.tx.db.NewSelect().Model((*User)(nil)).Column("id").Where("family_id = ?", r.familyID).
		OrderExpr("CASE WHEN role IN (?, ?) THEN 0 ELSE 1 END, created_at, id", RoleSuperAdmin, RoleAdmin).Limit(1).Scan(ctx, &owner)
	if err != nil {
		return dbErr("restore chat owner", err)
	}
	at := r.tx.now()
	if v.CreatedAt != nil {
		at = *v.CreatedAt
	}
	c := &Chat{ID: NewID(), FamilyID: r.familyID, UserID: owner, Title: v.Title, CreatedAt: at, UpdatedAt: at}
	if c.Title == "" {
		c.Title = "Chat"
	}
	if _, err := r.tx.db.NewInsert().Model(c).Exec(ctx); err != nil {
		return dbErr("restore chat", err)
	}
	r.mapID("Chat", v.ID, c.ID)
	r.sum.Created["chats"]++
	return nil
}

// message restores one message of a restored chat.
func (r *restore) message(ctx context.Context, v *importfile.SureMessage) error {
	at := r.tx.now()
	if v.CreatedAt != nil {
		at = *v.CreatedAt
	}
	typ := "user_message"
	if v.Type == "AssistantMessage" {
		typ = "assistant_message"
	}
	m := &Message{ID: NewID(), FamilyID: r.familyID, ChatID: r.id("Chat", v.ChatID), Type: typ, Content: v.Content,
		Model: v.AIModel, CreatedAt: at, UpdatedAt: at}
	if _, err := r.tx.db.NewInsert().Model(m).Exec(ctx); err != nil {
		return dbErr("restore message", err)
	}
	r.mapID("Message", v.ID, m.ID)
	r.sum.Created["messages"]++
	return nil
}

// countMessages sets each restored chat's message count and time of its
// newest message, which the chat list shows.
func (r *restore) countMessages(ctx context.Context) error {
	ids := make([]uuid.UUID, 0, len(r.ids["Chat"]))
	for _, id := range r.ids["Chat"] {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := r.tx.db.NewUpdate().Model((*Chat)(nil)).
		Set("message_count = (SELECT COUNT(*) FROM messages m WHERE m.family_id = ch.family_id AND m.chat_id = ch.id)").
		Set("last_message_at = (SELECT MAX(m.created_at) FROM messages m WHERE m.family_id = ch.family_id AND m.chat_id = ch.id)").
		Where("ch.family_id = ? AND ch.id IN (?)", r.familyID, bun.List(ids)).Exec(ctx)
	return dbErr("restore chat counts", err)
}

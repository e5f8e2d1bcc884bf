package models

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"coffer/models/civil"
	"coffer/models/money"
)

// The shapes of all.ndjson, the reference app's (Family::DataExporter,
// export version 2): each line is {"type": …, "data": {…}} (a rule's also
// carries "version": 1), data in the reference's key order. Amounts are
// decimal strings as Rails writes a BigDecimal, dates YYYY-MM-DD, times
// ISO 8601 with milliseconds in UTC.

// ExportVersion is the reference's export version our files follow.
const ExportVersion = 2

type exportLine struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

type exportVersionedLine struct {
	Type    string `json:"type"`
	Version int    `json:"version"`
	Data    any    `json:"data"`
}

// exportDecimal is an amount as Rails renders a BigDecimal: no trailing
// zeros, but at least one digit after the point ("12.5", "100.0").
type exportDecimal money.Amount

func (d exportDecimal) String() string {
	s := money.Amount(d).String()
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	return s
}

func (d exportDecimal) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func decimalPtr(a *money.Amount) *exportDecimal {
	if a == nil {
		return nil
	}
	d := exportDecimal(*a)
	return &d
}

// exportTime is a time as Rails' JSON writes it.
type exportTime time.Time

func (t exportTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z"))
}

func timePtr(t *time.Time) *exportTime {
	if t == nil {
		return nil
	}
	v := exportTime(*t)
	return &v
}

// accountableTypes maps our account types to the reference's accountable
// types.
var accountableTypes = map[string]string{
	"depository": "Depository", "investment": "Investment", "crypto": "Crypto", "property": "Property",
	"vehicle": "Vehicle", "other_asset": "OtherAsset", "credit_card": "CreditCard", "loan": "Loan",
	"other_liability": "OtherLiability",
}

// accountableType is the reference's type of an account (an untyped one
// is an asset: OtherAsset).
func accountableType(t string) string {
	if v, ok := accountableTypes[t]; ok {
		return v
	}
	return "OtherAsset"
}

// exportNamespace derives the ids the reference has and we do not (an
// account's accountable, a rejected transfer's row) from ours, so that
// an export of the same data names them the same way each time.
var exportNamespace = uuid.MustParse("5b0c6f2e-8a4d-4c8e-9a51-2f1e7d3c9b40")

func derivedID(id uuid.UUID, what string) uuid.UUID {
	return uuid.NewSHA1(exportNamespace, append(id[:], what...))
}

type exportAccountable struct {
	ID               uuid.UUID      `json:"id"`
	CreatedAt        exportTime     `json:"created_at"`
	UpdatedAt        exportTime     `json:"updated_at"`
	LockedAttributes map[string]any `json:"locked_attributes"`
	Subtype          *string        `json:"subtype"`
}

type exportAccount struct {
	ID                    uuid.UUID         `json:"id"`
	Subtype               *string           `json:"subtype"`
	FamilyID              uuid.UUID         `json:"family_id"`
	Name                  string            `json:"name"`
	CreatedAt             exportTime        `json:"created_at"`
	UpdatedAt             exportTime        `json:"updated_at"`
	AccountableType       string            `json:"accountable_type"`
	AccountableID         uuid.UUID         `json:"accountable_id"`
	Balance               exportDecimal     `json:"balance"`
	Currency              string            `json:"currency"`
	Classification        string            `json:"classification"`
	ImportID              *uuid.UUID        `json:"import_id"`
	PlaidAccountID        *uuid.UUID        `json:"plaid_account_id"`
	CashBalance           exportDecimal     `json:"cash_balance"`
	LockedAttributes      map[string]any    `json:"locked_attributes"`
	Status                string            `json:"status"`
	SimplefinAccountID    *uuid.UUID        `json:"simplefin_account_id"`
	InstitutionName       *string           `json:"institution_name"`
	InstitutionDomain     *string           `json:"institution_domain"`
	Notes                 *string           `json:"notes"`
	OwnerID               *uuid.UUID        `json:"owner_id"`
	DisabledAt            *exportTime       `json:"disabled_at"`
	ExcludeFromReports    bool              `json:"exclude_from_reports"`
	AccountProvidersCount int               `json:"account_providers_count"`
	EnableCategoryMatcher bool              `json:"enable_category_matcher"`
	Accountable           exportAccountable `json:"accountable"`
}

func exportAccountOf(a *Account) exportAccount {
	return exportAccount{
		ID: a.ID, Subtype: a.Subtype, FamilyID: a.FamilyID, Name: a.Name,
		CreatedAt: exportTime(a.CreatedAt), UpdatedAt: exportTime(a.UpdatedAt),
		AccountableType: accountableType(a.AccountType), AccountableID: derivedID(a.ID, "accountable"),
		Balance: exportDecimal(a.Balance), Currency: a.Currency, Classification: a.Classification(),
		CashBalance: exportDecimal(a.CashBalance), LockedAttributes: map[string]any{}, Status: a.Status,
		InstitutionName: a.InstitutionName, InstitutionDomain: a.InstitutionDomain, EnableCategoryMatcher: true,
		Accountable: exportAccountable{ID: derivedID(a.ID, "accountable"), CreatedAt: exportTime(a.CreatedAt),
			UpdatedAt: exportTime(a.UpdatedAt), LockedAttributes: map[string]any{}, Subtype: a.Subtype},
	}
}

type exportCategory struct {
	ID                   uuid.UUID  `json:"id"`
	Name                 string     `json:"name"`
	Color                string     `json:"color"`
	FamilyID             uuid.UUID  `json:"family_id"`
	CreatedAt            exportTime `json:"created_at"`
	UpdatedAt            exportTime `json:"updated_at"`
	ParentID             *uuid.UUID `json:"parent_id"`
	ClassificationUnused string     `json:"classification_unused"`
	LucideIcon           string     `json:"lucide_icon"`
}

// lucideIcon is a category's icon, or the reference's default.
func lucideIcon(c *Category) string {
	if c.Icon == "" {
		return "shapes"
	}
	return c.Icon
}

type exportTag struct {
	ID        uuid.UUID  `json:"id"`
	Name      string     `json:"name"`
	Color     string     `json:"color"`
	FamilyID  uuid.UUID  `json:"family_id"`
	CreatedAt exportTime `json:"created_at"`
	UpdatedAt exportTime `json:"updated_at"`
}

// merchantColor is the reference's default colour of a merchant: we keep
// none, and its merchants need one.
const merchantColor = "#e99537"

type exportMerchant struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	Color      string     `json:"color"`
	FamilyID   uuid.UUID  `json:"family_id"`
	CreatedAt  exportTime `json:"created_at"`
	UpdatedAt  exportTime `json:"updated_at"`
	LogoURL    *string    `json:"logo_url"`
	WebsiteURL *string    `json:"website_url"`
	Type       string     `json:"type"`
}

type exportSplitLine struct {
	ID         uuid.UUID     `json:"id"`
	EntryID    uuid.UUID     `json:"entry_id"`
	Amount     exportDecimal `json:"amount"`
	Currency   string        `json:"currency"`
	Name       string        `json:"name"`
	Notes      *string       `json:"notes"`
	Excluded   bool          `json:"excluded"`
	CategoryID *uuid.UUID    `json:"category_id"`
	MerchantID *uuid.UUID    `json:"merchant_id"`
	TagIDs     []uuid.UUID   `json:"tag_ids"`
	Kind       string        `json:"kind"`
	CreatedAt  exportTime    `json:"created_at"`
	UpdatedAt  exportTime    `json:"updated_at"`
}

type exportTransaction struct {
	ID         uuid.UUID         `json:"id"`
	EntryID    uuid.UUID         `json:"entry_id"`
	AccountID  uuid.UUID         `json:"account_id"`
	Date       civil.Date        `json:"date"`
	Amount     exportDecimal     `json:"amount"`
	Currency   string            `json:"currency"`
	Name       string            `json:"name"`
	Notes      *string           `json:"notes"`
	Excluded   bool              `json:"excluded"`
	CategoryID *uuid.UUID        `json:"category_id"`
	MerchantID *uuid.UUID        `json:"merchant_id"`
	TagIDs     []uuid.UUID       `json:"tag_ids"`
	Kind       string            `json:"kind"`
	CreatedAt  exportTime        `json:"created_at"`
	UpdatedAt  exportTime        `json:"updated_at"`
	SplitLines []exportSplitLine `json:"split_lines,omitempty"`
}

type exportTransfer struct {
	ID                   uuid.UUID  `json:"id"`
	InflowTransactionID  uuid.UUID  `json:"inflow_transaction_id"`
	OutflowTransactionID uuid.UUID  `json:"outflow_transaction_id"`
	Status               string     `json:"status"`
	Notes                *string    `json:"notes"`
	CreatedAt            exportTime `json:"created_at"`
	UpdatedAt            exportTime `json:"updated_at"`
}

type exportRejectedTransfer struct {
	ID                   uuid.UUID  `json:"id"`
	InflowTransactionID  uuid.UUID  `json:"inflow_transaction_id"`
	OutflowTransactionID uuid.UUID  `json:"outflow_transaction_id"`
	CreatedAt            exportTime `json:"created_at"`
	UpdatedAt            exportTime `json:"updated_at"`
}

type exportValuation struct {
	ID        uuid.UUID     `json:"id"`
	EntryID   uuid.UUID     `json:"entry_id"`
	AccountID uuid.UUID     `json:"account_id"`
	Date      civil.Date    `json:"date"`
	Amount    exportDecimal `json:"amount"`
	Currency  string        `json:"currency"`
	Name      string        `json:"name"`
	Kind      string        `json:"kind"`
	CreatedAt exportTime    `json:"created_at"`
	UpdatedAt exportTime    `json:"updated_at"`
}

// valuationKind is the reference's kind of one of our valuations: an
// opening balance is its opening anchor, any other a reconciliation.
func valuationKind(kind string) string {
	if kind == ValuationOpening {
		return "opening_anchor"
	}
	return "reconciliation"
}

// valuationName is the entry name the reference gives a valuation, unless
// the valuation has notes of its own.
func valuationName(v *Valuation) string {
	if v.Notes != nil && *v.Notes != "" {
		return *v.Notes
	}
	if v.Kind == ValuationOpening {
		return "Opening balance"
	}
	return "Manual value update"
}

type exportBudget struct {
	ID               uuid.UUID      `json:"id"`
	FamilyID         uuid.UUID      `json:"family_id"`
	StartDate        civil.Date     `json:"start_date"`
	EndDate          civil.Date     `json:"end_date"`
	BudgetedSpending *exportDecimal `json:"budgeted_spending"`
	ExpectedIncome   *exportDecimal `json:"expected_income"`
	Currency         string         `json:"currency"`
	CreatedAt        exportTime     `json:"created_at"`
	UpdatedAt        exportTime     `json:"updated_at"`
}

type exportBudgetCategory struct {
	ID               uuid.UUID     `json:"id"`
	BudgetID         uuid.UUID     `json:"budget_id"`
	CategoryID       uuid.UUID     `json:"category_id"`
	BudgetedSpending exportDecimal `json:"budgeted_spending"`
	Currency         string        `json:"currency"`
	CreatedAt        exportTime    `json:"created_at"`
	UpdatedAt        exportTime    `json:"updated_at"`
}

type exportValueRef struct {
	Type string    `json:"type"`
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

type exportCondition struct {
	ConditionType string            `json:"condition_type"`
	Operator      string            `json:"operator"`
	Value         *string           `json:"value"`
	ValueRef      *exportValueRef   `json:"value_ref,omitempty"`
	SubConditions []exportCondition `json:"sub_conditions,omitempty"`
}

type exportAction struct {
	ActionType string          `json:"action_type"`
	Value      *string         `json:"value"`
	ValueRef   *exportValueRef `json:"value_ref,omitempty"`
}

type exportRule struct {
	ID            uuid.UUID         `json:"id"`
	Name          *string           `json:"name"`
	ResourceType  string            `json:"resource_type"`
	Active        bool              `json:"active"`
	EffectiveDate *civil.Date       `json:"effective_date"`
	Conditions    []exportCondition `json:"conditions"`
	Actions       []exportAction    `json:"actions"`
}

// The chats are ours alone: the reference's exporter leaves them out and
// its importer skips types it does not know, so these lines cost it
// nothing and keep a family's conversations in its backup.
// exportRecurring is a "RecurringTransaction" line: the reference's keys
// in its order, then coffer's own (cadence, previous_amount, autopay,
// notes), which the reference's importer ignores.
type exportRecurring struct {
	ID             uuid.UUID      `json:"id"`
	AccountID      *uuid.UUID     `json:"account_id"`
	MerchantID     *uuid.UUID     `json:"merchant_id"`
	Amount         exportDecimal  `json:"amount"`
	Currency       string         `json:"currency"`
	ExpectedDay    int            `json:"expected_day_of_month"`
	LastDate       *civil.Date    `json:"last_occurrence_date"`
	NextDate       civil.Date     `json:"next_expected_date"`
	Status         string         `json:"status"`
	Occurrences    int            `json:"occurrence_count"`
	Name           *string        `json:"name"`
	Manual         bool           `json:"manual"`
	AmountMin      *exportDecimal `json:"expected_amount_min"`
	AmountMax      *exportDecimal `json:"expected_amount_max"`
	AmountAvg      *exportDecimal `json:"expected_amount_avg"`
	CreatedAt      exportTime     `json:"created_at"`
	UpdatedAt      exportTime     `json:"updated_at"`
	Cadence        string         `json:"cadence"`
	PreviousAmount *exportDecimal `json:"previous_amount"`
	Autopay        bool           `json:"autopay"`
	Notes          *string        `json:"notes"`
}

type exportChat struct {
	ID                        uuid.UUID  `json:"id"`
	UserID                    uuid.UUID  `json:"user_id"`
	Title                     string     `json:"title"`
	Instructions              *string    `json:"instructions"`
	Error                     *string    `json:"error"`
	LatestAssistantResponseID *string    `json:"latest_assistant_response_id"`
	CreatedAt                 exportTime `json:"created_at"`
	UpdatedAt                 exportTime `json:"updated_at"`
}

type exportMessage struct {
	ID        uuid.UUID  `json:"id"`
	ChatID    uuid.UUID  `json:"chat_id"`
	Type      string     `json:"type"`
	Status    string     `json:"status"`
	Content   string     `json:"content"`
	AIModel   *string    `json:"ai_model"`
	CreatedAt exportTime `json:"created_at"`
	UpdatedAt exportTime `json:"updated_at"`
}

// messageType is the reference's class name of a message type
// (user_message: UserMessage).
func messageType(t string) string {
	var b strings.Builder
	for _, part := range strings.Split(t, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

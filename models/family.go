package models

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Family is a group of users sharing one ledger.
type Family struct {
	bun.BaseModel `bun:"table:families,alias:f"`

	ID       uuid.UUID `bun:"id,pk"`
	Name     string    `bun:"name"`
	Currency string    `bun:"currency"` // default currency of new records
	// NumberFormat is how the screens read and write amounts ("1.234,56");
	// empty: the usual format of Currency.
	NumberFormat string `bun:"number_format"`
	// RulesVersion counts the changes to the family's rules (see
	// WithFamily).
	RulesVersion int64 `bun:"rules_version"`
	// RequireSecondFactor: every member signing in with a password must
	// have an authenticator app; one without enrols after the password.
	RequireSecondFactor bool      `bun:"require_second_factor"`
	CreatedAt           time.Time `bun:"created_at"`
	UpdatedAt           time.Time `bun:"updated_at"`
}

// Family returns one family.
func (s *Store) Family(ctx context.Context, familyID uuid.UUID) (*Family, error) {
	f := new(Family)
	err := s.db.NewSelect().Model(f).Where("f.id = ?", familyID).Scan(ctx)
	return f, dbErr("get family", err)
}

// UpdateFamily saves a family's name, currency and number format, the
// settings its admins change.
func (s *Store) UpdateFamily(ctx context.Context, f *Family) error {
	f.UpdatedAt = s.now()
	res, err := s.db.NewUpdate().Model(f).
		Column("name", "currency", "number_format", "updated_at").
		Where("id = ?", f.ID).
		Exec(ctx)
	if err != nil {
		return dbErr("update family", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrNotFound
	}
	return nil
}

// SetRequireSecondFactor turns the family's second-factor requirement on
// or off.
func (s *Store) SetRequireSecondFactor(ctx context.Context, familyID uuid.UUID, require bool) error {
	res, err := s.db.NewUpdate().Model((*Family)(nil)).Set("require_second_factor = ?", require).
		Set("updated_at = ?", s.now()).Where("id = ?", familyID).Exec(ctx)
	if err != nil {
		return dbErr("set require second factor", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrNotFound
	}
	return nil
}

// CreateFamily inserts a family; its id and timestamps are set here.
func (s *Store) CreateFamily(ctx context.Context, f *Family) error {
	f.ID = NewID()
	f.CreatedAt = s.now()
	f.UpdatedAt = f.CreatedAt
	_, err := s.db.NewInsert().Model(f).Exec(ctx)
	return dbErr("create family", err)
}

// RegisterFamily creates family f with u as its admin and signs u in with
// the password u holds, recording the login, in one transaction. It
// returns the session token. An email in use is ErrConflict.
func (s *Store) RegisterFamily(ctx context.Context, f *Family, u *User, in SignIn) (token string, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.createFamilyAdmin(ctx, f, u); err != nil {
			return err
		}
		sess := &Session{FamilyID: u.FamilyID, UserID: u.ID, Method: MethodPassword, IP: in.IP, UserAgent: in.UserAgent}
		if token, err = tx.CreateSession(ctx, sess, in.MaxAge); err != nil {
			return err
		}
		return tx.CreateAuditLog(ctx, in.audit(EventLogin, u.ID, map[string]any{"method": "password", "override": false, "registration": true}))
	})
	return token, err
}

// createFamilyAdmin inserts f and its first user u, who administers it
// whatever role was asked for.
func (s *Store) createFamilyAdmin(ctx context.Context, f *Family, u *User) error {
	if err := s.CreateFamily(ctx, f); err != nil {
		return err
	}
	u.FamilyID = f.ID
	if u.Role == "" || u.Role == RoleMember {
		u.Role = RoleAdmin
	}
	return s.CreateUser(ctx, u)
}

// familyByName finds a family by name in any letter case, the oldest when
// several share it. It is not scoped by family: AddUser uses it to refuse
// a second family of the same name.
func (s *Store) familyByName(ctx context.Context, name string) (*Family, error) {
	f := new(Family)
	err := s.db.NewSelect().Model(f).
		Where("lower(f.name) = lower(?)", strings.TrimSpace(name)).
		OrderExpr("f.created_at, f.id").Limit(1).
		Scan(ctx)
	return f, dbErr("get family by name", err)
}

// FamilySummary is a family as an operator's list shows it.
type FamilySummary struct {
	Family       `bun:",extend"`
	MembersCount int `bun:"members_count,scanonly"`
}

// Families lists every family by name with its number of users, in one
// query. It is not scoped by family: it is for operators (the CLI, super
// admins).
func (s *Store) Families(ctx context.Context) ([]FamilySummary, error) {
	fs := []FamilySummary{}
	err := s.db.NewSelect().Model(&fs).
		ColumnExpr("f.*").
		ColumnExpr("(SELECT count(*) FROM users u WHERE u.family_id = f.id) AS members_count").
		OrderExpr("lower(f.name), f.id").
		Scan(ctx)
	return fs, dbErr("list families", err)
}

// FamilyCurrencies are the currencies the family keeps money in: its own
// first, then its accounts' others, in code order.
func (s *Store) FamilyCurrencies(ctx context.Context, familyID uuid.UUID) ([]string, error) {
	f, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	var others []string
	if err := s.db.NewSelect().Model((*Account)(nil)).ColumnExpr("DISTINCT currency").Where("family_id = ?", familyID).
		Where("currency <> ?", f.Currency).OrderExpr("currency").Scan(ctx, &others); err != nil {
		return nil, dbErr("list family currencies", err)
	}
	return append([]string{f.Currency}, others...), nil
}

// commaCurrencies are the currencies whose people mostly write 1.234,56;
// spaceCurrencies those who write 1 234,56. Every other currency's
// convention is 1,234.56. A family's currency picks its default.
var (
	commaCurrencies = map[string]bool{"EUR": true, "BRL": true, "DKK": true, "IDR": true, "TRY": true, "ARS": true,
		"CLP": true, "COP": true, "ISK": true, "RSD": true, "VND": true}
	spaceCurrencies = map[string]bool{"SEK": true, "NOK": true, "PLN": true, "CZK": true, "HUF": true, "UAH": true,
		"RUB": true, "BGN": true, "RON": true, "ZAR": true}
)

// UsualNumberFormat is how amounts are usually written where currency is
// used, by example: "1,234.56", "1.234,56" or "1 234,56".
func UsualNumberFormat(currency string) string {
	switch {
	case commaCurrencies[currency]:
		return "1.234,56"
	case spaceCurrencies[currency]:
		return "1 234,56"
	}
	return "1,234.56"
}

// Numbers is the number format the family chose, or its currency's usual
// one.
func (f *Family) Numbers() string {
	if f.NumberFormat != "" {
		return f.NumberFormat
	}
	return UsualNumberFormat(f.Currency)
}

package models

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/money"
)

// ProviderAccount is one account in the Bridge's answer, linked to the
// ledger account its transactions are imported into.
type ProviderAccount struct {
	bun.BaseModel `bun:"table:provider_accounts,alias:pa"`

	ID               uuid.UUID     `bun:"id,pk"`
	FamilyID         uuid.UUID     `bun:"family_id"`
	ConnectionID     uuid.UUID     `bun:"connection_id"`
	RemoteID         string        `bun:"remote_id"`
	AccountID        *uuid.UUID    `bun:"account_id"`
	CreatedAccountID *uuid.UUID    `bun:"created_account_id"` // the ledger account this connection made; only it may be purged
	ImportEnabled    bool          `bun:"import_enabled"`
	Name             string        `bun:"name"`
	OrgName          *string       `bun:"org_name"`
	Currency         string        `bun:"currency"`
	CurrencyRaw      *string       `bun:"currency_raw"`
	Balance          *money.Amount `bun:"balance"`
	AvailableBalance *money.Amount `bun:"available_balance"`
	BalanceDate      *time.Time    `bun:"balance_date"`
	Attention        *string       `bun:"attention"`
	LastSeenAt       *time.Time    `bun:"last_seen_at"`
	CreatedAt        time.Time     `bun:"created_at"`
	UpdatedAt        time.Time     `bun:"updated_at"`
}

// RemoteAccount is what one answer says about a remote account, already
// validated: a nil balance was missing or unreadable and keeps the old one.
type RemoteAccount struct {
	RemoteID         string
	Name             string
	OrgName          string
	Currency         string // ISO code, or XXX
	CurrencyRaw      string // set when Currency is XXX
	Balance          *money.Amount
	AvailableBalance *money.Amount
	BalanceDate      time.Time
	Attention        string
}

// SaveProviderAccount upserts a remote account by (connection, remote id).
// On first sight it also creates the ledger account it feeds and links
// it. It reports whether the remote account is new.
func (s *Store) SaveProviderAccount(ctx context.Context, familyID, connectionID uuid.UUID, ra RemoteAccount) (*ProviderAccount, bool, error) {
	pa := new(ProviderAccount)
	var created bool
	err := s.RunInTx(ctx, func(tx *Store) error {
		now := tx.now()
		err := tx.db.NewSelect().Model(pa).Where("pa.family_id = ?", familyID).Where("pa.connection_id = ?", connectionID).
			Where("pa.remote_id = ?", ra.RemoteID).Scan(ctx)
		if err := dbErr("get provider account", err); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		} else if errors.Is(err, ErrNotFound) {
			created = true
			// Untyped until the user says what it is (spec §8).
			a := &Account{FamilyID: familyID, Name: ra.Name, Currency: ra.Currency}
			if ra.OrgName != "" {
				a.InstitutionName = &ra.OrgName
			}
			if err := tx.CreateAccount(ctx, a); err != nil {
				return err
			}
			*pa = ProviderAccount{ID: NewID(), FamilyID: familyID, ConnectionID: connectionID, RemoteID: ra.RemoteID,
				AccountID: &a.ID, CreatedAccountID: &a.ID, ImportEnabled: true, CreatedAt: now}
		}
		pa.Name, pa.Currency, pa.LastSeenAt, pa.UpdatedAt = ra.Name, ra.Currency, &now, now
		pa.OrgName, pa.CurrencyRaw, pa.Attention = optString(ra.OrgName), optString(ra.CurrencyRaw), optString(ra.Attention)
		// An older balance never replaces a newer one; a missing one keeps it.
		if ra.Balance != nil && (pa.BalanceDate == nil || !ra.BalanceDate.Before(*pa.BalanceDate)) {
			bd := ra.BalanceDate.UTC()
			pa.Balance, pa.AvailableBalance, pa.BalanceDate = ra.Balance, ra.AvailableBalance, &bd
			if pa.AvailableBalance == nil {
				pa.AvailableBalance = ra.Balance
			}
		}
		if created {
			_, err = tx.db.NewInsert().Model(pa).Exec(ctx)
		} else {
			_, err = tx.db.NewUpdate().Model(pa).ExcludeColumn("id", "family_id", "connection_id", "remote_id", "account_id",
				"created_account_id", "import_enabled", "created_at").Where("family_id = ?", familyID).WherePK().Exec(ctx)
		}
		return dbErr("save provider account", err)
	})
	return pa, created, err
}

// ProviderAccount returns one remote account of the family.
func (s *Store) ProviderAccount(ctx context.Context, familyID, id uuid.UUID) (*ProviderAccount, error) {
	pa := new(ProviderAccount)
	err := s.db.NewSelect().Model(pa).Where("pa.family_id = ?", familyID).Where("pa.id = ?", id).Scan(ctx)
	return pa, dbErr("get provider account", err)
}

// ProviderAccounts lists a connection's remote accounts.
func (s *Store) ProviderAccounts(ctx context.Context, familyID, connectionID uuid.UUID) ([]ProviderAccount, error) {
	out := []ProviderAccount{}
	err := s.db.NewSelect().Model(&out).Where("pa.family_id = ?", familyID).Where("pa.connection_id = ?", connectionID).
		OrderExpr("pa.created_at, pa.id").Scan(ctx)
	return out, dbErr("list provider accounts", err)
}

// ProviderAccountsOf lists the remote accounts of several connections
// in one query, by connection, each in the order ProviderAccounts uses.
func (s *Store) ProviderAccountsOf(ctx context.Context, familyID uuid.UUID, connectionIDs []uuid.UUID) (map[uuid.UUID][]ProviderAccount, error) {
	out := map[uuid.UUID][]ProviderAccount{}
	if len(connectionIDs) == 0 {
		return out, nil
	}
	var pas []ProviderAccount
	err := s.db.NewSelect().Model(&pas).Where("pa.family_id = ?", familyID).Where("pa.connection_id IN (?)", bun.List(connectionIDs)).
		OrderExpr("pa.created_at, pa.id").Scan(ctx)
	if err != nil {
		return nil, dbErr("list provider accounts", err)
	}
	for _, pa := range pas {
		out[pa.ConnectionID] = append(out[pa.ConnectionID], pa)
	}
	return out, nil
}

// ImportableAccounts lists the remote accounts a sync fetched that feed a
// ledger account with import enabled: one import step each.
func (s *Store) ImportableAccounts(ctx context.Context, familyID, syncID uuid.UUID) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	sub := s.db.NewSelect().Model((*SyncPayload)(nil)).Column("remote_id").
		Where("family_id = ?", familyID).Where("sync_id = ?", syncID)
	err := s.db.NewSelect().Model((*ProviderAccount)(nil)).Column("pa.id").
		Where("pa.family_id = ?", familyID).Where("pa.import_enabled").Where("pa.account_id IS NOT NULL").
		Where("pa.connection_id = (SELECT connection_id FROM syncs WHERE family_id = ? AND id = ?)", familyID, syncID).
		Where("pa.remote_id IN (?)", sub).OrderExpr("pa.id").Scan(ctx, &ids)
	return ids, dbErr("list importable accounts", err)
}

// UpdateProviderAccount changes a remote account's link or import switch.
// A link must name an active ledger account of the family in the same
// currency that no other remote account feeds (else ErrConflict).
func (s *Store) UpdateProviderAccount(ctx context.Context, pa *ProviderAccount, linkTo *uuid.UUID) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if linkTo != nil {
			a, err := tx.Account(ctx, pa.FamilyID, *linkTo)
			if errors.Is(err, ErrNotFound) {
				return Invalid("Account not found")
			}
			if err != nil {
				return err
			}
			if a.Currency != pa.Currency {
				return Invalid("The account's currency must be " + pa.Currency)
			}
			pa.AccountID = linkTo
		}
		pa.UpdatedAt = tx.now()
		_, err := tx.db.NewUpdate().Model(pa).Column("account_id", "import_enabled", "updated_at").
			Where("family_id = ?", pa.FamilyID).WherePK().Exec(ctx)
		return dbErr("update provider account", err)
	})
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

package models

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/secret"
)

// Provider strategies.
const (
	StrategyOIDC  = "openid_connect"
	StrategyOAuth = "oauth2"
	StrategySAML  = "saml"
)

// Token endpoint client authentication methods.
const (
	AuthPost  = "client_secret_post"
	AuthBasic = "client_secret_basic"
)

// Provider sources: managed on the admin screen, or mirrored from a file.
const (
	SourceDB   = "db"
	SourceYAML = "yaml"
)

const providerTable = "sso_providers"

// GroupMapping grants Role to members of Group (exact, case-sensitive).
type GroupMapping struct {
	Group string `json:"group"`
	Role  string `json:"role"`
}

// SSOProvider is one identity provider. The sealed columns hold secrets
// that only ProviderSecret opens; they are never rendered back.
type SSOProvider struct {
	bun.BaseModel `bun:"table:sso_providers,alias:sp"`

	ID       uuid.UUID `bun:"id,pk"`
	Name     string    `bun:"name"` // the callback path segment; never changes
	Strategy string    `bun:"strategy"`
	Label    string    `bun:"label"`
	Enabled  bool      `bun:"enabled"`
	Source   string    `bun:"source"`

	// OpenID Connect and OAuth 2.0.
	Issuer           *string `bun:"issuer"`
	ClientID         *string `bun:"client_id"`
	ClientSecretEnc  *string `bun:"client_secret_enc"`
	Scopes           *string `bun:"scopes"`
	Prompt           *string `bun:"prompt"`
	AuthorizationURL *string `bun:"authorization_url"`
	TokenURL         *string `bun:"token_url"`
	UserinfoURL      *string `bun:"userinfo_url"`
	TokenAuthMethod  *string `bun:"token_auth_method"`

	// SAML 2.0.
	IdPMetadataURL    *string `bun:"idp_metadata_url"`
	IdPEntityID       *string `bun:"idp_entity_id"`
	IdPSSOURL         *string `bun:"idp_sso_url"`
	IdPSLOURL         *string `bun:"idp_slo_url"`
	IdPCertificates   *string `bun:"idp_certificates"` // one or more PEM blocks
	NameIDFormat      *string `bun:"name_id_format"`
	SubjectSource     *string `bun:"subject_source"`
	EmailAttribute    *string `bun:"email_attribute"`
	GroupAttribute    *string `bun:"group_attribute"`
	SignRequests      bool    `bun:"sign_requests"`
	SPPrivateKeyEnc   *string `bun:"sp_private_key_enc"`
	SPCertificate     *string `bun:"sp_certificate"`
	AllowIdPInitiated bool    `bun:"allow_idp_initiated"`

	DefaultRole   string         `bun:"default_role"`
	GroupMappings []GroupMapping `bun:"group_mappings,notnull"`
	Rules         *string        `bun:"rules"` // JSON text as saved; sso parses it

	CreatedBy *uuid.UUID `bun:"created_by"`
	UpdatedBy *uuid.UUID `bun:"updated_by"`
	CreatedAt time.Time  `bun:"created_at"`
	UpdatedAt time.Time  `bun:"updated_at"`

	IdentityCount int `bun:"identity_count,scanonly"`
}

// LogValue keeps the sealed columns out of logs.
func (p *SSOProvider) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", p.ID.String()), slog.String("name", p.Name))
}

// HasMappings reports whether logins through p recompute roles: it has
// group mappings or rule conditions. Rules were validated on save; rules
// that no longer parse count as none.
func (p *SSOProvider) HasMappings() bool {
	rules, _ := ParseRoleMapping(Str(p.Rules), p.Strategy)
	return HasMappings(p, rules)
}

// Sealed secret columns of a provider.
const (
	ColClientSecret = "client_secret_enc"
	ColSPPrivateKey = "sp_private_key_enc"
)

func (p *SSOProvider) sealedColumn(col string) **string {
	switch col {
	case ColClientSecret:
		return &p.ClientSecretEnc
	case ColSPPrivateKey:
		return &p.SPPrivateKeyEnc
	}
	panic("models: unknown sealed column " + col)
}

// SetProviderSecret seals value into col of p, which must have its id.
// An empty value clears the column.
func (s *Store) SetProviderSecret(p *SSOProvider, col, value string) error {
	dst := p.sealedColumn(col)
	if value == "" {
		*dst = nil
		return nil
	}
	sealed, err := s.Secrets.Seal(value, providerTable, col, p.ID.String())
	if err != nil {
		return err
	}
	*dst = &sealed
	return nil
}

// ProviderSecret opens col of p: "" when unset; a value stored before
// encryption (no enc: prefix) is returned as is until the backfill seals
// it; ErrSealed when it cannot be opened.
func (s *Store) ProviderSecret(p *SSOProvider, col string) (string, error) {
	v := *p.sealedColumn(col)
	if v == nil || *v == "" {
		return "", nil
	}
	if !secret.IsSealed(*v) {
		return *v, nil
	}
	if s.Secrets == nil {
		return "", secret.ErrSealed
	}
	return s.Secrets.Open(*v, providerTable, col, p.ID.String())
}

// SSOProviders lists every provider by name, with its identity count.
func (s *Store) SSOProviders(ctx context.Context) ([]SSOProvider, error) {
	ps := []SSOProvider{}
	err := s.db.NewSelect().Model(&ps).ColumnExpr("sp.*").
		ColumnExpr("(SELECT count(*) FROM sso_identities AS i WHERE i.provider_id = sp.id) AS identity_count").
		OrderExpr("sp.name").Scan(ctx)
	return ps, dbErr("list sso providers", err)
}

// EnabledSSOProviders lists the providers a login page offers, by name.
func (s *Store) EnabledSSOProviders(ctx context.Context) ([]SSOProvider, error) {
	ps := []SSOProvider{}
	err := s.db.NewSelect().Model(&ps).Where("sp.enabled").OrderExpr("sp.name").Scan(ctx)
	return ps, dbErr("list sso providers", err)
}

// SSOProvider returns one provider by id.
func (s *Store) SSOProvider(ctx context.Context, id uuid.UUID) (*SSOProvider, error) {
	p := new(SSOProvider)
	err := s.db.NewSelect().Model(p).ColumnExpr("sp.*").
		ColumnExpr("(SELECT count(*) FROM sso_identities AS i WHERE i.provider_id = sp.id) AS identity_count").
		Where("sp.id = ?", id).Scan(ctx)
	return p, dbErr("get sso provider", err)
}

// ProviderChange is an administrator's change to a provider, with the
// request details its audit record keeps.
type ProviderChange struct {
	ActorID   uuid.UUID
	IP        *string
	UserAgent *string
	Changed   []string // names of changed fields, never values
}

func (s *Store) auditProvider(ctx context.Context, event string, c ProviderChange, p *SSOProvider, extra map[string]any) error {
	meta := map[string]any{"provider_id": p.ID.String(), "strategy": p.Strategy, "enabled": p.Enabled}
	if c.Changed != nil {
		meta["changed_fields"] = c.Changed
	}
	for k, v := range extra {
		meta[k] = v
	}
	name := p.Name
	return s.CreateAuditLog(ctx, &AuditLog{EventType: event, UserID: &c.ActorID, Provider: &name,
		IP: c.IP, UserAgent: c.UserAgent, Metadata: meta})
}

// NewProviderID gives a provider its id before it is stored, so that its
// secrets can be sealed for that row.
func NewProviderID(p *SSOProvider) { p.ID = NewID() }

// CreateSSOProvider stores p (its secrets already sealed for p.ID) and
// records provider_created. A name in use is ErrConflict.
func (s *Store) CreateSSOProvider(ctx context.Context, p *SSOProvider, c ProviderChange) error {
	if p.ID == uuid.Nil {
		p.ID = NewID()
	}
	p.CreatedAt = s.now()
	p.UpdatedAt = p.CreatedAt
	p.CreatedBy, p.UpdatedBy = actorPtr(c.ActorID), actorPtr(c.ActorID)
	if p.Source == "" {
		p.Source = SourceDB
	}
	if p.GroupMappings == nil {
		p.GroupMappings = []GroupMapping{}
	}
	return s.RunInTx(ctx, func(tx *Store) error {
		if _, err := tx.db.NewInsert().Model(p).Exec(ctx); err != nil {
			return dbErr("create sso provider", err)
		}
		return tx.auditProvider(ctx, EventProviderCreated, c, p, nil)
	})
}

// UpdateSSOProvider saves every column of p but its name, strategy, source
// and creation, and records provider_updated with c.Changed.
func (s *Store) UpdateSSOProvider(ctx context.Context, p *SSOProvider, c ProviderChange) error {
	p.UpdatedAt = s.now()
	p.UpdatedBy = actorPtr(c.ActorID)
	if p.GroupMappings == nil {
		p.GroupMappings = []GroupMapping{}
	}
	return s.RunInTx(ctx, func(tx *Store) error {
		res, err := tx.db.NewUpdate().Model(p).
			ExcludeColumn("id", "name", "strategy", "source", "created_by", "created_at").
			WherePK().Exec(ctx)
		if err := affectedOne(res, err, "update sso provider"); err != nil {
			return err
		}
		return tx.auditProvider(ctx, EventProviderUpdated, c, p, nil)
	})
}

// DeleteSSOProvider removes a provider and, by cascade, its identities.
func (s *Store) DeleteSSOProvider(ctx context.Context, id uuid.UUID, c ProviderChange) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		p, err := tx.SSOProvider(ctx, id)
		if err != nil {
			return err
		}
		if _, err := tx.db.NewDelete().Model((*SSOIdentity)(nil)).Where("provider_id = ?", id).Exec(ctx); err != nil {
			return dbErr("delete identities", err)
		}
		res, err := tx.db.NewDelete().Model((*SSOProvider)(nil)).Where("id = ?", id).Exec(ctx)
		if err := affectedOne(res, err, "delete sso provider"); err != nil {
			return err
		}
		return tx.auditProvider(ctx, EventProviderDeleted, c, p, map[string]any{"identities_deleted": p.IdentityCount})
	})
}

func actorPtr(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// MirrorFileProviders makes the file's providers the yaml-sourced rows:
// each is inserted or updated by id (its secrets already sealed), and yaml
// rows no longer in the file are disabled, never deleted, so their users'
// identities survive a mistaken edit. Instances starting together take
// turns under an advisory lock.
func (s *Store) MirrorFileProviders(ctx context.Context, ps []*SSOProvider) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if tx.Postgres() {
			if _, err := tx.db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7431220003)"); err != nil {
				return dbErr("lock providers", err)
			}
		}
		ids := make([]uuid.UUID, 0, len(ps))
		now := tx.now()
		for _, p := range ps {
			p.Source, p.UpdatedAt = SourceYAML, now
			if p.GroupMappings == nil {
				p.GroupMappings = []GroupMapping{}
			}
			ids = append(ids, p.ID)
			res, err := tx.db.NewUpdate().Model(p).ExcludeColumn("id", "created_by", "created_at").WherePK().Exec(ctx)
			if err != nil {
				return dbErr("mirror provider", err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				continue
			}
			p.CreatedAt = now
			if _, err := tx.db.NewInsert().Model(p).Exec(ctx); err != nil {
				return dbErr("mirror provider", err)
			}
		}
		q := tx.db.NewUpdate().Model((*SSOProvider)(nil)).Set("enabled = ?", false).Set("updated_at = ?", now).
			Where("source = ?", SourceYAML)
		if len(ids) > 0 {
			q.Where("id NOT IN (?)", bun.List(ids))
		}
		_, err := q.Exec(ctx)
		return dbErr("disable removed providers", err)
	})
}

// SetProviderEnabled switches a provider on or off without touching its
// other settings, so it cannot undo an edit saved a moment before.
func (s *Store) SetProviderEnabled(ctx context.Context, id uuid.UUID, enabled bool, c ProviderChange) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		res, err := tx.db.NewUpdate().Model((*SSOProvider)(nil)).Set("enabled = ?", enabled).
			Set("updated_at = ?", tx.now()).Set("updated_by = ?", actorPtr(c.ActorID)).Where("id = ?", id).Exec(ctx)
		if err := affectedOne(res, err, "toggle sso provider"); err != nil {
			return err
		}
		p, err := tx.SSOProvider(ctx, id)
		if err != nil {
			return err
		}
		c.Changed = []string{"enabled"}
		return tx.auditProvider(ctx, EventProviderUpdated, c, p, nil)
	})
}

package models

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// OAuthClient is an app that may ask people for access to their family
// through the OAuth authorization server: registered by itself (RFC 7591,
// public, PKCE only) or the server's own (the mobile app). Clients belong
// to no family; what they get is decided per person, at consent.
type OAuthClient struct {
	bun.BaseModel `bun:"table:oauth_clients,alias:oc"`

	ID           string    `bun:"id,pk"`
	Name         string    `bun:"name"`
	RedirectURIs []string  `bun:"redirect_uris,notnull"`
	Scope        string    `bun:"scope"` // the scopes it may ask for, space-separated
	FirstParty   bool      `bun:"first_party"`
	CreatedAt    time.Time `bun:"created_at"`
}

// CreateOAuthClient registers a client; its id is the caller's.
func (s *Store) CreateOAuthClient(ctx context.Context, c *OAuthClient) error {
	c.CreatedAt = s.now()
	if c.RedirectURIs == nil {
		c.RedirectURIs = []string{}
	}
	_, err := s.db.NewInsert().Model(c).Exec(ctx)
	return dbErr("create oauth client", err)
}

// EnsureOAuthClient registers a first-party client unless it exists; the
// web processes all call it at start.
func (s *Store) EnsureOAuthClient(ctx context.Context, c *OAuthClient) error {
	c.CreatedAt = s.now()
	if c.RedirectURIs == nil {
		c.RedirectURIs = []string{}
	}
	_, err := s.db.NewInsert().Model(c).On("CONFLICT (id) DO NOTHING").Exec(ctx)
	return dbErr("ensure oauth client", err)
}

// OAuthClient finds a client by id.
func (s *Store) OAuthClient(ctx context.Context, id string) (*OAuthClient, error) {
	c := new(OAuthClient)
	err := s.db.NewSelect().Model(c).Where("oc.id = ?", id).Scan(ctx)
	if err != nil {
		return nil, dbErr("get oauth client", err)
	}
	return c, nil
}

package models

import (
	"context"

	"github.com/google/uuid"
)

// VerifiedIdentity is what an identity provider asserted about a person,
// after sso/ checked every part of the protocol. The field names are also
// its JSON form: a link waiting for its owner's proof keeps it in Redis.
type VerifiedIdentity struct {
	Subject       string
	Issuer        string // OIDC: the token's iss
	Email         string // trimmed and lowercased
	EmailVerified bool
	FirstName     string
	LastName      string
	Groups        []string
	GroupsMissing bool           // the claim was absent or of another shape
	Claims        map[string]any // groups and the values rules read, kept for later syncs

	IDToken      string // OIDC: raw ID token, for RP-initiated logout
	NameID       string // SAML: for single logout
	SessionIndex string // SAML: for single logout
}

// StoredClaims is what an identity row keeps for later role syncs: the
// groups and the claims that the rule conditions name.
func (id *VerifiedIdentity) StoredClaims(rules *RoleMapping) map[string]any {
	out := map[string]any{}
	if !id.GroupsMissing {
		out["groups"] = id.Groups
	}
	for _, name := range rules.ConditionAttributes() {
		if v, ok := id.Claims[name]; ok {
			out[name] = v
		}
	}
	return out
}

// SSOSignIn is a sign-in through Provider: what the provider asserted,
// and where the browser is. Every string is already storable (the caller
// cleaned it).
type SSOSignIn struct {
	SignIn
	Provider *SSOProvider
	Identity *VerifiedIdentity

	invitation uuid.UUID // the invitation this sign-in accepts, named in its records
}

// audit is a record of an event at the sign-in's provider.
func (in *SSOSignIn) audit(event string, userID uuid.UUID, meta map[string]any) *AuditLog {
	rec := in.SignIn.audit(event, userID, meta)
	name := in.Provider.Name
	rec.Provider = &name
	return rec
}

// LoginWithSSO signs u in through an identity. known is the identity the
// provider's subject names; nil links the subject to u first, for a user
// who proved the account theirs with their password (audited as a link).
// In one transaction: the identity with what the provider said, blank
// names filled, the role recomputed when the provider maps roles, the
// session, the login time and the audit records. It returns the session
// token. A subject linked meanwhile is ErrConflict.
func (s *Store) LoginWithSSO(ctx context.Context, in SSOSignIn, u *User, known *SSOIdentity) (token string, err error) {
	ident, record := known, ""
	if ident == nil {
		ident, record = &SSOIdentity{}, EventLink
	}
	err = s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.lockRolesFor(ctx, in.Provider); err != nil {
			return err
		}
		token, err = tx.ssoLogin(ctx, in, u, ident, RoleSourceLogin, record)
		return err
	})
	return token, err
}

// CreateSSOAccount creates an account just in time: family f, its first
// user u (an admin at least) and the identity, then signs u in, all in one
// transaction. An email or subject taken meanwhile is ErrConflict.
func (s *Store) CreateSSOAccount(ctx context.Context, in SSOSignIn, f *Family, u *User) (token string, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.lockRolesFor(ctx, in.Provider); err != nil {
			return err
		}
		if err := tx.createFamilyAdmin(ctx, f, u); err != nil {
			return err
		}
		token, err = tx.ssoLogin(ctx, in, u, &SSOIdentity{}, RoleSourceJIT, EventJITCreated)
		return err
	})
	return token, err
}

// LinkIdentity links the asserted identity to u, who proved it theirs by
// being signed in; no session is made (in.MaxAge is unused). The identity
// is stored as a login stores it, role included, with a link record. A
// subject or provider already linked is ErrConflict.
func (s *Store) LinkIdentity(ctx context.Context, in SSOSignIn, u *User) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		// First, as on every path that changes roles.
		if err := tx.lockRoles(ctx); err != nil {
			return err
		}
		ident := &SSOIdentity{}
		if _, err := tx.applyIdentity(ctx, in, u, ident, RoleSourceLogin); err != nil {
			return err
		}
		return tx.CreateAuditLog(ctx, in.audit(EventLink, u.ID, map[string]any{"identity_id": ident.ID.String(), "proof": "session"}))
	})
}

// lockRolesFor takes the role lock when a login through p may change a
// role. It comes first, as on every path that changes roles, so that this
// transaction and an administrator's cannot wait on each other.
func (s *Store) lockRolesFor(ctx context.Context, p *SSOProvider) error {
	if !p.HasMappings() {
		return nil
	}
	return s.lockRoles(ctx)
}

// ssoLogin does the steps every SSO sign-in shares, inside the caller's
// transaction: the identity, the session, the login time, then the record
// of a new link or account (record: EventLink or EventJITCreated; "" for
// none) and the login record.
func (s *Store) ssoLogin(ctx context.Context, in SSOSignIn, u *User, ident *SSOIdentity, source, record string) (string, error) {
	meta, err := s.applyIdentity(ctx, in, u, ident, source)
	if err != nil {
		return "", err
	}
	id := in.Identity
	sess := &Session{FamilyID: u.FamilyID, UserID: u.ID, Method: MethodSSO, ProviderID: &in.Provider.ID, IP: in.IP, UserAgent: in.UserAgent,
		SAMLNameID: optString(id.NameID), SAMLSessionIndex: optString(id.SessionIndex)}
	token, err := s.createSSOSession(ctx, sess, id.IDToken, in.MaxAge)
	if err != nil {
		return "", err
	}
	if err := s.recordLogin(ctx, u.ID, nil); err != nil {
		return "", err
	}
	if in.invitation != uuid.Nil {
		meta["invitation_id"] = in.invitation.String()
	}
	switch record {
	case EventLink:
		err = s.CreateAuditLog(ctx, in.audit(EventLink, u.ID, map[string]any{"identity_id": ident.ID.String(), "proof": "password"}))
	case EventJITCreated:
		jit := map[string]any{"identity_id": ident.ID.String(), "family_id": u.FamilyID.String(), "role": meta["role"]}
		if in.invitation != uuid.Nil {
			jit["invitation_id"] = in.invitation.String()
		}
		err = s.CreateAuditLog(ctx, in.audit(EventJITCreated, u.ID, jit))
	}
	if err != nil {
		return "", err
	}
	return token, s.CreateAuditLog(ctx, in.audit(EventLogin, u.ID, meta))
}

// applyIdentity stores the identity (ident.ID unset: a new link) with what
// the provider said, fills blank names and recomputes the role when the
// provider has mappings. It returns the metadata of the login record.
func (s *Store) applyIdentity(ctx context.Context, in SSOSignIn, u *User, ident *SSOIdentity, source string) (map[string]any, error) {
	p, id := in.Provider, in.Identity
	rules, _ := ParseRoleMapping(Str(p.Rules), p.Strategy) // validated on save; nil reads as none
	if p.Strategy == StrategyOIDC && Str(ident.Issuer) == "" {
		ident.Issuer = optString(id.Issuer)
	}
	ident.Subject = id.Subject
	ident.Email = optString(id.Email)
	ident.EmailVerified = id.EmailVerified
	ident.FirstName, ident.LastName = optString(id.FirstName), optString(id.LastName)
	ident.Claims = id.StoredClaims(rules)
	var err error
	if ident.ID == uuid.Nil {
		ident.FamilyID, ident.UserID, ident.ProviderID = u.FamilyID, u.ID, p.ID
		err = s.CreateIdentity(ctx, ident)
	} else {
		err = s.updateIdentityLogin(ctx, ident)
	}
	if err != nil {
		return nil, err
	}
	if err := s.fillUserNames(ctx, u.ID, id.FirstName, id.LastName); err != nil {
		return nil, err
	}
	meta := map[string]any{"method": "sso", "override": false, "identity_id": ident.ID.String(), "role": u.Role}
	if id.GroupsMissing {
		meta["groups_claim_missing"] = true
	}
	decision := ComputeRole(p, rules, id.Groups, !id.GroupsMissing, id.Claims)
	if !decision.Mapped || source == RoleSourceInvitation {
		return meta, nil
	}
	meta["matched_groups"] = decision.MatchedGroups
	role, guard, err := s.ApplyMappedRole(ctx, MappedRole{UserID: u.ID, Target: decision.Role, Source: source,
		Provider: p.Name, IP: in.IP, UA: in.UserAgent})
	if err != nil {
		return nil, err
	}
	meta["role"] = role
	if guard != "" {
		meta["role_guard"] = guard
	}
	return meta, nil
}

// LoginAppWithSSO is LoginWithSSO for an app (the mobile app's sign-in
// through single sign-on) and a known identity: the identity with what
// the provider said, the role, the login time and the login record with
// meta added, in one transaction, and no browser session: the app gets
// tokens instead.
func (s *Store) LoginAppWithSSO(ctx context.Context, in SSOSignIn, u *User, known *SSOIdentity, meta map[string]any) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.lockRolesFor(ctx, in.Provider); err != nil {
			return err
		}
		m, err := tx.applyIdentity(ctx, in, u, known, RoleSourceLogin)
		if err != nil {
			return err
		}
		if err := tx.recordLogin(ctx, u.ID, nil); err != nil {
			return err
		}
		for k, v := range meta {
			m[k] = v
		}
		return tx.CreateAuditLog(ctx, in.audit(EventLogin, u.ID, m))
	})
}

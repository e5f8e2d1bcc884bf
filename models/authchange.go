package models

import "context"

// OnAuthChange sets fn to run after every committed change that ends or
// narrows what a credential grants: a key revoked, a user suspended,
// deleted or given another role, a family purged; and a change to a
// family's rules, which the cached credential's family counts (see
// WithFamily). Processes that cache credentials use it to drop them
// everywhere at once. Set it before the
// store is shared.
func (s *Store) OnAuthChange(fn func(ctx context.Context)) { s.authChanged = fn }

// authChange reports such a change. Inside a transaction it only marks
// it: a cache refilled before the commit would keep the old grant.
func (s *Store) authChange(ctx context.Context) {
	if s.after != nil {
		s.after.auth = true
		return
	}
	if s.authChanged != nil {
		s.authChanged(ctx)
	}
}

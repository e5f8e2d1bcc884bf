package models

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
)

// ErrInvitationEmail: the address a provider verified is not the invited
// one. An invitation admits one address, whoever else holds the link.
var ErrInvitationEmail = errors.New("invitation is for another email address")

// AcceptInvitationSSO accepts the family's invitation id through a
// sign-in at a provider, in one transaction that also signs the person in
// and returns the session token. u is one of two people:
//
//   - someone new (no ID, known nil): u joins the invited family with the
//     invited address and role, with the identity, recorded as a
//     just-in-time account (jit_account_created, then login);
//   - the owner of known, an identity already linked, who must be in the
//     invited family (else ErrEmailTaken) and just signs in.
//
// The invitation is then marked used by u. The verified address must be
// the invited one, in any letter case (else ErrInvitationEmail). It is
// refused with the errors of Invitation, or ErrEmailTaken when the
// address has an account in another family; a subject taken meanwhile is
// ErrConflict. Of two concurrent accepts, one wins and the other gets
// ErrInvitationUsed. A refusal changes nothing.
func (s *Store) AcceptInvitationSSO(ctx context.Context, in SSOSignIn, familyID, id uuid.UUID, u *User, known *SSOIdentity) (token string, err error) {
	err = s.RunInTx(ctx, func(tx *Store) error {
		if err := tx.lockRolesFor(ctx, in.Provider); err != nil {
			return err
		}
		inv, err := tx.claimInvitationFor(ctx, familyID, id, in.Identity)
		if err != nil {
			return err
		}
		in.invitation = inv.ID
		if known == nil {
			if err := tx.joinInvited(ctx, inv, u); err != nil {
				return err
			}
			// The role at join is the invited one, whatever the provider's
			// mappings say; every later sign-in through a provider with
			// mappings recomputes it, as for everyone (ApplyMappedRole).
			token, err = tx.ssoLogin(ctx, in, u, &SSOIdentity{}, RoleSourceInvitation, EventJITCreated)
		} else {
			if u.FamilyID != inv.FamilyID {
				return ErrEmailTaken
			}
			token, err = tx.ssoLogin(ctx, in, u, known, RoleSourceLogin, "")
		}
		if err != nil {
			return err
		}
		return tx.invitationAcceptedBy(ctx, inv, u.ID)
	})
	return token, err
}

// CloseInvitationForMember marks the family's invitation id used by u, who
// has the invited address already (an account made meanwhile by another
// way): the invitation has nothing left to admit. It checks the
// invitation and the verified address as AcceptInvitationSSO does; u of
// another family is ErrEmailTaken. It signs nobody in: an account is
// linked to an identity only once its owner proves it theirs.
func (s *Store) CloseInvitationForMember(ctx context.Context, familyID, id uuid.UUID, ident *VerifiedIdentity, u *User) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		if u.FamilyID != familyID {
			return ErrEmailTaken
		}
		inv, err := tx.claimInvitationFor(ctx, familyID, id, ident)
		if err != nil {
			return err
		}
		return tx.invitationAcceptedBy(ctx, inv, u.ID)
	})
}

// claimInvitationFor claims the family's invitation id for the person a
// provider asserted, inside the caller's transaction.
func (s *Store) claimInvitationFor(ctx context.Context, familyID, id uuid.UUID, ident *VerifiedIdentity) (*Invitation, error) {
	inv, err := s.Invitation(ctx, familyID, id)
	if err != nil {
		return nil, err
	}
	if !ident.EmailVerified || !strings.EqualFold(ident.Email, inv.Email) {
		return nil, ErrInvitationEmail
	}
	return inv, s.claimInvitation(ctx, inv)
}

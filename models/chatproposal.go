package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Proposal states.
const (
	ProposalPending   = "pending"
	ProposalConfirmed = "confirmed"
	ProposalRejected  = "rejected"
)

// Proposal is a change the assistant proposed with a write tool, kept
// with the answer that carries it until the chat's owner confirms or
// rejects it. Nothing in the ledger changes before the confirmation.
type Proposal struct {
	bun.BaseModel `bun:"table:chat_proposals,alias:cp"`

	ID        uuid.UUID  `bun:"id,pk"`
	FamilyID  uuid.UUID  `bun:"family_id"`
	ChatID    uuid.UUID  `bun:"chat_id"`
	MessageID uuid.UUID  `bun:"message_id"` // the assistant's answer
	Tool      string     `bun:"tool"`
	Arguments string     `bun:"arguments"` // the tool's JSON arguments, applied as they are
	Summary   string     `bun:"summary"`   // one line: what would change
	Changes   string     `bun:"changes"`   // JSON list of {field, before, after} shown to the person
	Status    string     `bun:"status"`
	CreatedAt time.Time  `bun:"created_at"`
	DecidedAt *time.Time `bun:"decided_at"`
}

// insertProposals stores the proposals of a reply being saved in tx.
func (s *Store) insertProposals(ctx context.Context, m *Message) error {
	for i := range m.Proposals {
		p := &m.Proposals[i]
		p.ID, p.FamilyID, p.ChatID, p.MessageID = NewID(), m.FamilyID, m.ChatID, m.ID
		p.Status, p.CreatedAt = ProposalPending, m.CreatedAt
		if _, err := s.db.NewInsert().Model(p).Exec(ctx); err != nil {
			return dbErr("create proposal", err)
		}
	}
	return nil
}

// ChatProposals lists the proposals of a user's chat, oldest first.
func (s *Store) ChatProposals(ctx context.Context, familyID, userID, chatID uuid.UUID) ([]Proposal, error) {
	if _, err := s.Chat(ctx, familyID, userID, chatID); err != nil {
		return nil, err
	}
	out := []Proposal{}
	err := s.db.NewSelect().Model(&out).
		Where("cp.family_id = ?", familyID).
		Where("cp.chat_id = ?", chatID).
		OrderExpr("cp.created_at ASC, cp.id ASC").
		Scan(ctx)
	return out, dbErr("list proposals", err)
}

// Proposal returns one proposal of a user's chat.
func (s *Store) Proposal(ctx context.Context, familyID, userID, chatID, id uuid.UUID) (*Proposal, error) {
	if _, err := s.Chat(ctx, familyID, userID, chatID); err != nil {
		return nil, err
	}
	p := new(Proposal)
	err := s.db.NewSelect().Model(p).
		Where("cp.family_id = ?", familyID).
		Where("cp.chat_id = ?", chatID).
		Where("cp.id = ?", id).
		Scan(ctx)
	return p, dbErr("get proposal", err)
}

// DecideProposal moves a pending proposal to status (confirmed or
// rejected). Of two decisions only one finds it pending; the other gets
// ErrConflict.
func (s *Store) DecideProposal(ctx context.Context, p *Proposal, status string) error {
	now := s.now()
	res, err := s.db.NewUpdate().Model((*Proposal)(nil)).
		Set("status = ?", status).
		Set("decided_at = ?", now).
		Where("family_id = ?", p.FamilyID).
		Where("chat_id = ?", p.ChatID).
		Where("id = ?", p.ID).
		Where("status = ?", ProposalPending).
		Exec(ctx)
	if err != nil {
		return dbErr("decide proposal", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return ErrConflict
	}
	p.Status, p.DecidedAt = status, &now
	return nil
}

// ReopenProposal puts a confirmed proposal back to pending when applying
// it failed, so that nothing is recorded as done that was not.
func (s *Store) ReopenProposal(ctx context.Context, p *Proposal) error {
	_, err := s.db.NewUpdate().Model((*Proposal)(nil)).
		Set("status = ?", ProposalPending).
		Set("decided_at = NULL").
		Where("family_id = ?", p.FamilyID).
		Where("chat_id = ?", p.ChatID).
		Where("id = ?", p.ID).
		Exec(ctx)
	if err != nil {
		return dbErr("reopen proposal", err)
	}
	p.Status, p.DecidedAt = ProposalPending, nil
	return nil
}

package models

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// SyncPayload is one fetched window of one remote account (its
// transactions as gzip JSON), written by the fetch and read by that
// account's import step; a re-run of the fetch skips windows it has.
type SyncPayload struct {
	bun.BaseModel `bun:"table:sync_payloads,alias:sp"`

	SyncID      uuid.UUID `bun:"sync_id,pk"`
	FamilyID    uuid.UUID `bun:"family_id"`
	ChunkIndex  int       `bun:"chunk_index,pk"`
	RemoteID    string    `bun:"remote_id,pk"`
	WindowStart time.Time `bun:"window_start"`
	WindowEnd   time.Time `bun:"window_end"`
	BodyGz      []byte    `bun:"body_gz"`
	CreatedAt   time.Time `bun:"created_at"`
}

// SaveSyncPayloads stores one window's payloads in one statement; a
// window stored by an earlier, interrupted run is kept as it was.
func (s *Store) SaveSyncPayloads(ctx context.Context, ps []SyncPayload) error {
	if len(ps) == 0 {
		return nil
	}
	now := s.now()
	for i := range ps {
		ps[i].CreatedAt = now
	}
	_, err := s.db.NewInsert().Model(&ps).On("CONFLICT DO NOTHING").Exec(ctx)
	return dbErr("save sync payloads", err)
}

// SyncPayloadChunks lists the window indexes a parent already fetched.
func (s *Store) SyncPayloadChunks(ctx context.Context, familyID, syncID uuid.UUID) (map[int]bool, error) {
	var idx []int
	err := s.db.NewSelect().Model((*SyncPayload)(nil)).ColumnExpr("DISTINCT chunk_index").
		Where("family_id = ?", familyID).Where("sync_id = ?", syncID).Scan(ctx, &idx)
	out := map[int]bool{}
	for _, i := range idx {
		out[i] = true
	}
	return out, dbErr("list sync payloads", err)
}

// SyncPayloads returns one remote account's windows of a parent sync.
func (s *Store) SyncPayloads(ctx context.Context, familyID, syncID uuid.UUID, remoteID string) ([]SyncPayload, error) {
	var out []SyncPayload
	err := s.db.NewSelect().Model(&out).Where("sp.family_id = ?", familyID).Where("sp.sync_id = ?", syncID).
		Where("sp.remote_id = ?", remoteID).OrderExpr("sp.chunk_index").Scan(ctx)
	return out, dbErr("get sync payloads", err)
}

func (s *Store) deletePayloads(ctx context.Context, familyID, syncID uuid.UUID) error {
	_, err := s.db.NewDelete().Model((*SyncPayload)(nil)).Where("family_id = ?", familyID).Where("sync_id = ?", syncID).Exec(ctx)
	return dbErr("delete sync payloads", err)
}

// DeleteOldSyncPayloads removes payloads left behind for more than a day
// (the sweeper's cleanup, across families).
func (s *Store) DeleteOldSyncPayloads(ctx context.Context, before time.Time) error {
	_, err := s.db.NewDelete().Model((*SyncPayload)(nil)).Where("created_at < ?", before).Exec(ctx)
	return dbErr("delete old sync payloads", err)
}

package web

import (
	"context"
	"fmt"

	"golang.org/x/sync/semaphore"

	"coffer/api/httperr"
	"coffer/models/secret"
)

// Hasher hashes and checks passwords under the process's one bound on
// the memory argon2id may take at once: each hash or check holds its
// memory (Argon2.MemoryKiB) in a weighted semaphore sized to the budget
// (PASSWORD_HASH_MEMORY_MIB), so that any number of requests cost at most
// the budget, the rest waiting their turn within their deadline.
type Hasher struct {
	params secret.Argon2Params
	slots  *semaphore.Weighted
	weight int64
}

// newHasher weighs each hash at its memory, at most the whole budget.
func newHasher(p secret.Argon2Params, slots *semaphore.Weighted, budgetKiB int64) *Hasher {
	return &Hasher{params: p, slots: slots, weight: max(min(int64(p.MemoryKiB), budgetKiB), 1)}
}

// Hash returns an argon2id hash of pw made with the configured cost.
func (h *Hasher) Hash(ctx context.Context, pw string) (string, error) {
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.slots.Release(h.weight)
	return secret.HashPassword(pw, h.params)
}

// Check is secret.CheckPassword under the bound.
func (h *Hasher) Check(ctx context.Context, hash, pw string) (ok, rehash bool, err error) {
	if err := h.acquire(ctx); err != nil {
		return false, false, err
	}
	defer h.slots.Release(h.weight)
	return secret.CheckPassword(hash, pw, h.params)
}

// acquire waits for room to hash until the request's deadline, then
// answers 503 with Retry-After (the error handler sets it).
func (h *Hasher) acquire(ctx context.Context) error {
	if err := h.slots.Acquire(ctx, h.weight); err != nil {
		return httperr.Unavailable("Too many password checks at once; try again shortly.", fmt.Errorf("web: password hashing: %w", err))
	}
	return nil
}

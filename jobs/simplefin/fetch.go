package simplefin

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge"
	"coffer/models"
)

// fetch reads every window still missing into sync_payloads.
func (h *Handlers) fetch(ctx context.Context, sy *models.Sync, conn *models.Connection) error {
	o := h.Options.withDefaults()
	plan := bridge.Plan{Now: h.now(), LookbackDays: o.LookbackDays, ChunkDays: o.ChunkDays, OverlapDays: o.OverlapDays, Full: sy.Full}
	if conn.LookbackDays != nil {
		plan.LookbackDays = *conn.LookbackDays
	}
	last, err := h.Store.LastCompletedSync(ctx, sy.FamilyID, sy.ConnectionID)
	switch {
	case err == nil:
		// Incremental: from the day the last completed sync started, less
		// the overlap that catches late arrivals.
		plan.LastStart = last.StartedAt
	case !errors.Is(err, models.ErrNotFound):
		return err
	}
	windows := plan.Windows()
	sy.WindowStart, sy.WindowEnd = &windows[len(windows)-1].Start, &windows[0].End
	have, err := h.Store.SyncPayloadChunks(ctx, sy.FamilyID, sy.ID)
	if err != nil {
		return err
	}
	todo := 0
	for i := range windows {
		if !have[i] {
			todo++
		}
	}
	b := budget{rdb: h.Redis, limit: o.DailyBudget}
	var slots []string // one per request still to send; given back if it never leaves
	if todo > 0 {
		var freeAt time.Time
		slots, freeAt, err = b.reserve(ctx, conn.ID, todo, h.now())
		if err != nil {
			return err
		}
		if slots == nil {
			return h.deferSync(ctx, sy, freeAt, "request budget used up; deferred")
		}
	}
	access, err := h.Store.AccessURL(conn)
	if err != nil {
		return h.Store.FailSync(ctx, sy, "the connection has no usable access URL")
	}
	seen := map[string]bool{}
	for i, w := range windows {
		if have[i] {
			continue
		}
		slot := slots[0]
		slots = slots[1:]
		h.hook(ctx, HookFetch)
		set, err := h.Bridge.Accounts(ctx, access, bridge.FetchOptions{Start: w.Start, End: w.End, Pending: conn.IncludePending,
			MaxBody: o.MaxBody, Attempt: func(n int) error {
				sy.RequestsUsed++
				if n == 0 {
					return nil // reserved with the plan
				}
				more, freeAt, err := b.reserve(ctx, conn.ID, 1, h.now())
				if err == nil && more == nil {
					return &jobs.DeferError{Until: freeAt}
				}
				if err == nil {
					slot = more[0]
				}
				return err
			}, NotSent: func(int) {
				sy.RequestsUsed--
				if err := b.release(ctx, conn.ID, slot); err != nil {
					h.Log.WarnContext(ctx, "request budget slot not released", "connection_id", conn.ID, "error", err)
				}
			}})
		if err != nil {
			return h.fetchFailed(ctx, sy, conn, err)
		}
		// A disconnect while the request ran wins: nothing is written.
		if now, err := h.Store.Connection(ctx, sy.FamilyID, conn.ID); err != nil || now.Status == models.ConnDisconnected {
			if err != nil {
				return err
			}
			return h.Store.FailSync(ctx, sy, "disconnected")
		}
		if kind := classify(set); kind != 0 {
			errs := providerErrors(set)
			if err := h.Store.SetProviderErrors(ctx, conn, errs); err != nil {
				return err
			}
			detail := "refused inside the answer"
			if len(errs) > 0 {
				detail += ": " + errs[0].Message
			}
			return h.fetchFailed(ctx, sy, conn, &bridge.FetchError{Kind: kind, Detail: detail})
		}
		if err := h.storeWindow(ctx, sy, conn, i, w, set, seen); err != nil {
			return err
		}
		if err := h.Store.ConnectionFetched(ctx, conn, providerErrors(set)); err != nil {
			return err
		}
	}
	return nil
}

// classify finds the refusals a 200 can carry: a credential failure or a
// quota message with no accounts at all.
func classify(set *bridge.AccountSet) bridge.FetchKind {
	if len(set.Accounts) > 0 {
		return 0
	}
	for _, e := range set.ErrList {
		if e.Code == "gen.auth" || strings.HasPrefix(e.Code, "gen.auth.") {
			return bridge.AuthFailed
		}
	}
	texts := append([]string{}, set.Errors...)
	for _, e := range set.ErrList {
		texts = append(texts, e.Text())
	}
	for _, m := range texts {
		l := strings.ToLower(m)
		if strings.Contains(l, "make fewer requests") || strings.Contains(l, "only refreshed once every 24 hours") || strings.Contains(l, "rate limit") {
			return bridge.RateLimited
		}
	}
	return 0
}

func providerErrors(set *bridge.AccountSet) []models.ProviderError {
	var out []models.ProviderError
	add := func(e models.ProviderError) {
		if e.Message = bridge.SanitizeMessage(e.Message); e.Message != "" && len(out) < 50 {
			// Codes and ids are the Bridge's text too.
			e.Code = bridge.SanitizeMessage(e.Code)
			e.ConnID = bridge.SanitizeMessage(e.ConnID)
			e.RemoteAccountID = bridge.SanitizeMessage(e.RemoteAccountID)
			out = append(out, e)
		}
	}
	for _, e := range set.Errors {
		add(models.ProviderError{Message: e})
	}
	for _, e := range set.ErrList {
		if !strings.HasPrefix(e.Code, "gen.api") {
			add(models.ProviderError{Message: e.Text(), Code: e.Code, ConnID: string(e.ConnID), RemoteAccountID: string(e.AccountID)})
		}
	}
	return out
}

// storeWindow upserts the window's remote accounts (creating and linking
// a ledger account on first sight) and stores each account's
// transactions as a payload for its import step.
func (h *Handlers) storeWindow(ctx context.Context, sy *models.Sync, conn *models.Connection, index int, w bridge.Window,
	set *bridge.AccountSet, seen map[string]bool) error {
	attention := map[string]string{} // remote account id or bank login id → message
	for _, e := range set.ErrList {
		switch {
		case strings.HasPrefix(e.Code, "con.") && e.ConnID != "":
			attention["conn:"+string(e.ConnID)] = bridge.SanitizeMessage(e.Text())
		case strings.HasPrefix(e.Code, "act.") && e.AccountID != "":
			attention[string(e.AccountID)] = bridge.SanitizeMessage(e.Text())
		case strings.HasPrefix(e.Code, "gen.api"):
			sy.Warnings = append(sy.Warnings, bridge.SanitizeMessage(e.Text()))
		}
	}
	for _, m := range set.APIMessages {
		sy.Warnings = append(sy.Warnings, bridge.SanitizeMessage(m))
	}
	banks := map[string]string{}
	for _, c := range set.Connections {
		banks[string(c.ConnID)] = c.Name
	}
	var payloads []models.SyncPayload
	for _, a := range set.Accounts {
		id := strings.TrimSpace(string(a.ID))
		if id == "" || len(id) > 255 {
			sy.AccountsSkipped++
			sy.Warnings = append(sy.Warnings, "an account without an id was skipped")
			continue
		}
		ra := models.RemoteAccount{RemoteID: id, Name: simplefinName(a.Name, id), BalanceDate: a.BalanceDate.Time()}
		ra.Currency, ra.CurrencyRaw = bridge.NormalizeCurrency(a.Currency)
		if ra.CurrencyRaw != "" {
			sy.Warnings = append(sy.Warnings, fmt.Sprintf("account %s: currency %q is not an ISO code; stored as XXX", id, bridge.SanitizeMessage(a.Currency)))
		}
		if a.Org != nil {
			ra.OrgName = a.Org.Name
			if ra.OrgName == "" {
				ra.OrgName = a.Org.Domain
			}
		}
		if n, ok := banks[string(a.ConnID)]; ok && n != "" {
			ra.OrgName = n
		}
		ra.OrgName = bridge.SanitizeMessage(ra.OrgName)
		ra.Attention = attention[id]
		if ra.Attention == "" && a.ConnID != "" {
			ra.Attention = attention["conn:"+string(a.ConnID)]
		}
		if bal, _, err := bridge.ParseRemoteAmount(string(a.Balance)); err == nil && a.BalanceDate != bridge.BadEpoch {
			ra.Balance = &bal
			if avail, _, err := bridge.ParseRemoteAmount(string(a.AvailableBalance)); err == nil {
				ra.AvailableBalance = &avail
			}
		} else {
			sy.Warnings = append(sy.Warnings, fmt.Sprintf("account %s: unreadable balance; the previous one is kept", id))
		}
		_, created, err := h.Store.SaveProviderAccount(ctx, sy.FamilyID, conn.ID, ra)
		if err != nil {
			return err
		}
		if !seen[id] {
			seen[id] = true
			if created {
				sy.AccountsCreated++
			} else {
				sy.AccountsUpdated++
			}
		}
		body, err := gzipJSON(a.Transactions)
		if err != nil {
			return err
		}
		payloads = append(payloads, models.SyncPayload{SyncID: sy.ID, FamilyID: sy.FamilyID, ChunkIndex: index, RemoteID: id,
			WindowStart: w.Start, WindowEnd: w.End, BodyGz: body})
	}
	if len(payloads) == 0 {
		// Mark the window fetched even when it held no account.
		payloads = append(payloads, models.SyncPayload{SyncID: sy.ID, FamilyID: sy.FamilyID, ChunkIndex: index, RemoteID: "",
			WindowStart: w.Start, WindowEnd: w.End, BodyGz: []byte{}})
	}
	if err := h.Store.SaveSyncPayloads(ctx, payloads); err != nil {
		return err
	}
	return h.Store.SaveSyncProgress(ctx, sy)
}

func simplefinName(name, id string) string {
	if n := bridge.SanitizeMessage(name); n != "" {
		return n
	}
	return "Account " + id
}

func gzipJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, fmt.Errorf("simplefin: encode payload: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("simplefin: compress payload: %w", err)
	}
	return buf.Bytes(), nil
}

package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/models"
	"coffer/models/civil"
)

// TypeExchangeRatesFetch fills the fetched exchange rates: for every pair
// the families' accounts need, the days not asked yet, from the earliest
// transaction of an account in another currency than its family's to
// today.
const TypeExchangeRatesFetch = "exchange_rates:fetch"

// ExchangeRatesFetchPayload names the family whose pairs to fetch; none:
// every family's (the daily run).
type ExchangeRatesFetchPayload struct {
	FamilyID *uuid.UUID `json:"family_id,omitempty"`
}

// NewExchangeRatesFetchTask builds a fetch of one family's pairs (a new
// account in another currency, a transaction before the stored rates) or,
// with nil, of every family's. Its task id keeps one waiting per family.
func NewExchangeRatesFetchTask(familyID *uuid.UUID) (*asynq.Task, error) {
	id := "exchange_rates:fetch"
	if familyID != nil {
		id += ":" + familyID.String()
	}
	return NewTask(TypeExchangeRatesFetch, ExchangeRatesFetchPayload{FamilyID: familyID},
		asynq.TaskID(id), asynq.Queue(QueueLow), asynq.MaxRetry(8), asynq.Timeout(5*time.Minute))
}

// ratesRetryDelay waits a minute after the first failure, doubling up to
// six hours: a service that is down or limiting requests gets room.
func ratesRetryDelay(n int, _ error, _ *asynq.Task) time.Duration {
	return min(time.Minute<<min(n, 10), 6*time.Hour)
}

// QueueExchangeRates queues a fetch of the family's pairs now, after the
// write that needs it has committed; one already waiting covers it.
func QueueExchangeRates(ctx context.Context, q *asynq.Client, familyID uuid.UUID) error {
	if q == nil { // a process without a queue: the daily run fetches them
		return nil
	}
	task, err := NewExchangeRatesFetchTask(&familyID)
	if err != nil {
		return err
	}
	if err := EnqueueOnce(ctx, q, task); err != nil {
		return fmt.Errorf("jobs: queue exchange rates: %w", err)
	}
	return nil
}

// QueueExchangeRatesIfMissing queues the family's rates fetch when one of
// its accounts (accountIDs) is in another currency than the family's and
// lacks rates (see models.Store.RatesMissing): one query, and nothing
// queued for a family in one currency.
func QueueExchangeRatesIfMissing(ctx context.Context, s *models.Store, q *asynq.Client, familyID uuid.UUID, accountIDs ...uuid.UUID) error {
	missing, err := s.RatesMissing(ctx, familyID, accountIDs)
	if err != nil || !missing {
		return err
	}
	return QueueExchangeRates(ctx, q, familyID)
}

// UseExchangeRates makes the store's balance policy (b, see UseBalances)
// also queue the fetch of a family's rates when a committed write left
// one of its accounts in another currency without them: a transaction
// dated before the stored rates, an account whose currency changed. One
// query per write; nothing queued for a family in one currency.
func UseExchangeRates(s *models.Store, q *asynq.Client, log *slog.Logger, b *Balances) {
	s.OnBalanceChange(func(ctx context.Context, familyID uuid.UUID, accountIDs []uuid.UUID) {
		b.Changed(ctx, familyID, accountIDs)
		if err := QueueExchangeRatesIfMissing(context.WithoutCancel(ctx), s, q, familyID, accountIDs...); err != nil {
			log.Error("exchange rates after a write", "family_id", familyID, "error", err)
		}
	})
}

// ExchangeRatesFetch handles TypeExchangeRatesFetch: one time-series
// request per pair and range of days not asked yet (the days before the
// first asked, the days after the latest rate). A failed request leaves
// the stored rates as they are, is logged and recorded for the rates
// screen, and fails the run so that asynq retries it later; the pairs
// that succeeded are not asked again. Without a service (manual rates
// only) it does nothing.
func (h *Handlers) ExchangeRatesFetch(ctx context.Context, t *asynq.Task) error {
	var p ExchangeRatesFetchPayload
	if err := Decode(t, &p); err != nil {
		return err
	}
	if h.Rates == nil {
		return nil
	}
	today := civil.DateOf(h.now())
	needs, err := h.Store.RateNeeds(ctx, p.FamilyID, today)
	if err != nil {
		return err
	}
	failed := 0
	for _, n := range needs {
		if err := h.fetchPair(ctx, t, n, today); err != nil {
			var re *RatesError
			if !errors.As(err, &re) {
				return err // the database: the run retries as a whole
			}
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("jobs: exchange rates: %d of %d pairs not fetched", failed, len(needs))
	}
	return nil
}

// fetchPair asks for the days of one pair not asked yet.
func (h *Handlers) fetchPair(ctx context.Context, t *asynq.Task, n models.RateNeed, today civil.Date) error {
	f, err := h.Store.RatesFetchOf(ctx, n.FromCurrency, n.ToCurrency)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return err
	}
	for _, gap := range rateGaps(f.CoveredFrom, f.CoveredTo, n.Start, today) {
		series, err := h.Rates.Series(ctx, n.FromCurrency, n.ToCurrency, gap[0], gap[1])
		var re *RatesError
		if errors.As(err, &re) {
			h.logger(ctx, t).Warn("exchange rates not fetched; the stored rates stay", "from", n.FromCurrency, "to", n.ToCurrency,
				"start", gap[0], "end", gap[1], "error", err)
			if err := h.Store.RatesFetchFailed(ctx, n.FromCurrency, n.ToCurrency, re.Reason); err != nil {
				return err
			}
			return re
		}
		if err != nil {
			return err
		}
		if err := h.Store.SaveFetchedRates(ctx, n.FromCurrency, n.ToCurrency, gap[0], gap[1], series); err != nil {
			return err
		}
	}
	return nil
}

// rateGaps are the ranges of days to ask for a pair needed from start to
// today, when the days coveredFrom..coveredTo were asked already (both
// empty: never): before the first day asked, and after the latest.
func rateGaps(coveredFrom, coveredTo, start, today civil.Date) [][2]civil.Date {
	if coveredFrom == "" {
		return [][2]civil.Date{{start, today}}
	}
	var gaps [][2]civil.Date
	if start < coveredFrom {
		gaps = append(gaps, [2]civil.Date{start, dayBefore(coveredFrom)})
	}
	if coveredTo < today {
		gaps = append(gaps, [2]civil.Date{max(dayAfter(coveredTo), coveredFrom), today})
	}
	return gaps
}

func dayBefore(d civil.Date) civil.Date { return civil.DateOf(d.Time().AddDate(0, 0, -1)) }
func dayAfter(d civil.Date) civil.Date  { return civil.DateOf(d.Time().AddDate(0, 0, 1)) }

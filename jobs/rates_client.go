package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// RatesOptions is where exchange rates are fetched from: a service that
// speaks the Frankfurter v1 protocol (ECB reference rates, no key).
type RatesOptions struct {
	// URL is the service's v1 base; empty: no fetching, manual rates only.
	// main.go keeps it empty when EXCHANGE_RATES_URL is set to nothing.
	URL     string        `env:"EXCHANGE_RATES_URL" default:"https://api.frankfurter.dev/v1"`
	Timeout time.Duration `env:"EXCHANGE_RATES_TIMEOUT" default:"20s"`
}

// RatesClient asks a Frankfurter service for time series.
type RatesClient struct {
	base string
	http *http.Client
}

// NewRatesClient returns a client of o's service, or nil when o names
// none (manual rates only).
func NewRatesClient(o RatesOptions) *RatesClient {
	if strings.TrimSpace(o.URL) == "" {
		return nil
	}
	return &RatesClient{base: strings.TrimRight(o.URL, "/"), http: &http.Client{Timeout: o.Timeout}}
}

// RatesError is a failed request to the rates service: Reason is safe to
// show on the rates screen; the error it wraps goes to the log only.
type RatesError struct {
	Reason string
	Err    error
}

func (e *RatesError) Error() string {
	if e.Err == nil {
		return "jobs: rates service: " + e.Reason
	}
	return "jobs: rates service: " + e.Reason + ": " + e.Err.Error()
}

func (e *RatesError) Unwrap() error { return e.Err }

// maxRatesBody bounds an answer: a daily series of one pair since 1999 is
// about 200 kB.
const maxRatesBody = 8 << 20

// seriesJSON is a Frankfurter time series: the rates of base in each
// symbol, by day.
type seriesJSON struct {
	Amount json.Number                       `json:"amount"`
	Base   string                            `json:"base"`
	Rates  map[string]map[string]json.Number `json:"rates"`
}

// Series asks, in one request, for the daily rates of from in to over the
// days start..end. The service answers for its working days only, and
// may start at the working day before start. A 404 (days before the
// series begins) is no rates, not a failure. Anything but the protocol's
// JSON with positive rates is refused whole.
func (c *RatesClient) Series(ctx context.Context, from, to string, start, end civil.Date) ([]models.DayRate, error) {
	u := fmt.Sprintf("%s/%s..%s?%s", c.base, start, end, url.Values{"base": {from}, "symbols": {to}}.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &RatesError{Reason: "the rates service address is not valid", Err: err}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		var te interface{ Timeout() bool }
		if errors.As(err, &te) && te.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			return nil, &RatesError{Reason: "the rates service did not answer in time", Err: err}
		}
		return nil, &RatesError{Reason: "the rates service could not be reached", Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRatesBody+1))
	if err != nil {
		return nil, &RatesError{Reason: "the rates service's answer broke off", Err: err}
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && isMessage(body):
		return nil, nil
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, &RatesError{Reason: "the rates service is limiting requests (429)"}
	case resp.StatusCode != http.StatusOK:
		return nil, &RatesError{Reason: fmt.Sprintf("the rates service answered %d", resp.StatusCode)}
	case len(body) > maxRatesBody:
		return nil, &RatesError{Reason: "the rates service answered with too much"}
	}
	series, err := parseSeries(body, from, to)
	if err != nil {
		return nil, &RatesError{Reason: "the rates service answered something that is not a rates series", Err: err}
	}
	return series, nil
}

// isMessage reports whether a body is the protocol's error object.
func isMessage(body []byte) bool {
	var m struct {
		Message *string `json:"message"`
	}
	return json.Unmarshal(body, &m) == nil && m.Message != nil
}

// parseSeries reads a time series of from in to, in day order; any day
// that is malformed refuses the whole answer.
func parseSeries(body []byte, from, to string) ([]models.DayRate, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var s seriesJSON
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	if !strings.EqualFold(s.Base, from) {
		return nil, fmt.Errorf("base %q, asked %s", s.Base, from)
	}
	if s.Amount != "" && s.Amount != "1" && s.Amount != "1.0" {
		return nil, fmt.Errorf("amount %s, asked 1", s.Amount)
	}
	if s.Rates == nil {
		return nil, errors.New("no rates")
	}
	out := make([]models.DayRate, 0, len(s.Rates))
	for day, quotes := range s.Rates {
		d, err := civil.ParseDate(day)
		if err != nil {
			return nil, fmt.Errorf("day %q: %w", day, err)
		}
		n, ok := quotes[to]
		if !ok || len(quotes) != 1 {
			return nil, fmt.Errorf("day %s: %d quotes, asked %s alone", day, len(quotes), to)
		}
		r, err := money.ParseRateNumber(string(n))
		if err != nil {
			return nil, fmt.Errorf("day %s: rate %q: %w", day, n, err)
		}
		out = append(out, models.DayRate{Date: d, Rate: r})
	}
	slices.SortFunc(out, func(a, b models.DayRate) int { return strings.Compare(string(a.Date), string(b.Date)) })
	return out, nil
}

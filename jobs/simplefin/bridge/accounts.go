package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"

	"coffer/models/publicaddr"
)

// AccountSet is one /accounts answer, v1 or v2 shape.
type AccountSet struct {
	Errors      []string    `json:"errors"`
	ErrList     []ErrItem   `json:"errlist"`
	Accounts    []Account   `json:"accounts"`
	Connections []BankLogin `json:"connections"`
	APIMessages []string    `json:"x-api-message"`
	Error       string      `json:"error"` // non-standard single error
}

// ErrItem is a v2 error with its code (gen.*, con.*, act.*).
type ErrItem struct {
	Code      string   `json:"code"`
	Msg       string   `json:"msg"`
	Message   string   `json:"message"`
	ConnID    RemoteID `json:"conn_id"`
	AccountID RemoteID `json:"account_id"`
}

// Text is the item's message, from whichever field the server used.
func (e ErrItem) Text() string {
	if e.Msg != "" {
		return e.Msg
	}
	return e.Message
}

// BankLogin is a v2 "connection": one user login at one bank.
type BankLogin struct {
	ConnID RemoteID `json:"conn_id"`
	Name   string   `json:"name"`
	OrgID  string   `json:"org_id"`
}

// Account is a remote account with its transactions.
type Account struct {
	ID               RemoteID      `json:"id"`
	Name             string        `json:"name"`
	Currency         string        `json:"currency"`
	Balance          Decimal       `json:"balance"`
	AvailableBalance Decimal       `json:"available-balance"`
	BalanceDate      Epoch         `json:"balance-date"`
	Org              *Org          `json:"org"`
	ConnID           RemoteID      `json:"conn_id"`
	Transactions     []Transaction `json:"transactions"`
}

// Org is the v1 institution of an account.
type Org struct {
	Domain string `json:"domain"`
	Name   string `json:"name"`
}

// Transaction is a remote transaction as sent; Amount is kept as text for
// the importer's exact parser. Positive amounts are money in.
type Transaction struct {
	ID           RemoteID `json:"id"`
	Posted       Epoch    `json:"posted"` // zero while pending
	Amount       Decimal  `json:"amount"`
	Description  string   `json:"description"`
	TransactedAt Epoch    `json:"transacted_at"`
	Pending      bool     `json:"pending"`
	Payee        string   `json:"payee"`
	Memo         string   `json:"memo"`
}

// RemoteID is an id the Bridge sent: a JSON string, or a JSON number
// taken as its literal text (spec §9), so one odd id never fails the whole
// answer. Anything else (null, an object, a boolean) is empty, which the
// caller skips or rejects with a warning.
type RemoteID string

// UnmarshalJSON keeps a string's value or a number's literal text; any
// other value becomes empty, never an error.
func (id *RemoteID) UnmarshalJSON(b []byte) error {
	*id = RemoteID(literal(b))
	return nil
}

// literal is a JSON string's value or a JSON number's text, exactly as
// sent; "" for anything else.
func literal(b []byte) string {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if json.Unmarshal(b, &s) != nil {
			return ""
		}
		return s
	case len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9'):
		return string(b)
	}
	return ""
}

// Epoch is a Unix time sent as a number or a numeric string; zero is
// unset and BadEpoch marks a value that is neither, so the importer can
// reject that one row instead of the whole answer failing to decode.
type Epoch int64

// BadEpoch is an unreadable timestamp.
const BadEpoch Epoch = -1

// UnmarshalJSON accepts 1767225600 and "1767225600"; anything else is
// BadEpoch, never an error.
func (e *Epoch) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if s == "" || s == "null" {
		*e = 0
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > 1e11 {
		*e = BadEpoch
		return nil
	}
	*e = Epoch(n)
	return nil
}

// Decimal is an amount as the Bridge sent it, a JSON string or number,
// kept as its literal text for the importer's exact parser: a number is
// never read through a float.
type Decimal string

// UnmarshalJSON keeps the literal text of a number or a string; anything
// else becomes an empty value that the importer rejects.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	*d = Decimal(strings.TrimSpace(literal(b)))
	return nil
}

// Time is the epoch as a UTC time.
func (e Epoch) Time() time.Time { return time.Unix(int64(e), 0).UTC() }

// FetchKind says what a failed /accounts request means for the connection.
type FetchKind int

// Fetch failure kinds.
const (
	AuthFailed      FetchKind = iota + 1 // 401/403 (not HTML): the access URL was revoked or is wrong
	PaymentRequired                      // 402: the Bridge subscription lapsed
	RateLimited                          // 429, or an HTML 403/429 from the front end
	Unavailable                          // 5xx, timeouts, resets, after the retries
	BadAnswer                            // a 200 that is not a readable account set
)

// FetchError is a failed /accounts request; its text never holds the
// access URL or its credentials.
type FetchError struct {
	Kind       FetchKind
	RetryAfter time.Duration // from Retry-After, when the server sent one
	Retry      bool          // worth an asynq retry later: a 5xx, unreadable JSON
	NotSent    bool          // the request provably never left (DNS, dial, address refused)
	Detail     string
}

func (e *FetchError) Error() string { return "simplefin: accounts: " + e.Detail }

// Is makes errors.Is(err, ErrNotSent) true for a request that never left.
func (e *FetchError) Is(target error) bool { return target == ErrNotSent && e.NotSent }

// ErrNotSent matches a FetchError whose request never reached the server,
// whose budget slot is therefore given back.
var ErrNotSent = errors.New("simplefin: the request was never sent")

// FetchOptions select the window of one /accounts request.
type FetchOptions struct {
	Start, End time.Time // [Start, End)
	Pending    bool      // send pending=1
	MaxBody    int64     // 0: 256 MiB
	// Attempt, when set, is called before every attempt (0 for the first);
	// an error stops the request before anything is sent. The sync uses
	// it to count each retry against the connection's request budget.
	Attempt func(n int) error
	// NotSent, when set, is called after attempt n failed before anything
	// was written (DNS, dial, an address the guard refused).
	NotSent func(n int)
}

// Accounts reads one window of every account of an access URL. Network
// failures (timeouts, resets, refused connections, DNS, a body cut short)
// are retried with exponential backoff (at most 3 retries, bound to ctx);
// every answer, 5xx included, is final for this call.
func (c *Client) Accounts(ctx context.Context, accessURL string, o FetchOptions) (*AccountSet, error) {
	u, err := url.Parse(accessURL)
	if err != nil || u.User == nil {
		return nil, &FetchError{Kind: AuthFailed, Detail: "the stored access URL is not usable"}
	}
	user := u.User.Username()
	pass, _ := u.User.Password()
	u.User = nil // the credentials travel in a header, never in a URL string
	u.Path = strings.TrimRight(u.Path, "/") + "/accounts"
	q := url.Values{}
	q.Set("start-date", strconv.FormatInt(o.Start.Unix(), 10))
	q.Set("end-date", strconv.FormatInt(o.End.Unix(), 10))
	if o.Pending {
		q.Set("pending", "1")
	}
	u.RawQuery = q.Encode()
	maxBody := o.MaxBody
	if maxBody <= 0 {
		maxBody = 256 << 20
	}
	var set *AccountSet
	attempt := 0
	op := func() error {
		if o.Attempt != nil {
			if err := o.Attempt(attempt); err != nil {
				return backoff.Permanent(err)
			}
		}
		attempt++
		ctx, cancel := context.WithTimeout(ctx, c.accountsTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return backoff.Permanent(&FetchError{Kind: BadAnswer, Detail: "bad request"})
		}
		req.SetBasicAuth(user, pass)
		req.Header.Set("Accept", "application/json")
		resp, err := c.http.Do(req)
		if err != nil {
			notSent := errors.Is(err, publicaddr.ErrPrivate) || neverSent(err) || certRejected(err)
			if notSent && o.NotSent != nil {
				o.NotSent(attempt - 1)
			}
			if errors.Is(err, publicaddr.ErrPrivate) {
				return backoff.Permanent(&FetchError{Kind: AuthFailed, NotSent: true, Detail: "the access URL points at a private address"})
			}
			if certRejected(err) {
				// Final, like the claim's: trying again cannot make it verify.
				return backoff.Permanent(&FetchError{Kind: BadAnswer, NotSent: true, Detail: "the server's certificate did not verify"})
			}
			return &FetchError{Kind: Unavailable, NotSent: notSent, Detail: opName(err)}
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		if err != nil {
			return &FetchError{Kind: Unavailable, Detail: "the answer was cut off"}
		}
		if int64(len(body)) > maxBody {
			return backoff.Permanent(&FetchError{Kind: BadAnswer, Detail: "response too large"})
		}
		html := strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "html") ||
			bytes.HasPrefix(bytes.ToLower(bytes.TrimSpace(body)), []byte("<"))
		switch {
		case resp.StatusCode == http.StatusOK:
			var s AccountSet
			if err := json.Unmarshal(body, &s); err != nil {
				return backoff.Permanent(&FetchError{Kind: BadAnswer, Retry: true, Detail: "the account set is not valid JSON"})
			}
			if s.Error != "" {
				s.Errors = append(s.Errors, s.Error)
			}
			set = &s
			return nil
		case resp.StatusCode == http.StatusPaymentRequired:
			return backoff.Permanent(&FetchError{Kind: PaymentRequired, Detail: "payment required (402)"})
		case resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusForbidden && html):
			return backoff.Permanent(&FetchError{Kind: RateLimited, RetryAfter: retryAfter(resp.Header.Get("Retry-After")),
				Detail: fmt.Sprintf("rate limited or blocked (%d)", resp.StatusCode)})
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			return backoff.Permanent(&FetchError{Kind: AuthFailed, Detail: fmt.Sprintf("authentication failed (%d)", resp.StatusCode)})
		case resp.StatusCode >= 500:
			// An answer came: the Bridge is unwell, not the network. The
			// job retries later (asynq), not within seconds.
			return backoff.Permanent(&FetchError{Kind: Unavailable, Retry: true, RetryAfter: retryAfter(resp.Header.Get("Retry-After")),
				Detail: fmt.Sprintf("server error (%d)", resp.StatusCode)})
		default:
			return backoff.Permanent(&FetchError{Kind: BadAnswer, Detail: fmt.Sprintf("unexpected answer (%d)", resp.StatusCode)})
		}
	}
	if err := backoff.Retry(op, c.policy(ctx)); err != nil {
		var fe *FetchError
		if errors.As(err, &fe) {
			return nil, fe
		}
		if ctx.Err() == nil {
			return nil, err // the Attempt hook's own error
		}
		return nil, &FetchError{Kind: Unavailable, Detail: "interrupted"}
	}
	return set, nil
}

// retryAfter reads Retry-After as seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

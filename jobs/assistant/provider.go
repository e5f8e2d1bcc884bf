package assistant

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// defaultBaseURL is the SDK's own; it is set explicitly so that the SDK
// does not take OPENAI_BASE_URL from the environment behind main's back.
const defaultBaseURL = "https://api.openai.com/v1/"

const maxAttempts = 3

// provider calls an OpenAI-compatible chat completions endpoint, streaming.
type provider struct {
	client    openai.Client
	model     string
	retryWait time.Duration
}

func newProvider(o Options, hc *http.Client) *provider {
	opts := []option.RequestOption{
		option.WithAPIKey(o.APIKey), option.WithBaseURL(defaultBaseURL),
		// The job retries with its own bounds (and Retry-After); the SDK's
		// retries would multiply them.
		option.WithMaxRetries(0),
	}
	if o.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.BaseURL))
	}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	wait := o.RetryWait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	return &provider{client: openai.NewClient(opts...), model: o.Model, retryWait: wait}
}

// toolCall is a function call the model asked for.
type toolCall struct {
	ID        string
	Name      string
	Arguments string
}

// turn is one model answer: text, or calls of tools, or a refusal.
type turn struct {
	Model            string
	Content          string
	Refusal          string
	ToolCalls        []toolCall
	PromptTokens     int
	CompletionTokens int
}

// errDropped is a stream that ended before the model finished.
var errDropped = errors.New("assistant: the stream ended before the answer did")

// streamer receives a reply's progress as it happens.
type streamer interface {
	delta(text string)
	restart() // a retry begins: text sent so far is void
}

// complete asks the model once, with transient failures (429, 5xx, a
// dropped or reset connection) retried: at most maxAttempts attempts,
// waiting with exponential backoff or the provider's Retry-After, all
// within retryWait. tokens is told the usage of every attempt, failed ones
// included, since the provider counts them.
func (p *provider) complete(ctx context.Context, msgs []openai.ChatCompletionMessageParamUnion, tools []openai.ChatCompletionToolUnionParam, s streamer, tokens func(int)) (*turn, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.model),
		Messages:      msgs,
		Tools:         tools,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	// A second after the first failure when retryWait is 30 s: the waits
	// scale with it, so that three attempts fit.
	b := backoff.NewExponentialBackOff(backoff.WithInitialInterval(p.retryWait/30), backoff.WithMaxElapsedTime(p.retryWait))
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		t, err := p.stream(ctx, params, s)
		tokens(t.PromptTokens + t.CompletionTokens)
		if err == nil || attempt == maxAttempts || !transient(err) || ctx.Err() != nil {
			return t, err
		}
		wait := b.NextBackOff()
		if ra, ok := retryAfter(err); ok {
			wait = ra
		}
		if wait == backoff.Stop || waited+wait > p.retryWait {
			return t, err
		}
		waited += wait
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return t, ctx.Err()
		case <-timer.C:
		}
		s.restart()
	}
}

// stream makes one streaming request and gathers the answer from its
// chunks: text deltas are passed on as they come, tool calls are put
// together from their pieces by index.
func (p *provider) stream(ctx context.Context, params openai.ChatCompletionNewParams, s streamer) (*turn, error) {
	st := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer st.Close()
	t := &turn{}
	var content, refusal strings.Builder
	var calls []*toolCall
	finished := false
	for st.Next() {
		chunk := st.Current()
		if chunk.Model != "" {
			t.Model = chunk.Model
		}
		if chunk.Usage.TotalTokens > 0 || chunk.Usage.PromptTokens > 0 {
			t.PromptTokens, t.CompletionTokens = int(chunk.Usage.PromptTokens), int(chunk.Usage.CompletionTokens)
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.FinishReason != "" {
				finished = true
			}
			d := ch.Delta
			if d.Content != "" {
				content.WriteString(d.Content)
				s.delta(d.Content)
			}
			refusal.WriteString(d.Refusal)
			for _, tc := range d.ToolCalls {
				i := int(tc.Index)
				if i < 0 || i > 64 {
					continue
				}
				for len(calls) <= i {
					calls = append(calls, &toolCall{})
				}
				c := calls[i]
				if tc.ID != "" {
					c.ID = tc.ID
				}
				c.Name += tc.Function.Name
				c.Arguments += tc.Function.Arguments
			}
		}
	}
	t.Content, t.Refusal = content.String(), refusal.String()
	for i, c := range calls {
		if c.ID == "" {
			c.ID = "call_" + strconv.Itoa(i)
		}
		t.ToolCalls = append(t.ToolCalls, *c)
	}
	if err := st.Err(); err != nil {
		return t, err
	}
	if !finished {
		return t, errDropped
	}
	return t, nil
}

// transient reports whether err may pass if the request is made again:
// rate limits, server errors, and connections that broke.
func transient(err error) bool {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode >= 500
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// retryAfter is the wait the provider asked for, in seconds or as a date.
func retryAfter(err error) (time.Duration, bool) {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.Response == nil {
		return 0, false
	}
	v := apiErr.Response.Header.Get("Retry-After")
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}

// failure is the chat error for a provider error.
func failure(err error) string {
	var apiErr *openai.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return TimeoutMessage
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusTooManyRequests:
		return BusyMessage
	case errors.As(err, &apiErr) && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500:
		return RejectedMessage
	}
	return FailedMessage
}

// toolParams describes tools to the model.
func toolParams(tools []Tool) []openai.ChatCompletionToolUnionParam {
	out := make([]openai.ChatCompletionToolUnionParam, len(tools))
	for i, t := range tools {
		out[i] = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: shared.FunctionParameters(t.Schema),
		})
	}
	return out
}

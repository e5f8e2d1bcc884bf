package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"coffer/models/publicaddr"
)

// Info reads GET {access}/info, the version prefixes the server speaks.
// It needs no credentials, so none are sent.
func (c *Client) Info(ctx context.Context, accessURL string) ([]string, error) {
	u, err := url.Parse(accessURL)
	if err != nil {
		return nil, &FetchError{Kind: BadAnswer, Detail: "the stored access URL is not usable"}
	}
	u.User = nil
	u.Path = strings.TrimRight(u.Path, "/") + "/info"
	ctx, cancel := context.WithTimeout(ctx, c.claimTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &FetchError{Kind: BadAnswer, Detail: "bad request"}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		notSent := errors.Is(err, publicaddr.ErrPrivate) || neverSent(err)
		return nil, &FetchError{Kind: Unavailable, NotSent: notSent, Detail: "info: " + opName(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, &FetchError{Kind: Unavailable, Detail: fmt.Sprintf("info: answer %d", resp.StatusCode)}
	}
	var info struct {
		Versions []string `json:"versions"`
	}
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, &FetchError{Kind: BadAnswer, Detail: "info: not JSON"}
	}
	out := make([]string, 0, len(info.Versions))
	for _, v := range info.Versions {
		if v = SanitizeMessage(v); v != "" && len(v) <= 32 && len(out) < 20 {
			out = append(out, v)
		}
	}
	return out, nil
}

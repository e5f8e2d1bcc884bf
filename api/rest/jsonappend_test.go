package rest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
)

// TestChatListJSON: the appenders write what encoding/json writes for the
// same chat.
func TestChatListJSON(t *testing.T) {
	last := time.Date(2026, 11, 24, 23, 59, 59, 999_999_999, time.FixedZone("x", -5*3600))
	msg := "quota \"exceeded\" <b> & \u2028\u2029 \x00\x1f\x7f \xff\xfe é 😀"
	for _, ch := range []models.Chat{
		{ID: uuid.New(), Title: "plain", CreatedAt: time.Unix(0, 0), UpdatedAt: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{ID: uuid.New(), Title: msg, Error: &msg, LastMessageAt: &last, MessageCount: 1 << 40,
			CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), UpdatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: uuid.Nil, Title: "", CreatedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		want, err := json.Marshal(renderChat(&ch))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendChat(nil, &ch); string(got) != string(want) {
			t.Errorf("chat %q:\n got %s\nwant %s", ch.Title, got, want)
		}
	}
	for i := range 10_000 {
		tm := time.Unix(int64(i)*9_876_543_211%(300_000_000_000)-62_000_000_000, 0)
		if got, want := timestamp(tm), tm.UTC().Format("2006-01-02T15:04:05Z"); got != want {
			t.Fatalf("timestamp %v: %s, want %s", tm, got, want)
		}
	}
	p := Pagination{Page: 2, PerPage: 25, TotalCount: 1000, TotalPages: 40}
	if want, _ := json.Marshal(p); string(appendPagination(nil, p)) != string(want) {
		t.Errorf("pagination: %s, want %s", appendPagination(nil, p), want)
	}
}

// FuzzJSONString: appendJSONString writes what encoding/json writes.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "\u2028\u2029", "\xff\xfe\xed\xa0\x80", "tab\tnew\nline\x00", "\b\f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

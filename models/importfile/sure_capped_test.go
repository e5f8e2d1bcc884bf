package importfile

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestCappedStopsAtTheLimit: the counter every ZIP entry is inflated
// through reads at most one byte past its limit, then refuses.
func TestCappedStopsAtTheLimit(t *testing.T) {
	src := bytes.NewReader(make([]byte, 1000))
	c := &capped{r: src, limit: 10}
	b, err := io.ReadAll(c)
	if !errors.Is(err, errExpands) || len(b) > 11 || src.Len() < 1000-11 {
		t.Fatalf("read %d bytes (%d left), err %v", len(b), src.Len(), err)
	}
	c = &capped{r: bytes.NewReader(make([]byte, 10)), limit: 10}
	if b, err := io.ReadAll(c); err != nil || len(b) != 10 {
		t.Fatalf("at the limit: %d bytes, %v", len(b), err)
	}
}

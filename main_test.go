package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"coffer/models/modelstest"
)

// TestLazyDashboard: the job dashboard built on its first request serves
// its pages and API as the eager one did.
func TestLazyDashboard(t *testing.T) {
	h := lazyDashboard(modelstest.Redis(t, 9))
	for _, c := range []struct{ path, want string }{
		{"/admin/jobs", "<html"},
		{"/admin/jobs/api/queues", "queues"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", c.path, nil))
		body, _ := io.ReadAll(w.Result().Body)
		if w.Code != 200 || !strings.Contains(string(body), c.want) {
			t.Errorf("GET %s: %d %.200s", c.path, w.Code, body)
		}
	}
}

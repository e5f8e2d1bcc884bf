package models_test

import (
	"testing"
	"time"

	"coffer/models"
	"coffer/models/modelstest"
)

// TestOpenPostgresSettings: the pool's connections run without parallel
// workers unless DATABASE_URL says otherwise, and WarmPool leaves the
// connections it opened idle in the pool.
func TestOpenPostgresSettings(t *testing.T) {
	if modelstest.Embedded() {
		t.Skip("PostgreSQL's settings")
	}
	url := modelstest.PostgresURL(t)
	for _, c := range []struct{ url, want string }{
		{url, "0"},
		{url + "&max_parallel_workers_per_gather=2", "2"},
	} {
		db, err := models.OpenPostgres(t.Context(), c.url, 4, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.QueryRowContext(t.Context(), "SHOW max_parallel_workers_per_gather").Scan(&got); err != nil || got != c.want {
			t.Errorf("%s: max_parallel_workers_per_gather %q, %v; want %q", c.url, got, err, c.want)
		}
		// Asked for more than the pool holds, it opens the pool's four.
		if n := models.WarmPool(t.Context(), db, 6); n != 4 || db.Stats().Idle != 4 {
			t.Errorf("warmed %d, idle %d; want 4", n, db.Stats().Idle)
		}
		db.Close()
	}
}

package models

import (
	"cmp"
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/secret"
)

// BackfillReport counts what a secrets backfill found and did.
type BackfillReport struct {
	Scanned     int // secret values looked at
	Encrypted   int // plaintext values sealed
	Reencrypted int // values moved from an old key to the current one
	Current     int // already sealed with the current key
	Unreadable  int // sealed values no known key opens; left as they are
}

// sealedColumns are the columns that hold sealed secrets, by table, with
// the key column whose value each is sealed for ("id" when empty).
var sealedColumns = []struct{ table, column, key string }{
	{"sso_providers", ColClientSecret, ""},
	{"sso_providers", ColSPPrivateKey, ""},
	{"provider_connections", "access_url_enc", ""},
	{"provider_connections", "setup_token_enc", ""},
	{"sessions", "id_token_enc", ""},
	{webhookTable, webhookColumn, ""},
	{totpTable, totpColumn, "user_id"},
}

// BackfillSecrets seals plaintext secrets left by older rows and re-seals
// values of old keys with the current one, row by row. Each write is a
// compare-and-set on the value read, so a concurrent edit wins and is
// never overwritten. Unreadable values are counted, never touched. A
// second run changes nothing. With dryRun nothing is written.
func (s *Store) BackfillSecrets(ctx context.Context, dryRun bool) (BackfillReport, error) {
	var r BackfillReport
	for _, sc := range sealedColumns {
		key := cmp.Or(sc.key, "id")
		var rows []struct {
			ID    uuid.UUID `bun:"id"`
			Value string    `bun:"value"`
		}
		err := s.db.NewSelect().TableExpr(sc.table).ColumnExpr("? AS id", bun.Ident(key)).ColumnExpr("? AS value", bun.Ident(sc.column)).
			Where("? IS NOT NULL AND ? <> ''", bun.Ident(sc.column), bun.Ident(sc.column)).Scan(ctx, &rows)
		if err != nil {
			return r, dbErr("scan secrets", err)
		}
		for _, row := range rows {
			r.Scanned++
			plain := row.Value
			if secret.IsSealed(row.Value) {
				// Opened even under the current key, so that a value moved
				// from another row or damaged is reported, not counted as done.
				var err error
				if plain, err = s.Secrets.Open(row.Value, sc.table, sc.column, row.ID.String()); err != nil {
					r.Unreadable++
					continue
				}
				if s.Secrets.Current(row.Value) {
					r.Current++
					continue
				}
			}
			if dryRun {
				count(&r, row.Value)
				continue
			}
			sealed, err := s.Secrets.Seal(plain, sc.table, sc.column, row.ID.String())
			if err != nil {
				return r, err
			}
			res, err := s.db.NewUpdate().Table(sc.table).Set("? = ?", bun.Ident(sc.column), sealed).
				Where("? = ?", bun.Ident(key), row.ID).Where("? = ?", bun.Ident(sc.column), row.Value).Exec(ctx)
			if err != nil {
				return r, dbErr("backfill secret", err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				count(&r, row.Value) // else a concurrent edit won, and wrote a sealed value itself
			}
		}
	}
	return r, nil
}

func count(r *BackfillReport, old string) {
	if secret.IsSealed(old) {
		r.Reencrypted++
	} else {
		r.Encrypted++
	}
}

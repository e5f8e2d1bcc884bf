package models

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/uuid"
)

// SumsReadsDiffer reads what the reports and series read over p (the
// statement cells by month and for the whole period, the net worth
// series and each account's series at every interval) once from the kept
// sums, as they do, and once from the rows, as they did before the sums,
// and describes every difference (none: byte-identical answers).
func (s *Store) SumsReadsDiffer(ctx context.Context, familyID uuid.UUID, p Period, accountIDs []uuid.UUID) ([]string, error) {
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	var diffs []string
	for _, byMonth := range []bool{false, true} {
		fromRows := []StatementCell{}
		if byMonth {
			if err := s.db.NewRaw(incomeStatementSQL, familyID, p.From, p.To, s.bucketOf(Month, "d.date")).Scan(ctx, &fromRows); err != nil {
				return nil, err
			}
		} else {
			var rows []CategoryTotal
			if err := s.db.NewRaw(categoryTotalsSQL, familyID, p.From, p.To).Scan(ctx, &rows); err != nil {
				return nil, err
			}
			for _, r := range rows {
				fromRows = append(fromRows, StatementCell{CategoryTotal: r})
			}
		}
		fromSums, _, err := s.sumsCells(ctx, fam.Currency, familyID, p, byMonth)
		if err != nil {
			return nil, err
		}
		if !reflect.DeepEqual(fromRows, fromSums) {
			diffs = append(diffs, fmt.Sprintf("statement %v by month %v: rows %+v, sums %+v", p, byMonth, fromRows, fromSums))
		}
	}
	rowsOf := func(q, accounts string) string {
		return strings.Replace(q, fmt.Sprintf(seriesDaysSumsSQL, accounts), fmt.Sprintf(seriesRowsDaysSQL, accounts), 1)
	}
	netRows := rowsOf(netWorthSQL, "t.account_id IN (SELECT id FROM acc)")
	accRows := rowsOf(accountSeriesSQL, "t.account_id = ?6")
	if netRows == netWorthSQL || accRows == accountSeriesSQL {
		return nil, fmt.Errorf("series: the days are not where the test looks for them")
	}
	for _, i := range []Interval{Day, Week, Month} {
		for _, c := range append([]uuid.UUID{uuid.Nil}, accountIDs...) {
			sumsQ, rowsQ := accountSeriesSQL, accRows
			if c == uuid.Nil {
				sumsQ, rowsQ = netWorthSQL, netRows
			}
			a, an, err := s.series(ctx, sumsQ, familyID, c, p, i)
			if err != nil {
				return nil, err
			}
			b, bn, err := s.series(ctx, rowsQ, familyID, c, p, i)
			if err != nil {
				return nil, err
			}
			if an != bn || !reflect.DeepEqual(a, b) {
				diffs = append(diffs, fmt.Sprintf("series of %s by %s over %v: sums %v, rows %v", c, i, p, a, b))
			}
		}
	}
	return diffs, nil
}

// CompactSumsBatch is one compaction of at most batch deltas.
func (s *Store) CompactSumsBatch(ctx context.Context, familyID uuid.UUID, batch int) (int64, error) {
	return s.compactSums(ctx, familyID, batch)
}

package models_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
)

// BenchmarkSplitRegister measures the register and the transaction list
// of a family of 100,000 transactions whose checking account holds 2,000
// split parents (two parts each), and reading one parent with its parts.
func BenchmarkSplitRegister(b *testing.B) {
	s := modelstest.NewStore(b)
	ctx := context.Background()
	big := seedBigFamily(b, s, "big", 100_000)
	var ids []uuid.UUID
	must(b, s.DB().NewSelect().Model((*models.Transaction)(nil)).Column("id").
		Where("family_id = ?", big.fam).Where("account_id = ?", big.checking).Where("NOT excluded").Where("amount > 1").
		Where("id NOT IN (SELECT outflow_transaction_id FROM transfers)").OrderExpr("id").Limit(2000).Scan(ctx, &ids))
	var parent uuid.UUID
	for _, id := range ids {
		t, err := s.Transaction(ctx, big.fam, id)
		must(b, err)
		half := t.Amount / 2
		_, err = s.SplitTransaction(ctx, big.fam, id, []models.SplitPart{{Name: "a", Amount: half}, {Name: "b", Amount: t.Amount - half}})
		must(b, err)
		parent = id
	}
	must(b, s.RecalculateBalance(ctx, big.fam, big.checking))
	must(b, s.CompactTransactionSums(ctx, big.fam)) // as the worker's sweep leaves them
	if s.Postgres() {
		_, err := s.DB().ExecContext(ctx, "VACUUM ANALYZE")
		must(b, err)
	} else {
		_, err := s.DB().ExecContext(ctx, "ANALYZE")
		must(b, err)
	}
	run := func(name string, fn func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := modelstest.ProcessCPU(b)
			for b.Loop() {
				if err := fn(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(modelstest.ProcessCPU(b)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
	page := models.Page{Number: 1, Size: 50}
	// The register as the account screen asks for it: counted up to 250.
	run("RegisterFirstPage", func() error {
		_, _, err := s.AccountRegister(ctx, big.fam, big.checking, models.Page{Number: 1, Size: 50, CountUpTo: 250})
		return err
	})
	run("RegisterPage100", func() error {
		_, _, err := s.AccountRegister(ctx, big.fam, big.checking, models.Page{Number: 100, Size: 50, CountUpTo: 250})
		return err
	})
	run("TransactionsPage", func() error { _, _, err := s.Transactions(ctx, big.fam, models.TransactionFilter{}, page); return err })
	run("TransactionsPageWithParents", func() error {
		_, _, err := s.Transactions(ctx, big.fam, models.TransactionFilter{WithSplitParents: true}, page)
		return err
	})
	run("SplitParent", func() error { _, err := s.Transaction(ctx, big.fam, parent); return err })
}

package models_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"coffer/models/modelstest"
)

// BenchmarkFamilyExport writes the export of a family of 100,000
// transactions (beside another of the same size) into its chunk rows, as
// the family:export job does, and reports the file's size and the heap in
// use: before, and at most while it ran (sampled every 5 ms), so that a
// heap that grows with the ledger shows.
func BenchmarkFamilyExport(b *testing.B) {
	s := modelstest.NewStore(b)
	ctx := context.Background()
	big := seedBigFamily(b, s, "export", 100_000)
	seedBigFamily(b, s, "export-neighbour", 100_000)
	analyze := "ANALYZE" // as autovacuum leaves the tables, like BenchmarkReports
	if s.Postgres() {
		analyze = "VACUUM ANALYZE"
	}
	if _, err := s.DB().ExecContext(ctx, analyze); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := before.HeapInuse
	stop, done := make(chan struct{}), sync.WaitGroup{}
	done.Add(1)
	go func() {
		defer done.Done()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapInuse)
			}
		}
	}()
	var size int64
	b.ResetTimer()
	for range b.N {
		e, err := s.CreateFamilyExport(ctx, big.fam)
		must(b, err)
		if _, err := s.StartFamilyExport(ctx, big.fam, e.ID); err != nil {
			b.Fatal(err)
		}
		f := s.FamilyExportFile(ctx, big.fam, e.ID)
		must(b, s.WriteFamilyData(ctx, big.fam, f))
		must(b, f.Close())
		must(b, s.FinishFamilyExport(ctx, big.fam, e.ID, f.Size()))
		size = f.Size()
	}
	b.StopTimer()
	close(stop)
	done.Wait()
	b.ReportMetric(float64(size)/(1<<20), "zip-MiB")
	b.ReportMetric(float64(before.HeapInuse)/(1<<20), "heap-before-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "heap-peak-MiB")
}

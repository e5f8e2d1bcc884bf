package models_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/google/uuid"

	"coffer/models/modelstest"
)

// sureExportOf is an export as the reference writes it, of two accounts,
// two categories, a tag and n transactions (every tenth tagged), zipped.
// Their ids are random UUIDs, as the reference's: the ZIP is then about
// as large, next to its NDJSON, as a real export's.
func sureExportOf(b testing.TB, n int) []byte {
	b.Helper()
	var nd bytes.Buffer
	nd.WriteString(`{"type":"Account","data":{"id":"acc-1","name":"Checking","accountable_type":"Depository","balance":"0.0","currency":"USD","status":"active"}}` + "\n")
	nd.WriteString(`{"type":"Account","data":{"id":"acc-2","name":"Visa","accountable_type":"CreditCard","balance":"0.0","currency":"USD","status":"active"}}` + "\n")
	nd.WriteString(`{"type":"Category","data":{"id":"cat-1","name":"Food","color":"#fd7f6f","parent_id":null,"classification_unused":"expense","lucide_icon":"utensils"}}` + "\n")
	nd.WriteString(`{"type":"Category","data":{"id":"cat-2","name":"Groceries","color":"#4da568","parent_id":"cat-1","classification_unused":"expense","lucide_icon":"shopping-basket"}}` + "\n")
	nd.WriteString(`{"type":"Tag","data":{"id":"tag-1","name":"Vacation","color":"#e99537"}}` + "\n")
	for i := 0; i < n; i++ {
		tags := "[]"
		if i%10 == 0 {
			tags = `["tag-1"]`
		}
		fmt.Fprintf(&nd, `{"type":"Transaction","data":{"id":"%s","entry_id":"%s","account_id":"acc-%d","date":"20%02d-%02d-%02d","amount":"%d.%02d","currency":"USD","name":"Shop %d","notes":null,"excluded":false,"category_id":"cat-%d","merchant_id":null,"tag_ids":%s,"kind":"standard","created_at":"2024-01-05T12:00:00.000Z","updated_at":"2024-01-05T12:00:00.000Z"}}`+"\n",
			uuid.New(), uuid.New(), 1+i%2, 10+i%15, 1+i%12, 1+i%28, i%500, i%100, i%1000, 1+i%2, tags)
	}
	var z bytes.Buffer
	w := zip.NewWriter(&z)
	f, err := w.Create("all.ndjson")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(nd.Bytes()); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return z.Bytes()
}

// BenchmarkRestoreSure100k restores 100,000 transactions into a new
// family, in one transaction. Run it alone:
// go test -run '^$' -bench RestoreSure -benchtime 1x ./models/
func BenchmarkRestoreSure100k(b *testing.B) {
	s := modelstest.NewStore(b)
	file := sureExportOf(b, 100_000)
	b.ReportMetric(float64(len(file))/(1<<20), "MiB-zip")
	ctx := context.Background()
	var peak uint64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		fam := modelstest.NewFamily(b, s, fmt.Sprintf("bench%d", i))
		runtime.GC()
		b.StartTimer()
		sum, err := s.RestoreSure(ctx, fam.Family.ID, file)
		if err != nil {
			b.Fatal(err)
		}
		if sum.Created["transactions"] != 100_000 {
			b.Fatalf("created %v", sum.Created)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	b.ReportMetric(float64(peak)/(1<<20), "MiB-heap")
}

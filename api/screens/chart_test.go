package screens

import (
	"slices"
	"strings"
	"testing"

	"coffer/models"
	"coffer/models/money"
)

// The value axis runs in round steps over the values and zero.
func TestChartScale(t *testing.T) {
	unit := float64(money.AmountScale)
	for _, c := range []struct {
		values []int64
		ticks  []float64
	}{
		{[]int64{0, 5007_6000}, []float64{0, 2000, 4000, 6000}},
		{[]int64{-400_0000, 5007_6000}, []float64{-2000, 0, 2000, 4000, 6000}},
		{[]int64{12_0000}, []float64{0, 5, 10, 15}},
		{[]int64{0}, []float64{0, 1}},
		{[]int64{-3_0000}, []float64{-3, -2, -1, 0}},
	} {
		var got []float64
		for _, v := range newScale(c.values...).ticks {
			got = append(got, v/unit)
		}
		if !slices.Equal(got, c.ticks) {
			t.Errorf("ticks of %v: %v, want %v", c.values, got, c.ticks)
		}
	}
	svg := string(lineChart("Net worth", "USD", []models.SeriesPoint{{Date: "2026-01-01", Value: 0}, {Date: "2026-02-01", Value: 5007_6000}}))
	for _, want := range []string{">$0<", ">$2,000<", ">$6,000<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart has no %s label: %s", want, svg)
		}
	}
}

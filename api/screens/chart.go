package screens

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"coffer/models"
	"coffer/models/money"
)

// Charts are SVG drawn on the server: no script, nothing to download, and
// every chart's numbers also stand in a table beside it for screen
// readers and for copying.

const (
	chartW, chartH = 640, 200
	padL, padR     = 72, 8 // padL holds the value axis's labels
	padT, padB     = 12, 24
)

// scale maps values between lo and hi to the chart's height; its ticks
// are the round values the value axis labels.
type scale struct {
	lo, hi float64
	ticks  []float64
}

// newScale spans the values and zero, widened to round ticks (1, 2 or 5
// times a power of ten of the currency's unit) so the axis reads plainly.
func newScale(values ...int64) scale {
	lo, hi := 0.0, 0.0
	for _, v := range values {
		f := float64(v)
		lo, hi = min(lo, f), max(hi, f)
	}
	if hi == lo {
		hi = lo + money.AmountScale
	}
	raw := (hi - lo) / 4
	step := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*step >= raw {
			step *= m
			break
		}
	}
	step = max(step, money.AmountScale) // never below one unit
	s := scale{lo: math.Floor(lo/step) * step, hi: math.Ceil(hi/step) * step}
	for t := s.lo; t <= s.hi+step/2; t += step {
		s.ticks = append(s.ticks, t)
	}
	return s
}

// axis draws the value axis: a light line and a label at each tick, in
// whole units of the currency.
func (s scale) axis(b *strings.Builder, currency string) {
	c := money.MustCurrency(currency)
	c.Exponent = 0
	for _, t := range s.ticks {
		y := s.y(int64(t))
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eceef2"/>`, padL, chartW-padR, y, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="11" fill="#5b6578" text-anchor="end" dominant-baseline="middle">%s</text>`,
			padL-6, y, template.HTMLEscapeString(money.Amount(t).Format(c)))
	}
}

func (s scale) y(v int64) float64 {
	return padT + (s.hi-float64(v))/(s.hi-s.lo)*float64(chartH-padT-padB)
}

// lineChart draws a series (balances over time) as a line with a shaded
// area, a zero line when the values cross it, and the first and last
// dates under it, against a value axis in the currency's whole units.
func lineChart(label, currency string, points []models.SeriesPoint) template.HTML {
	if len(points) == 0 {
		return ""
	}
	vals := make([]int64, len(points))
	for i, p := range points {
		vals[i] = int64(p.Value)
	}
	sc := newScale(vals...)
	step := float64(chartW-padL-padR) / float64(max(len(points)-1, 1))
	var line strings.Builder
	for i, v := range vals {
		fmt.Fprintf(&line, "%.1f,%.1f ", padL+float64(i)*step, sc.y(v))
	}
	base := sc.y(0)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s">`, chartW, chartH, template.HTMLEscapeString(label))
	sc.axis(&b, currency)
	fmt.Fprintf(&b, `<polygon points="%.1f,%.1f %s%.1f,%.1f" fill="#3b6fd8" fill-opacity=".12"/>`,
		float64(padL), base, line.String(), padL+float64(len(vals)-1)*step, base)
	if sc.lo < 0 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#9aa3b2" stroke-dasharray="4 3"/>`, padL, chartW-padR, base, base)
	}
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#3b6fd8" stroke-width="2.5" stroke-linejoin="round"/>`, line.String())
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" fill="#5b6578">%s</text>`, padL, chartH-6, points[0].Date)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" fill="#5b6578" text-anchor="end">%s</text>`, chartW-padR, chartH-6, points[len(points)-1].Date)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// barPair is one column of a two-series bar chart (income and spending).
type barPair struct {
	Label string
	A, B  money.Amount
}

// pairChart draws income (green) beside spending (dark) for each column.
func pairChart(label, currency string, cols []barPair) template.HTML {
	if len(cols) == 0 {
		return ""
	}
	var vals []int64
	for _, c := range cols {
		vals = append(vals, int64(c.A), int64(c.B))
	}
	sc := newScale(vals...)
	slot := float64(chartW-padL-padR) / float64(len(cols))
	bw := slot * 0.35
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s">`, chartW, chartH, template.HTMLEscapeString(label))
	sc.axis(&b, currency)
	base := sc.y(0)
	for i, c := range cols {
		x := padL + float64(i)*slot + slot*0.12
		for j, v := range []money.Amount{c.A, c.B} {
			y := sc.y(int64(v))
			top, h := min(y, base), abs(y-base)
			fill := "#137333"
			if j == 1 {
				fill = "#1d2433"
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x+float64(j)*bw, top, bw, max(h, 0.5), fill)
		}
		if len(cols) <= 12 || i%(len(cols)/6+1) == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#5b6578" text-anchor="middle">%s</text>`,
				x+bw, chartH-6, template.HTMLEscapeString(c.Label))
		}
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#9aa3b2"/>`, padL, chartW-padR, base, base)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// share is a part of a whole as a percentage for a CSS bar, 0 to 100.
func share(part, whole money.Amount) int {
	if whole <= 0 || part <= 0 {
		return 0
	}
	return int(min(int64(part)*100/int64(whole), 100))
}

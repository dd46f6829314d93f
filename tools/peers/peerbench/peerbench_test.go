package peerbench

import (
	"runtime"
	"testing"
)

func TestGHz(t *testing.T) {
	g := GHz()
	if runtime.GOARCH != "amd64" {
		if g != 0 {
			t.Fatalf("GHz on %s = %v, want 0 (no loop)", runtime.GOARCH, g)
		}
		return
	}
	// One iteration per cycle: a plausible clock, not a figure (tests don't
	// time things), so bounds wide enough for any machine CI gets.
	if g < 0.05 || g > 10 {
		t.Fatalf("GHz = %v, want a clock between 0.05 and 10", g)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), c.in...)
		if got := Median(in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Errorf("Median reordered its argument: %v", in)
			}
		}
	}
}

package cpuclock

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

package layout

import "testing"

// TestLayout compares every C expression with its Go counterpart.
func TestLayout(t *testing.T) {
	if len(goLayout) == 0 {
		t.Skip("skipping: the layout check needs -tags cudagen_layout and CGO_CFLAGS=-I<header dir>; go test ./gen -run TestLibraryLayout runs it")
	}
	c := cLayout()
	if len(c) != len(goLayout) {
		t.Fatalf("%d C values, %d Go values", len(c), len(goLayout))
	}
	bad := 0
	for i, g := range goLayout {
		if int64(g.v) != c[i] {
			bad++
			t.Errorf("%s: C says %d, Go has %d", g.c, c[i], g.v)
		}
	}
	t.Logf("%d sizes, alignments and offsets checked, %d differ", len(goLayout), bad)
}

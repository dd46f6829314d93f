// Package layoutcheck compares the layout of generated Go types with what
// the C compiler says of the real header (sizes, alignments and field
// offsets): the check of cuda/driver/internal/layout and
// cuda/nccl/internal/layout, which gen's layout tests run.
package layoutcheck

import "testing"

// Check compares, for each of the n C expressions, the C compiler's value
// (cLayout, called only where n is not 0) with the Go side's (goValue: the
// expression's text and its value in Go). With n 0, the package was built
// without the layout tag and Check skips, saying so and how to run it
// (run).
func Check(t *testing.T, n int, cLayout func() []int64, goValue func(i int) (string, int64), run string) {
	t.Helper()
	if n == 0 {
		t.Skip("skipping: the layout check needs -tags cudagen_layout and CGO_CFLAGS=-I<header dir>; " + run + " runs it")
	}
	c := cLayout()
	if len(c) != n {
		t.Fatalf("%d C values, %d Go values", len(c), n)
	}
	bad := 0
	for i := range n {
		if expr, v := goValue(i); v != c[i] {
			bad++
			t.Errorf("%s: C says %d, Go has %d", expr, c[i], v)
		}
	}
	t.Logf("%d sizes, alignments and offsets checked, %d differ", n, bad)
}

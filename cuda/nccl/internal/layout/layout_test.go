package layout

import (
	"testing"

	"github.com/cudagen/cudagen/cuda/internal/layoutcheck"
)

// TestLayout compares every C expression with its Go counterpart.
func TestLayout(t *testing.T) {
	layoutcheck.Check(t, len(goLayout), cLayout, func(i int) (string, int64) { return goLayout[i].c, int64(goLayout[i].v) },
		"go test ./gen -run TestLibraryLayout")
}

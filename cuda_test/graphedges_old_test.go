//go:build cgo && (cuda11.8 || cuda12.4)

package gputest

import (
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// graphEdges lists a graph's edges through cuGraphGetEdges (ABI 10000).
func graphEdges(t *testing.T, ctx driver.Context, g driver.Graph) (from, to []driver.GraphNode) {
	t.Helper()
	from, to, err := driver.GraphGetEdgesCtx(ctx, g)
	ok(t, err)
	return from, to
}

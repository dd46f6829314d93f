//go:build cgo && !cuda11.8 && !cuda12.4

package gputest

import (
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// graphEdges lists a graph's edges; from CUDA 13.0 cuGraphGetEdges is the
// _v2 entry point, with edge data.
func graphEdges(t *testing.T, ctx driver.Context, g driver.Graph) (from, to []driver.GraphNode) {
	t.Helper()
	from, to, data, err := driver.GraphGetEdgesCtx(ctx, g)
	ok(t, err)
	if len(data) != len(from) {
		t.Errorf("%d edges, %d edge data", len(from), len(data))
	}
	return from, to
}

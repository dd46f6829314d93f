//cudagen:sig GraphGetEdges(hGraph Graph) ([]GraphNode, []GraphNode, error)

//go:build (cuda11.8 || (cuda12.4 && !cuda11.8)) && cgo

package gputest

import (
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// A captured chain's edges through cuGraphGetEdges (ABI 10000), where the
// base name denotes it.
func TestShapeCaptureEdges(t *testing.T) {
	ctx, g, nodes := capturedChain(t)
	from, to, err := driver.GraphGetEdgesCtx(ctx, g)
	ok(t, err)
	checkChain(t, nodes, from, to)
}

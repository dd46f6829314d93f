//cudagen:sig GraphGetEdgesV2(hGraph Graph) ([]GraphNode, []GraphNode, []GraphEdgeData, error)

//go:build ((cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)) && cgo

package gputest

import (
	"testing"

	"github.com/cudagen/cudagen/cuda/driver"
)

// A captured chain's edges through cuGraphGetEdges_v2, with edge data:
// named by its versioned name, which every pin that declares it binds.
func TestShapeCaptureEdgesV2(t *testing.T) {
	ctx, g, nodes := capturedChain(t)
	from, to, data, err := driver.GraphGetEdgesV2Ctx(ctx, g)
	ok(t, err)
	if len(data) != len(from) {
		t.Errorf("%d edges, %d edge data", len(from), len(data))
	}
	checkChain(t, nodes, from, to)
}

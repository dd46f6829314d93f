//go:build (cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)

//cudagen:bound cuTensorMapEncodeTiled

package driver

import (
	"errors"
	"strings"
	"testing"
)

// A tensor map's arrays must hold as many entries as the rank says
// (globalStrides one fewer): a shorter slice is refused before the driver
// reads past it; full ones reach the driver.
func TestRankedSlicesRefuseShortOnes(t *testing.T) {
	if !onFake(t) {
		return
	}
	dims, strides := []uint64{64, 64, 64}, []uint64{256, 16384}
	box, es := []uint32{8, 8, 8}, []uint32{1, 1, 1}
	encode := func(d, s []uint64, b, e []uint32) error {
		_, err := TensorMapEncodeTiled(0, 3, 0x1000, d, s, b, e, 0, 0, 0, 0)
		return err
	}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"globalDim", encode(dims[:2], strides, box, es)},
		{"globalStrides", encode(dims, strides[:1], box, es)},
		{"boxDim", encode(dims, strides, box[:2], es)},
		{"elementStrides", encode(dims, strides, box, nil)},
	} {
		if !errors.Is(c.err, ErrorInvalidValue) || !strings.Contains(c.err.Error(), c.name+" has") || !strings.Contains(c.err.Error(), "tensorRank requires") {
			t.Errorf("a short %s: got %v, want a refusal naming it and tensorRank", c.name, c.err)
		}
	}
	reached(t, "cuTensorMapEncodeTiled", encode(dims, strides, box, es))
}

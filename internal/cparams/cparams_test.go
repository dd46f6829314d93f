package cparams

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for in, want := range map[string][]string{
		"":       nil,
		" void ": nil,
		"CUcontext *pctx, unsigned int flags, CUdevice_v1 dev":         {"CUcontext *pctx", "unsigned int flags", "CUdevice_v1 dev"},
		"CUfunction f, size_t (CUDA_CB *b2d)(int blockSize), size_t n": {"CUfunction f", "size_t (CUDA_CB *b2d)(int blockSize)", "size_t n"},
	} {
		if got := Split(in); !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}

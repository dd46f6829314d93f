//go:build (cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)

//cudagen:bound cuLibraryLoadData

package driver

import (
	"bytes"
	"testing"
)

// cuLibraryLoadData with CU_LIBRARY_BINARY_IS_PRESERVED keeps code until
// the library is unloaded: the wrapper copies the image into C memory.
func TestLifetimeLibraryPreservedImage(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	before := keptCount()
	img := bytes.Clone(fakeImage)
	lib, err := LibraryLoadDataCtx(ctx, img, nil, nil, []LibraryOption{LibraryBinaryIsPreserved}, []uintptr{1})
	if err != nil {
		t.Fatal(err)
	}
	// The caller may reuse its slice: the library holds its own copy.
	for i := range img {
		img[i] = 'x'
	}
	img = nil
	churn()
	k, err := LibraryGetKernelCtx(ctx, lib, "add_one")
	if err != nil || k == 0 {
		t.Fatalf("LibraryGetKernel after the image's slice was overwritten: %v", err)
	}
	noCorruption(t)
	if err := LibraryUnloadCtx(ctx, lib); err != nil {
		t.Fatal(err)
	}
	noCorruption(t)
	if keptCount() != before {
		t.Fatalf("LibraryUnload left %d C copies", keptCount()-before)
	}
}

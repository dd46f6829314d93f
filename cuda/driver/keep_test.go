//go:build cgo

package driver

import (
	"testing"
	"unsafe"
)

// A destroy that fails gives the copies it took back to the handle, which
// lives on; one that succeeds frees them.
func TestKeptGivenBackOnFailure(t *testing.T) {
	before := keptCount()
	b := []byte("kept")
	keepOrFree(nil, "LinkState", 1, keepCopy(unsafe.Pointer(&b[0]), len(b)))
	takeKept("LinkState", 1).done(ErrorInvalidHandle)
	if keptCount() != before+1 {
		t.Fatalf("a failed destroy left the handle %d C copies, want 1", keptCount()-before)
	}
	if k := takeKept("LinkState", 1); len(k.cs) != 1 || string(unsafe.Slice((*byte)(k.cs[0]), len(b))) != "kept" {
		t.Fatalf("the handle's copies after a failed destroy: %v", k.cs)
	} else {
		k.done(nil)
	}
	if keptCount() != before {
		t.Fatalf("a destroy left %d C copies", keptCount()-before)
	}
}

package driver

import (
	"errors"
	"testing"
)

// Without a driver, every typed form returns the any form's error.
func TestTypedFormsNoDriver(t *testing.T) {
	if len(typedFormCalls) == 0 {
		t.Fatal("no typed form calls")
	}
	for _, c := range typedFormCalls {
		if err := c.call(); !errors.Is(err, ErrNoDriver) {
			t.Errorf("%sOf(%s): got %v, want an error matching ErrNoDriver", c.name, c.key, err)
		}
	}
	if k := PointerAttributeContextOf; k.PointerAttribute() != PointerAttributeContext || k.String() != PointerAttributeContext.String() {
		t.Errorf("PointerAttributeContextOf is %v (%s)", k.PointerAttribute(), k)
	}
}

// Every typed form, with every variable of its key, passes the any form's
// check and reaches its entry point: each variable's Go type is its
// table's.
func TestTypedFormsReachTheDriver(t *testing.T) {
	if !onFake(t) {
		return
	}
	byGo := map[string]string{}
	for _, f := range Functions {
		byGo[f.Go] = f.Name
	}
	for _, c := range typedFormCalls {
		if err := c.call(); err != nil {
			reached(t, byGo[c.name], err)
		} else {
			t.Errorf("%sOf(%s): no error from the fake driver", c.name, c.key)
		}
	}
	t.Logf("%d typed form calls reached the fake driver", len(typedFormCalls))
}

// A typed form allocates no more than its any form called the usual way,
// with the variable it passes declared at the call (both through the
// whole check, against the fake driver).
func TestTypedFormsAllocateNoMore(t *testing.T) {
	if !onFake(t) {
		return
	}
	fd := int32(1000 + len(fakeEntries)) // no constant, and boxed without the runtime's cache of small values
	for _, c := range []struct {
		name      string
		any, form func() error
	}{
		{"cuPointerGetAttribute",
			func() error { var ctx Context; return PointerGetAttribute(&ctx, PointerAttributeContext, 0) },
			func() error { _, err := PointerGetAttributeOf(PointerAttributeContextOf, 0); return err }},
		{"cuPointerGetAttribute",
			func() error { var managed bool; return PointerGetAttribute(&managed, PointerAttributeIsManaged, 0) },
			func() error { _, err := PointerGetAttributeOf(PointerAttributeIsManagedOf, 0); return err }},
		{"cuPointerSetAttribute",
			func() error { sync := true; return PointerSetAttribute(&sync, PointerAttributeSyncMemops, 0) },
			func() error { return PointerSetAttributeOf(true, PointerAttributeSyncMemopsOf, 0) }},
		{"cuMemPoolSetAttribute",
			func() error { v := uint64(1 << 30); return MemPoolSetAttribute(0, MempoolAttrReleaseThreshold, &v) },
			func() error { return MemPoolSetAttributeOf(0, MempoolAttrReleaseThresholdOf, 1<<30) }},
		{"cuMemExportToShareableHandle",
			func() error {
				var h int32
				return MemExportToShareableHandle(&h, 0, MemHandleTypePosixFileDescriptor, 0)
			},
			func() error {
				_, err := MemExportToShareableHandleOf(0, MemHandleTypePosixFileDescriptorOf, 0)
				return err
			}},
		{"cuMemImportFromShareableHandle",
			func() error { _, err := MemImportFromShareableHandle(fd, MemHandleTypePosixFileDescriptor); return err },
			func() error {
				_, err := MemImportFromShareableHandleOf(fd, MemHandleTypePosixFileDescriptorOf)
				return err
			}},
	} {
		reached(t, c.name, c.any())
		reached(t, c.name, c.form())
		a, f := testing.AllocsPerRun(100, func() { _ = c.any() }), testing.AllocsPerRun(100, func() { _ = c.form() })
		t.Logf("%s: the any form allocates %v times, the typed form %v", c.name, a, f)
		if f > a {
			t.Errorf("%s: the typed form allocates %v times, the any form %v", c.name, f, a)
		}
	}
}

package cuda

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Set and LaunchPrepared of a prepared launch already in use in another
// goroutine are refused (ErrInvalid) and change nothing; once it is free
// again, Set stores its value.
func TestPreparedLaunchOverlapRefused(t *testing.T) {
	var v uint32 = 7
	l := &PreparedLaunch{k: &Kernel{name: "k", m: &Module{}}, params: []unsafe.Pointer{unsafe.Pointer(&v)}, types: []reflect.Type{reflect.TypeFor[uint32]()}}
	l.busy.Store(true)
	for what, err := range map[string]error{
		"Set":            l.Set(0, driver.Arg(uint32(9))),
		"LaunchPrepared": (*Stream)(nil).LaunchPrepared(l),
	} {
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "another goroutine") {
			t.Errorf("%s while in use: %v, want an error matching ErrInvalid saying another goroutine uses it", what, err)
		}
	}
	if v != 7 {
		t.Errorf("a refused Set stored %d", v)
	}
	if !l.busy.Load() {
		t.Error("a refused call released the other's hold")
	}
	l.busy.Store(false)
	if err := l.Set(0, driver.Arg(uint32(9))); err != nil || v != 9 {
		t.Errorf("Set once free: %v, value %d; want nil and 9", err, v)
	}
}

package gputest

import (
	"runtime"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// The cuda package records, queries and synchronizes without first making
// its context current (cuda/fastpath.go), retrying through the *Ctx call on
// any error. This checks the answers where that matters: with another
// context of the same device current on the thread, and with none. The
// record must land on the package's stream (pending behind its spin kernel),
// the query must see it pending, and after the sync it must be complete.
func TestHandleCallsUnderAnotherContext(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer e.Close()
	create, err := driver.Lookup("cuCtxCreate", 3020)
	ok(t, err)
	destroy, err := driver.Lookup("cuCtxDestroy", 4000)
	ok(t, err)
	runtime.LockOSThread() // the experiment needs one thread; the package never locks
	defer runtime.UnlockOSThread()
	d, err := driver.DeviceGet(int32(dev.Ordinal()))
	ok(t, err)
	other, r := ipCtxCreate(create, int32(d))
	if r != 0 {
		t.Fatalf("cuCtxCreate: %v", driver.Result(r))
	}
	defer ipCtxDestroy(destroy, other)
	for _, c := range []struct {
		name string
		ctx  driver.Context
	}{{"another context", driver.Context(other)}, {"no context", 0}} {
		ok(t, s.Spin(50*time.Millisecond))
		ok(t, driver.CtxSetCurrent(c.ctx))
		if err := s.Record(e); err != nil {
			t.Errorf("%s current: record: %v", c.name, err)
			continue
		}
		done, err := e.Query()
		if err != nil || done {
			t.Errorf("%s current: query right after recording behind 50ms of work: done %v, %v (want pending)", c.name, done, err)
		}
		t0 := time.Now()
		if err := e.Sync(); err != nil {
			t.Errorf("%s current: sync: %v", c.name, err)
		}
		waited := time.Since(t0)
		if done, err := e.Query(); err != nil || !done {
			t.Errorf("%s current: query after sync: done %v, %v", c.name, done, err)
		}
		if cur, _ := driver.CtxGetCurrent(); cur != c.ctx && cur != dev.Context() {
			t.Errorf("%s current: the calls left context %#x current", c.name, uintptr(cur))
		}
		t.Logf("%s current: record, query (pending), sync (waited %v) and query (done) answered right", c.name, waited.Round(time.Millisecond))
	}
	ok(t, driver.CtxSetCurrent(0))
}

//go:build cgo

package gputest

import (
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

func TestRecordExternalOutsideCapture(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer e.Close()
	// Outside stream capture the driver rejects the EXTERNAL flags; the
	// flag reaches it (cuEventRecordWithFlags, cuStreamWaitEvent).
	err := s.Record(e, cuda.RecordExternal)
	t.Logf("record external outside capture: %v", err)
	ok(t, s.Record(e))
	err = s.Wait(e, cuda.WaitExternal)
	t.Logf("wait external outside capture: %v", err)
}

func TestRecordEventAndWaitStream(t *testing.T) {
	dev := gpu(t)
	a := must[*cuda.Stream](t)(dev.NewStream())
	b := must[*cuda.Stream](t)(dev.NewStream())
	defer a.Close()
	defer b.Close()
	ok(t, a.Spin(time.Second))
	ok(t, b.WaitStream(a))
	e := must[*cuda.Event](t)(b.RecordEvent(cuda.EventOptions{Timing: true}))
	defer e.Close()
	if !e.Recorded() || !e.TimingEnabled() {
		t.Fatal("RecordEvent: not recorded with timing")
	}
	if done, _ := e.Query(); done {
		t.Fatal("b did not wait for a")
	}
	ok(t, e.Sync())
	if done, _ := a.Query(); !done {
		t.Fatal("b's event completed before a's work")
	}
}

//go:build cgo

package gputest

import (
	"errors"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

func TestEventPool(t *testing.T) {
	dev := gpu(t)
	if _, err := dev.NewEventPool(cuda.EventOptions{IPC: true, Timing: true}, 0); !errors.Is(err, cuda.ErrInvalidOptions) {
		t.Fatalf("invalid options: %v", err)
	}
	pool := must[*cuda.EventPool](t)(dev.NewEventPool(cuda.EventOptions{Timing: true}, 4))
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	a := must[*cuda.Event](t)(pool.Get())
	b := must[*cuda.Event](t)(pool.Get())
	ok(t, s.Record(a))
	ok(t, s.Record(b))
	ok(t, b.Sync())
	pool.Put(a)
	pool.Put(b)
	if pool.Len() != 2 {
		t.Fatalf("len %d", pool.Len())
	}
	c := must[*cuda.Event](t)(pool.Get())
	if c != a && c != b {
		t.Fatal("pool did not reuse an event")
	}
	if c.Recorded() {
		t.Fatal("reused event still marked recorded")
	}
	if _, err := c.Sub(c); !errors.Is(err, cuda.ErrNotRecorded) {
		t.Fatalf("reused event: %v", err)
	}
	// An event whose work is pending is not handed out.
	ok(t, s.Spin(time.Second))
	ok(t, s.Record(c))
	pool.Put(c)
	d := must[*cuda.Event](t)(pool.Get())
	if d == c {
		t.Fatal("pool handed out an event with pending work")
	}
	if done, _ := d.Query(); !done {
		t.Fatal("event from the pool is not complete")
	}
	// Other options are closed, not pooled.
	other := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	pool.Put(other)
	if _, err := other.Query(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("foreign event: %v", err)
	}
	ok(t, s.Sync())
	pool.Put(d)
	ok(t, pool.Close())
	ok(t, pool.Close())
	if _, err := pool.Get(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
}

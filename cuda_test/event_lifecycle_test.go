//go:build cgo

package gputest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

func TestLifecycle(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	start := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	end := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	ok(t, s.Record(start))
	ok(t, s.Spin(2*time.Millisecond))
	ok(t, end.Record(s))
	ok(t, end.Sync())
	done, err := end.Query()
	if !done || err != nil {
		t.Fatalf("query after sync: %v %v", done, err)
	}
	d, err := end.Sub(start)
	ok(t, err)
	if d <= 0 {
		t.Fatalf("elapsed %v", d)
	}
	if !start.TimingEnabled() || start.BlockingSync() || start.IPCEnabled() || start.Device() != dev || start.Handle() == 0 {
		t.Fatal("accessors")
	}
	ok(t, start.Close())
	ok(t, end.Close())
}

func TestNeverRecordedIsComplete(t *testing.T) {
	dev := gpu(t)
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	defer e.Close()
	done, err := e.Query()
	if !done || err != nil {
		t.Fatalf("query: %v %v", done, err)
	}
	ok(t, e.Sync())
	ok(t, e.Wait(context.Background()))
	_, err = e.Sub(e)
	if !errors.Is(err, cuda.ErrNotRecorded) {
		t.Fatalf("sub: %v", err)
	}
}

func TestRecordOverwrites(t *testing.T) {
	dev := gpu(t)
	busy := must[*cuda.Stream](t)(dev.NewStream())
	idle := must[*cuda.Stream](t)(dev.NewStream())
	defer busy.Close()
	defer idle.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer e.Close()
	ok(t, busy.Spin(2*time.Second))
	ok(t, busy.Record(e))
	if done, _ := e.Query(); done {
		t.Fatal("event complete while its work runs")
	}
	ok(t, idle.Record(e)) // the latest record is of an idle stream
	ok(t, e.Sync())       // returns without waiting for the busy stream
	if done, _ := busy.Query(); done {
		t.Fatal("the busy stream finished first; the test proves nothing")
	}
	ok(t, busy.Sync())
}

func TestClosePendingDoesNotBlock(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	ok(t, s.Spin(2*time.Second))
	ok(t, s.Record(e))
	ok(t, e.Close())
	if done, _ := s.Query(); done {
		t.Fatal("Close waited for the pending work")
	}
	ok(t, e.Close()) // idempotent
	if _, err := e.Query(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("query after close: %v", err)
	}
	if err := s.Record(e); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("record after close: %v", err)
	}
	for _, err := range []error{e.Sync(), e.Wait(context.Background()), s.Wait(e)} {
		if !errors.Is(err, cuda.ErrClosed) {
			t.Fatalf("after close: %v", err)
		}
	}
	if _, err := e.Sub(e); !errors.Is(err, cuda.ErrClosed) && !errors.Is(err, cuda.ErrTimingDisabled) {
		t.Fatalf("sub after close: %v", err)
	}
	ok(t, s.Sync())
	ok(t, s.Close())
	if err := s.Sync(); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("stream sync after close: %v", err)
	}
}

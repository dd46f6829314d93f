package cuda

import (
	"fmt"
	"runtime"

	"github.com/cudagen/cudagen/cuda/driver"
)

// RecordFlag changes how Record records an event.
type RecordFlag uint32

// RecordExternal makes Record, during stream capture, create an event record
// node in the graph instead of the default behaviour (CU_EVENT_RECORD_EXTERNAL).
// The driver rejects it outside capture.
const RecordExternal = RecordFlag(driver.EventRecordExternal)

// WaitFlag changes how Stream.Wait waits.
type WaitFlag uint32

// WaitExternal makes Stream.Wait, during stream capture, create an event wait
// node in the graph (CU_EVENT_WAIT_EXTERNAL). The driver rejects it outside
// capture.
const WaitExternal = WaitFlag(driver.EventWaitExternal)

// Stream is a queue of GPU work on one device. It is safe for concurrent use.
type Stream struct {
	dev     *Device
	h       driver.Stream
	owned   bool
	foreign bool // adopted (AdoptStream): Close never destroys the handle
	g       guard
	cleanup runtime.Cleanup
}

// Device is the stream's device.
func (s *Stream) Device() *Device { return s.dev }

// Handle is the driver handle (0 for the default stream).
func (s *Stream) Handle() driver.Stream { return s.h }

// String describes the stream.
func (s *Stream) String() string {
	switch {
	case s.h == 0:
		return fmt.Sprintf("default stream of device %d", s.dev.p.ordinal)
	case s.h == streamPerThread && !s.owned:
		return fmt.Sprintf("per-thread default stream of device %d", s.dev.p.ordinal)
	}
	return fmt.Sprintf("stream %#x of device %d", uintptr(s.h), s.dev.p.ordinal)
}

// acquire counts a call in flight on the stream; release ends it. It fails
// once the stream is closed or its device's context is gone.
func (s *Stream) acquire(op string) error {
	if !s.g.enter() {
		return closedErr(op, "stream")
	}
	if !s.dev.p.alive() || !s.owned && s.dev.closed.Load() {
		s.g.exit()
		return closedErr(op, "stream's device")
	}
	return nil
}

func (s *Stream) release() { s.g.exit() }

// Record captures in e the work queued on s so far; e completes when that
// work has. Recording again overwrites: Query, Sync, Wait and Sub then refer
// to the latest record. e must belong to s's device.
func (s *Stream) Record(e *Event, flags ...RecordFlag) error {
	return e.Record(s, flags...)
}

// Wait makes all work queued on s from now on wait for e to complete, without
// blocking the host. e may belong to another device.
func (s *Stream) Wait(e *Event, flags ...WaitFlag) error {
	const op = "stream wait for event"
	if err := s.acquire(op); err != nil {
		return err
	}
	defer s.release()
	if !e.acquire() {
		return e.unusable(op, "event")
	}
	defer e.release()
	var f driver.EventWaitFlags
	for _, x := range flags {
		f |= driver.EventWaitFlags(x)
	}
	return driverErr(op, driver.StreamWaitEventCtx(s.dev.p.ctx, s.h, e.h, f))
}

// RecordEvent creates an event on s's device with opts and records it on s,
// in one step (MAX's DeviceStream.record_event(), cuda.core's
// Stream.record() without an event).
func (s *Stream) RecordEvent(opts EventOptions) (*Event, error) {
	e, err := s.dev.NewEvent(opts)
	if err != nil {
		return nil, err
	}
	if err := s.Record(e); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// WaitStream makes all work queued on s from now on wait for the work queued
// on other so far (cuda.core's Stream.wait(stream)): it records a temporary
// event on other and waits for it.
func (s *Stream) WaitStream(other *Stream) error {
	e, err := other.RecordEvent(EventOptions{})
	if err != nil {
		return err
	}
	defer e.Close()
	return s.Wait(e)
}

// Sync blocks until all work queued on s has completed.
func (s *Stream) Sync() error {
	const op = "synchronize stream"
	if err := s.acquire(op); err != nil {
		return err
	}
	defer s.release()
	return driverErr(op, driver.StreamSynchronizeCtx(s.dev.p.ctx, s.h))
}

// Query reports whether all work queued on s has completed: (false, nil)
// while work is pending.
func (s *Stream) Query() (bool, error) {
	const op = "query stream"
	if err := s.acquire(op); err != nil {
		return false, err
	}
	err := driver.StreamQueryCtx(s.dev.p.ctx, s.h)
	s.release()
	if err == nil {
		return true, nil
	}
	if err == driver.ErrorNotReady {
		return false, nil
	}
	return false, driverErr(op, err)
}

// Close destroys the stream. It is idempotent; work already queued still
// completes. Closing the default streams does nothing; closing an adopted
// stream (AdoptStream) releases only the wrapper, never the handle. It waits for calls on the stream in flight in other goroutines to return.
func (s *Stream) Close() error {
	if !s.owned && !s.foreign {
		return nil // the default streams
	}
	if !s.g.close() {
		return nil
	}
	s.cleanup.Stop()
	if s.foreign || !s.dev.p.alive() {
		return nil // the context, and its streams, are gone
	}
	return driverErr("destroy stream", driver.StreamDestroyCtx(s.dev.p.ctx, s.h))
}

//go:build cgo

package gputest

import (
	"context"
	"errors"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// The goroutines the cuda package may leave running after its calls
// return (cuda/doc.go: "none outlives its call but ..."), by the function
// each runs; each ends once its work is done.
var packageGoroutines = map[string]string{
	"github.com/cudagen/cudagen/cuda/internal/sleeper.dispatch": "the dispatcher (while a waiter thread's answer is owed)",
	"github.com/cudagen/cudagen/cuda/internal/lifetime.flush":   "the flusher (while closed objects wait for their destroy)",
	"github.com/cudagen/cudagen/cuda.(*ctxState).runSlow":       "a context's slow calls: frees, unloads and its release (while the driver waits for its pending work)",
	"github.com/cudagen/cudagen/cuda.(*Event).WaitChan.func1":   "a WaitChan's wait (while it waits)",
}

// ourGoroutines lists the goroutines running a function of the cuda
// package or its internal packages (not of its tests, nor of cuda/driver,
// whose registered callbacks have goroutines of their own, documented
// there), by that function.
func ourGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(g, "\n")
		// The goroutine's function is the last frame before "created by".
		for i, l := range lines {
			if !strings.HasPrefix(l, "created by ") || i < 2 {
				continue
			}
			fn := lines[i-2]
			if j := strings.LastIndex(fn, "("); j > 0 && strings.HasSuffix(fn, ")") {
				fn = fn[:j]
			}
			if strings.HasPrefix(fn, "github.com/cudagen/cudagen/cuda.") || strings.HasPrefix(fn, "github.com/cudagen/cudagen/cuda/internal/") {
				out = append(out, fn)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestLayerGoroutinesEnd: the goroutine rule of cuda/doc.go. After a mix of
// calls (long Waits blocked, polled and cancelled, WaitChan, events recorded and closed, streams,
// RecordEvent, Devices closed with work pending), every goroutine of the
// package still running is one of the documented ones; once the work is
// done and Done is closed, none is left. States, not times: what runs is
// listed while the work is pending, and the end is waited for (a minute
// without it is a failure).
func TestLayerGoroutinesEnd(t *testing.T) {
	gpu(t).Close()
	released(t)
	dev := must[*cuda.Device](t)(cuda.GetDevice(0))
	s := must[*cuda.Stream](t)(dev.NewStream())
	const work = 300 * time.Millisecond
	ok(t, s.Spin(work))
	// Work no call waits for, queued after: the context's release waits for
	// it in the driver.
	s2 := must[*cuda.Stream](t)(dev.NewStream())
	ok(t, s2.Spin(2*work))
	ok(t, s2.Close())
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	ok(t, s.Record(e))
	// Long Waits: blocked, cancelled (its driver sleep goes on), and one
	// through WaitChan.
	res := make(chan error, 2)
	go func() { res <- e.Wait(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	ch := e.WaitChan(ctx)
	if err := e.Wait(ctx2(t, 10*time.Millisecond)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a Wait cancelled before the work completed: %v", err)
	}
	p := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	ok(t, s.Record(p))
	ok(t, p.Close())
	x := must[*cuda.Event](t)(s.RecordEvent(cuda.EventOptions{Timing: true}))
	for range 300 {
		ok(t, must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{})).Close())
	}
	// Everything closed with the work still pending.
	ok(t, x.Close())
	ok(t, e.Close())
	ok(t, s.Close())
	ok(t, dev.Close())
	// Until the context is released, whatever of the package runs is one
	// of the documented goroutines.
	seen := map[string]bool{}
	deadline := time.Now().Add(time.Minute)
	for released := false; !released; {
		select {
		case <-dev.Done():
			released = true
		default:
		}
		for _, fn := range ourGoroutines() {
			if _, ok := packageGoroutines[fn]; !ok && !seen[fn] {
				t.Errorf("a goroutine of the package runs %s after its calls returned, which cuda/doc.go does not allow", fn)
			}
			seen[fn] = true
		}
		if time.Now().After(deadline) {
			t.Fatal("the context was not released within a minute")
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("goroutines of the package seen after every Close, until the release: %v", slices.Sorted(maps.Keys(seen)))
	<-ch
	cancel()
	if err := <-res; err != nil {
		t.Errorf("a Wait over the Closes: %v", err)
	}
	deadline = time.Now().Add(time.Minute)
	for left := ourGoroutines(); len(left) > 0; left = ourGoroutines() {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the work and the release, goroutines of the package still run: %v", left)
		}
		time.Sleep(time.Millisecond)
	}
}

// ctx2 is a context that is done after d, cancelled with the test.
func ctx2(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

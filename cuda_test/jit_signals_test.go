//go:build cgo && linux

package gputest

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// A module load may run the driver's PTX JIT compiler in the calling
// thread, which crashed in GPU test processes with Go's asynchronous
// preemption (SIGURG) on and a cold JIT cache, and not with preemption off
// or with the loading thread's signals blocked (docs/runs/gpu-runs.md,
// 2026-11-28): the loads block the thread's asynchronous signals for the
// call and restore its mask after. On the fake driver, every load finds
// SIGURG and SIGPROF blocked; everywhere, the loading thread's mask is the
// same after the loads as before (on a GPU, each load's text is new to the
// driver's JIT cache, so each is compiled).
func TestLayerLoadBlocksSignals(t *testing.T) {
	dev := gpu(t)
	loads0, fake := fakeCounter("fakecuda_loads")
	open0, _ := fakeCounter("fakecuda_loads_signals_open")
	runtime.LockOSThread() // the mask read is this thread's; the package never locks
	before := blockedSignals(t)
	for i := range 5 {
		m := must[*cuda.Module](t)(dev.LoadModule(uniquePTX(i)))
		ok(t, m.Close())
	}
	after := blockedSignals(t)
	runtime.UnlockOSThread()
	if before != after {
		t.Errorf("the thread's blocked signals were %#x before the loads and %#x after", before, after)
	}
	if fake {
		loads, _ := fakeCounter("fakecuda_loads")
		open, _ := fakeCounter("fakecuda_loads_signals_open")
		if loads-loads0 != 5 || open != open0 {
			t.Errorf("the driver saw %d loads, %d of them with SIGURG or SIGPROF unblocked; want 5 and 0", loads-loads0, open-open0)
		}
	}
}

// uniquePTX is computePTX behind a comment naming the process, the time
// and n: a text the driver's JIT cache has not seen.
func uniquePTX(n int) []byte {
	id := strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 10) + "." + strconv.Itoa(n)
	return []byte("// module " + id + "\n" + computePTX)
}

// blockedSignals is the calling thread's mask of blocked signals
// (/proc/thread-self/status, SigBlk).
func blockedSignals(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		t.Skipf("skipping: cannot read this thread's signal mask: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(l, "SigBlk:"); found {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Skip("skipping: /proc/thread-self/status has no SigBlk line")
	return 0
}

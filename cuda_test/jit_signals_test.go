//go:build cgo && linux

package gputest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// jitStormEnv makes TestLayerLoadBlocksSignals the child that loads
// modules while its thread receives a storm of SIGURG.
const jitStormEnv = "CUDAGEN_JIT_STORM"

// jitStormLoads is how many modules the child loads under the storm.
const jitStormLoads = 40

// A module load may run the driver's PTX JIT compiler in the calling
// thread, which crashes when a signal handler runs on that thread during
// the compilation (Go sends SIGURG to preempt): the loads block the
// thread's asynchronous signals for the call and restore its mask after.
// On the fake driver, every load finds SIGURG and SIGPROF blocked; on a
// GPU, a child process whose loading thread gets SIGURG every 20 µs loads
// jitStormLoads distinct PTX modules with the driver's JIT cache off, so
// that each is compiled, and exits cleanly.
func TestLayerLoadBlocksSignals(t *testing.T) {
	if os.Getenv(jitStormEnv) != "" {
		jitStorm(t)
		return
	}
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
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLayerLoadBlocksSignals$", "-test.v")
	cmd.Env = append(os.Environ(), jitStormEnv+"=1", "CUDA_CACHE_DISABLE=1")
	out, err := cmd.CombinedOutput()
	want := fmt.Sprintf("child: %d modules compiled and loaded", jitStormLoads)
	if err != nil || !strings.Contains(string(out), want) {
		t.Fatalf("the child loading modules under SIGURG: %v\n%s", err, tail(string(out), 40))
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "child:") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// jitStorm loads jitStormLoads distinct PTX modules on a locked thread
// that another goroutine sends SIGURG every 20 µs.
func jitStorm(t *testing.T) {
	dev := gpu(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, tid := syscall.Getpid(), syscall.Gettid()
	var stop atomic.Bool
	var sent atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			if syscall.Tgkill(pid, tid, syscall.SIGURG) == nil {
				sent.Add(1)
			}
			time.Sleep(20 * time.Microsecond)
		}
	}()
	for i := range jitStormLoads {
		m := must[*cuda.Module](t)(dev.LoadModule(uniquePTX(os.Getpid()*1000 + i)))
		must[*cuda.Kernel](t)(m.Kernel("add_one"))
		ok(t, m.Close())
	}
	stop.Store(true)
	<-done
	fmt.Printf("child: %d modules compiled and loaded, %d SIGURG sent to the loading thread\n", jitStormLoads, sent.Load())
}

// uniquePTX is computePTX behind a comment naming n: a text the driver's
// JIT cache has not seen.
func uniquePTX(n int) []byte {
	return []byte("// module " + strconv.Itoa(n) + "\n" + computePTX)
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

// tail is the last n lines of s.
func tail(s string, n int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

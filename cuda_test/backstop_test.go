//go:build cgo

package gputest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// Leaked events are released by the backstop, also after their context is
// gone, and a process that exits without closing anything exits cleanly.
func TestBackstopAndExit(t *testing.T) {
	if os.Getenv("CUDAGEN_EXIT_CHILD") != "" {
		dev, err := cuda.GetDevice(0)
		ok(t, err)
		s, _ := dev.NewStream()
		for i := 0; i < 100; i++ {
			e, _ := dev.NewEvent(cuda.EventOptions{Timing: true})
			s.Record(e)
		}
		s.Spin(50 * time.Millisecond)
		fmt.Println("child: exiting with work pending and nothing closed")
		os.Exit(0)
	}
	if _, err := cuda.DeviceCount(); err != nil {
		t.Skipf("skipping: needs a GPU, and this machine has none (CI has no GPU): %v", err)
	}
	before := cuda.Leaked()
	// The only open Device of this process: closing it releases the context.
	dev := must[*cuda.Device](t)(cuda.GetDevice(0))
	for i := 0; i < 1000; i++ {
		_ = must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	}
	for i := 0; i < 20 && cuda.Leaked()-before < 1000; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := cuda.Leaked() - before; n < 1000 {
		t.Errorf("backstop released %d of 1000 leaked events", n)
	}
	// Leak more, close the device (the context goes when the last Device
	// closes), then collect: the backstop must tolerate the lost context.
	for i := 0; i < 100; i++ {
		_ = must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	}
	ok(t, dev.Close())
	ok(t, dev.Close())
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBackstopAndExit$")
	cmd.Env = append(os.Environ(), "CUDAGEN_EXIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child: exiting") {
		t.Fatalf("child exit: %v\n%s", err, out)
	}
}

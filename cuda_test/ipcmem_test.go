//go:build cgo

package gputest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

// TestLayerIPCBuffer, on the fake driver (which opens a handle in the
// exporting process, standing for another): a Buffer's memory exported,
// its handle through text and binary, opened as a Buffer that reads and
// writes the same memory, passed on by the opened Buffer, and unmapped by
// its Close (the fake counts the mappings open); what cannot be exported
// or opened is refused before the driver is called. TestIPCBufferProcesses
// does it across processes on a GPU.
func TestLayerIPCBuffer(t *testing.T) {
	dev := fakeOnly(t)
	t.Setenv("FAKECUDA_IPC_OPEN", "1")
	mapped, _ := fakeCounter("fakecuda_ipc_mem_open")
	src := []int32{1, 2, 3, 4, 5, 6, 7, 8}
	b := must[*cuda.Buffer[int32]](t)(cuda.AllocFrom(dev, src))
	defer b.Close()
	h := must[cuda.IPCMemHandle](t)(b.IPCHandle())
	if h.Size() != 32 {
		t.Fatalf("the handle's size: %d bytes, want 32", h.Size())
	}
	var fromText, fromBin cuda.IPCMemHandle
	ok(t, fromText.UnmarshalText([]byte(h.String())))
	ok(t, fromBin.UnmarshalBinary(must[[]byte](t)(h.MarshalBinary())))
	if fromText != h || fromBin != h || len(h.String()) != 106 || !strings.HasPrefix(h.String(), "cuipcmem1:") {
		t.Fatalf("round trips: text %v, binary %v, want %v (106 characters)", fromText, fromBin, h)
	}
	o := must[*cuda.Buffer[int32]](t)(cuda.OpenIPCBuffer[int32](dev, fromText))
	if o.Len() != len(src) {
		t.Fatalf("opened buffer of %d values, want %d", o.Len(), len(src))
	}
	got := make([]int32, len(src))
	ok(t, o.CopyTo(got))
	if got[0] != 1 || got[7] != 8 {
		t.Fatalf("opened buffer reads %v, want %v", got, src)
	}
	ok(t, o.Set(-9))
	ok(t, b.CopyTo(got))
	if got[0] != -9 || got[7] != -9 {
		t.Fatalf("the exporter reads %v after the opened buffer's Set(-9)", got)
	}
	if again := must[cuda.IPCMemHandle](t)(o.IPCHandle()); again != h {
		t.Errorf("the opened buffer's handle %v, want the one it was opened with", again)
	}
	if now, fake := fakeCounter("fakecuda_ipc_mem_open"); fake && now != mapped+1 {
		t.Errorf("%d mappings open, want 1", now-mapped)
	}
	ok(t, o.Close())
	for i := 0; i < 500; i++ {
		if now, _ := fakeCounter("fakecuda_ipc_mem_open"); now == mapped {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if now, fake := fakeCounter("fakecuda_ipc_mem_open"); fake && now != mapped {
		t.Errorf("after Close of the opened buffer, %d mappings open, want 0", now-mapped)
	}

	_, err := cuda.OpenIPCBuffer[[3]int32](dev, h)
	isErr(t, "OpenIPCBuffer of 32 bytes as 12-byte values", err, cuda.ErrMismatch, "32 bytes")
	_, err = cuda.OpenIPCBuffer[int32](dev, cuda.IPCMemHandle{})
	isErr(t, "OpenIPCBuffer of the zero handle", err, cuda.ErrInvalid, "zero")
	_, err = must[*cuda.Buffer[int32]](t)(b.Slice(1, 3)).IPCHandle()
	isErr(t, "IPCHandle of a view", err, cuda.ErrInvalidOptions, "view")
	empty := must[*cuda.Buffer[int32]](t)(cuda.Alloc[int32](dev, 0))
	_, err = empty.IPCHandle()
	isErr(t, "IPCHandle of an empty buffer", err, cuda.ErrInvalidOptions, "empty")
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	pooled := must[*cuda.Buffer[int32]](t)(cuda.AllocAsync[int32](s, 4))
	_, err = pooled.IPCHandle()
	isErr(t, "IPCHandle of pool memory", err, cuda.ErrInvalidOptions, "AllocAsync")
	ok(t, pooled.Close())
	for _, bad := range []string{"", "cuipcmem1:", "cuipcmem2:" + h.String()[10:], h.String()[:105], "cuipcev2:" + h.String()[10:]} {
		var x cuda.IPCMemHandle
		if err := x.UnmarshalText([]byte(bad)); !errors.Is(err, cuda.ErrMalformedHandle) || x != (cuda.IPCMemHandle{}) {
			t.Errorf("UnmarshalText(%.20q…): %v, handle %v; want ErrMalformedHandle and the handle unchanged", bad, err, x)
		}
	}
	ok(t, b.Close())
	_, err = b.IPCHandle()
	isErr(t, "IPCHandle of a closed buffer", err, cuda.ErrClosed)
}

// ipcBufferEnv carries the handle to TestIPCBufferProcesses's child.
const ipcBufferEnv = "CUDAGEN_TEST_IPC_BUFFER"

// TestIPCBufferProcesses exports a buffer to a child process, which opens
// it on the last GPU (another than the exporter's where there are two),
// checks the values, writes others and closes it; the parent then reads
// the child's values.
func TestIPCBufferProcesses(t *testing.T) {
	if text := os.Getenv(ipcBufferEnv); text != "" {
		ipcBufferChild(t, text)
		return
	}
	dev := gpu(t) // not run on the fake driver, which has one process's state (TestLayerIPCBuffer runs there)
	const n = 1 << 16
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i)
	}
	b := must[*cuda.Buffer[float32]](t)(cuda.AllocFrom(dev, src))
	defer b.Close()
	h := must[cuda.IPCMemHandle](t)(b.IPCHandle())
	out := runChild(t, "TestIPCBufferProcesses", ipcBufferEnv+"="+h.String(), nil)
	checkChildSet(t, b, out)
}

// runChild runs test in a child process of this binary with env added
// and files as its fds 3 on, for at most 2 minutes, and returns its output
// once it has said "child: checked and wrote" (else the test fails).
func runChild(t *testing.T, test, env string, files []*os.File) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), env)
	cmd.ExtraFiles = files
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child: checked and wrote") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// checkChildSet checks that b holds the child's Set(-1) and logs the
// child's output.
func checkChildSet(t *testing.T, b *cuda.Buffer[float32], out string) {
	t.Helper()
	got := make([]float32, b.Len())
	ok(t, b.CopyTo(got))
	if got[0] != -1 || got[len(got)-1] != -1 {
		t.Fatalf("after the child's Set(-1): %v … %v", got[0], got[len(got)-1])
	}
	t.Logf("%s", out)
}

func ipcBufferChild(t *testing.T, text string) {
	var h cuda.IPCMemHandle
	ok(t, h.UnmarshalText([]byte(text)))
	n := must[int](t)(cuda.DeviceCount())
	dev := must[*cuda.Device](t)(cuda.GetDevice(n - 1))
	defer dev.Close()
	b := must[*cuda.Buffer[float32]](t)(cuda.OpenIPCBuffer[float32](dev, h))
	got := make([]float32, b.Len())
	ok(t, b.CopyTo(got))
	if got[0] != 0 || got[len(got)-1] != float32(len(got)-1) {
		t.Fatalf("child: the opened buffer reads %v … %v", got[0], got[len(got)-1])
	}
	ok(t, b.Set(-1))
	ok(t, dev.Sync())
	ok(t, b.Close())
	t.Logf("child: checked and wrote %d values on device %d", len(got), n-1)
}

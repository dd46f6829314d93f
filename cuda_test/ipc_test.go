//go:build cgo

package gputest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/cuda"
)

func TestLayerIPCTimingRejected(t *testing.T) {
	dev := gpu(t)
	_, err := dev.NewEvent(cuda.EventOptions{IPC: true, Timing: true})
	if !errors.Is(err, cuda.ErrInvalidOptions) || !strings.Contains(err.Error(), "IPC event cannot record timing") {
		t.Fatalf("got %v", err)
	}
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	defer e.Close()
	if _, err := e.IPCHandle(); !errors.Is(err, cuda.ErrInvalidOptions) {
		t.Fatalf("IPC handle of a non-IPC event: %v", err)
	}
}

// IPC across three processes: this test binary re-executes itself as the
// child, which opens the exporter's BlockingSync event, checks that the
// handle held the option, and passes the handle it re-exports (the same
// text: IPCHandle of an imported event) on to a grandchild, which opens it
// and sees the exporter's work pending, then complete.
func TestIPC(t *testing.T) {
	if h := os.Getenv("CUDAGEN_IPC_CHILD"); h != "" {
		ipcChild(t, h, os.Getenv("CUDAGEN_IPC_GRANDCHILD") == "")
		return
	}
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{IPC: true, BlockingSync: true}))
	defer e.Close()
	h, err := e.IPCHandle()
	ok(t, err)
	if o := h.Options(); !o.BlockingSync || !o.IPC {
		t.Fatalf("the handle's options: %+v", o)
	}
	// The driver refuses to open a handle in the process that made it.
	if peer, err := dev.OpenIPCEvent(h); err == nil {
		peer.Close()
		t.Log("the driver opened an IPC handle in the exporting process")
	} else {
		t.Logf("open in the exporting process: %v", err)
	}
	// Long enough for two process starts: the grandchild sees it pending.
	ok(t, s.Spin(8*time.Second))
	ok(t, s.Record(e))
	cmd := exec.Command(os.Args[0], "-test.run=^TestIPC$", "-test.v")
	cmd.Env = append(os.Environ(), "CUDAGEN_IPC_CHILD="+h.String())
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	for _, want := range []string{"child: re-exported the same handle", "grandchild: blocking sync, pending then complete"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the child's output lacks %q", want)
		}
	}
}

func ipcChild(t *testing.T, text string, passOn bool) {
	who := "child"
	if !passOn {
		who = "grandchild"
	}
	dev := gpu(t)
	var h cuda.IPCEventHandle
	ok(t, h.UnmarshalText([]byte(text)))
	e, err := dev.OpenIPCEvent(h)
	ok(t, err)
	defer e.Close()
	if o := e.Options(); o != (cuda.EventOptions{IPC: true, BlockingSync: true}) || !e.BlockingSync() {
		t.Fatalf("%s: imported event options %+v, want IPC and the exporter's BlockingSync", who, o)
	}
	again, err := e.IPCHandle()
	ok(t, err)
	if again != h || again.String() != text {
		t.Fatalf("%s: re-exported %s, imported %s", who, again, text)
	}
	done, err := e.Query()
	ok(t, err)
	if done {
		t.Fatalf("%s: the exporter's work already completed", who)
	}
	if passOn {
		fmt.Println("child: re-exported the same handle")
		cmd := exec.Command(os.Args[0], "-test.run=^TestIPC$", "-test.v")
		cmd.Env = append(os.Environ(), "CUDAGEN_IPC_CHILD="+again.String(), "CUDAGEN_IPC_GRANDCHILD=1")
		out, err := cmd.CombinedOutput()
		fmt.Printf("grandchild's output:\n%s\n", out)
		if err != nil {
			t.Fatalf("grandchild: %v", err)
		}
	}
	ok(t, e.Wait(context.Background()))
	done, err = e.Query()
	ok(t, err)
	if !done {
		t.Fatalf("%s: not complete after Wait", who)
	}
	if !passOn {
		fmt.Println("grandchild: blocking sync, pending then complete")
	}
}

// IPC exporter death: this binary re-executes itself as the exporter, which
// records an IPC event behind long GPU work, hands over the handle and exits
// with the work pending. The importer is waiting on the event, and its
// stream is waiting on it, when the exporter dies: each gets completion or a
// documented error (ctx's deadline included) within its deadline, never a
// hang or a crash, and Close returns promptly after.
func TestIPCExporterDeath(t *testing.T) {
	if os.Getenv("CUDAGEN_IPC_EXPORTER") != "" {
		ipcExporter(t)
		return
	}
	dev := gpu(t)
	if readCounters().ok {
		t.Skip("skipping: the fake driver cannot open IPC handles; this runs on the GPU machine")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestIPCExporterDeath$", "-test.v")
	cmd.Env = append(os.Environ(), "CUDAGEN_IPC_EXPORTER=1")
	out, err := cmd.StdoutPipe()
	ok(t, err)
	cmd.Stderr = os.Stderr
	ok(t, cmd.Start())
	var h cuda.IPCEventHandle
	sc := bufio.NewScanner(out)
	var got bool
	for sc.Scan() {
		if x, found := strings.CutPrefix(sc.Text(), "exporter handle: "); found {
			ok(t, h.UnmarshalText([]byte(x)))
			got = true
			break
		}
	}
	if !got {
		cmd.Wait()
		t.Fatal("the exporter sent no handle")
	}
	go func() { // drain the rest
		for sc.Scan() {
			t.Logf("exporter: %s", sc.Text())
		}
	}()
	e, err := dev.OpenIPCEvent(h)
	ok(t, err)
	s := must[*cuda.Stream](t)(dev.NewStream())
	after := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{}))
	ok(t, s.Wait(e))       // the importer's stream waits on the exporter's event
	ok(t, s.Record(after)) // completes when the stream's wait does
	type result struct {
		what string
		err  error
		took time.Duration
	}
	results := make(chan result, 2)
	t0 := time.Now()
	for what, ev := range map[string]*cuda.Event{"Wait on the imported event": e, "Wait on the event after the stream's wait": after} {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := ev.Wait(ctx)
			results <- result{what, err, time.Since(t0)}
		}()
	}
	werr := cmd.Wait()
	t.Logf("exporter exited after %v: %v", time.Since(t0).Round(time.Millisecond), werr)
	for range 2 {
		select {
		case r := <-results:
			t.Logf("%s: %v after %v", r.what, r.err, r.took.Round(time.Millisecond))
			var ce *cuda.Error
			if r.err != nil && !errors.Is(r.err, context.DeadlineExceeded) && !errors.As(r.err, &ce) {
				t.Errorf("%s: undocumented error %v", r.what, r.err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("a Wait hangs after the exporter's death")
		}
	}
	ok(t, prompt(t, "Close of the imported event", time.Time{}, e.Close))
	ok(t, prompt(t, "Close of the event after the wait", time.Time{}, after.Close))
	ok(t, prompt(t, "Close of the waiting stream", time.Time{}, s.Close))
	ok(t, prompt(t, "Device.Close (its context's release waits for the stream's wait, in the background)", time.Time{}, dev.Close))
}

func ipcExporter(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{IPC: true}))
	ok(t, s.Spin(5*time.Second))
	ok(t, s.Record(e))
	h, err := e.IPCHandle()
	ok(t, err)
	fmt.Printf("exporter handle: %s\n", h)
	time.Sleep(500 * time.Millisecond) // the importer is waiting by now
	fmt.Println("exiting with the work pending and nothing closed")
	os.Exit(0)
}

// IPC round trips with options: an imported event has the exporter's
// options and re-exports the handle it was opened with, unchanged (the
// driver, like the fake, refuses to export an imported event: IPCHandle
// must not ask it); version 1 handles still open, without options, and
// pass on as version 1; a future version is refused before the driver is
// called.
func TestLayerIPCReexport(t *testing.T) {
	dev := fakeOnly(t)
	t.Setenv("FAKECUDA_IPC_OPEN", "1") // the fake stands for a second process
	for _, blocking := range []bool{true, false} {
		opts := cuda.EventOptions{IPC: true, BlockingSync: blocking}
		e := must[*cuda.Event](t)(dev.NewEvent(opts))
		h, err := e.IPCHandle()
		ok(t, err)
		if h.Options() != opts {
			t.Errorf("exported handle's options %+v, want %+v", h.Options(), opts)
		}
		forms := map[string]func() (cuda.IPCEventHandle, string){
			"text": func() (cuda.IPCEventHandle, string) {
				var x cuda.IPCEventHandle
				ok(t, x.UnmarshalText([]byte(h.String())))
				return x, h.String()
			},
			"binary": func() (cuda.IPCEventHandle, string) {
				b, err := h.MarshalBinary()
				ok(t, err)
				var x cuda.IPCEventHandle
				ok(t, x.UnmarshalBinary(b))
				return x, string(b)
			},
		}
		for name, decode := range forms {
			x, sent := decode()
			imp, err := dev.OpenIPCEvent(x)
			ok(t, err)
			if imp.Options() != opts || imp.BlockingSync() != blocking || imp.TimingEnabled() || !imp.IPCEnabled() {
				t.Errorf("%s: imported event's options %+v, want the exporter's %+v", name, imp.Options(), opts)
			}
			again, err := imp.IPCHandle()
			if err != nil {
				t.Fatalf("%s: re-export of an imported event: %v", name, err)
			}
			if again != x || again != h {
				t.Errorf("%s: re-exported %v, imported %v", name, again, x)
			}
			if b, _ := again.MarshalBinary(); name == "binary" && string(b) != sent {
				t.Errorf("binary: re-exported bytes %x, imported %x", b, sent)
			}
			if name == "text" && again.String() != sent {
				t.Errorf("text: re-exported %s, imported %s", again, sent)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			ok(t, imp.Wait(ctx))
			cancel()
			ok(t, imp.Close())
			// Closed, it says so rather than re-exporting.
			if _, err := imp.IPCHandle(); !errors.Is(err, cuda.ErrClosed) {
				t.Errorf("%s: IPCHandle after Close: %v", name, err)
			}
		}
		// Version 1: the driver's bytes alone, which hold no options.
		dh := h.Driver()
		var v1 cuda.IPCEventHandle
		ok(t, v1.UnmarshalBinary(dh[:]))
		imp, err := dev.OpenIPCEvent(v1)
		ok(t, err)
		if imp.Options() != (cuda.EventOptions{IPC: true}) {
			t.Errorf("version 1 import's options %+v, want IPC alone", imp.Options())
		}
		again, err := imp.IPCHandle()
		ok(t, err)
		if b, _ := again.MarshalBinary(); string(b) != string(dh[:]) || !strings.HasPrefix(again.String(), "cuipcev1:") {
			t.Errorf("version 1 import re-exported as %s", again)
		}
		ok(t, imp.Close())
		ok(t, e.Close())
	}
	// A future version never reaches the driver.
	var f cuda.IPCEventHandle
	err := f.UnmarshalText([]byte("cuipcev3:" + strings.Repeat("A", 90)))
	if !errors.Is(err, cuda.ErrMalformedHandle) || !strings.Contains(err.Error(), "version 3") {
		t.Errorf("future version: %v", err)
	}
}

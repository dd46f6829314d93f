package driver

// The memory-rules fake: testdata/fakemem.c, a libcuda that keeps, reads
// and writes memory as cuda.h documents the driver does (its header comment
// lists what it implements and what it keeps). A test that needs it:
//
//	func TestSomething(t *testing.T) {
//		if !onFakeMem(t) {
//			return // the parent: the test ran alone in a child process, on the fake, and passed
//		}
//		ctx := fakeMemContext(t) // cuInit; the primary context, retained and current
//		... driver calls here reach the fake ...
//		noCorruption(t) // nothing the fake kept has changed
//	}
//
// onFakeMem builds the fake (gcc, or $CC; without cgo or a C compiler the
// test skips, saying so), runs the calling top-level test alone in a child
// process of the test binary with CUDAGEN_LIBCUDA naming the fake, and
// fails the test if the child did not pass; in the child it returns true.
// Extra "NAME=value" arguments go into the child's environment
// (FAKEMEM_DRIVER_VERSION sets the version the fake reports; 13000 by
// default). runOnFakeMem runs a named test so and returns its output and
// error instead, for a test that expects the child to crash; inFakeMem
// says whether this is such a child. fakeMemCounter reads one of the
// fake's counters (the exported long longs of fakemem.c), noCorruption
// and launchedOnFake check some, waitFor waits for a state the fake or a
// callback reaches asynchronously.
// TestFakeMemLayout checks the fake's structs against this build's cuda.h.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cudagen/cudagen/headers"
)

const (
	fakeMemChildEnv = "CUDAGEN_FAKEMEM_CHILD" // the test the child runs
	fakeMemLibEnv   = "CUDAGEN_FAKEMEM_LIB"   // the fake, for the child's CUDAGEN_LIBCUDA
	fakeMemSource   = "testdata/fakemem.c"
)

var (
	fakeMemOnce sync.Once
	fakeMemLib  string
	fakeMemErr  error
)

// buildFakeMem compiles the fake once per test binary (into a directory
// of the OS's temporary one, as the ABI check's fake), or skips.
func buildFakeMem(t *testing.T) string {
	t.Helper()
	if !cgoEnabled {
		t.Skip("skipping: built without cgo, so no call reaches a driver and the fake cannot be loaded")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("skipping: building the fake driver %s needs a C compiler (%s: %v); cgo needs one anyway", fakeMemSource, cc, err)
	}
	fakeMemOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cudagen-fakemem")
		if err != nil {
			fakeMemErr = err
			return
		}
		fakeMemLib = filepath.Join(dir, "libfakemem.so")
		out, err := exec.Command(cc, "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-pthread", "-o", fakeMemLib, fakeMemSource).CombinedOutput()
		if err != nil {
			fakeMemErr = fmt.Errorf("building the fake driver %s: %v\n%s", fakeMemSource, err, out)
		}
	})
	if fakeMemErr != nil {
		t.Fatal(fakeMemErr)
	}
	return fakeMemLib
}

// inFakeMem reports whether this process is the fake's child running t,
// and points the loader at the fake there (before anything loads it: the
// child runs one test).
func inFakeMem(t *testing.T) bool {
	t.Helper()
	if os.Getenv(fakeMemChildEnv) != t.Name() {
		return false
	}
	if lib != nil || loadErr != nil {
		t.Fatal("the driver was loaded before the test pointed the loader at the fake")
	}
	os.Setenv("CUDAGEN_LIBCUDA", os.Getenv(fakeMemLibEnv))
	return true
}

// runOnFakeMem runs the test name alone in a child process on the fake
// and returns its output, and its error (nil when it exited 0).
func runOnFakeMem(t *testing.T, name string, env ...string) (string, error) {
	t.Helper()
	lib := buildFakeMem(t)
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), fakeMemChildEnv+"="+name, fakeMemLibEnv+"="+lib)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// onFakeMem runs the calling test on the fake (see the top of this file).
func onFakeMem(t *testing.T, env ...string) (child bool) {
	t.Helper()
	if inFakeMem(t) {
		return true
	}
	out, err := runOnFakeMem(t, t.Name(), env...)
	if err != nil || !bytes.Contains([]byte(out), []byte("--- PASS: "+t.Name())) {
		t.Fatalf("%s on the fake driver %s failed (%v):\n%s", t.Name(), fakeMemSource, err, out)
	}
	t.Logf("on the fake driver:\n%s", lastLines([]byte(out), 6))
	return false
}

// fakeMemContext initialises the fake and makes the primary context
// current (for calls without Ctx) and returns it; released at cleanup.
func fakeMemContext(t *testing.T) Context {
	t.Helper()
	if err := Init(0); err != nil {
		t.Fatalf("cuInit on the fake: %v", err)
	}
	dev, err := DeviceGet(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := DevicePrimaryCtxRetainCtx(0, dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { DevicePrimaryCtxReleaseCtx(0, dev) })
	if err := CtxSetCurrentCtx(0, ctx); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// fakeMemCounter reads the fake's counter name (an exported long long).
func fakeMemCounter(t *testing.T, name string) int64 {
	t.Helper()
	if err := Load(); err != nil {
		t.Fatal(err)
	}
	p := cSym(name)
	if p == 0 {
		t.Fatalf("the fake driver has no counter %s", name)
	}
	return atomic.LoadInt64((*int64)(unsafe.Pointer(&HostPtr(p).Bytes(8)[0])))
}

// fakeMemSet sets the fake's setting name (an exported long long).
func fakeMemSet(t *testing.T, name string, v int64) {
	t.Helper()
	fakeMemCounter(t, name) // loads the fake and checks the name
	atomic.StoreInt64((*int64)(unsafe.Pointer(&HostPtr(cSym(name)).Bytes(8)[0])), v)
}

// noCorruption fails the test if the fake found memory it kept changed
// after the call that passed it (fakemem_corruption).
func noCorruption(t *testing.T) {
	t.Helper()
	if n := fakeMemCounter(t, "fakemem_corruption"); n != 0 {
		t.Fatalf("the fake found %d kept buffers changed after the call that passed them", n)
	}
}

// launchedOnFake fails the test unless n kernel launches reached the fake
// since it counted base, the last of them reading size bytes of
// parameters.
func launchedOnFake(t *testing.T, base, n, size int64) {
	t.Helper()
	if got := fakeMemCounter(t, "fakemem_kernel_launches"); got != base+n {
		t.Fatalf("launches reaching the fake: %d, want %d", got-base, n)
	}
	if got := fakeMemCounter(t, "fakemem_last_params_size"); got != size {
		t.Fatalf("the fake read %d bytes of parameters, want %d", got, size)
	}
}

// waitFor waits until cond holds, for what the driver does on a thread of
// its own (a destructor, a callback); it fails after a minute, which only
// a state that never comes takes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting, after a minute, for %s", what)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// The fake's structs have this build's cuda.h layouts (the header from the
// cache the generator fills).
func TestFakeMemLayout(t *testing.T) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("skipping: no C compiler (%s: %v)", cc, err)
	}
	dir, err := headers.CacheDir()
	if err != nil {
		t.Skipf("skipping: no header cache (%v): run go run ./gen -only %s", err, Toolkit)
	}
	h := filepath.Join(dir, Toolkit, "cuda.h")
	if sum, err := headers.SumFile(h); err != nil || sum != HeaderSHA256["cuda.h"] {
		t.Skipf("skipping: CUDA %s's cuda.h (sha256 %s) is not in the header cache (%s): run go run ./gen -only %s", Toolkit, HeaderSHA256["cuda.h"], h, Toolkit)
	}
	out, err := exec.Command(cc, "-fsyntax-only", "-DFAKEMEM_LAYOUT_CHECK", "-I", filepath.Dir(h), fakeMemSource).CombinedOutput()
	if err != nil {
		t.Fatalf("the fake's structs differ from CUDA %s's cuda.h: %v\n%s", Toolkit, err, out)
	}
}

// The fake hands out each entry point by name and ABI version, as the
// driver does, so the wrappers reach it; a function it does not implement
// is not supported, and a handle it does not know is refused and counted.
func TestFakeMemServes(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	s, err := StreamCreateCtx(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := StreamDestroyCtx(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup("cuEventCreate", 2000); err == nil {
		t.Error("the fake served cuEventCreate, which it does not implement")
	}
	bad := fakeMemCounter(t, "fakemem_bad_handles")
	if err := StreamDestroyCtx(ctx, s); err != ErrorInvalidHandle {
		t.Errorf("destroying a destroyed stream: %v, want CUDA_ERROR_INVALID_HANDLE", err)
	}
	if n := fakeMemCounter(t, "fakemem_bad_handles"); n != bad+1 {
		t.Errorf("bad handles counted %d, want %d", n, bad+1)
	}
}

// The fake does what its header comment says for the JIT linker's logs,
// texture border colours (four floats, both ways) and kernel parameters,
// so that a lifetime test on it means what it says.
func TestFakeMemKeeps(t *testing.T) {
	if !onFakeMem(t) {
		return
	}
	ctx := fakeMemContext(t)
	image := []byte("fakemem-image\nk 8 4\n\x00")

	// The log buffer is written at AddData and Complete, after LinkCreate:
	// pinned here for the link's life.
	var pin runtime.Pinner
	defer pin.Unpin()
	log := make([]byte, 128)
	pin.Pin(&log[0])
	state := must[LinkState](t)(LinkCreateCtx(ctx, []JITOption{JITInfoLogBuffer, JITInfoLogBufferSizeBytes, JITWallTime},
		[]uintptr{uintptr(unsafe.Pointer(&log[0])), uintptr(len(log)), 0}))
	check(t, LinkAddDataCtx(ctx, state, JITInputPTX, image, "k.ptx", nil, nil))
	if got, want := cStringOf(log), fmt.Sprintf("fakemem: added k.ptx (%d bytes)\n", len(image)); got != want {
		t.Errorf("after AddData the info log holds %q", got)
	}
	if _, _, err := LinkCompleteCtx(ctx, state); err != nil {
		t.Fatal(err)
	}
	if got := cStringOf(log); !strings.HasSuffix(got, "fakemem: linked 1 inputs\n") {
		t.Errorf("after Complete the info log holds %q", got)
	}
	check(t, LinkDestroyCtx(ctx, state))

	tex := must[Texref](t)(TexRefCreateCtx(ctx))
	border := [4]float32{1, 2, 3, 4}
	check(t, TexRefSetBorderColorCtx(ctx, tex, &border))
	if got := must[[4]float32](t)(TexRefGetBorderColorCtx(ctx, tex)); got != border {
		t.Errorf("border colour %v, want %v", got, border)
	}
	check(t, TexRefDestroyCtx(ctx, tex))

	mod := must[Module](t)(ModuleLoadDataCtx(ctx, image))
	defer ModuleUnloadCtx(ctx, mod)
	fn := must[Function](t)(ModuleGetFunctionCtx(ctx, mod, "k"))
	x, y := uint64(0x1122334455667788), float32(2)
	launches := fakeMemCounter(t, "fakemem_kernel_launches")
	check(t, LaunchKernelCtx(ctx, fn, 1, 1, 1, 1, 1, 1, 0, 0, []unsafe.Pointer{unsafe.Pointer(&x), unsafe.Pointer(&y)}, nil))
	launchedOnFake(t, launches, 1, 12)
	p := HostPtr(cSym("fakemem_last_params")).Bytes(12)
	if *(*uint64)(unsafe.Pointer(&p[0])) != x || *(*float32)(unsafe.Pointer(&p[8])) != y {
		t.Errorf("the launch read % x", p)
	}
	noCorruption(t)
}

func cStringOf(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

package driver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/cudagen/cudagen/headers"
	"github.com/cudagen/cudagen/internal/cparams"
)

// The ABI check: a fake libcuda, written from this build's cudaTypedefs.h,
// hands out a distinct entry point for every (name, ABI version) the
// header types as PFN_name_vVERSION, as the driver does (the newest at or
// below the version asked for). Each entry point returns its own number as
// the result, so a call tells which one it reached; the fake's table holds
// the arity of that typedef. Every bound function is called, and must
// reach the entry point of its name at its ABI version, which must take
// as many parameters as the wrapper passes. A wrong pick (cuCtxCreate_v2
// resolved as cuCtxCreate@11040, which is cuCtxCreate_v3) fails here
// instead of corrupting memory.

const abiChildEnv = "CUDAGEN_ABI_FAKE_CHILD"

// abiEntryBase is added to an entry's index to make its result.
const abiEntryBase = 100000

type abiEntry struct {
	name    string
	version int
	per     bool
	arity   int
}

var (
	pfnTypedefRe = regexp.MustCompile(`typedef\s+CUresult\s*\(\s*CUDAAPI\s*\*\s*PFN_(\w+)\s*\)\s*\(([^;]*)\)\s*;`)
	pfnNameRe    = regexp.MustCompile(`^(cu\w+?)_v([0-9]+)(_pt[sd][sz])?$`)
	pfnDefineRe  = regexp.MustCompile(`(?m)^\s*#\s*define\s+PFN_(cu\w+)\s+PFN_(cu\w+?)_v([0-9]+)\s*$`)
)

// abiEntries reads every typedef'd entry point of a cudaTypedefs.h text,
// by its own regular expressions (not the generator's parser): its name,
// ABI version and number of parameters.
func abiEntries(text []byte) ([]abiEntry, error) {
	unversioned := map[string]int{} // "#define PFN_cuX PFN_cuX_vN" for a typedef named PFN_cuX
	for _, m := range pfnDefineRe.FindAllSubmatch(text, -1) {
		if string(m[1]) == string(m[2]) {
			n, _ := strconv.Atoi(string(m[3]))
			unversioned[string(m[1])] = n
		}
	}
	var r []abiEntry
	for _, m := range pfnTypedefRe.FindAllSubmatch(text, -1) {
		name := string(m[1])
		e := abiEntry{arity: len(cparams.Split(string(m[2])))}
		if mm := pfnNameRe.FindStringSubmatch(name); mm != nil {
			e.name = mm[1]
			e.version, _ = strconv.Atoi(mm[2])
			e.per = mm[3] != ""
		} else if n, ok := unversioned[name]; ok {
			e.name, e.version = name, n
		} else {
			continue
		}
		r = append(r, e)
	}
	if len(r) < 100 {
		return nil, fmt.Errorf("only %d PFN typedefs found", len(r))
	}
	return r, nil
}

// abiFakeCalls are the entry points of the fake that call back what they
// are given, at once (format: the entry's index, its result).
var abiFakeCalls = map[string]string{
	"cuLaunchHostFunc":                          "static int fe%d(void *s, void (*fn)(void *), void *ud) { if (fn) fn(ud); return %d; }",
	"cuStreamAddCallback":                       "static int fe%d(void *s, void (*cb)(void *, int, void *), void *ud, unsigned flags) { if (cb) cb(s, 0, ud); return %d; }",
	"cuUserObjectCreate":                        "static int fe%d(void **o, void *ptr, void (*destroy)(void *), unsigned rc, unsigned flags) { return %d; }",
	"cuOccupancyMaxPotentialBlockSizeWithFlags": "static int fe%d(int *minGrid, int *block, void *f, size_t (*b2d)(int), size_t dyn, int limit, unsigned flags) { if (b2d && minGrid && block) { *minGrid = (int)b2d(128); *block = 128; } return %d; }",
	// An over-budget notification of 4096 bytes, handle 0x77.
	"cuDeviceRegisterAsyncNotification": "static int fe%d(int dev, void (*cb)(void *, void *, void *), void *ud, void **h) { static unsigned long long info[2] = {1, 4096}; if (h) *h = (void *)0x77; if (cb) cb(info, ud, (void *)0x77); return %d; }",
	// A warning, its text without a NUL within its length.
	"cuLogsRegisterCallback": "static int fe%d(void (*cb)(void *, int, char *, size_t), void *ud, void **h) { static char msg[] = \"fake log!\"; if (h) *h = (void *)0x78; if (cb) cb(ud, 1, msg, 8); return %d; }",
}

// abiFakeSource is the fake library's C source.
func abiFakeSource(entries []abiEntry, driverVersion int) string {
	var b strings.Builder
	b.WriteString("#include <string.h>\n")
	b.WriteString("#include <stddef.h>\n")
	for i, e := range entries {
		if body, ok := abiFakeCalls[e.name]; ok && !e.per {
			fmt.Fprintf(&b, body+"\n", i, abiEntryBase+i)
			continue
		}
		fmt.Fprintf(&b, "static int fe%d(void) { return %d; }\n", i, abiEntryBase+i)
	}
	b.WriteString("static const struct { const char *name; int version, per; void *fn; } ents[] = {\n")
	for i, e := range entries {
		per := 0
		if e.per {
			per = 1
		}
		fmt.Fprintf(&b, "\t{%q, %d, %d, (void *)fe%d},\n", e.name, e.version, per, i)
	}
	b.WriteString("};\n")
	fmt.Fprintf(&b, `
int cuDriverGetVersion(int *v) { *v = %d; return 0; }
// The newest entry point of name at or below version; the per-thread one
// where the flags ask for it and there is one.
static void *pick(const char *name, int version, unsigned long long flags) {
	void *best[2] = {0, 0};
	int bv[2] = {0, 0};
	for (unsigned i = 0; i < sizeof ents / sizeof ents[0]; i++) {
		if (strcmp(ents[i].name, name) != 0 || ents[i].version > version) continue;
		int k = ents[i].per;
		if (ents[i].version > bv[k]) { bv[k] = ents[i].version; best[k] = ents[i].fn; }
	}
	if ((flags & 2) && best[1]) return best[1];
	return best[0];
}
int cuGetProcAddress(const char *name, void **fn, int version, unsigned long long flags) {
	*fn = pick(name, version, flags);
	return *fn ? 0 : 500;
}
int cuGetProcAddress_v2(const char *name, void **fn, int version, unsigned long long flags, int *status) {
	*fn = pick(name, version, flags);
	if (status) *status = *fn ? 0 : 1;
	return *fn ? 0 : 500;
}
`, driverVersion)
	return b.String()
}

// typedefsText returns this build's cudaTypedefs.h, checked against the
// sum the bindings were generated from, or why it cannot be had.
func typedefsText() ([]byte, string) {
	want := HeaderSHA256["cudaTypedefs.h"]
	var dirs []string
	if c, err := headers.CacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(c, Toolkit))
	}
	if d := os.Getenv("CUDA_HOME"); d != "" {
		dirs = append(dirs, filepath.Join(d, "include"))
	}
	dirs = append(dirs, "/usr/local/cuda/include")
	for _, d := range dirs {
		p := filepath.Join(d, "cudaTypedefs.h")
		if sum, err := headers.SumFile(p); err == nil && sum == want {
			b, err := os.ReadFile(p)
			if err == nil {
				return b, ""
			}
		}
	}
	return nil, fmt.Sprintf("CUDA %s's cudaTypedefs.h (sha256 %s) is neither in the header cache nor in a toolkit here: run go run ./gen -only %s (it fetches the pinned headers into the cache), or copy the toolkit's include/cuda.h and cudaTypedefs.h into %s",
		Toolkit, want, Toolkit, filepath.Join("<cache>", Toolkit))
}

var (
	fakeOnce sync.Once
	fakeLib  string
	fakeErr  error
	fakeSkip string

	// fakeEntries are the fake's entry points: those this build's
	// cudaTypedefs.h types, as onFake read them.
	fakeEntries []abiEntry
)

// onFake runs the calling test in a child process whose loader opens a
// fake driver built from this build's cudaTypedefs.h (the loader opens
// the driver once per process), and reports whether this is that child.
func onFake(t *testing.T) (child bool) {
	t.Helper()
	if !cgoEnabled {
		t.Skip("built without cgo: no call reaches a driver")
	}
	text, why := typedefsText()
	if why != "" {
		t.Skip(why)
	}
	entries, err := abiEntries(text)
	if err != nil {
		t.Fatal(err)
	}
	fakeEntries = entries
	if os.Getenv(abiChildEnv) != "" {
		return true
	}
	fakeOnce.Do(func() {
		cc := os.Getenv("CC")
		if cc == "" {
			cc = "cc"
		}
		if _, err := exec.LookPath(cc); err != nil {
			fakeSkip = fmt.Sprintf("no C compiler (%s) to build the fake driver: %v", cc, err)
			return
		}
		dir, err := os.MkdirTemp("", "cudagen-abifake")
		if err != nil {
			fakeErr = err
			return
		}
		src := filepath.Join(dir, "abifake.c")
		if err := os.WriteFile(src, []byte(abiFakeSource(entries, HeaderVersion)), 0o644); err != nil {
			fakeErr = err
			return
		}
		fakeLib = filepath.Join(dir, "libcuda.so.1")
		if out, err := exec.Command(cc, "-O0", "-shared", "-fPIC", "-o", fakeLib, src).CombinedOutput(); err != nil {
			fakeErr = fmt.Errorf("building the fake driver: %v\n%s", err, out)
		}
	})
	if fakeSkip != "" {
		t.Skip(fakeSkip)
	}
	if fakeErr != nil {
		t.Fatal(fakeErr)
	}
	t.Cleanup(func() {}) // the library stays for the other tests; the OS temp dir holds it
	name := t.Name()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), abiChildEnv+"=1", "CUDAGEN_LIBCUDA="+fakeLib)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+name)) {
		t.Fatalf("%s against the fake driver failed (%v):\n%s", name, err, out)
	}
	t.Logf("against the fake driver:\n%s", lastLines(out, 4))
	return false
}

func lastLines(b []byte, n int) string {
	l := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(l[max(len(l)-n, 0):], "\n")
}

func TestABIEntryPoints(t *testing.T) {
	if !onFake(t) {
		return
	}
	checkABI(t)
	t.Logf("%d functions of CUDA %s reached their declared entry points (%d typedef'd in cudaTypedefs.h)", len(Functions), Toolkit, len(fakeEntries))
}

// reached says whether a call's error is the fake's answer (the call got
// through cgo to the entry point of name).
func reached(t *testing.T, name string, err error) {
	t.Helper()
	if e, ok := answeredBy(err); !ok || e.name != name {
		t.Errorf("%s: the call did not reach the driver: %v", name, err)
	}
}

// answeredBy is the fake's entry point whose answer a call's error is, if
// it is one.
func answeredBy(err error) (abiEntry, bool) {
	var r Result
	if !errors.As(err, &r) || int(r) < abiEntryBase || int(r) >= abiEntryBase+len(fakeEntries) {
		return abiEntry{}, false
	}
	return fakeEntries[int(r)-abiEntryBase], true
}

// Go memory holding Go pointers, passed the obvious way, never makes cgo
// panic: the wrappers pin what it points to for the call.
func TestGoMemoryNeverPanics(t *testing.T) {
	if !onFake(t) {
		return
	}
	// cuLaunchKernel: kernelParams point at Go variables.
	x, y := uint64(7), float32(2)
	params := []unsafe.Pointer{unsafe.Pointer(&x), unsafe.Pointer(&y)}
	reached(t, "cuLaunchKernel", LaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, 0, params, nil))
	// cuLaunchKernelEx: the config's attributes are Go memory; the access
	// policy window's base is an address (an integer to Go: the union's
	// other members hold integers in its word).
	attrs := make([]LaunchAttribute, 2)
	attrs[0].Id = LaunchAttributePriority
	attrs[1].Id = LaunchAttributeAccessPolicyWindow
	attrs[1].Value.AccessPolicyWindow().Base_ptr = 0x1000
	cfg := LaunchConfig{GridDimX: 1, GridDimY: 1, GridDimZ: 1, BlockDimX: 1, BlockDimY: 1, BlockDimZ: 1, Attrs: &attrs[0], NumAttrs: 2}
	reached(t, "cuLaunchKernelEx", LaunchKernelEx(&cfg, 0, params, nil))
	// cuMemcpy2D from a Go slice.
	src := make([]byte, 256)
	cp := Memcpy2DParams{SrcMemoryType: MemorytypeHost, SrcPitch: 16, DstMemoryType: MemorytypeDevice, DstDevice: 0x1000, DstPitch: 16, WidthInBytes: 16, Height: 16}
	reached(t, "cuMemcpy2D", Memcpy2DHost(&cp, src, nil))
	runtime.KeepAlive(src)
}

// checkABI runs in the child, against the fake: every call must reach the
// entry point of its name and ABI version, which must take as many
// parameters as the wrapper passes.
func checkABI(t *testing.T) {
	byGo := map[string]FunctionInfo{}
	for _, f := range Functions {
		byGo[f.Go] = f
	}
	for _, c := range noDriverCalls {
		f := byGo[c.name]
		err := c.call()
		e, ok := answeredBy(err)
		if !ok {
			t.Errorf("%s (%s@%d): the call reached no entry point of the fake: %v", f.Go, f.Name, f.ABIVersion, err)
			continue
		}
		if e.name != f.Name || e.version != f.ABIVersion {
			t.Errorf("%s: resolved as %s@%d, reached the entry point %s@%d", f.Go, f.Name, f.ABIVersion, e.name, e.version)
		}
		if e.arity != f.Params {
			t.Errorf("%s: the wrapper passes %d C arguments to %s (declared as %s), whose entry point %s@%d takes %d",
				f.Go, f.Params, f.Name, f.Symbol, e.name, e.version, e.arity)
		}
	}
}

// A typed parameter is checked against its table before the call: a
// mismatch never reaches the driver, and says what to pass.
func TestTypedParametersRefuseMismatches(t *testing.T) {
	if !onFake(t) {
		return
	}
	refused := func(what string, err error, want ...string) {
		t.Helper()
		var r Result
		if errors.As(err, &r) {
			t.Errorf("%s reached the driver (%v)", what, err)
			return
		}
		if err == nil || !strings.HasPrefix(err.Error(), "cuda: ") {
			t.Errorf("%s: %v", what, err)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", what, err, w)
			}
		}
	}
	var ctx Context
	reached(t, "cuPointerGetAttribute", PointerGetAttribute(&ctx, PointerAttributeContext, 0))
	var small int32
	refused("a *int32 for the context", PointerGetAttribute(&small, PointerAttributeContext, 0), "cuPointerGetAttribute", "CU_POINTER_ATTRIBUTE_CONTEXT", "*driver.Context", "*int32")
	refused("a nil *Context", PointerGetAttribute((*Context)(nil), PointerAttributeContext, 0), "nil")
	refused("a value, not a pointer", PointerGetAttribute(ctx, PointerAttributeContext, 0), "got driver.Context")
	refused("an undeclared attribute", PointerGetAttribute(&ctx, PointerAttribute(9999), 0), "no Go type", "9999")
	var managed bool
	reached(t, "cuPointerGetAttribute", PointerGetAttribute(&managed, PointerAttributeIsManaged, 0))
	reached(t, "cuMemRangeGetAttribute", MemRangeGetAttribute(make([]int32, 4), MemRangeAttributeAccessedBy, 0, 0))
	refused("an empty slice", MemRangeGetAttribute([]int32{}, MemRangeAttributeAccessedBy, 0, 0), "empty")
	var fd int32
	reached(t, "cuMemExportToShareableHandle", MemExportToShareableHandle(&fd, 0, MemHandleTypePosixFileDescriptor, 0))
	refused("no handle type", MemExportToShareableHandle(&fd, 0, MemHandleTypeNone, 0), "has no")
	_, err := MemImportFromShareableHandle(int32(5), MemHandleTypePosixFileDescriptor)
	reached(t, "cuMemImportFromShareableHandle", err)
	_, err = MemImportFromShareableHandle(&fd, MemHandleTypePosixFileDescriptor)
	refused("a pointer where the descriptor goes by value", err, "must be a int32")
}

// A Go func given for a C callback is called with what the driver passes,
// and its handle released after a one-shot call.
func TestGoCallbacks(t *testing.T) {
	if !onFake(t) {
		return
	}
	ran := 0
	reached(t, "cuLaunchHostFunc", LaunchHostFuncGo(0, func() { ran++ }))
	if ran != 1 {
		t.Errorf("LaunchHostFuncGo: the func ran %d times, want 1", ran)
	}
	var got Stream
	var status Result = -1
	reached(t, "cuStreamAddCallback", StreamAddCallbackGo(0x1234, func(s Stream, r Result) { got, status = s, r }, 0))
	if got != 0x1234 || status != Success {
		t.Errorf("StreamAddCallbackGo: called with %#x, %v; want 0x1234, CUDA_SUCCESS", got, status)
	}
	// The destructor runs from a goroutine of the package (the driver may
	// call it inside any call); the memory-rules fake's tests run it.
	_, err := UserObjectCreateGo(func() {}, 1, 1)
	reached(t, "cuUserObjectCreate", err)
	minGrid, block, err := OccupancyMaxPotentialBlockSizeGo(0, func(bs int32) uint64 { return uint64(bs) * 4 }, 0, 0)
	reached(t, "cuOccupancyMaxPotentialBlockSizeWithFlags", err)
	if minGrid != 512 || block != 128 {
		t.Errorf("OccupancyMaxPotentialBlockSizeGo: %d, %d; want 512 (the Go func's answer for 128), 128", minGrid, block)
	}
	// A handle given out by NewHostFn calls f every time, until released.
	calls := 0
	fn, ud, release := NewHostFn(func() { calls++ })
	reached(t, "cuLaunchHostFunc", LaunchHostFunc(0, fn, ud))
	reached(t, "cuLaunchHostFunc", LaunchHostFunc(0, fn, ud))
	release()
	if calls != 2 {
		t.Errorf("NewHostFn: called %d times, want 2", calls)
	}
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/headers"
	"github.com/cudagen/cudagen/internal/modtest"
)

func root(t testing.TB) string {
	t.Helper()
	r, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// realRenderer is the renderer go run ./gen makes: the config
// gen/bindings.json, the templates and the versions the manifest pins.
func realRenderer(t testing.TB) *renderer {
	t.Helper()
	cfg, man, _ := loadAll(t)
	return &renderer{Cfg: cfg, Command: genCommand, Templates: filepath.Join(root(t), "templates"), Versions: man.Versions}
}

func loadAll(t testing.TB) (*config, *headers.Manifest, string) {
	t.Helper()
	r := root(t)
	cfg, err := loadConfig(filepath.Join(r, "gen", "bindings.json"))
	if err != nil {
		t.Fatal(err)
	}
	man, err := headers.Load(filepath.Join(r, "headers", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	cache, err := headers.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return cfg, man, cache
}

// headerDir returns a version's verified headers from the cache; it skips
// the test, saying why and how to fetch them, where the cache lacks them
// (tests never download: headers.Ensure refuses to inside a test binary).
func headerDir(t testing.TB, e *headers.Entry, cache string) string {
	t.Helper()
	var log bytes.Buffer
	dir, err := headers.Ensure(e, cache, &log)
	if err != nil {
		if errors.Is(err, headers.ErrUnavailable) {
			t.Skipf("skipping CUDA %s: its headers are not in the cache: %v", e.Version, err)
		}
		t.Fatalf("CUDA %s: %v\n%s", e.Version, err, log.String())
	}
	return dir
}

// readFile returns the file at the joined path, failing the test where it
// cannot be read.
func readFile(t testing.TB, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(elem...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFile writes b to the file at path, failing the test where it
// cannot.
func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	reEnumerator = regexp.MustCompile(`(?m)^\s*(CU[A-Z_]*_[A-Z0-9_]+)\s*=\s*(0x[0-9a-fA-F]+|-?[0-9]+)\s*(?:,|/\*|$)`)
	reDefine     = regexp.MustCompile(`(?m)^\s*#define\s+(cu\w+)\s+(cu\w+)\s*$`)
	rePFN        = regexp.MustCompile(`PFN_(cu\w+?)_v([0-9]+)\b`)
)

// TestFacts checks, for every pinned version, what the generator read
// against the header's own text, read here independently with regular
// expressions.
func TestFacts(t *testing.T) {
	em := realRenderer(t)
	eachBuilder(t, em.Cfg, func(t *testing.T, e *headers.Entry, dir string, bm *builder) {
		m := bm.model
		cudaH := readFile(t, dir, "cuda.h")
		typedefs := readFile(t, dir, "cudaTypedefs.h")
		if want := fmt.Sprintf("#define CUDA_VERSION %d", e.CUDAVersion); !bytes.Contains(cudaH, []byte(want)) || m.CUDAVersion != e.CUDAVersion {
			t.Errorf("CUDA_VERSION: model %d, manifest %d", m.CUDAVersion, e.CUDAVersion)
		}
		// Enum values.
		text := map[string]int64{}
		for _, mm := range reEnumerator.FindAllStringSubmatch(string(cudaH), -1) {
			var v int64 // C's literal: Sscan reads its forms (0x hexadecimal, 0 octal, decimal) as ParseInt with base 0 does
			if _, err := fmt.Sscan(mm[2], &v); err == nil {
				text[mm[1]] = v
			}
		}
		n := 0
		var results int
		for _, ty := range m.Types {
			if ty.C == "CUresult" {
				results = len(ty.Values)
			}
			for _, v := range ty.Values {
				if tv, ok := text[v.C]; ok {
					n++
					if tv != v.Value {
						t.Errorf("%s: generator read %d, header says %d", v.C, v.Value, tv)
					}
				}
			}
		}
		var textResults int
		for name := range text {
			if strings.HasPrefix(name, "CUDA_ERROR_") || name == "CUDA_SUCCESS" {
				textResults++
			}
		}
		if results != textResults {
			t.Errorf("CUresult: %d values bound, the header declares %d", results, textResults)
		}
		if n < 500 {
			t.Errorf("only %d enumerators checked", n)
		}
		// Every prototype in the text that the preprocessor keeps is
		// bound or listed as not bound; at least 98 %% are bound.
		if len(m.Funcs)+len(m.Skipped) != m.Declared || float64(len(m.Funcs)) < 0.98*float64(m.Declared) {
			t.Errorf("%d declared, %d bound, %d not bound", m.Declared, len(m.Funcs), len(m.Skipped))
		}
		// Every name a prototype in the text spells is bound under some
		// entry point, or listed as not bound.
		for _, mm := range protoRe.FindAllStringSubmatch(string(cudaH), -1) {
			base := baseName(mm[1])
			found := m.funcNamed(base) != nil
			for _, f := range m.Funcs {
				found = found || f.Symbol == bm.src.probes[base] // cuGraphInstantiate → cuGraphInstantiateWithFlags
			}
			for _, s := range m.Skipped {
				found = found || baseName(s.Symbol) == base
			}
			if !found {
				t.Errorf("%s (prototype %s) is neither bound nor listed as not bound", base, mm[1])
			}
		}
		// Versioned names: a function bound under its base name has the
		// symbol the header's #define maps that name to.
		defines := map[string]string{}
		for _, mm := range reDefine.FindAllStringSubmatch(string(cudaH), -1) {
			if strings.HasSuffix(mm[2], "_ptsz") || strings.HasSuffix(mm[2], "_ptds") {
				continue // the per-thread switch's mappings
			}
			if _, seen := defines[mm[1]]; !seen {
				defines[mm[1]] = mm[2]
			}
		}
		funcs := map[string]*function{}
		for _, f := range m.Funcs {
			funcs[f.GoName] = f
			if d, ok := defines[f.Base]; ok && f.GoName == em.Cfg.funcGoName(f.Base) {
				want := d
				if f.Symbol != want {
					t.Errorf("%s: symbol %s, header maps it to %s", f.Base, f.Symbol, want)
				}
			}
			// Its ABI version is one cudaTypedefs.h declares for it.
			if !regexp.MustCompile(fmt.Sprintf(`PFN_%s_v%d\b`, f.Base, f.ABI)).Match(typedefs) {
				t.Errorf("%s: ABI version %d is not declared as PFN_%s_v%d", f.Symbol, f.ABI, f.Base, f.ABI)
			}
		}
		_ = rePFN
		must := func(goName, symbol string, abi int) {
			t.Helper()
			f, ok := funcs[goName]
			if !ok {
				t.Errorf("%s not bound", goName)
				return
			}
			if f.Symbol != symbol || f.ABI != abi {
				t.Errorf("%s: %s@%d, want %s@%d", goName, f.Symbol, f.ABI, symbol, abi)
			}
		}
		must("EventCreate", "cuEventCreate", 2000)
		must("EventDestroy", "cuEventDestroy_v2", 4000)
		must("EventRecord", "cuEventRecord", 2000)
		must("EventRecordWithFlags", "cuEventRecordWithFlags", 11010)
		must("StreamDestroy", "cuStreamDestroy_v2", 4000)
		must("StreamWaitEvent", "cuStreamWaitEvent", 3020)
		switch {
		case e.CUDAVersion >= 13000:
			must("EventElapsedTime", "cuEventElapsedTime_v2", 12080)
			must("GetProcAddress", "cuGetProcAddress_v2", 12000)
		case e.CUDAVersion >= 12000:
			must("EventElapsedTime", "cuEventElapsedTime", 2000)
			must("GetProcAddress", "cuGetProcAddress_v2", 12000)
		default:
			must("EventElapsedTime", "cuEventElapsedTime", 2000)
			must("GetProcAddress", "cuGetProcAddress", 11030)
		}
		// Versioned entry points get their own ABI version, not the
		// base name's: the header's PFN_cuX_v2 macro where it has one.
		switch e.Version {
		case "11.8":
			must("StreamGetCaptureInfoV2", "cuStreamGetCaptureInfo_v2", 11030)
			must("StreamWaitValue32V2", "cuStreamWaitValue32_v2", 11070)
			must("CtxCreateV3", "cuCtxCreate_v3", 11040)
		case "12.4":
			must("StreamGetCaptureInfo", "cuStreamGetCaptureInfo_v2", 11030)
			must("StreamGetCaptureInfoV3", "cuStreamGetCaptureInfo_v3", 12030)
			must("StreamWaitValue32", "cuStreamWaitValue32_v2", 11070)
			must("MemAdviseV2", "cuMemAdvise_v2", 12020)
		case "13.0":
			must("StreamGetCaptureInfo", "cuStreamGetCaptureInfo_v3", 12030)
			must("MemAdvise", "cuMemAdvise_v2", 12020)
			must("StreamGetCtxV2", "cuStreamGetCtx_v2", 12050)
		}
		if m.GPAV2 != (e.CUDAVersion >= 12000) {
			t.Errorf("cuGetProcAddress form: v2=%v", m.GPAV2)
		}
		// What the generated files say.
		b, err := em.pure(m)
		if err != nil {
			t.Fatal(err)
		}
		c, err := em.cgo(m)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(b), "\n", 3)
		if lines[0] != genCommand || lines[1] != "// "+doNotEdit {
			t.Errorf("file starts %q %q", lines[0], lines[1])
		}
		for _, f := range headers.Files {
			if !bytes.Contains(b, []byte(e.Files[f])) {
				t.Errorf("the file does not record %s's sha256", f)
			}
		}
		if !bytes.Contains(b, []byte(fmt.Sprintf("HeaderVersion = %d", e.CUDAVersion))) {
			t.Error("the file does not record the header version")
		}
		if bytes.Contains(c, []byte("#include <cuda.h>")) || bytes.Contains(c, []byte("-lcuda")) {
			t.Error("the file needs the toolkit")
		}
		// The hot event calls go through one shared trampoline each,
		// noescape and nocallback; a function whose callback the driver
		// calls during the call shares none with them.
		for _, base := range []string{"cuEventRecord", "cuEventQuery", "cuEventElapsedTime"} {
			f := m.funcNamed(base)
			tr, err := trampolineOf(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{
				"static int " + tr.Name + "(", "#cgo noescape " + tr.Name + "\n", "#cgo nocallback " + tr.Name + "\n",
				fmt.Sprintf("procs[%d].done(C.%s(C.uintptr_t(ctx), procs[%d].fn(), ", f.Index, tr.Name, f.Index),
			} {
				if !bytes.Contains(c, []byte(d)) {
					t.Errorf("%s: missing %q", base, d)
				}
			}
		}
		occ, err := trampolineOf(m.funcNamed("cuOccupancyMaxPotentialBlockSize"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(occ.Name, "_cb") || bytes.Contains(c, []byte("#cgo nocallback "+occ.Name+"\n")) {
			t.Errorf("cuOccupancyMaxPotentialBlockSize, which calls its callback, goes through %s, which is nocallback", occ.Name)
		}
		// The functions that may run a compiler (the config's compilers:
		// cuModuleLoadData and the other loads and links) block the
		// thread's asynchronous signals for the call and restore the mask
		// after it; no other function does.
		quiet := 0
		for _, f := range m.Funcs {
			tr, err := trampolineOf(f)
			if err != nil {
				t.Fatal(err)
			}
			_, compiles := em.Cfg.Compilers[f.Base]
			if compiles != strings.HasSuffix(tr.Name, "_nosig") {
				t.Errorf("%s goes through %s (compiles: %v)", f.Base, tr.Name, compiles)
			}
			def := []byte("static int " + tr.Name + "(")
			i := bytes.Index(c, def)
			if i < 0 {
				t.Fatalf("%s: no trampoline %s", f.Base, tr.Name)
			}
			line := c[i : i+bytes.IndexByte(c[i:], '\n')]
			blocks := bytes.Contains(line, []byte("sigset_t o_; cg_quiet(&o_); int r_ = ")) && bytes.HasSuffix(line, []byte(" pthread_sigmask(SIG_SETMASK, &o_, NULL); return r_; }"))
			if compiles != blocks {
				t.Errorf("%s: its trampoline blocks signals: %v, want %v: %s", f.Base, blocks, compiles, line)
			}
			if compiles {
				quiet++
			}
		}
		if f := m.funcNamed("cuModuleLoadData"); f == nil || !f.Quiet || quiet < 4 {
			t.Errorf("cuModuleLoadData is not among the %d functions whose calls block signals", quiet)
		}
		// Shared trampolines: each defined once, fewer than the functions.
		if n := bytes.Count(c, []byte("\nstatic int cg_")); n == 0 || n >= len(m.Funcs) || n != len(trampolineNames(t, m)) {
			t.Errorf("%d trampolines for %d functions (%d distinct signatures)", n, len(m.Funcs), len(trampolineNames(t, m)))
		}
		// Slices sharing a count: unequal lengths never reach the driver.
		if !bytes.Contains(c, []byte(`fn, err = 0, lengthError("cuModuleLoadDataEx"`)) {
			t.Error("cuModuleLoadDataEx's length check does not stop the call")
		}
		if bytes.Contains(b, []byte(`import "C"`)) || !bytes.Contains(c, []byte(`import "C"`)) {
			t.Error("the pure-Go file imports C, or the cgo file does not")
		}
	})
}

// TestSignatures asserts the Go shapes of the functions that were once
// bound wrongly, in every version.
func TestSignatures(t *testing.T) {
	want := map[string]string{
		"cuMemcpy2D":           "Memcpy2D(pCopy *Memcpy2DParams) error",
		"cuDeviceGetLuid":      "DeviceGetLUID(dev Device) ([8]byte, uint32, error)",
		"cuDeviceGetPCIBusId":  "DeviceGetPCIBusID(dev Device) (string, error)",
		"cuModuleLoadDataEx":   "ModuleLoadDataEx(image []byte, options []JITOption, optionValues []uintptr) (Module, error)",
		"cuGraphAddKernelNode": "GraphAddKernelNode(hGraph Graph, dependencies []GraphNode, nodeParams *KernelNodeParams) (GraphNode, error)",
		"cuDeviceGetUuid":      "DeviceGetUUID(dev Device) (UUID, error)",
		"cuLaunchHostFunc":     "LaunchHostFunc(hStream Stream, fnArg HostFn, userData uintptr) error",
		"cuLaunchKernelEx":     "LaunchKernelEx(config *LaunchConfig, f Function, kernelParams []unsafe.Pointer, extra []unsafe.Pointer) error",
		// The shapes that were once raw: typed per attribute or handle
		// type, slices, two-call results, device addresses.
		"cuLaunchKernel":                       "LaunchKernel(f Function, gridDimX uint32, gridDimY uint32, gridDimZ uint32, blockDimX uint32, blockDimY uint32, blockDimZ uint32, sharedMemBytes uint32, hStream Stream, kernelParams []unsafe.Pointer, extra []unsafe.Pointer) error",
		"cuPointerGetAttribute":                "PointerGetAttribute(data any, attribute PointerAttribute, ptr DevicePtr) error",
		"cuPointerSetAttribute":                "PointerSetAttribute(value any, attribute PointerAttribute, ptr DevicePtr) error",
		"cuMemPoolGetAttribute":                "MemPoolGetAttribute(pool MemoryPool, attr MemPoolAttribute, value any) error",
		"cuDeviceGetGraphMemAttribute":         "DeviceGetGraphMemAttribute(device Device, attr GraphMemAttribute, value any) error",
		"cuMemRangeGetAttribute":               "MemRangeGetAttribute(data any, attribute MemRangeAttribute, devPtr DevicePtr, count uint64) error",
		"cuMemExportToShareableHandle":         "MemExportToShareableHandle(shareableHandle any, handle MemGenericAllocationHandle, handleType MemAllocationHandleType, flags uint64) error",
		"cuMemImportFromShareableHandle":       "MemImportFromShareableHandle(osHandle any, shHandleType MemAllocationHandleType) (MemGenericAllocationHandle, error)",
		"cuGraphGetNodes":                      "GraphGetNodes(hGraph Graph) ([]GraphNode, error)",
		"cuGraphGetRootNodes":                  "GraphGetRootNodes(hGraph Graph) ([]GraphNode, error)",
		"cuGraphAddEmptyNode":                  "GraphAddEmptyNode(hGraph Graph, dependencies []GraphNode) (GraphNode, error)",
		"cuMemPoolSetAccess":                   "MemPoolSetAccess(pool MemoryPool, mapArg []MemAccessDesc) error",
		"cuStreamBatchMemOp":                   "StreamBatchMemOp(stream Stream, paramArray []StreamBatchMemOpParams, flags uint32) error",
		"cuLaunchCooperativeKernelMultiDevice": "LaunchCooperativeKernelMultiDevice(launchParamsList []LaunchParams, flags uint32) error",
		"cuMemRetainAllocationHandle":          "MemRetainAllocationHandle(addr DevicePtr) (MemGenericAllocationHandle, error)",
		"cuLinkCreate":                         "LinkCreate(options []JITOption, optionValues []uintptr) (LinkState, error)",
		"cuEventElapsedTime":                   "EventElapsedTime(hStart Event, hEnd Event) (float32, error)",
		"cuIpcOpenEventHandle":                 "IPCOpenEventHandle(handle *IPCEventHandle) (Event, error)",
		"cuDeviceGetName":                      "DeviceGetName(dev Device) (string, error)",
		// Host buffers: a []byte where the driver is done with it when
		// the call returns, page-locked C memory (HostPtr) where it is
		// used later; module images, checked before the call.
		"cuMemcpyHtoD":              "MemcpyHtoD(dstDevice DevicePtr, srcHost []byte) error",
		"cuMemcpyDtoH":              "MemcpyDtoH(dstHost []byte, srcDevice DevicePtr) error",
		"cuMemcpyAtoH":              "MemcpyAtoH(dstHost []byte, srcArray Array, srcOffset uint64) error",
		"cuMemcpyHtoDAsync":         "MemcpyHtoDAsync(dstDevice DevicePtr, srcHost HostPtr, byteCount uint64, hStream Stream) error",
		"cuMemAllocHost":            "MemAllocHost(bytesize uint64) (HostPtr, error)",
		"cuMemHostAlloc":            "MemHostAlloc(bytesize uint64, flags MemHostAllocFlags) (HostPtr, error)",
		"cuMemHostRegister":         "MemHostRegister(pArg HostPtr, bytesize uint64, flags MemHostRegisterFlags) error",
		"cuMemHostGetDevicePointer": "MemHostGetDevicePointer(pArg HostPtr, flags uint32) (DevicePtr, error)",
		"cuModuleLoadData":          "ModuleLoadData(image []byte) (Module, error)",
		"cuModuleLoadFatBinary":     "ModuleLoadFatBinary(fatCubin []byte) (Module, error)",
	}
	eachModel(t, func(t *testing.T, e *headers.Entry, m *model) {
		for base, w := range want {
			f := m.funcNamed(base)
			if f == nil {
				if base == "cuLaunchKernelEx" && e.CUDAVersion < 11080 || base == "cuLaunchCooperativeKernelMultiDevice" && e.CUDAVersion >= 13000 {
					continue
				}
				t.Errorf("%s is not bound", base)
				continue
			}
			got := f.goSignature()
			if base == "cuGraphAddKernelNode" && e.CUDAVersion >= 12000 {
				// From 12.0 the node parameters are CUDA_KERNEL_NODE_PARAMS_v2.
				w = strings.Replace(w, "*KernelNodeParams", "*KernelNodeParams", 1)
			}
			if got != w {
				t.Errorf("%s: got  %s\nwant %s", base, got, w)
			}
		}
	})
}

// TestRawParameters: at most 20 functions of each version keep a raw
// unsafe.Pointer or uintptr parameter, and each such parameter is
// documented in its wrapper (the config's "raw").
func TestRawParameters(t *testing.T) {
	eachModel(t, func(t *testing.T, e *headers.Entry, m *model) {
		var raw []string
		for _, f := range m.Funcs {
			n := 0
			for _, q := range f.Params {
				if isRaw(q) {
					n++
				}
			}
			if n == 0 {
				continue
			}
			raw = append(raw, f.GoName)
			if len(f.RawDocs) != n {
				t.Errorf("%s: %d raw parameters, %d documented", f.GoName, n, len(f.RawDocs))
			}
		}
		t.Logf("%d functions keep raw parameters: %s", len(raw), strings.Join(raw, ", "))
		if len(raw) > 20 {
			t.Errorf("%d functions keep raw parameters, more than 20", len(raw))
		}
	})
}

// eachModel runs f, as a subtest, on the model of every pinned version.
func eachModel(t *testing.T, f func(t *testing.T, e *headers.Entry, m *model)) {
	eachBuilder(t, nil, func(t *testing.T, e *headers.Entry, _ string, b *builder) { f(t, e, b.model) })
}

// eachBuilder runs f, as a subtest, on every pinned version: its headers'
// directory and what the read and model stages made of them with cfg
// (nil: gen/bindings.json).
func eachBuilder(t *testing.T, cfg *config, f func(t *testing.T, e *headers.Entry, dir string, b *builder)) {
	loaded, man, cache := loadAll(t)
	if cfg == nil {
		cfg = loaded
	}
	for i := range man.Versions {
		e := &man.Versions[i]
		t.Run(e.Version, func(t *testing.T) {
			dir := headerDir(t, e, cache)
			b, err := modelHeaders(cfg, e, dir)
			if err != nil {
				t.Fatal(err)
			}
			f(t, e, dir, b)
		})
	}
}

// headerModel is the model of headers that no manifest pins.
func headerModel(cfg *config, dir string) (*model, error) {
	b, err := modelHeaders(cfg, nil, dir)
	if err != nil {
		return nil, err
	}
	return b.model, nil
}

// TestLayout compiles, for every version whose header is here, a cgo
// program against the real cuda.h that compares sizeof, _Alignof and
// offsetof of every struct and union with the generated Go types.
func TestLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the layout check in -short mode: it compiles the bindings once per version")
	}
	_, man, cache := loadAll(t)
	for i := range man.Versions {
		e := &man.Versions[i]
		t.Run(e.Version, func(t *testing.T) {
			dir := headerDir(t, e, cache)
			tags := "cudagen_layout"
			if e.Version != man.Newest().Version {
				tags += "," + e.Tag
			}
			runLayoutCheck(t, "CUDA "+e.Version, "cuda/driver/internal/layout", tags, dir)
		})
	}
}

// TestLibraryLayout runs the layout check of each library whose bindings
// have structs (NCCL's) against its real header, for every pinned version
// whose header is in the cache, with the library's stand-in headers.
func TestLibraryLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the layout check in -short mode: it compiles the bindings once per version")
	}
	cfg, man, cache := loadAll(t)
	libs, err := libraryConfigs(filepath.Join(root(t), "gen", "bindings.json"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, lc := range libs {
		dir := filepath.Join(root(t), lc.Output, layoutDir)
		if _, err := os.Stat(dir); err != nil {
			continue // no structs: no layout check
		}
		pins := man.Versions
		if lc.Library.Pins != "" {
			pins = man.LibraryVersions(lc.Library.Pins)
		}
		for i := range pins {
			e := &pins[i]
			if !e.Has(lc.Library.Header) {
				continue
			}
			t.Run(lc.Package+"/"+e.Tag, func(t *testing.T) {
				hdr := headerDir(t, e, cache)
				stubs, err := writeStubs(lc.Library)
				if err != nil {
					t.Fatal(err)
				}
				defer os.RemoveAll(stubs)
				runLayoutCheck(t, lc.Package+" "+e.Name(), filepath.Join(lc.Output, layoutDir), "cudagen_layout,"+e.Tag, hdr, stubs)
				checked++
			})
		}
	}
	if checked == 0 {
		t.Skip("no library layout checked: no header in the cache")
	}
}

// runLayoutCheck runs the layout check package pkg (a directory of the
// module) under tags, its C side compiled against the headers of the
// include directories: its TestLayout must pass and find no size,
// alignment or offset that differs.
func runLayoutCheck(t *testing.T, what, pkg, tags string, include ...string) {
	t.Helper()
	out, err := modtest.Run(t, root(t), []string{"CGO_ENABLED=1", "CGO_CFLAGS=-I" + strings.Join(include, " -I")},
		"test", "-count=1", "-v", "-tags", tags, "./"+filepath.ToSlash(pkg))
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLayout") || !strings.Contains(string(out), ", 0 differ") {
		t.Fatalf("layout check of %s: %v\n%s", what, err, out)
	}
}

// TestPerThreadSwitch: with the switch, the _ptsz entry points are bound
// and resolved with the per-thread flag, at their per-thread ABI versions.
func TestPerThreadSwitch(t *testing.T) {
	cfg, _, _ := loadAll(t)
	c := *cfg
	c.PerThreadDefaultStream = true
	eachBuilder(t, &c, func(t *testing.T, _ *headers.Entry, _ string, m *builder) {
		n := 0
		for _, f := range m.Funcs {
			switch f.Base {
			case "cuEventRecord", "cuStreamQuery":
				n++
				if f.Symbol != f.Base+"_ptsz" || f.ABI != 7000 || f.Flags != 2 {
					t.Errorf("%s: %s@%d flags %d", f.Base, f.Symbol, f.ABI, f.Flags)
				}
			case "cuMemcpyHtoDAsync":
				n++
				if f.Symbol != "cuMemcpyHtoDAsync_v2_ptsz" || f.ABI != 7000 {
					t.Errorf("%s: %s@%d", f.Base, f.Symbol, f.ABI)
				}
			case "cuEventRecordWithFlags":
				n++
				if f.Symbol != "cuEventRecordWithFlags_ptsz" || f.ABI != 11010 {
					t.Errorf("%s: %s@%d", f.Base, f.Symbol, f.ABI)
				}
			case "cuEventQuery":
				n++
				if f.Symbol != "cuEventQuery" {
					t.Errorf("%s: %s", f.Base, f.Symbol)
				}
			}
		}
		if n != 5 {
			t.Errorf("%d of the 5 checked functions bound", n)
		}
	})
}

// TestDrift regenerates every version whose headers can be had here and
// compares with what is committed.
func TestDrift(t *testing.T) {
	var log bytes.Buffer
	drift, err := generate(options{Root: root(t), Check: true, Log: &log})
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(drift) > 0 {
		t.Fatalf("the committed bindings differ from what the generator writes: %v; run go run ./gen and commit", drift)
	}
	if n := strings.Count(log.String(), "bindings not checked"); n > 0 {
		_, man, _ := loadAll(t)
		if n >= len(man.Versions) {
			t.Skipf("skipping: no version's headers are in the cache, so only the build constraints were checked; fetch them with %s", headers.FetchCommand)
		}
		t.Logf("%d of %d versions were not checked here (see above)", n, len(man.Versions))
	}
}

// A minimal header pair, written by the test, for the bad-input cases.
const miniCuda = `#ifndef CUDA_H
#define CUDA_H
#define CUDA_VERSION 12040
typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_NOT_READY = 600
} CUresult;
typedef enum CUdriverProcAddress_flags_enum {
    CU_GET_PROC_ADDRESS_DEFAULT = 0,
    CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2
} CUdriverProcAddress_flags;
typedef struct CUevent_st *CUevent;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long cuuint64_t;
typedef enum CUdriverProcAddressQueryResult_enum { CU_GET_PROC_ADDRESS_SUCCESS = 0 } CUdriverProcAddressQueryResult;
#define cuEventDestroy cuEventDestroy_v2
#define cuGetProcAddress cuGetProcAddress_v2
CUresult cuEventQuery(CUevent hEvent);
CUresult cuEventDestroy(CUevent hEvent);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus);
CUresult cuCtxGetCurrent(CUcontext *pctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
#endif
`

const miniTypedefs = `#include <cuda.h>
#if defined(__CUDA_API_VERSION_INTERNAL)
typedef CUresult (*PFN_cuEventDestroy_v2000)(CUevent hEvent);
#endif
typedef CUresult (*PFN_cuEventQuery_v2000)(CUevent hEvent);
typedef CUresult (*PFN_cuEventDestroy_v4000)(CUevent hEvent);
typedef CUresult (*PFN_cuCtxGetCurrent_v4000)(CUcontext *pctx);
typedef CUresult (*PFN_cuCtxSetCurrent_v4000)(CUcontext ctx);
typedef CUresult (*PFN_cuGetProcAddress_v12000)(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus);
`

func miniConfig() *config {
	return &config{Package: "driver", Output: "x", Names: map[string]rename{"CUresult": {Go: "Result", Why: "test"}}, initialisms: map[string]bool{},
		// As gen/bindings.json: the mini header's cuGetProcAddress has no doc.
		Functions: map[string]funcConf{"cuGetProcAddress": {Why: "test", Out: []string{"pfn", "symbolStatus"}},
			"cuCtxGetCurrent": {Why: "test", Out: []string{"pctx"}}}}
}

func writeMini(t *testing.T, cuda string) string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cuda.h"), []byte(cuda))
	writeFile(t, filepath.Join(dir, "cudaTypedefs.h"), []byte(miniTypedefs))
	return dir
}

func TestMiniHeader(t *testing.T) {
	m, err := headerModel(miniConfig(), writeMini(t, miniCuda))
	if err != nil {
		t.Fatal(err)
	}
	f := m.funcNamed("cuEventDestroy")
	if len(m.Funcs)+len(m.Skipped) != 5 || f == nil || f.Symbol != "cuEventDestroy_v2" || f.ABI != 4000 || !m.GPAV2 || m.CUDAVersion != 12040 {
		t.Fatalf("%+v", m.Funcs)
	}
	// cuCtxGetCurrent's pctx has no doc: the config says it is a result.
	if s := m.funcNamed("cuCtxGetCurrent").goSignature(); s != "CtxGetCurrent() (Context, error)" {
		t.Errorf("configured output: %s", s)
	}
}

// A pointer whose lifetime neither its shape, the doc nor the config
// tells fails generation, naming the function and the parameter.
func TestUnclassifiedPointer(t *testing.T) {
	cfg := miniConfig()
	delete(cfg.Functions, "cuCtxGetCurrent")
	_, err := headerModel(cfg, writeMini(t, miniCuda))
	if err == nil || !strings.Contains(err.Error(), "cuCtxGetCurrent: cannot tell how long the driver uses pctx") || !strings.Contains(err.Error(), "gen/bindings.json") {
		t.Fatalf("an unclassified pointer: got %v", err)
	}
	// Classified by the config, it binds.
	cfg.Functions["cuCtxGetCurrent"] = funcConf{Why: "test", Life: map[string]string{"pctx": "written"}}
	m, err := headerModel(cfg, writeMini(t, miniCuda))
	if err != nil {
		t.Fatal(err)
	}
	if l := m.funcNamed("cuCtxGetCurrent").Params[0].Life; l == nil || l.Kind != lifeWritten {
		t.Fatalf("pctx's life: %+v", l)
	}
}

func TestBadInput(t *testing.T) {
	lines := strings.Split(miniCuda, "\n")
	cases := []struct {
		name, header string
		want         []string // all must appear in the error
	}{
		{"truncated", strings.Join(lines[:18], "\n"), []string{"cuda.h:"}},
		{"malformed", strings.Replace(miniCuda, "CUresult cuEventQuery(CUevent hEvent);", "CUresult cuEventQuery(CUevent hEvent;", 1), []string{"cuda.h:19:37", "expected ')'"}},
		{"no CUDA_VERSION", strings.Replace(miniCuda, "#define CUDA_VERSION 12040", "", 1), []string{"CUDA_VERSION"}},
		{"no cuGetProcAddress", strings.Replace(strings.Replace(miniCuda, "CUresult cuGetProcAddress(", "CUresult cuGetProcAddressX(", 1), "#define cuGetProcAddress cuGetProcAddress_v2", "", 1), []string{"cuGetProcAddress", "11.3"}},
		{"no cuCtxSetCurrent", strings.Replace(miniCuda, "CUresult cuCtxSetCurrent(CUcontext ctx);", "", 1), []string{"cuCtxSetCurrent", "Ctx variant"}},
		{"Go name clash", strings.Replace(miniCuda, "typedef struct CUevent_st *CUevent;", "typedef struct CUevent_st *CUevent;\ntypedef enum { CU_EVENT_QUERY = 1 } CUx;", 1), []string{"Go name clash", "CU_EVENT_QUERY", "cuEventQuery", "EventQuery", "cuda.h:"}},
		{"enum out of range", strings.Replace(miniCuda, "CUDA_ERROR_NOT_READY = 600", "CUDA_ERROR_NOT_READY = 600,\n    CUDA_ERROR_HUGE = 0x1ffffffff", 1), []string{"cuda.h:7", "CUDA_ERROR_HUGE", "does not fit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				_, err = headerModel(miniConfig(), writeMini(t, c.header))
			}()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			t.Log(err)
		})
	}
	// A header missing altogether.
	if _, err := headerModel(miniConfig(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "cuda.h") {
		t.Errorf("missing header: %v", err)
	}
	// A config override without its reason.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.json"), []byte(`{"package": "driver", "output": "x", "functions": {"cuEventQuery": {"out": ["x"]}}}`))
	if _, err := loadConfig(filepath.Join(dir, "b.json")); err == nil || !strings.Contains(err.Error(), "functions.cuEventQuery") {
		t.Errorf("override without why: %v", err)
	}
}

// A real pinned header cut in half fails with its file and line.
func TestTruncatedRealHeader(t *testing.T) {
	cfg, man, cache := loadAll(t)
	var src string
	for i := range man.Versions {
		if d, err := headers.Ensure(&man.Versions[i], cache, nil); err == nil {
			src = d
			break
		}
	}
	if src == "" {
		t.Skipf("skipping: no pinned headers in the cache %s; fetch them with %s", cache, headers.FetchCommand)
	}
	b := readFile(t, src, "cuda.h")
	lines := strings.Split(string(b), "\n")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cuda.h"), []byte(strings.Join(lines[:len(lines)/2], "\n")+"\nCUresult CUDAAPI cuBroken(CUevent"))
	tb := readFile(t, src, "cudaTypedefs.h")
	writeFile(t, filepath.Join(dir, "cudaTypedefs.h"), tb)
	_, err := headerModel(cfg, dir)
	if err == nil || !regexp.MustCompile(`cuda\.h:[0-9]+:[0-9]+`).MatchString(err.Error()) {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
}

// A pinned header whose CUDA_VERSION differs from the manifest's is refused.
func TestVersionMismatch(t *testing.T) {
	e := &headers.Entry{Version: "12.6", CUDAVersion: 12060, Tag: "cuda12.6"}
	_, err := modelHeaders(miniConfig(), e, writeMini(t, miniCuda))
	if err == nil || !strings.Contains(err.Error(), "12040") || !strings.Contains(err.Error(), "12060") {
		t.Fatalf("got %v", err)
	}
}

func TestNames(t *testing.T) {
	c := &config{initialisms: map[string]bool{"IPC": true}}
	for in, want := range map[string]string{"cuEventCreate": "EventCreate", "cuIpcGetEventHandle": "IPCGetEventHandle", "cuCtxGetCurrent": "CtxGetCurrent", "cuCtxCreate_v3": "CtxCreateV3",
		// A run of capitals ending a MixedCaps part stays (nvrtcGetOptiXIR's);
		// single capitals and SNAKE parts follow the other rules.
		"cuGetOptiXIR": "GetOptiXIR", "cuGetOptiXIRSize": "GetOptiXIRSize", "cuMemcpyHtoD_v2": "MemcpyHtoDV2",
		"cuMemcpy3DPeer": "Memcpy3DPeer", "cuGLGetDevices": "GLGetDevices", "cuGraphicsEGLRegisterImage": "GraphicsEGLRegisterImage"} {
		if got := c.funcGoName(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"CU_EVENT_BLOCKING_SYNC": "EventBlockingSync", "CUDA_ARRAY3D_DESCRIPTOR": "Array3DDescriptor"} {
		if got := c.constGoName(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"hEvent": "hEvent", "Flags": "flags", "error": "errorArg", "len": "lenArg"} {
		if got := goParamName(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// TestSentinels: sentinels are known by value or by the header's form (a
// last enumerator without initializer or doc), not by a _MAX suffix.
func TestSentinels(t *testing.T) {
	cfg, man, cache := loadAll(t)
	e := man.Newest()
	m, err := modelHeaders(cfg, e, headerDir(t, e, cache))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"CU_CTX_LMEM_RESIZE_TO_MAX": false, "CU_ATOMIC_OPERATION_INTEGER_MAX": false, "CU_ATOMIC_OPERATION_MAX": true,
		"CU_DEVICE_ATTRIBUTE_MAX": true, "CU_MEM_HANDLE_TYPE_MAX": true, "CU_JIT_NUM_OPTIONS": true}
	for _, ty := range m.Types {
		for _, v := range ty.Values {
			if w, ok := want[v.C]; ok {
				delete(want, v.C)
				if v.Sentinel != w {
					t.Errorf("%s: sentinel %v, want %v", v.C, v.Sentinel, w)
				}
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("not found: %v", want)
	}
}

// BenchmarkGenerate generates one version of the whole API from its cached
// header: parse, model and emit every file. Goal: at most 1 s per version.
func BenchmarkGenerate(b *testing.B) {
	_, man, cache := loadAll(b)
	e := man.Newest()
	dir := headerDir(b, e, cache)
	em := realRenderer(b)
	ccConfig() // the C compiler probe is made once per process
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := modelHeaders(em.Cfg, e, dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := em.renderFiles([]*model{m.model}); err != nil {
			b.Fatal(err)
		}
	}
}

// trampolineNames is the set of trampolines the functions of m call.
func trampolineNames(t *testing.T, m *model) map[string]bool {
	names := map[string]bool{}
	for _, f := range m.Funcs {
		tr, err := trampolineOf(f)
		if err != nil {
			t.Fatal(err)
		}
		names[tr.Name] = true
	}
	return names
}

// TestCompilersBound: every function a config lists as a compiler (the
// driver's and each library's) is bound from some pinned header in the
// cache, so that a misspelt name cannot leave a function unprotected, and
// each of its bindings goes through a trampoline that blocks signals.
func TestCompilersBound(t *testing.T) {
	cfg, man, cache := loadAll(t)
	cached := func(e *headers.Entry) (string, bool) {
		var log bytes.Buffer
		dir, err := headers.Ensure(e, cache, &log)
		if errors.Is(err, headers.ErrUnavailable) {
			return "", false
		}
		if err != nil {
			t.Fatalf("CUDA %s: %v\n%s", e.Version, err, log.String())
		}
		return dir, true
	}
	check := func(c *config, what string, models []*model) {
		if len(models) == 0 {
			t.Logf("%s: no pinned header in the cache: its compilers not checked", what)
			return
		}
		for name := range c.Compilers {
			bound := 0
			for _, m := range models {
				f := m.funcNamed(name)
				if f == nil {
					continue
				}
				bound++
				tr, err := trampolineOf(f)
				if err != nil {
					t.Fatal(err)
				}
				if !f.Quiet || !strings.HasSuffix(tr.Name, "_nosig") {
					t.Errorf("%s %s: compiler %s goes through %s, which does not block signals", what, m.Version, name, tr.Name)
				}
			}
			if bound == 0 {
				t.Errorf("%s: compilers.%s names no function bound from the %d pinned headers in the cache", what, name, len(models))
			}
		}
	}
	var driver []*model
	for i := range man.Versions {
		if dir, ok := cached(&man.Versions[i]); ok {
			b, err := modelHeaders(cfg, &man.Versions[i], dir)
			if err != nil {
				t.Fatal(err)
			}
			driver = append(driver, b.model)
		}
	}
	check(cfg, "the driver", driver)
	libs, err := libraryConfigs(filepath.Join(root(t), "gen", "bindings.json"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, lc := range libs {
		pins := man.Versions
		if lc.Library.Pins != "" {
			pins = man.LibraryVersions(lc.Library.Pins)
		}
		var models []*model
		for i := range pins {
			e := &pins[i]
			if !e.Has(lc.Library.Header) {
				continue
			}
			if dir, ok := cached(e); ok {
				m, err := libraryModel(lc, e, dir)
				if err != nil {
					t.Fatal(err)
				}
				models = append(models, m)
			}
		}
		check(lc, lc.Package, models)
	}
}

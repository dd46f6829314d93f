package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/headers"
)

func root(t testing.TB) string {
	t.Helper()
	r, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func loadAll(t testing.TB) (*Config, *headers.Manifest, string) {
	t.Helper()
	r := root(t)
	cfg, err := LoadConfig(filepath.Join(r, "gen", "bindings.json"))
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

// headerDir returns a version's verified headers, fetching them if the
// manifest says how; it skips the test, saying why, where they cannot be had.
func headerDir(t testing.TB, e *headers.Entry, cache string) string {
	t.Helper()
	var log bytes.Buffer
	dir, err := headers.Ensure(e, cache, &log)
	if err != nil {
		if errors.Is(err, headers.ErrUnavailable) {
			t.Skipf("skipping CUDA %s: its headers cannot be had on this machine: %v", e.Version, err)
		}
		t.Fatalf("CUDA %s: %v\n%s", e.Version, err, log.String())
	}
	return dir
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
	cfg, man, cache := loadAll(t)
	for i := range man.Versions {
		e := &man.Versions[i]
		t.Run(e.Version, func(t *testing.T) {
			dir := headerDir(t, e, cache)
			m, err := Build(cfg, e, dir)
			if err != nil {
				t.Fatal(err)
			}
			cudaH, _ := os.ReadFile(filepath.Join(dir, "cuda.h"))
			typedefs, _ := os.ReadFile(filepath.Join(dir, "cudaTypedefs.h"))
			if want := fmt.Sprintf("#define CUDA_VERSION %d", e.CUDAVersion); !bytes.Contains(cudaH, []byte(want)) || m.CUDAVersion != e.CUDAVersion {
				t.Errorf("CUDA_VERSION: model %d, manifest %d", m.CUDAVersion, e.CUDAVersion)
			}
			// Enum values.
			text := map[string]int64{}
			for _, mm := range reEnumerator.FindAllStringSubmatch(string(cudaH), -1) {
				v, err := strconv.ParseInt(mm[2], 0, 64)
				if err == nil {
					text[mm[1]] = v
				}
			}
			n := 0
			for _, en := range m.Enums {
				for _, v := range en.Values {
					if tv, ok := text[v.C]; ok {
						n++
						if tv != v.Value {
							t.Errorf("%s: generator read %d, header says %d", v.C, v.Value, tv)
						}
					}
				}
			}
			var results int
			for _, en := range m.Enums {
				if en.Conf.Go == "Result" {
					results = len(en.Values)
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
			if n < 100 {
				t.Errorf("only %d enumerators checked", n)
			}
			// Versioned names: each function's symbol is what the header's
			// #define maps its name to.
			defines := map[string]string{}
			for _, mm := range reDefine.FindAllStringSubmatch(string(cudaH), -1) {
				if strings.HasSuffix(mm[2], "_ptsz") || strings.HasSuffix(mm[2], "_ptds") {
					continue // the per-thread switch's mappings
				}
				if _, seen := defines[mm[1]]; !seen {
					defines[mm[1]] = mm[2]
				}
			}
			funcs := map[string]Func{}
			for _, f := range m.Funcs {
				funcs[f.GoName] = f
				want := f.Conf.C
				if d, ok := defines[f.Conf.C]; ok {
					want = d
				}
				if f.Symbol != want {
					t.Errorf("%s: symbol %s, header maps it to %s", f.Conf.C, f.Symbol, want)
				}
				// Its ABI version is one cudaTypedefs.h declares for it.
				if !regexp.MustCompile(`PFN_` + f.Base + `_v` + strconv.Itoa(f.ABI) + `\b`).Match(typedefs) {
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
				must("EventElapsedTimeV2", "cuEventElapsedTime_v2", 12080)
				must("GetProcAddress", "cuGetProcAddress_v2", 12000)
			case e.CUDAVersion >= 12000:
				must("EventElapsedTime", "cuEventElapsedTime", 2000)
				must("GetProcAddress", "cuGetProcAddress_v2", 12000)
			default:
				must("EventElapsedTime", "cuEventElapsedTime", 2000)
				must("GetProcAddress", "cuGetProcAddress", 11030)
			}
			if e.CUDAVersion < 12080 {
				if _, ok := funcs["EventElapsedTimeV2"]; ok {
					t.Errorf("CUDA %s has no cuEventElapsedTime_v2, yet it is bound", e.Version)
				}
			}
			if m.GPAV2 != (e.CUDAVersion >= 12000) {
				t.Errorf("cuGetProcAddress form: v2=%v", m.GPAV2)
			}
			// What the generated file says.
			em := &Emitter{Cfg: cfg, Command: Command, Templates: filepath.Join(root(t), "templates"), Versions: man.Versions}
			b, err := em.Driver(m)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitN(string(b), "\n", 3)
			if lines[0] != Command || lines[1] != "// "+doNotEdit {
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
			if bytes.Contains(b, []byte("#include <cuda.h>")) || bytes.Contains(b, []byte("-lcuda")) {
				t.Error("the file needs the toolkit")
			}
		})
	}
}

// TestPerThreadSwitch: with the switch, the _ptsz entry points are bound
// and resolved with the per-thread flag.
func TestPerThreadSwitch(t *testing.T) {
	cfg, man, cache := loadAll(t)
	e := man.Newest()
	dir := headerDir(t, e, cache)
	c := *cfg
	c.PerThreadDefaultStream = true
	m, err := Build(&c, e, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Funcs {
		switch f.Base {
		case "cuEventRecord", "cuStreamWaitEvent", "cuStreamQuery":
			if f.Symbol != f.Base+"_ptsz" || f.ABI != 7000 || f.Flags != 2 {
				t.Errorf("%s: %s@%d flags %d", f.Base, f.Symbol, f.ABI, f.Flags)
			}
		case "cuEventRecordWithFlags":
			if f.Symbol != "cuEventRecordWithFlags_ptsz" || f.ABI != 11010 {
				t.Errorf("%s: %s@%d", f.Base, f.Symbol, f.ABI)
			}
		case "cuEventQuery":
			if f.Symbol != "cuEventQuery" {
				t.Errorf("%s: %s", f.Base, f.Symbol)
			}
		}
	}
}

// TestDrift regenerates every version whose headers can be had here and
// compares with what is committed.
func TestDrift(t *testing.T) {
	var log bytes.Buffer
	drift, err := Generate(Options{Root: root(t), Check: true, Skip: true, Log: &log})
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(drift) > 0 {
		t.Fatalf("the committed bindings differ from what the generator writes: %v; run go run ./gen and commit", drift)
	}
	if strings.Contains(log.String(), "skipping") {
		t.Logf("some versions were not checked here (see above)")
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
typedef unsigned long long cuuint64_t;
typedef enum CUdriverProcAddressQueryResult_enum { CU_GET_PROC_ADDRESS_SUCCESS = 0 } CUdriverProcAddressQueryResult;
#define cuEventDestroy cuEventDestroy_v2
#define cuGetProcAddress cuGetProcAddress_v2
CUresult cuEventQuery(CUevent hEvent);
CUresult cuEventDestroy(CUevent hEvent);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus);
#endif
`

const miniTypedefs = `#include <cuda.h>
#if defined(__CUDA_API_VERSION_INTERNAL)
typedef CUresult (*PFN_cuEventDestroy_v2000)(CUevent hEvent);
#endif
typedef CUresult (*PFN_cuEventQuery_v2000)(CUevent hEvent);
typedef CUresult (*PFN_cuEventDestroy_v4000)(CUevent hEvent);
typedef CUresult (*PFN_cuGetProcAddress_v12000)(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus);
`

func miniConfig(funcs ...string) *Config {
	c := &Config{Package: "driver", Output: "x", Handles: []NameMap{{C: "CUevent", Go: "Event"}},
		Enums: []EnumConf{{C: "CUresult", Go: "Result", Prefix: "CUDA_", Error: true}}, initialisms: map[string]bool{}}
	for _, f := range funcs {
		c.Functions = append(c.Functions, FuncConf{C: f})
	}
	return c
}

func writeMini(t *testing.T, cuda string) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cuda.h"), []byte(cuda), 0o644)
	os.WriteFile(filepath.Join(dir, "cudaTypedefs.h"), []byte(miniTypedefs), 0o644)
	return dir
}

func TestMiniHeader(t *testing.T) {
	m, err := ParseHeaders(miniConfig("cuEventQuery", "cuEventDestroy"), writeMini(t, miniCuda))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Funcs) != 2 || m.Funcs[1].Symbol != "cuEventDestroy_v2" || m.Funcs[1].ABI != 4000 || !m.GPAV2 || m.CUDAVersion != 12040 {
		t.Fatalf("%+v", m.Funcs)
	}
}

func TestBadInput(t *testing.T) {
	lines := strings.Split(miniCuda, "\n")
	cases := []struct {
		name, header string
		funcs        []string
		want         []string // all must appear in the error
	}{
		{"truncated", strings.Join(lines[:17], "\n"), []string{"cuEventQuery"}, []string{"cuda.h:"}},
		{"malformed", strings.Replace(miniCuda, "CUresult cuEventQuery(CUevent hEvent);", "CUresult cuEventQuery(CUevent hEvent;", 1), []string{"cuEventQuery"}, []string{"cuda.h:18:37", "expected ')'"}},
		{"missing function", miniCuda, []string{"cuEventQuery", "cuEventRecordWithFlags"}, []string{"cuEventRecordWithFlags", "not declared", "cuda.h"}},
		{"no CUDA_VERSION", strings.Replace(miniCuda, "#define CUDA_VERSION 12040", "", 1), []string{"cuEventQuery"}, []string{"CUDA_VERSION"}},
		{"no cuGetProcAddress", strings.Replace(strings.Replace(miniCuda, "CUresult cuGetProcAddress(", "CUresult cuGetProcAddressX(", 1), "#define cuGetProcAddress cuGetProcAddress_v2", "", 1), []string{"cuEventQuery"}, []string{"cuGetProcAddress", "11.3"}},
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
				_, err = ParseHeaders(miniConfig(c.funcs...), writeMini(t, c.header))
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
	if _, err := ParseHeaders(miniConfig("cuEventQuery"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "cuda.h") {
		t.Errorf("missing header: %v", err)
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
		t.Skip("skipping: no pinned headers can be had on this machine")
	}
	b, _ := os.ReadFile(filepath.Join(src, "cuda.h"))
	lines := strings.Split(string(b), "\n")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cuda.h"), []byte(strings.Join(lines[:len(lines)/2], "\n")+"\nCUresult CUDAAPI cuBroken(CUevent"), 0o644)
	tb, _ := os.ReadFile(filepath.Join(src, "cudaTypedefs.h"))
	os.WriteFile(filepath.Join(dir, "cudaTypedefs.h"), tb, 0o644)
	_, err := ParseHeaders(cfg, dir)
	if err == nil || !regexp.MustCompile(`cuda\.h:[0-9]+:[0-9]+`).MatchString(err.Error()) {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
}

// A pinned header whose CUDA_VERSION differs from the manifest's is refused.
func TestVersionMismatch(t *testing.T) {
	e := &headers.Entry{Version: "12.6", CUDAVersion: 12060, Tag: "cuda12.6"}
	_, err := Build(miniConfig("cuEventQuery"), e, writeMini(t, miniCuda))
	if err == nil || !strings.Contains(err.Error(), "12040") || !strings.Contains(err.Error(), "12060") {
		t.Fatalf("got %v", err)
	}
}

func TestNames(t *testing.T) {
	c := &Config{initialisms: map[string]bool{"IPC": true}}
	for in, want := range map[string]string{"cuEventCreate": "EventCreate", "cuIpcGetEventHandle": "IPCGetEventHandle", "cuCtxGetCurrent": "CtxGetCurrent"} {
		if got := c.goFuncName(FuncConf{C: in}); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if got := c.camel("EVENT_BLOCKING_SYNC"); got != "EventBlockingSync" {
		t.Errorf("camel: %s", got)
	}
	for in, want := range map[string]string{"hEvent": "hEvent", "Flags": "flags", "error": "errorArg", "len": "lenArg"} {
		if got := goParamName(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// BenchmarkGenerate generates one version from its cached header: parse and
// emit. Goal: at most 1 s per version.
func BenchmarkGenerate(b *testing.B) {
	cfg, man, cache := loadAll(b)
	e := man.Newest()
	dir := headerDir(b, e, cache)
	em := &Emitter{Cfg: cfg, Command: Command, Templates: filepath.Join(root(b), "templates"), Versions: man.Versions}
	ccConfig() // the C compiler probe is made once per process
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := Build(cfg, e, dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := em.Driver(m); err != nil {
			b.Fatal(err)
		}
		if _, err := em.DriverTest(m); err != nil {
			b.Fatal(err)
		}
	}
}

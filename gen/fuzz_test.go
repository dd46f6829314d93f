package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/headers"
)

// fuzzDeadline is the most one input may take: parse, model and render.
const fuzzDeadline = 10 * time.Second

// FuzzParseHeaders feeds cuda.h variants, with the small cudaTypedefs.h of
// the bad-input tests, through the parse and model stage (and, where that
// succeeds, the rendering of the version's Go file). No input may panic,
// take over 10 s, or fail with an error that is long, quotes generated code
// or names a location inside the parser library. The seed corpus is in
// testdata/fuzz/FuzzParseHeaders (truncations, deleted lines, garbage bytes,
// duplicated declarations, changed macro values, self-includes); plain go
// test runs it. tools/fuzz.sh runs the fuzzer.
func FuzzParseHeaders(f *testing.F) {
	f.Add([]byte(miniCuda))
	cfg := miniConfig()
	tmpl := filepath.Join(root(f), "templates")
	f.Fuzz(func(t *testing.T, cuda []byte) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "cuda.h"), cuda)
		writeFile(t, filepath.Join(dir, "cudaTypedefs.h"), []byte(miniTypedefs))
		type result struct {
			m        *model
			err      error
			rendered bool
			panicked any
		}
		done := make(chan result, 1)
		go func() {
			var r result
			defer func() {
				if p := recover(); p != nil {
					r.panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
				}
				done <- r
			}()
			r.m, r.err = headerModel(cfg, dir)
			if r.err == nil {
				r.m.Version, r.m.Tag, r.m.Sums = "12.4", "cuda12.4", map[string]string{}
				em := &renderer{Cfg: cfg, Command: genCommand, Templates: tmpl, Versions: []headers.Entry{{Version: "12.4", Tag: "cuda12.4"}}}
				if _, r.err = em.pure(r.m); r.err == nil {
					_, r.err = em.cgo(r.m)
				}
				r.rendered = true
			}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(fuzzDeadline):
			t.Fatalf("input of %d bytes took over %v", len(cuda), fuzzDeadline)
		}
		if r.panicked != nil {
			t.Fatalf("panic: %v", r.panicked)
		}
		if r.err == nil {
			if r.m.CUDAVersion < oldestCUDA {
				t.Fatalf("accepted CUDA_VERSION %d", r.m.CUDAVersion)
			}
			return
		}
		s := r.err.Error()
		switch {
		case len(s) > 3000:
			t.Fatalf("error of %d bytes: %.500s", len(s), s)
		case reLibraryLocation.MatchString(s):
			t.Fatalf("error names a location in the parser library: %s", s)
		case strings.Contains(s, "package driver"):
			t.Fatalf("error quotes generated code: %.500s", s)
		case !strings.HasPrefix(s, "gen: "):
			t.Fatalf("error does not say where it comes from: %s", s)
		}
	})
}

var reLibraryLocation = regexp.MustCompile(`\([A-Za-z0-9_]+\.go:[0-9]+:`)

// fuzzSeeds are the committed seed inputs, by name.
func fuzzSeeds() map[string]string {
	s := map[string]string{"mini": miniCuda}
	lines := strings.Split(miniCuda, "\n")
	for _, n := range []int{1, 3, 7, 12, 17, 20} {
		s[fmt.Sprintf("truncated-lines-%d", n)] = strings.Join(lines[:n], "\n")
	}
	for _, n := range []int{100, 333, 517} {
		s[fmt.Sprintf("truncated-bytes-%d", n)] = miniCuda[:n]
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		s[fmt.Sprintf("deleted-line-%02d", i+1)] = strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "\n")
	}
	garbage := map[string]string{"nul": "\x00", "ff": "\xff", "e9": "\xe9", "bom": "\ufeff", "ctrl": "\x01\x02\x1b", "brace": "}}}", "quote": "\"", "hash": "#"}
	for name, g := range garbage {
		s["garbage-"+name+"-comment"] = strings.Replace(miniCuda, "CUresult;", "CUresult; /* "+g+" */", 1)
		s["garbage-"+name+"-code"] = strings.Replace(miniCuda, "CUresult cuEventQuery", "CUresult "+g+"cuEventQuery", 1)
	}
	s["garbage-start"] = "\xff\xfe\x00\x01" + miniCuda
	decl := "CUresult cuEventQuery(CUevent hEvent);"
	s["duplicated-function"] = strings.Replace(miniCuda, decl, decl+"\n"+decl, 1)
	s["duplicated-conflicting-function"] = strings.Replace(miniCuda, decl, decl+"\nint cuEventQuery(int);", 1)
	s["duplicated-enumerator"] = strings.Replace(miniCuda, "CUDA_ERROR_NOT_READY = 600", "CUDA_ERROR_NOT_READY = 600,\n    CUDA_ERROR_NOT_READY = 601", 1)
	s["duplicated-typedef"] = strings.Replace(miniCuda, "typedef struct CUevent_st *CUevent;", "typedef struct CUevent_st *CUevent;\ntypedef int CUevent;", 1)
	s["duplicated-header"] = miniCuda + strings.Replace(miniCuda, "#ifndef CUDA_H", "#ifndef CUDA_H2", 1)
	for name, v := range map[string]string{"old": "11020", "oldest": "11030", "future": "99990", "zero": "0", "negative": "-1", "hex": "0x2EE0", "word": "twelve", "empty": "", "huge": "99999999999999999999999"} {
		s["macro-cuda-version-"+name] = strings.Replace(miniCuda, "#define CUDA_VERSION 12040", "#define CUDA_VERSION "+v, 1)
	}
	for name, v := range map[string]string{"big": "0x1FFFFFFFF", "negative": "-1", "shift": "1 << 40", "div0": "1 / 0", "expr": "(599 + 1)", "char": "'x'", "self": "CUDA_ERROR_NOT_READY"} {
		s["enum-value-"+name] = strings.Replace(miniCuda, "CUDA_ERROR_NOT_READY = 600", "CUDA_ERROR_NOT_READY = "+v, 1)
	}
	s["macro-renamed-function"] = strings.Replace(miniCuda, "#define cuEventDestroy cuEventDestroy_v2", "#define cuEventDestroy cuEventDestroy_v9", 1)
	s["macro-recursive"] = strings.Replace(miniCuda, "#define cuEventDestroy cuEventDestroy_v2", "#define cuEventDestroy cuEventDestroy\n#define A B\n#define B A\nint A;", 1)
	s["macro-function-like"] = strings.Replace(miniCuda, "#define cuEventDestroy cuEventDestroy_v2", "#define cuEventDestroy(x) cuEventDestroy_v2(x)", 1)
	s["macro-undef-version"] = strings.Replace(miniCuda, "#endif", "#undef CUDA_VERSION\n#endif", 1)
	s["self-include-top"] = "#include \"cuda.h\"\n" + miniCuda
	s["self-include-guarded"] = strings.Replace(miniCuda, "#define CUDA_H\n", "#define CUDA_H\n#include <cuda.h>\n", 1)
	s["self-include-typedefs"] = "#include <cudaTypedefs.h>\n" + miniCuda
	s["self-include-computed"] = "#define ME __FILE__\n#include ME\n" + miniCuda
	s["include-system"] = "#include <stdlib.h>\n#include <stdint.h>\n" + miniCuda
	s["include-missing"] = "#include <no_such_header.h>\n" + miniCuda
	s["ends-in-backslash"] = strings.TrimSuffix(miniCuda, "\n") + "\\"
	s["ends-in-backslash-in-enum"] = miniCuda[:strings.Index(miniCuda, "CU_GET_PROC_ADDRESS_SUCCESS")] + "CU_GET_PROC_ADDRESS_SUCCESS lt_enum\\" // cc panicked
	s["unterminated-comment"] = strings.Replace(miniCuda, "CUresult;", "CUresult; /* never closed", 1)
	s["unterminated-if"] = strings.Replace(miniCuda, "#endif", "#if 1", 1)
	s["error-directive"] = strings.Replace(miniCuda, "#endif", "#error stop\n#endif", 1)
	s["no-gpa"] = strings.Replace(miniCuda, "CUresult cuGetProcAddress(", "CUresult cuGetProcAddressX(", 1)
	s["variadic"] = strings.Replace(miniCuda, "CUresult cuEventQuery(CUevent hEvent);", "CUresult cuEventQuery(CUevent hEvent, ...);", 1)
	s["wrong-result"] = strings.Replace(miniCuda, "CUresult cuEventQuery(CUevent hEvent);", "int cuEventQuery(CUevent hEvent);", 1)
	s["struct-param"] = strings.Replace(miniCuda, "CUresult cuEventQuery(CUevent hEvent);", "struct S { int a[3]; };\nCUresult cuEventQuery(struct S s);", 1)
	return s
}

// TestWriteFuzzSeeds writes the seed corpus when CUDAGEN_WRITE_FUZZ_SEEDS=1
// (it is committed); otherwise it checks the committed corpus holds every
// seed.
func TestWriteFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzParseHeaders")
	for name, body := range fuzzSeeds() {
		path := filepath.Join(dir, "seed-"+name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", body)
		if os.Getenv("CUDAGEN_WRITE_FUZZ_SEEDS") == "1" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, []byte(want))
			continue
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("seed %s is not committed as written (CUDAGEN_WRITE_FUZZ_SEEDS=1 go test ./gen -run TestWriteFuzzSeeds writes it): %v", name, err)
		}
	}
}

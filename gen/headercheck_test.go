package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/headers"
	"github.com/dave/jennifer/jen"
)

// checkMessage asserts what every error about a header must be: short, with
// no generated source and no location inside the parser library.
func checkMessage(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	s := err.Error()
	if len(s) > 1500 {
		t.Errorf("error of %d bytes: %.300s…", len(s), s)
	}
	if regexp.MustCompile(`\([A-Za-z0-9_]+\.go:[0-9]+:`).MatchString(s) {
		t.Errorf("error names a location in the parser library: %s", s)
	}
	if strings.Contains(s, "package driver") || strings.Contains(s, "func (") {
		t.Errorf("error quotes generated source: %.300s", s)
	}
}

func writePair(t *testing.T, cuda, typedefs string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cuda.h"), []byte(cuda))
	if typedefs != "-" {
		writeFile(t, filepath.Join(dir, "cudaTypedefs.h"), []byte(typedefs))
	}
	return dir
}

func TestBadHeaders(t *testing.T) {
	const tooOldMsg = "CUDA 11.2 is older than 11.3, the oldest version cudagen can bind (it needs cuGetProcAddress and cudaTypedefs.h)"
	old := strings.Replace(miniCuda, "12040", "11020", 1)
	cases := []struct {
		name, cuda, typedefs string
		want                 []string // all must appear in the error
		not                  []string // none may
	}{
		{"too old, no cudaTypedefs.h", old, "-", []string{tooOldMsg, "cuda.h"}, nil},
		{"too old", old, miniTypedefs, []string{tooOldMsg}, nil},
		{"empty cuda.h", "", miniTypedefs, []string{"cuda.h is empty"}, []string{"unexpected"}},
		{"blank cuda.h", "\n \n", miniTypedefs, []string{"cuda.h is empty"}, nil},
		{"empty cudaTypedefs.h", miniCuda, "", []string{"cudaTypedefs.h is empty"}, []string{"CUDA_VERSION"}},
		{"no cudaTypedefs.h", miniCuda, "-", []string{"cudaTypedefs.h: no such file", "CUDA 12.4"}, nil},
		{"cudaTypedefs.h without cuda.h", miniCuda, "typedef int PFN_cuX_v1;\n", []string{"cudaTypedefs.h:1:1", "does not #include <cuda.h>"}, []string{"CUDA_VERSION"}},
		{"self-include", "#include \"cuda.h\"\n" + miniCuda, miniTypedefs, []string{"cuda.h:1:1", "cuda.h includes cuda.h"}, nil},
		{"self-include in a guard", strings.Replace(miniCuda, "#define CUDA_H\n", "#define CUDA_H\n  #  include <cuda.h>\n", 1), miniTypedefs, []string{"cuda.h:3:3", "cuda.h includes cuda.h"}, nil},
		{"includes cudaTypedefs.h", "#include <cudaTypedefs.h>\n" + miniCuda, miniTypedefs, []string{"cuda.h:1:1", "includes cudaTypedefs.h"}, nil},
		{"cudaTypedefs.h includes itself", miniCuda, miniTypedefs + "#include \"cudaTypedefs.h\"\n", []string{fmt.Sprintf("cudaTypedefs.h:%d:1", lineAfter(miniTypedefs)), "includes cudaTypedefs.h"}, nil},
		{"computed include", "#define SELF \"cuda.h\"\n#include SELF\n" + miniCuda, miniTypedefs, []string{"cuda.h:2:1", "computed #include"}, nil},
		{"include of a path", "#include \"/dev/zero\"\n" + miniCuda, miniTypedefs, []string{"cuda.h:1:1", "a path"}, nil},
		{"NUL in a comment", strings.Replace(miniCuda, "CUresult;", "CUresult; /* a\x00b */", 1), miniTypedefs, []string{"cuda.h:7:17", "NUL byte"}, nil},
		{"invalid UTF-8 in a comment", strings.Replace(miniCuda, "CUresult;", "CUresult; /* a\xe9b */", 1), miniTypedefs, []string{"cuda.h:7:17", "0xe9 is not UTF-8"}, nil},
		{"invalid UTF-8 in cudaTypedefs.h", miniCuda, miniTypedefs + "// \xff\n", []string{fmt.Sprintf("cudaTypedefs.h:%d:4", lineAfter(miniTypedefs)), "0xff"}, nil},
		{"ends in a backslash", miniCuda + "int x; \\", miniTypedefs, []string{fmt.Sprintf("cuda.h:%d:8", lineAfter(miniCuda)), "ends in a backslash"}, nil},
		{"CUDA_VERSION 99999", strings.Replace(miniCuda, "12040", "99999", 1), miniTypedefs, []string{"cuda.h: CUDA_VERSION 99999 is no toolkit's", "ends in 0"}, []string{"99.99"}},
		{"CUDA_VERSION of a minor 10", strings.Replace(miniCuda, "12040", "11100", 1), miniTypedefs, []string{"cuda.h: CUDA_VERSION 11100 is no toolkit's", "minor version is 0 to 9"}, nil},
		{"cudaTypedefs.h of a later toolkit", miniCuda, miniTypedefs + "typedef CUresult (*PFN_cuEventQuery_v12050)(CUevent hEvent);\n", []string{"cudaTypedefs.h is from a later toolkit than cuda.h: it declares PFN_cuEventQuery_v12050, ABI version 12050 (CUDA 12.5), but ", "cuda.h is CUDA 12.4 (CUDA_VERSION 12040): use the two headers of one toolkit"}, nil},
		{"cudaTypedefs.h of an earlier toolkit", miniCuda + "CUresult CUDAAPI cuCtxRecordEvent(CUcontext ctx, CUevent e);\n", miniTypedefs, []string{"cudaTypedefs.h is from an earlier toolkit than cuda.h: its newest ABI version is 12000 (CUDA 12.0), and it has no typedef for 1 of the functions cuda.h declares (cuCtxRecordEvent), but ", "cuda.h is CUDA 12.4 (CUDA_VERSION 12040): use the two headers of one toolkit"}, nil},
		{"constant the parser cannot evaluate", strings.Replace(miniCuda, "= 600", "= 1 / 0", 1), miniTypedefs, []string{"cuda.h:6:28", "1 / 0"}, []string{"check.go"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writePair(t, c.cuda, c.typedefs)
			_, err := headerModel(miniConfig(), dir)
			checkMessage(t, err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q contains %q", err, w)
				}
			}
			if strings.Contains(c.name, "too old") && !errors.Is(err, errTooOld) {
				t.Errorf("%v does not wrap ErrTooOld", err)
			}
			t.Log(err)
		})
	}
}

// A guarded header that includes system headers, and an include in a
// comment, pass.
func TestHeaderIncludesAllowed(t *testing.T) {
	h := strings.Replace(miniCuda, "#define CUDA_H\n", "#define CUDA_H\n#include <stdlib.h>\n/* #include \"cuda.h\" */\n// #include <cudaTypedefs.h>\n", 1)
	if _, err := headerModel(miniConfig(), writePair(t, h, miniTypedefs)); err != nil {
		t.Fatal(err)
	}
}

// A macro that expands without end is stopped by the expansion limit.
func TestHeaderExpansionBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("#define M0 x\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&b, "#define M%d M%d M%d\n", i, i-1, i-1)
	}
	b.WriteString("int bomb[] = { M39 };\n")
	_, err := headerModel(miniConfig(), writePair(t, b.String()+miniCuda, miniTypedefs))
	// The expansion limit stops it (7 s on an idle 2-core machine); on a
	// busy one the time limit may come first: either says why it stopped.
	if err == nil || !strings.Contains(err.Error(), "macro expansion limit exceeded") && !strings.Contains(err.Error(), "expands without end") {
		t.Fatalf("a header whose macro expands 2^39 times: %v, want the expansion limit's or the time limit's error", err)
	}
	checkMessage(t, err)
	t.Log(err)
}

// A rendering failure names the header declaration and quotes no
// generated source.
func TestRenderErrorBrief(t *testing.T) {
	f := jen.NewFile("driver")
	f.Comment("EventQuery calls cuEventQuery.")
	f.Func().Id("EventQuery").Params().Block(jen.Id("x").Op(":=").Op("}"))
	_, err := (&renderer{}).gofmt(f)
	checkMessage(t, err)
	dir := writePair(t, miniCuda, miniTypedefs)
	m, perr := headerModel(miniConfig(), dir)
	if perr != nil {
		t.Fatal(perr)
	}
	err = explainRender(err, m)
	checkMessage(t, err)
	if !strings.Contains(err.Error(), "cuda.h:"+posOf(miniCuda, "cuEventQuery")) || !strings.Contains(err.Error(), "cuEventQuery") {
		t.Errorf("does not name the declaration: %v", err)
	}
	t.Log(err)
}

// A panic of the parser library in the bounded preprocessing (cc panics on
// a file ending in a backslash, which readHeader refuses first) is an
// error, not a crash.
func TestPreprocessPanicIsAnError(t *testing.T) {
	// The input FuzzParseHeaders found (cc: "invalid Pos value 534 (should
	// be in [1, 533])").
	h := miniCuda[:strings.Index(miniCuda, "CU_GET_PROC_ADDRESS_SUCCESS")] + "CU_GET_PROC_ADDRESS_SUCCESS lt_enum\\"
	dir := writePair(t, h, miniTypedefs)
	err := preprocessBounded(miniConfig(), dir, map[string][]byte{"cuda.h": []byte(h), "cudaTypedefs.h": []byte(miniTypedefs)})
	checkMessage(t, err)
	if !strings.Contains(err.Error(), "preprocessor failed") {
		t.Errorf("got %v", err)
	}
	t.Log(err)
}

// lineAfter is the number of the line that text appended to s starts on.
func lineAfter(s string) int { return strings.Count(s, "\n") + 1 }

// posOf is "line:column" of the first sub in s.
func posOf(s, sub string) string {
	i := strings.Index(s, sub)
	if i < 0 {
		return "?"
	}
	return fmt.Sprintf("%d:%d", strings.Count(s[:i], "\n")+1, i-strings.LastIndex(s[:i], "\n"))
}

// cachedPair returns the directory of a pinned version's verified headers,
// skipping the test where they cannot be had (for 13.0, on every machine
// without that toolkit), with Ensure's error, which says how to get them.
func cachedPair(t *testing.T, version string) string {
	t.Helper()
	_, man, cache := loadAll(t)
	e := man.Find(version)
	if e == nil {
		t.Fatalf("CUDA %s is not pinned", version)
	}
	dir, err := headers.Ensure(e, cache, nil)
	if errors.Is(err, headers.ErrUnavailable) {
		t.Skipf("skipping: CUDA %s's headers are not in the cache, nor can they be fetched here: %v", version, err) // the error says how to get them
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHeaderPairs pairs each pinned version's cuda.h with each one's
// cudaTypedefs.h: the three real pairs pass, the six mixed ones are refused
// naming both files and both versions, before anything is parsed.
func TestHeaderPairs(t *testing.T) {
	versions := []struct {
		v           string
		cudaVersion int
		newestABI   int // the newest PFN_ version of its cudaTypedefs.h
	}{{"11.8", 11080, 11070}, {"12.4", 12040, 12040}, {"13.0", 13000, 13000}}
	for _, c := range versions {
		for _, d := range versions {
			t.Run("cuda.h "+c.v+", cudaTypedefs.h "+d.v, func(t *testing.T) {
				cudaH := readFile(t, cachedPair(t, c.v), "cuda.h")
				typedefs := readFile(t, cachedPair(t, d.v), "cudaTypedefs.h")
				dir := writePair(t, string(cudaH), string(typedefs))
				err := checkHeaders(miniConfig(), dir)
				if c.v == d.v {
					if err != nil {
						t.Fatalf("the real pair is refused: %v", err)
					}
					return
				}
				checkMessage(t, err)
				t.Log(err)
				want := []string{
					filepath.Join(dir, "cudaTypedefs.h") + " is from",
					fmt.Sprintf("but %s is CUDA %s (CUDA_VERSION %d): use the two headers of one toolkit", filepath.Join(dir, "cuda.h"), c.v, c.cudaVersion),
				}
				if headers.Less(c.v, d.v) {
					want = append(want, "from a later toolkit than cuda.h: it declares PFN_", fmt.Sprintf("ABI version %d (CUDA %s)", d.newestABI, headers.VersionFromCUDA(d.newestABI)))
				} else {
					want = append(want, fmt.Sprintf("from an earlier toolkit than cuda.h: its newest ABI version is %d (CUDA %s), and it has no typedef for ", d.newestABI, headers.VersionFromCUDA(d.newestABI)))
				}
				for _, w := range want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
			})
		}
	}
	// A real pair whose CUDA_VERSION says a later toolkit passes (the pin
	// tests make synthetic toolkits so); one whose CUDA_VERSION is older
	// than an ABI version its cudaTypedefs.h declares does not.
	for _, c := range []struct {
		from        string
		cudaVersion int
		want        string
	}{{"12.4", 13010, ""}, {"12.4", 12060, ""}, {"11.8", 11070, ""}, {"11.8", 11040, "ABI version 11070 (CUDA 11.7), but "}} {
		src := cachedPair(t, c.from)
		cudaH := readFile(t, src, "cuda.h")
		typedefs := readFile(t, src, "cudaTypedefs.h")
		cudaH = regexp.MustCompile(`(?m)^#define CUDA_VERSION [0-9]+`).ReplaceAll(cudaH, []byte(fmt.Sprintf("#define CUDA_VERSION %d", c.cudaVersion)))
		err := checkHeaders(miniConfig(), writePair(t, string(cudaH), string(typedefs)))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s's pair as CUDA_VERSION %d: %v", c.from, c.cudaVersion, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s's pair as CUDA_VERSION %d: %v, want an error naming %s", c.from, c.cudaVersion, err, c.want)
		}
	}
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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
	if err := os.WriteFile(filepath.Join(dir, "cuda.h"), []byte(cuda), 0o644); err != nil {
		t.Fatal(err)
	}
	if typedefs != "-" {
		if err := os.WriteFile(filepath.Join(dir, "cudaTypedefs.h"), []byte(typedefs), 0o644); err != nil {
			t.Fatal(err)
		}
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
		{"constant the parser cannot evaluate", strings.Replace(miniCuda, "= 600", "= 1 / 0", 1), miniTypedefs, []string{"cuda.h:6:28", "1 / 0"}, []string{"check.go"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writePair(t, c.cuda, c.typedefs)
			start := time.Now()
			_, err := ParseHeaders(miniConfig(), dir)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
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
			if strings.Contains(c.name, "too old") && !errors.Is(err, ErrTooOld) {
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
	if _, err := ParseHeaders(miniConfig(), writePair(t, h, miniTypedefs)); err != nil {
		t.Fatal(err)
	}
}

// A macro that expands without end is stopped by the expansion limit.
func TestHeaderExpansionBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("#define M0 x\n")
	for i := 1; i < 40; i++ {
		b.WriteString("#define M" + strconv.Itoa(i) + " M" + strconv.Itoa(i-1) + " M" + strconv.Itoa(i-1) + "\n")
	}
	b.WriteString("int bomb[] = { M39 };\n")
	start := time.Now()
	_, err := ParseHeaders(miniConfig(), writePair(t, b.String()+miniCuda, miniTypedefs))
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
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
	_, err := (&Emitter{}).gofmt(f)
	checkMessage(t, err)
	dir := writePair(t, miniCuda, miniTypedefs)
	m, perr := ParseHeaders(miniConfig(), dir)
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
// a file ending in a backslash, which readHeader now refuses first) is an
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

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/cudagen/cudagen/headers"
)

// miniNvrtc is a small nvrtc.h: the result enum, a handle, a function of
// each shape the NVRTC config names (strings, a sized output, an out
// parameter).
const miniNvrtc = `#ifndef __NVRTC_H__
#define __NVRTC_H__
#include <stddef.h>
typedef enum {
  NVRTC_SUCCESS = 0,
  NVRTC_ERROR_OUT_OF_MEMORY = 1,
  NVRTC_ERROR_COMPILATION = 6
} nvrtcResult;
/** \brief the result's text. */
const char *nvrtcGetErrorString(nvrtcResult result);
/**
 * \brief the version.
 * \param [out] major the major version.
 * \param [out] minor the minor version.
 */
nvrtcResult nvrtcVersion(int *major, int *minor);
typedef struct _nvrtcProgram *nvrtcProgram;
/**
 * \brief creates a program.
 * \param [out] prog the program.
 * \param [in] src the source.
 * \param [in] name its name.
 * \param [in] numHeaders the headers.
 * \param [in] headers their sources.
 * \param [in] includeNames their names.
 */
nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name, int numHeaders, const char * const *headers, const char * const *includeNames);
/**
 * \brief the PTX's size.
 * \param [in] prog the program.
 * \param [out] ptxSizeRet the size.
 */
nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *ptxSizeRet);
/**
 * \brief the PTX.
 * \param [in] prog the program.
 * \param [out] ptx the PTX.
 */
nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx);
/**
 * \brief destroys a program.
 * \param [in] prog the program.
 */
nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog);
#endif
`

// FuzzLibraryHeader feeds the library path of the generator (read, model,
// render) arbitrary nvrtc.h text with the repository's NVRTC config: it
// must return a model or an error that says where it comes from, never
// panic, hang, or quote the parser's own source locations.
func FuzzLibraryHeader(f *testing.F) {
	f.Add([]byte(miniNvrtc))
	lines := strings.Split(miniNvrtc, "\n")
	for _, n := range []int{3, 9, 20, 33} {
		f.Add([]byte(strings.Join(lines[:n], "\n")))
	}
	f.Add([]byte(strings.Replace(miniNvrtc, "size_t *ptxSizeRet", "void *ptxSizeRet", 1)))
	r := root(f)
	cfg, err := loadConfig(filepath.Join(r, "gen", "bindings.json"))
	if err != nil {
		f.Fatal(err)
	}
	libs, err := libraryConfigs(filepath.Join(r, "gen", "bindings.json"), cfg)
	if err != nil {
		f.Fatal(err)
	}
	var lc *config
	for _, l := range libs {
		if l.Package == "nvrtc" {
			lc = l
		}
	}
	tmpl := filepath.Join(r, "templates")
	parseTimeout = fuzzDeadline / 2 // an input cc's parser loops on: an error, in time
	e := &headers.Entry{Version: "12.4", Tag: "cuda12.4", CUDAVersion: 12040, Files: map[string]string{"nvrtc.h": "0"}}
	f.Fuzz(func(t *testing.T, h []byte) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "nvrtc.h"), h)
		done := make(chan error, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					done <- fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				}
			}()
			m, err := libraryModel(lc, e, dir)
			if err == nil {
				em := &renderer{Cfg: lc, Command: genCommand, Templates: tmpl, Versions: []headers.Entry{*e}}
				if _, err = em.libPure(m); err == nil {
					_, err = em.cgo(m)
				}
			}
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(fuzzDeadline):
			t.Fatalf("input of %d bytes took over %v", len(h), fuzzDeadline)
		}
		if err == nil {
			return
		}
		if string(h) == miniNvrtc {
			t.Fatalf("the seed header: %v", err) // the fuzzer starts from a header that binds
		}
		s := err.Error()
		switch {
		case strings.HasPrefix(s, "panic: "):
			t.Fatal(s)
		case len(s) > 3000:
			t.Fatalf("error of %d bytes: %.500s", len(s), s)
		case reLibraryLocation.MatchString(s):
			t.Fatalf("error names a location in the parser library: %s", s)
		case !strings.HasPrefix(s, "gen: "):
			t.Fatalf("error does not say where it comes from: %s", s)
		}
	})
}

// parserLoop is an nvrtc.h, found by FuzzLibraryHeader, on which cc's
// parser loops without end (in typeQualifierList).
const parserLoop = "#ifndef _\n#\n#include<stddef.h>\ntypedef enum {\n  TC_SUCCESS = 0,\n  VRTC_ERROR_OUT_OF_MEMORY = 1,\n  NVRTC_ERROR_COMPILATION = 6\n} nvrtcResult;\n/** \\brief the result's text. */\nconst char *nvrtcGetErrorString(nvrtcResult result);\n/**\n * \\brief the version.\n * \\param [out] major the major version.\n * \\param [out] minor the minor version.\n */\nnvrtcResult nvrtcVersion(int *major, int *minor);\ntypedef struct _nvrtcProgram *nvrtcProgram;\n/**\n * \\brief creates a program.\n * \\param [out] prog the program.\n * \\param [in] src the source.\n * \\param [in] name its name.\n * \\param [in] numHeaders the headers.\n * \\param [in] headers their sources.\n * \\param [in] includeNames their names.\n */\nnvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name, int numHeaders, const char * const *headers, const char * const *includeNames);\n*\n * \\brief the PTX's size.\n * \\param [in] prog the program.\n *(\\param [out] ptxSizeRet the size.\n */\nnvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *ptxSizeRet);\n/**\n * \\brief the PTX.\n * \\param [in] prog the program.\n * \\param [out] ptx the PTX.\n */\nnvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx);\n#endif"

// TestParseTimeout: a header cc's parser loops on returns an error saying
// so once parseTimeout has passed, in a child process (the loop goes on
// in its goroutine until the process ends). The child ends with os.Exit,
// which runs no cleanup: it writes into the parent's temporary directory,
// which the parent removes.
func TestParseTimeout(t *testing.T) {
	if dir := os.Getenv("CUDAGEN_TEST_PARSE_CHILD"); dir != "" {
		writeFile(t, filepath.Join(dir, "nvrtc.h"), []byte(parserLoop))
		cfg, err := loadConfig(filepath.Join(root(t), "gen", "bindings.json"))
		if err != nil {
			t.Fatal(err)
		}
		libs, err := libraryConfigs(filepath.Join(root(t), "gen", "bindings.json"), cfg)
		if err != nil {
			t.Fatal(err)
		}
		parseTimeout = time.Second
		for _, l := range libs {
			if l.Package != "nvrtc" {
				continue
			}
			_, err := libraryModel(l, &headers.Entry{Version: "12.4", Tag: "cuda12.4", Files: map[string]string{"nvrtc.h": "0"}}, dir)
			if err == nil || !strings.Contains(err.Error(), "parsing did not end within 1s") || !strings.HasPrefix(err.Error(), "gen: parse ") {
				t.Fatalf("a header the parser loops on: %v", err)
			}
			t.Log(err)
			os.Exit(0) // the parser's goroutine still spins
		}
		t.Fatal("no nvrtc library config")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // without the limit, the child would never end
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestParseTimeout$", "-test.v")
	cmd.Env = append(os.Environ(), "CUDAGEN_TEST_PARSE_CHILD="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "parsing did not end") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

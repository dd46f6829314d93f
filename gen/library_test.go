package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/headers"
)

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
				tags := "cudagen_layout," + e.Tag
				cmd := exec.Command("go", "test", "-count=1", "-v", "-tags", tags, "./"+filepath.ToSlash(filepath.Join(lc.Output, layoutDir)))
				cmd.Dir = root(t)
				cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-I"+hdr+" -I"+stubs)
				out, err := cmd.CombinedOutput()
				if err != nil || !strings.Contains(string(out), "--- PASS: TestLayout") || !strings.Contains(string(out), ", 0 differ") {
					t.Fatalf("layout check of %s %s: %v\n%s", lc.Package, e.Name(), err, out)
				}
				checked++
			})
		}
	}
	if checked == 0 {
		t.Skip("no library layout checked: no header in the cache")
	}
}

// TestPinAddsLibraryHeader: pinning a toolkit pinned already, from a
// directory that now also has a library's header, adds the header to the
// pin (no -repin: the toolkit's own headers are the same) and generates
// the library's bindings for it.
func TestPinAddsLibraryHeader(t *testing.T) {
	f := newPinFixture(t)
	first := f.toolkit("12.4", 12060)
	if log, err := f.gen("-cuda", first); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	again := f.toolkit("12.4", 12060)
	nvrtcH, err := os.ReadFile(filepath.Join(f.src["12.4"], "nvrtc.h"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(again, "include", "nvrtc.h"), nvrtcH, 0o644); err != nil {
		t.Fatal(err)
	}
	if log, err := f.gen("-cuda", again); err != nil {
		t.Fatalf("pinning the same toolkit with its nvrtc.h: %v\n%s", err, log)
	}
	man, err := headers.Load(filepath.Join(f.tree, "headers", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	e := man.Find("12.6")
	if e == nil || !e.Has("nvrtc.h") || e.Source.Path != first {
		t.Fatalf("the 12.6 pin after adding nvrtc.h: %+v; want nvrtc.h pinned, its source still %s", e, first)
	}
	if _, err := os.Stat(filepath.Join(f.tree, "cuda", "nvrtc", "znvrtc_cuda12_6.go")); err != nil {
		t.Errorf("no NVRTC bindings for the pin: %v", err)
	}
}

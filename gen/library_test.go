package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

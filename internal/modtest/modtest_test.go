package modtest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Build compiles files placed in the module without writing into it, and
// its output names a file by its path in the module; Sources reads the
// package's files that are not tests.
func TestBuildAndSources(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"internal/modtest/x/good/a.go": "package good\n\nconst A = 1\n",
		"internal/modtest/x/bad/b.go":  "package bad\n\nvar B int = \"no\"\n",
	}
	out, err := Build(t, root, files, "")
	if err == nil || !strings.Contains(out, "internal/modtest/x/bad/b.go:3:") || strings.Contains(out, "good") {
		t.Fatalf("go build of a good and a bad package: %v, said\n%s\nwant an error naming internal/modtest/x/bad/b.go:3 alone", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "modtest", "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the build wrote into the checkout: %v", err)
	}
	src := Sources(t, ".")
	if _, ok := src["modtest.go"]; !ok || len(src) != 1 {
		t.Errorf("Sources(.) read %d files, want modtest.go alone", len(src))
	}
}

// inModule names a file in the go command's output by its path in the
// module, whether the command named it absolutely or relative to the root.
func TestInModule(t *testing.T) {
	for _, c := range []struct{ root, dir, out string }{
		{"/work/m", "/tmp/T1/001", "/tmp/T1/001/internal/x/a.go:3:1: no"},
		{"/tmp/m", "/tmp/T1/001", "../T1/001/internal/x/a.go:3:1: no"},
	} {
		if got := inModule(c.out, c.root, c.dir); got != "internal/x/a.go:3:1: no" {
			t.Errorf("inModule(%q, %q, %q) = %q, want internal/x/a.go:3:1: no", c.out, c.root, c.dir, got)
		}
	}
}

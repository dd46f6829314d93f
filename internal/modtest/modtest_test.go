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

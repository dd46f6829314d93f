// Package modtest serves the tests that work on this module's own Go: it
// runs the go command for those that build Go code against the module (the
// documentation's snippets in cuda, the programs cuda/driver must refuse
// to compile, the generator's layout checks and pins) and reads a
// package's sources for those that audit them (the function length of
// gen/ and headers/, the driver functions cuda calls).
package modtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Path is the go command's path. It skips the test where the machine has
// none: a machine that runs only test binaries (the GPU machine) has none.
func Path(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		tb.Skipf("skipping: needs the go command, which this machine lacks (%v); a machine that runs only test binaries has none", err)
	}
	return p
}

// Run runs the go command with args in dir, env added to the process's
// environment, and returns its combined output and its error.
func Run(tb testing.TB, dir string, env []string, args ...string) ([]byte, error) {
	tb.Helper()
	cmd := exec.Command(Path(tb), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}

// Build compiles files, each a Go file's path in the module whose root is
// root (slash-separated) mapped to its text, as the packages of their
// directories, with go build under tags, env added to the environment.
// The files are placed in the module through the go command's -overlay:
// nothing is written into the checkout. It returns go build's output, in
// which the files are named by their paths in the module, and its error.
func Build(tb testing.TB, root string, files map[string]string, tags string, env ...string) (string, error) {
	tb.Helper()
	dir := tb.TempDir()
	replace := map[string]string{}
	var pkgs []string
	for name, text := range files {
		src := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
		replace[filepath.Join(root, filepath.FromSlash(name))] = src
		pkgs = append(pkgs, "./"+path.Dir(name))
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		tb.Fatal(err)
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		tb.Fatal(err)
	}
	slices.Sort(pkgs)
	// With several packages, go build compiles each (main ones too) and
	// writes nothing. (With -o DIR it would skip the non-main ones.)
	args := append([]string{"build", "-tags", tags, "-overlay", ov}, slices.Compact(pkgs)...)
	out, err := Run(tb, root, env, args...)
	return inModule(string(out), root, dir), err
}

// inModule names the files of dir in out, the output of the go command run
// in root, by their paths in the module: the go command names a file by
// its absolute path, or by its path relative to root where that is shorter
// (a dir beside the checkout).
func inModule(out, root, dir string) string {
	sep := string(filepath.Separator)
	if rel, err := filepath.Rel(root, dir); err == nil {
		out = strings.ReplaceAll(out, rel+sep, "")
	}
	return strings.ReplaceAll(out, dir+sep, "")
}

// Sources reads the Go files of the directory dir that are not tests,
// each by its path (dir joined with its name). It fails the test where
// dir has none or one cannot be read.
func Sources(tb testing.TB, dir string) map[string][]byte {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		tb.Fatal(err)
	}
	src := map[string][]byte{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		src[name] = b
	}
	if len(src) == 0 {
		tb.Fatalf("no Go source files in %s", dir)
	}
	return src
}

package dynlib

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A build for a 32-bit GOARCH stops at the generated layer and at this
// package (word32.go) with the reason as its error; a 64-bit one without
// cgo builds.
func TestBuildsFor64BitOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short: it runs go build for other platforms")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("skipping: no go command to build with: %v", err)
	}
	build := func(arch string, pkgs ...string) (string, error) {
		cmd := exec.Command(goTool, append([]string{"build", "-o", os.DevNull}, pkgs...)...)
		cmd.Dir = filepath.Join("..", "..", "..")
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, arch := range []string{"386", "arm"} {
		for _, pkg := range []string{"./cuda/driver", "./cuda/internal/dynlib", "./cuda"} {
			out, err := build(arch, pkg)
			if err == nil || !strings.Contains(out, "cudagen_needs_a_64_bit_GOARCH_as_CUDA_has_no_32_bit_hosts") {
				t.Errorf("GOARCH=%s go build %s: %v, without the 64-bit reason:\n%s", arch, pkg, err, out)
			}
		}
	}
	if out, err := build("arm64", "./cuda/..."); err != nil {
		t.Errorf("GOARCH=arm64 go build ./cuda/...: %v\n%s", err, out)
	}
}

package cuda_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestExamplesWithoutDriver runs every example in a child process whose
// loader is pointed at a library that does not exist: each GPU example must
// print the no-driver error and return (it then fails its output check,
// which is expected), none may panic, and the examples that need no GPU pass.
func TestExamplesWithoutDriver(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^Example", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "CUDAGEN_LIBCUDA=/nonexistent/cudagen/libcuda.so.1")
	out, _ := cmd.CombinedOutput()
	s := string(out)
	if strings.Contains(s, "panic") || strings.Contains(s, "nil pointer") {
		t.Fatalf("an example panicked without a driver:\n%s", s)
	}
	ran := regexp.MustCompile(`(?m)^=== RUN   (Example\w*)$`).FindAllStringSubmatch(s, -1)
	if len(ran) < 10 {
		t.Fatalf("only %d examples ran:\n%s", len(ran), s)
	}
	for _, m := range ran {
		name := m[1]
		if strings.HasPrefix(name, "ExampleIPCEventHandle_") {
			if !strings.Contains(s, "--- PASS: "+name+" ") {
				t.Errorf("%s needs no GPU but did not pass:\n%s", name, s)
			}
			continue
		}
		// The first line an example printed is its first error.
		got := regexp.MustCompile(`--- FAIL: ` + name + ` \([^)]*\)\ngot:\n(.*)\n`).FindStringSubmatch(s)
		// Built without cgo, the error says to rebuild with it instead.
		if got == nil || !strings.HasPrefix(got[1], "cuda: ") || !strings.Contains(got[1], "install the NVIDIA driver") && !strings.Contains(got[1], "rebuild with CGO_ENABLED=1") {
			t.Errorf("%s did not print the no-driver error first:\n%s", name, s)
		}
	}
}

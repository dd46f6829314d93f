package headers

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ModulePath is the module whose tree the generator and the tools work in.
const ModulePath = "github.com/cudagen/cudagen"

// ModuleRoot returns the root of the cudagen module that holds dir: the
// nearest directory at or above dir with a go.mod, which must declare
// ModulePath. It is the one module-root lookup of the generator and the
// tools.
func ModuleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			if mp := modulePath(b); mp != ModulePath {
				return "", fmt.Errorf("%s is the module %s, not %s: run inside a copy of cudagen (README: Generating for your own toolkit), or pass its root",
					filepath.Join(d, "go.mod"), mp, ModulePath)
			}
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", fmt.Errorf("no go.mod at or above %s: run inside the cudagen module, or pass its root", dir)
		}
		d = p
	}
}

// modulePath reads the module directive of a go.mod.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "module" {
			if s, err := strconv.Unquote(f[1]); err == nil {
				return s
			}
			return f[1]
		}
	}
	return ""
}

package headers

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestManifest(t *testing.T) {
	m, err := Load("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"11.8": 11080, "12.4": 12040, "13.0": 13000}
	for v, cv := range want {
		e := m.Find(v)
		if e == nil || e.CUDAVersion != cv || e.Tag != "cuda"+v {
			t.Errorf("%s: %+v", v, e)
		}
	}
	if m.Newest().Version != "13.0" {
		t.Errorf("newest: %s", m.Newest().Version)
	}
	for _, v := range []string{"11.8", "12.4"} {
		if s := m.Find(v).Source; s.Kind != "debian" || s.PackageVersion == "" || len(s.PackageSha256) != 64 {
			t.Errorf("%s source: %+v", v, s)
		}
	}
	if !Less("9.2", "11.8") || Less("12.10", "12.4") || VersionFromCUDA(12080) != "12.8" {
		t.Error("version order")
	}
}

// CheckCUDAVersion accepts every CUDA_VERSION toolkits have shipped and
// refuses what no toolkit's can be.
func TestCheckCUDAVersion(t *testing.T) {
	for _, n := range []int{11030, 11040, 11080, 12000, 12040, 12060, 12080, 12090, 13000, 13010, 99090} {
		if err := CheckCUDAVersion(n); err != nil {
			t.Errorf("%d: %v", n, err)
		}
	}
	for n, want := range map[int]string{
		99999:  "ends in 0",
		12045:  "ends in 0",
		11100:  "CUDA 11.10",
		99990:  "CUDA 99.99",
		100000: "major version 100",
		0:      "major version 0",
	} {
		err := CheckCUDAVersion(n)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "is no toolkit's") {
			t.Errorf("%d: %v, want an error saying %q", n, err, want)
		}
	}
}

func TestManifestInvalid(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"bad tag":                        `{"versions":[{"version":"12.4","tag":"x","source":{"kind":"toolkit"},"files":{"cuda.h":"` + strings.Repeat("a", 64) + `","cudaTypedefs.h":"` + strings.Repeat("a", 64) + `"}}]}`,
		"no sum":                         `{"versions":[{"version":"12.4","tag":"cuda12.4","source":{"kind":"toolkit"},"files":{}}]}`,
		"bad version":                    `{"versions":[{"version":"twelve","tag":"cudatwelve","source":{"kind":"toolkit"}}]}`,
		"unknown key":                    `{"versions":[], "extra": 1}`,
		"minor 10":                       `{"versions":[{"version":"11.10","tag":"cuda11.10","source":{"kind":"toolkit"},"files":{"cuda.h":"` + strings.Repeat("a", 64) + `","cudaTypedefs.h":"` + strings.Repeat("a", 64) + `"}}]}`,
		"cudaVersion 99999":              `{"versions":[{"version":"99.99","cudaVersion":99999,"tag":"cuda99.99","source":{"kind":"toolkit"},"files":{"cuda.h":"` + strings.Repeat("a", 64) + `","cudaTypedefs.h":"` + strings.Repeat("a", 64) + `"}}]}`,
		"cudaVersion of another version": `{"versions":[{"version":"12.4","cudaVersion":12060,"tag":"cuda12.4","source":{"kind":"toolkit"},"files":{"cuda.h":"` + strings.Repeat("a", 64) + `","cudaTypedefs.h":"` + strings.Repeat("a", 64) + `"}}]}`,
	} {
		p := filepath.Join(dir, "m.json")
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := Load(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A header that does not match its pin is an error that prints both sums.
func TestVerifyMismatch(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cuda.h"), []byte("not the header"), 0o644)
	os.WriteFile(filepath.Join(dir, "cudaTypedefs.h"), []byte("x"), 0o644)
	want := strings.Repeat("0", 64)
	e := &Entry{Version: "12.4", Files: map[string]string{"cuda.h": want, "cudaTypedefs.h": want}}
	err := e.Verify(dir)
	got, _ := SumFile(filepath.Join(dir, "cuda.h"))
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), got) {
		t.Fatalf("got %v", err)
	}
}

func TestToolkitUnavailable(t *testing.T) {
	t.Setenv("CUDAGEN_CACHE", t.TempDir())
	e := &Entry{Version: "13.0", Tag: "cuda13.0", Source: Source{Kind: "toolkit", Path: "/nonexistent/cuda"},
		Files: map[string]string{"cuda.h": strings.Repeat("0", 64), "cudaTypedefs.h": strings.Repeat("0", 64)}}
	cache, _ := CacheDir()
	_, err := Ensure(e, cache, nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent/cuda") {
		t.Fatalf("got %v", err)
	}
}

func TestMirrorIn(t *testing.T) {
	dir := t.TempDir()
	deb822 := filepath.Join(dir, "debian.sources")
	os.WriteFile(deb822, []byte(`Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`), 0o644)
	if u, k := mirrorIn(deb822); u != "http://mirror.example/debian" || k != "/usr/share/keyrings/debian-archive-keyring.gpg" {
		t.Errorf("deb822: %q %q", u, k)
	}
	list := filepath.Join(dir, "sources.list")
	os.WriteFile(list, []byte("# comment\ndeb [arch=amd64] http://mirror.example/debian bookworm main\n"), 0o644)
	if u, _ := mirrorIn(list); u != "http://mirror.example/debian" {
		t.Errorf("list: %q", u)
	}
	other := filepath.Join(dir, "other.list")
	os.WriteFile(other, []byte("deb https://packages.example/apt cloud-sdk main\n"), 0o644)
	if u, _ := mirrorIn(other); u != "" {
		t.Errorf("non-Debian source taken: %q", u)
	}
	t.Setenv("CUDAGEN_DEBIAN_MIRROR", "http://override.example/debian")
	if u, _, err := DebianMirror(); err != nil || u != "http://override.example/debian" {
		t.Errorf("override: %q %v", u, err)
	}
}

func TestModuleRoot(t *testing.T) {
	r, err := ModuleRoot(".")
	if err != nil || filepath.Base(filepath.Join(r, "headers")) != "headers" {
		t.Fatalf("%q %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(r, "headers", "manifest.json")); err != nil {
		t.Fatal(err)
	}
	// Outside any module: an error, at once.
	if _, err := ModuleRoot(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no go.mod") {
		t.Errorf("outside a module: %v", err)
	}
	// Inside another module: an error naming it.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/app\n\ngo 1.25\n"), 0o644)
	os.MkdirAll(filepath.Join(other, "sub"), 0o755)
	if _, err := ModuleRoot(filepath.Join(other, "sub")); err == nil || !strings.Contains(err.Error(), "example.com/app") {
		t.Errorf("inside another module: %v", err)
	}
}

// A toolkit pin whose directory now holds other headers is unavailable, and
// the cache is left alone.
func TestToolkitChanged(t *testing.T) {
	tk := t.TempDir()
	os.MkdirAll(filepath.Join(tk, "include"), 0o755)
	os.WriteFile(filepath.Join(tk, "include", "cuda.h"), []byte("#define CUDA_VERSION 12060\n"), 0o644)
	os.WriteFile(filepath.Join(tk, "include", "cudaTypedefs.h"), []byte("#include <cuda.h>\n"), 0o644)
	e := &Entry{Version: "13.0", CUDAVersion: 13000, Tag: "cuda13.0", Source: Source{Kind: "toolkit", Path: tk},
		Files: map[string]string{"cuda.h": strings.Repeat("a", 64), "cudaTypedefs.h": strings.Repeat("b", 64)}}
	cache := t.TempDir()
	_, err := Ensure(e, cache, nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "another cuda.h") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(e.Dir(cache)); !os.IsNotExist(err) {
		t.Errorf("the cache was written: %v", err)
	}
}

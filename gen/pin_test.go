package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"go/build/constraint"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/headers"
	"github.com/cudagen/cudagen/internal/modtest"
)

// copyTree copies what the generator and a build of the cuda packages need
// into a temporary module: go.mod, go.sum, the configs, the templates, the
// manifest, the headers package and cuda/ (with its tests, for go vet).
func copyTree(t *testing.T, dst string) {
	t.Helper()
	src := root(t)
	copyOne := func(rel string) {
		b := readFile(t, src, rel)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, rel), b)
	}
	for _, f := range []string{"go.mod", "go.sum", "headers/manifest.json"} {
		copyOne(f)
	}
	// gen/*.json: the driver's config and the libraries' it lists.
	cs, _ := filepath.Glob(filepath.Join(src, "gen", "*.json"))
	for _, f := range cs {
		rel, _ := filepath.Rel(src, f)
		copyOne(rel)
	}
	// headers/: the cuda package's tests import it (the tag list).
	hs, _ := filepath.Glob(filepath.Join(src, "headers", "*.go"))
	for _, f := range hs {
		rel, _ := filepath.Rel(src, f)
		copyOne(rel)
	}
	for _, dir := range []string{"templates", "cuda", "cuda_test", "internal"} {
		err := filepath.WalkDir(filepath.Join(src, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			copyOne(rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// pinFixture is a temporary copy of the module with a header cache of its
// own, seeded from the real one with 11.8 and 12.4 only: the newest real
// pin's headers (13.0) cannot be had, as on every machine but the GPU one.
type pinFixture struct {
	t     *testing.T
	tree  string
	cache string
	src   map[string]string // real pinned version → its verified headers
}

func newPinFixture(t *testing.T) *pinFixture {
	t.Helper()
	_, man, realCache := loadAll(t)
	f := &pinFixture{t: t, tree: filepath.Join(t.TempDir(), "cudagen"), cache: filepath.Join(t.TempDir(), "cache"), src: map[string]string{}}
	for _, v := range []string{"11.8", "12.4"} {
		e := man.Find(v)
		if e == nil {
			t.Fatalf("CUDA %s is not pinned", v)
		}
		f.src[v] = headerDir(t, e, realCache)
		if err := headers.CopyHeaders(f.src[v], filepath.Join(f.cache, v), e.AllFiles()...); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CUDAGEN_CACHE", f.cache)
	copyTree(t, f.tree)
	// 13.0 comes from a toolkit directory that is not on this machine.
	m, err := headers.Load(filepath.Join(f.tree, "headers", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	e := m.Find("13.0")
	if e == nil || e.Source.Kind != "toolkit" {
		t.Fatalf("the manifest's 13.0: %+v", e)
	}
	e.Source.Path = filepath.Join(t.TempDir(), "no-such-toolkit")
	if err := m.Save(filepath.Join(f.tree, "headers", "manifest.json")); err != nil {
		t.Fatal(err)
	}
	return f
}

// toolkit writes a synthetic toolkit: a real pin's headers with their
// CUDA_VERSION changed.
func (f *pinFixture) toolkit(from string, cudaVersion int) string {
	f.t.Helper()
	dir := filepath.Join(f.t.TempDir(), fmt.Sprintf("cuda-%d", cudaVersion))
	b := readFile(f.t, f.src[from], "cuda.h")
	re := regexp.MustCompile(`(?m)^#define CUDA_VERSION [0-9]+`)
	if !re.Match(b) {
		f.t.Fatal("no CUDA_VERSION in the cached header")
	}
	b = re.ReplaceAll(b, []byte(fmt.Sprintf("#define CUDA_VERSION %d", cudaVersion)))
	os.MkdirAll(filepath.Join(dir, "include"), 0o755)
	writeFile(f.t, filepath.Join(dir, "include", "cuda.h"), b)
	td := readFile(f.t, f.src[from], "cudaTypedefs.h")
	writeFile(f.t, filepath.Join(dir, "include", "cudaTypedefs.h"), td)
	return dir
}

// gen runs the generator in the fixture's tree and returns its log.
func (f *pinFixture) gen(args ...string) (string, error) {
	var log bytes.Buffer
	err := run(append([]string{"-root", f.tree}, args...), &log, &log)
	return log.String(), err
}

// snapshot hashes every file of the tree and the cache, by path.
func snapshot(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	s := map[string]string{}
	for _, d := range dirs {
		filepath.WalkDir(d, func(path string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if de.IsDir() {
				s[path+"/"] = "dir"
				return nil
			}
			b, _ := os.ReadFile(path)
			s[path] = fmt.Sprintf("%x", sha256.Sum256(b))
			return nil
		})
	}
	return s
}

func sameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	var diffs []string
	for p, h := range before {
		if after[p] != h {
			diffs = append(diffs, "changed or removed: "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, "added: "+p)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("the run changed the tree or the cache:\n%s", strings.Join(diffs, "\n"))
	}
}

var reBuildLine = regexp.MustCompile(`(?m)^//go:build [^\n]*\n`)

func withoutConstraint(b []byte) []byte { return reBuildLine.ReplaceAll(b, nil) }

// goRun runs the go command in dir with cgo on and no network, env added
// (a later setting wins), and returns its output and its error.
func goRun(t *testing.T, dir string, env []string, args ...string) ([]byte, error) {
	t.Helper()
	return modtest.Run(t, dir, append([]string{"CGO_ENABLED=1", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off"}, env...), args...)
}

// goFails runs the go command, which must fail, and returns its output.
func goFails(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := goRun(t, dir, nil, args...)
	if err == nil {
		t.Errorf("go %s in %s: no error\n%s", strings.Join(args, " "), dir, out)
	}
	return string(out)
}

func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := goRun(t, dir, nil, args...)
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// TestPinMultiVersion pins a synthetic newest, in-between and oldest
// toolkit into a copy of the real manifest, on a machine without the newest
// real pin's headers. Every other version's bindings stay as they were but
// for their build constraint; each tag (and none, and two at once) selects
// exactly one version; the module, its tests included (cuda_test's too),
// builds and vets under every tag: a hand-written file that depends on a
// function or a signature gets its constraint from the generator.
func TestPinMultiVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: builds the cuda packages under every tag")
	}
	f := newPinFixture(t)
	driverDir := filepath.Join(f.tree, "cuda", "driver")
	before := map[string][]byte{}
	for _, v := range []string{"11.8", "12.4", "13.0"} {
		for _, name := range []string{fileName(v), testFileName(v)} {
			before[name] = readFile(t, driverDir, name)
		}
	}
	for _, p := range []struct {
		from string
		cuda int
	}{{"12.4", 13010}, {"12.4", 12060}, {"11.8", 11070}} { // newer than all, in between, older than all (11.8's cudaTypedefs.h declares ABI versions up to 11070)
		log, err := f.gen("-cuda", f.toolkit(p.from, p.cuda))
		t.Logf("-cuda (CUDA_VERSION %d):\n%s", p.cuda, log)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log, "CUDA 13.0: committed bindings kept") {
			t.Errorf("the log does not say 13.0 was kept")
		}
	}
	man, err := headers.Load(filepath.Join(f.tree, "headers", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, e := range man.Versions {
		tags = append(tags, e.Tag)
	}
	if got := strings.Join(tags, " "); got != "cuda11.7 cuda11.8 cuda12.4 cuda12.6 cuda13.0 cuda13.1" {
		t.Fatalf("pinned: %s", got)
	}
	for _, v := range []string{"11.7", "12.6", "13.1"} {
		if _, err := os.Stat(filepath.Join(f.cache, v, "cuda.h")); err != nil {
			t.Errorf("CUDA %s not in the cache: %v", v, err)
		}
	}
	// The other versions' bindings are as committed but for the constraint.
	for name, b := range before {
		after := readFile(t, driverDir, name)
		if !bytes.Equal(withoutConstraint(b), withoutConstraint(after)) {
			t.Errorf("%s changed beyond its build constraint", name)
		}
	}
	// Each tag selects its own version; no tag the newest; of two, the
	// older. A tag outside the range ztags.go covers selects the newest.
	for tag, want := range map[string]string{
		"": "13.1", "cuda11.7": "11.7", "cuda11.8": "11.8", "cuda12.4": "12.4", "cuda12.6": "12.6", "cuda13.0": "13.0", "cuda13.1": "13.1",
		"cuda12.4,cuda13.0": "12.4", "cuda13.1,cuda11.7": "11.7", "cuda12.6,cuda13.1": "12.6", "cuda99.9": "13.1",
	} {
		out := goCmd(t, f.tree, "list", "-tags", tag, "-f", "{{join .CgoFiles \" \"}} {{join .GoFiles \" \"}} {{join .TestGoFiles \" \"}}", "./cuda/driver")
		got := regexp.MustCompile(`zdriver_cuda[0-9_]+(_test)?\.go`).FindAllString(out, -1)
		sort.Strings(got)
		if w := []string{fileName(want), testFileName(want)}; strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("-tags %q selects %v, want %v", tag, got, w)
		}
	}
	goCmd(t, f.tree, "vet", "./...")
	for _, tag := range tags {
		// The packages a tag changes, their tests included.
		goCmd(t, f.tree, "vet", "-tags", tag, "./cuda/...", "./cuda_test/...")
	}
	// A tag that is not pinned (12.5, between two pinned ones; 12.4, had
	// 12.6 and 13.1 not been pinned) fails, naming the pinned tags now.
	const pinnedNow = "undefined: cuda_build_tag_is_not_pinned__pinned_tags_are_cuda11_7_cuda11_8_cuda12_4_cuda12_6_cuda13_0_cuda13_1"
	for _, tag := range []string{"cuda12.5", "cuda11.4", "cuda12.4,cuda13.2"} {
		if out := goFails(t, f.tree, "build", "-tags", tag, "./cuda/driver"); !strings.Contains(out, pinnedNow) {
			t.Errorf("-tags %s: %s", tag, out)
		}
	}
	// A plain run regenerates what it can (11.8, 12.4 from the cache, the
	// synthetic toolkits from their directories), keeps 13.0 saying why,
	// exits 0, and changes nothing: the constraint the rewriter gave each
	// file is the one the generator writes.
	snap := snapshot(t, f.tree)
	log, err := f.gen()
	t.Logf("plain run:\n%s", log)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`CUDA 13\.0: committed bindings kept.*no-such-toolkit`).MatchString(log) {
		t.Errorf("the plain run does not say why 13.0 was kept")
	}
	for _, v := range []string{"11.7", "11.8", "12.4", "12.6", "13.1"} {
		if !strings.Contains(log, "generated CUDA "+v) {
			t.Errorf("the plain run did not generate %s", v)
		}
	}
	sameSnapshot(t, snap, snapshot(t, f.tree))
	if log, err := f.gen("-check"); err != nil {
		t.Errorf("-check: %v\n%s", err, log)
	}
	// -strict refuses what cannot be had.
	if _, err := f.gen("-strict"); err == nil || !errors.Is(err, headers.ErrUnavailable) && !strings.Contains(err.Error(), "13.0") {
		t.Errorf("-strict: %v", err)
	}
	sameSnapshot(t, snap, snapshot(t, f.tree))
	// A version taken out of the manifest loses its files, and its tag
	// fails the build like any other that is not pinned.
	man.Versions = slices.DeleteFunc(man.Versions, func(e headers.Entry) bool { return e.Version == "12.6" })
	if err := man.Save(filepath.Join(f.tree, "headers", "manifest.json")); err != nil {
		t.Fatal(err)
	}
	if log, err := f.gen(); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if _, err := os.Stat(filepath.Join(driverDir, fileName("12.6"))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there: %v", fileName("12.6"), err)
	}
	const pinnedAfter = "undefined: cuda_build_tag_is_not_pinned__pinned_tags_are_cuda11_7_cuda11_8_cuda12_4_cuda13_0_cuda13_1\n"
	if out := goFails(t, f.tree, "build", "-tags", "cuda12.6", "./cuda/driver"); !strings.Contains(out, pinnedAfter) {
		t.Errorf("-tags cuda12.6 after 12.6 was taken out: %s", out)
	}
	goCmd(t, f.tree, "build", "-tags", "cuda12.4", "./...")
	if log, err := f.gen("-check"); err != nil {
		t.Errorf("-check: %v\n%s", err, log)
	}
}

// TestPinAtomic: a -cuda run that fails, before or while writing, leaves the
// manifest, the cache and the tree as they were.
func TestPinAtomic(t *testing.T) {
	f := newPinFixture(t)
	snap := snapshot(t, f.tree, f.cache)
	selfInclude := f.toolkit("12.4", 12060)
	h := readFile(t, selfInclude, "include", "cuda.h")
	writeFile(t, filepath.Join(selfInclude, "include", "cuda.h"), append([]byte("#include \"cuda.h\"\n"), h...))
	old := f.toolkit("11.8", 11020)
	os.Remove(filepath.Join(old, "include", "cudaTypedefs.h"))
	emptyTypedefs := f.toolkit("12.4", 12060)
	writeFile(t, filepath.Join(emptyTypedefs, "include", "cudaTypedefs.h"), nil)
	mixed := f.toolkit("12.4", 12060)
	td := readFile(t, f.src["11.8"], "cudaTypedefs.h")
	writeFile(t, filepath.Join(mixed, "include", "cudaTypedefs.h"), td)
	broken := f.toolkit("12.4", 12060)
	h = readFile(t, broken, "include", "cuda.h")
	writeFile(t, filepath.Join(broken, "include", "cuda.h"), append(h[:len(h)/2], "\nCUresult CUDAAPI cuBroken(CUevent"...))
	for _, c := range []struct {
		name, dir string
		want      []string
	}{
		{"self-including cuda.h", selfInclude, []string{filepath.Join(selfInclude, "include", "cuda.h") + ":1:1", "includes cuda.h"}},
		{"older than 11.3", old, []string{"CUDA 11.2 is older than 11.3, the oldest version cudagen can bind (it needs cuGetProcAddress and cudaTypedefs.h)"}},
		{"empty cudaTypedefs.h", emptyTypedefs, []string{"cudaTypedefs.h is empty"}},
		{"malformed cuda.h", broken, []string{filepath.Join(broken, "include", "cuda.h") + ":"}},
		{"a Debian pin's version", f.toolkit("12.4", 12040), []string{"already pinned from Debian"}},
		{"cudaTypedefs.h of another toolkit", mixed, []string{filepath.Join(mixed, "include", "cudaTypedefs.h") + " is from an earlier toolkit than cuda.h: its newest ABI version is 11070 (CUDA 11.7), and it has no typedef for 58 of the functions cuda.h declares (", "but " + filepath.Join(mixed, "include", "cuda.h") + " is CUDA 12.6 (CUDA_VERSION 12060): use the two headers of one toolkit"}},
		{"CUDA_VERSION 99999", f.toolkit("12.4", 99999), []string{"cuda.h: CUDA_VERSION 99999 is no toolkit's"}},
		{"CUDA_VERSION of a minor 10", f.toolkit("12.4", 12100), []string{"cuda.h: CUDA_VERSION 12100 is no toolkit's: it would be CUDA 12.10"}},
		{"no toolkit", t.TempDir(), []string{"no include/cuda.h"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			log, err := f.gen("-cuda", c.dir)
			if err == nil {
				t.Fatalf("no error; log:\n%s", log)
			}
			checkMessage(t, err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), ".pin-") {
				t.Errorf("the error names the staging directory: %v", err)
			}
			t.Log(err)
			sameSnapshot(t, snap, snapshot(t, f.tree, f.cache))
		})
	}
	// A failure while committing, after the cache and some files were
	// changed, undoes them.
	t.Run("failure while committing", func(t *testing.T) {
		commitFault = func(op, path string) error {
			if filepath.Base(path) == "manifest.json" {
				return errors.New("injected failure")
			}
			return nil
		}
		defer func() { commitFault = nil }()
		_, err := f.gen("-cuda", f.toolkit("12.4", 12060))
		if err == nil || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("got %v", err)
		}
		sameSnapshot(t, snap, snapshot(t, f.tree, f.cache))
	})
	// And the same pin then succeeds.
	if log, err := f.gen("-cuda", f.toolkit("12.4", 12060)); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if _, err := os.Stat(filepath.Join(f.tree, "cuda", "driver", "zdriver_cuda12_6.go")); err != nil {
		t.Fatal(err)
	}
}

// TestRepin: pinning a pinned version again from the same headers changes
// nothing; from other headers it is refused, naming the files whose sums
// differ and -repin, which then replaces the pin.
func TestRepin(t *testing.T) {
	f := newPinFixture(t)
	first := f.toolkit("12.4", 12060)
	if log, err := f.gen("-cuda", first); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	manPath := filepath.Join(f.tree, "headers", "manifest.json")
	pinned, err := headers.Load(manPath)
	if err != nil {
		t.Fatal(err)
	}
	old := *pinned.Find("12.6")
	snap := snapshot(t, f.tree, f.cache)
	// The same headers, from another directory: a no-op that says so.
	log, err := f.gen("-cuda", f.toolkit("12.4", 12060))
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if !strings.Contains(log, "CUDA 12.6 is pinned already from the headers in ") || !strings.Contains(log, "its pin is unchanged") {
		t.Errorf("the log does not say the pin is unchanged:\n%s", log)
	}
	sameSnapshot(t, snap, snapshot(t, f.tree, f.cache))
	// Other headers for the same version.
	other := f.toolkit("12.4", 12060)
	newH := filepath.Join(other, "include", "cuda.h")
	b, _ := os.ReadFile(newH)
	writeFile(t, newH, append(b, "\n/* another build of the toolkit */\n"...))
	newSum, _ := headers.SumFile(newH)
	_, err = f.gen("-cuda", other)
	checkMessage(t, err)
	t.Log(err)
	for _, w := range []string{
		"gen: CUDA 12.6 is already pinned from other headers (" + first + "): cuda.h: pinned sha256 " + old.Files["cuda.h"] + ", " + newH + " has " + newSum + ";",
		"add -repin to replace its pin and bindings with those of " + other,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "cudaTypedefs.h") {
		t.Errorf("the error names cudaTypedefs.h, whose sum is the same: %v", err)
	}
	sameSnapshot(t, snap, snapshot(t, f.tree, f.cache))
	// Both files other: both named.
	both := f.toolkit("12.4", 12060)
	for _, name := range headers.Files {
		p := filepath.Join(both, "include", name)
		b, _ := os.ReadFile(p)
		writeFile(t, p, append(b, "\n/* another build */\n"...))
	}
	if _, err := f.gen("-cuda", both); err == nil || !strings.Contains(err.Error(), "cuda.h: pinned sha256 "+old.Files["cuda.h"]) || !strings.Contains(err.Error(), "; cudaTypedefs.h: pinned sha256 "+old.Files["cudaTypedefs.h"]) {
		t.Errorf("both headers other: %v", err)
	}
	sameSnapshot(t, snap, snapshot(t, f.tree, f.cache))
	if _, err := f.gen("-repin"); err == nil || !strings.Contains(err.Error(), "-repin goes with -cuda DIR") {
		t.Errorf("-repin alone: %v", err)
	}
	// With -repin the new headers replace the pin.
	if log, err := f.gen("-cuda", other, "-repin"); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	after, err := headers.Load(manPath)
	if err != nil {
		t.Fatal(err)
	}
	if e := after.Find("12.6"); e.Files["cuda.h"] != newSum || e.Files["cudaTypedefs.h"] != old.Files["cudaTypedefs.h"] || e.Source.Path != other {
		t.Errorf("after -repin: %+v", e)
	}
	if got, _ := headers.SumFile(filepath.Join(f.cache, "12.6", "cuda.h")); got != newSum {
		t.Errorf("the cache holds cuda.h %s, want %s", got, newSum)
	}
	if log, err := f.gen("-check"); err != nil {
		t.Errorf("-check: %v\n%s", err, log)
	}
}

func TestList(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-list", "tags"}, &out, &out); err != nil || out.String() != "cuda11.8\ncuda12.4\ncuda13.0\n" {
		t.Errorf("-list tags: %q %v", out.String(), err)
	}
	out.Reset()
	if err := run([]string{"-list", "newest"}, &out, &out); err != nil || out.String() != "cuda13.0\n" {
		t.Errorf("-list newest: %q %v", out.String(), err)
	}
	if err := run([]string{"-list", "nonsense"}, &out, &out); err == nil {
		t.Error("-list nonsense: no error")
	}
}

func TestVersionExpr(t *testing.T) {
	vs := []headers.Entry{{Version: "12.4", Tag: "cuda12.4"}, {Version: "11.8", Tag: "cuda11.8"}, {Version: "13.0", Tag: "cuda13.0"}}
	for v, want := range map[string]string{
		"11.8": "cuda11.8",
		"12.4": "cuda12.4 && !cuda11.8",
		"13.0": "!cuda11.8 && !cuda12.4",
	} {
		if got := versionExpr(vs, v); got != want {
			t.Errorf("%s: %q, want %q", v, got, want)
		}
	}
	if got := versionExpr(vs[:1], "12.4"); got != "" {
		t.Errorf("one version: %q", got)
	}
	if got := buildLine(versionExpr(vs, "12.4"), "cgo"); got != "//go:build cuda12.4 && !cuda11.8 && cgo" {
		t.Errorf("with cgo: %q", got)
	}
	if got := buildLine("", "cgo"); got != "//go:build cgo" {
		t.Errorf("one version, with cgo: %q", got)
	}
	// The rewriter keeps the terms that name no version, in both forms, and
	// writes the canonical form gofmt gives the generated files.
	const head = genCommand + "\n// " + doNotEdit + "\n"
	for in, want := range map[string]string{
		head + "//\n//go:build cuda12.4 && !cuda11.8\n\npackage driver\n":            head + "//\n//go:build !cuda11.8 && !cuda12.4\n\npackage driver\n",
		head + "//\n//go:build (!cuda11.8 && !cuda12.4) && cgo\n\npackage driver\n":  head + "//\n//go:build !cuda11.8 && !cuda12.4 && cgo\n\npackage driver\n",
		head + "//\n//go:build !cuda11.8 && !cgo\n\npackage driver\n":                head + "//\n//go:build !cuda11.8 && !cuda12.4 && !cgo\n\npackage driver\n",
		head + "\npackage driver\n":                                                  head + "//\n//go:build !cuda11.8 && !cuda12.4\n\npackage driver\n",
		head + "//\n//go:build cuda12.4 && cgo\n\n// Package doc.\npackage driver\n": head + "//\n//go:build !cuda11.8 && !cuda12.4 && cgo\n\n// Package doc.\npackage driver\n",
	} {
		got, err := rewriteConstraint([]byte(in), vs, "13.0")
		if err != nil || string(got) != want {
			t.Errorf("rewrite of\n%s\ngot\n%s\nwant\n%s\n(%v)", in, got, want, err)
		}
	}
	got, err := rewriteConstraint([]byte(head+"//\n//go:build cuda12.4 && cgo\n\npackage driver\n"), vs[1:2], "11.8")
	if err != nil || string(got) != head+"//\n//go:build cgo\n\npackage driver\n" {
		t.Errorf("to one version: %q %v", got, err)
	}
	got, err = rewriteConstraint([]byte(head+"//\n//go:build cuda12.4 && !cuda11.8\n\npackage driver\n"), vs[1:2], "11.8")
	if err != nil || string(got) != head+"\npackage driver\n" {
		t.Errorf("to one version, no other term: %q %v", got, err)
	}
}

// TestImporterToolkit is the path README.md gives a program that imports
// cudagen and wants a toolkit cudagen does not pin: a copy of the module
// beside the program, a replace directive to it, the one command in the
// copy, then a build with the new tag.
func TestImporterToolkit(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: builds a program under two tags")
	}
	f := newPinFixture(t)
	app := t.TempDir()
	copyTree(t, filepath.Join(app, "third_party", "cudagen"))
	f.tree = filepath.Join(app, "third_party", "cudagen")
	writeFile(t, filepath.Join(app, "go.mod"), []byte("module example.com/app\n\ngo 1.25\n\nrequire github.com/cudagen/cudagen v0.0.0\n"))
	writeFile(t, filepath.Join(app, "main.go"), []byte(`package main

import (
	"errors"
	"fmt"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

func main() {
	fmt.Println(driver.Toolkit, driver.BuildTag, driver.HeaderVersion, errors.Is(cuda.ErrNoDriver, cuda.ErrNoDriver))
}
`))
	goCmd(t, app, "mod", "edit", "-replace", "github.com/cudagen/cudagen=./third_party/cudagen")
	// The generator is for the cudagen module: run in the program's own
	// module, it says so and where to run it.
	if _, err := findRoot(app); err == nil || !strings.Contains(err.Error(), "example.com/app") {
		t.Errorf("in the importer's module: %v", err)
	}
	// The one command, in the copy (as cd third_party/cudagen && go run ./gen -cuda DIR).
	log, err := f.gen("-cuda", f.toolkit("12.4", 12060))
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	goCmd(t, app, "build", "-tags", "cuda12.6", "-o", "app126", ".")
	goCmd(t, app, "build", "-o", "app", ".")
	for bin, want := range map[string]string{"app126": "12.6 cuda12.6 12060 true", "app": "13.0 cuda13.0 13000 true"} {
		out, err := exec.Command(filepath.Join(app, bin)).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("%s: %q %v, want %q", bin, out, err, want)
		}
	}
}

// TestUnpinnedTags: ztags.go is built under every cudaX.Y tag of its range
// that is not pinned, and under no pinned one; its identifier names the
// pinned tags, oldest first.
func TestUnpinnedTags(t *testing.T) {
	vs := []headers.Entry{{Version: "12.4", Tag: "cuda12.4"}, {Version: "11.8", Tag: "cuda11.8"}, {Version: "13.0", Tag: "cuda13.0"}}
	em := &renderer{Cfg: miniConfig(), Command: genCommand, Versions: vs}
	b, err := em.tags()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(genCommand+"\n// "+doNotEdit+"\n")) {
		t.Errorf("ztags.go does not start with the command and the do-not-edit line:\n%.200s", b)
	}
	line := reBuildLine.Find(b)
	x, err := constraint.Parse(strings.TrimSpace(string(line)))
	if err != nil {
		t.Fatal(err)
	}
	built := func(tags ...string) bool {
		return x.Eval(func(tag string) bool { return slices.Contains(tags, tag) })
	}
	for _, tag := range []string{"cuda10.0", "cuda11.0", "cuda11.7", "cuda11.9", "cuda12.6", "cuda12.9", "cuda13.1", "cuda19.9"} {
		if !built(tag) {
			t.Errorf("not built under %s", tag)
		}
		if !built(tag, "cuda12.4") {
			t.Errorf("not built under %s with a pinned tag", tag)
		}
	}
	for _, tags := range [][]string{nil, {"cuda11.8"}, {"cuda12.4"}, {"cuda13.0"}, {"cuda11.8", "cuda13.0"}, {"cgo"}, {"cuda9.2"}, {"cuda20.0"}, {"cuda12.10"}} {
		if built(tags...) {
			t.Errorf("built under %v", tags)
		}
	}
	if want := "const _ = cuda_build_tag_is_not_pinned__pinned_tags_are_cuda11_8_cuda12_4_cuda13_0\n"; !bytes.Contains(b, []byte(want)) {
		t.Errorf("ztags.go has no %q:\n%s", want, b)
	}
	// A pinned major past the range's end widens it by one major.
	if got := unpinnedTags([]headers.Entry{{Version: "20.0", Tag: "cuda20.0"}}); got[len(got)-1] != "cuda21.9" || slices.Contains(got, "cuda20.0") || !slices.Contains(got, "cuda20.1") {
		t.Errorf("pinned 20.0: the range ends at %s", got[len(got)-1])
	}
}

// TestUnpinnedTagBuild builds the module's driver package under a cudaX.Y
// tag that is not pinned, which fails naming the pinned tags, and under
// every pinned tag and none, which build, with cgo and without.
func TestUnpinnedTagBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: builds the cuda packages under every tag")
	}
	_, man, _ := loadAll(t)
	man.Sort()
	want := "undefined: cuda_build_tag_is_not_pinned__pinned_tags_are"
	var tags []string
	for _, e := range man.Versions {
		want += "_" + strings.ReplaceAll(e.Tag, ".", "_")
		tags = append(tags, e.Tag)
	}
	r := root(t)
	for _, tag := range []string{"cuda12.6", "cuda11.7"} {
		out := goFails(t, r, "build", "-tags", tag, "./cuda/driver")
		t.Logf("go build -tags %s ./cuda/driver:\n%s", tag, out)
		if !strings.Contains(out, filepath.Join("cuda", "driver", tagsFile)+":") || !strings.Contains(out, want+"\n") {
			t.Errorf("go build -tags %s: %s, want %q", tag, out, want)
		}
	}
	for _, tag := range append([]string{""}, tags...) {
		goCmd(t, r, "build", "-tags", tag, "./cuda/...")
		if out, err := goRun(t, r, []string{"CGO_ENABLED=0"}, "build", "-tags", tag, "./cuda/..."); err != nil {
			t.Errorf("CGO_ENABLED=0 go build -tags %q: %v\n%s", tag, err, out)
		}
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
	nvrtcH := readFile(t, f.src["12.4"], "nvrtc.h")
	writeFile(t, filepath.Join(again, "include", "nvrtc.h"), nvrtcH)
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

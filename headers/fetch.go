package headers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ErrUnavailable is wrapped when a version's headers cannot be had on this
// machine (a toolkit that is not installed here, no apt).
var ErrUnavailable = errors.New("headers not available on this machine")

// FetchCommand is the command that fills the header cache; messages that
// find the cache empty name it.
const FetchCommand = "go run ./tools/fetchheaders"

// Ensure returns the cache directory of a version's headers, fetching them
// first if the cache does not hold verified copies. Progress goes to log
// (which may be nil): one line per stage with its size and elapsed time, and
// the download's bytes and percent every few seconds.
//
// Inside a test binary Ensure never downloads: a Debian pin missing from the
// cache is an error wrapping ErrUnavailable that names FetchCommand, so that
// plain `go test ./...` skips what needs the headers instead of fetching
// about 1.7 GB of packages without a word.
func Ensure(e *Entry, cache string, log io.Writer) (string, error) {
	dir := e.Dir(cache)
	if err := e.Verify(dir); err == nil {
		return dir, nil
	} else if errors.Is(err, ErrMismatch) {
		if log != nil {
			fmt.Fprintf(log, "%v; fetching again\n", err)
		}
	}
	if log == nil {
		log = io.Discard
	}
	var err error
	switch e.Source.Kind {
	case "debian":
		if testing.Testing() {
			return "", fmt.Errorf("headers: %s is not in the cache %s, and tests do not download it (%w): fetch it first with %s",
				e.Name(), e.Dir(cache), ErrUnavailable, FetchCommand)
		}
		err = fetchDebian(e, cache, log)
	case "toolkit":
		err = copyToolkit(e, e.Source.Path, cache)
	default:
		err = fmt.Errorf("headers: %s: unknown source kind %q", e.Name(), e.Source.Kind)
	}
	if err != nil {
		return "", err
	}
	if err := e.Verify(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// copyToolkit copies the headers e pins from DIR/include into the cache, if
// they are the pinned ones: a toolkit directory that is missing here, or holds
// other headers (another version installed at the same path), cannot supply
// this version, and the cache is left alone.
func copyToolkit(e *Entry, toolkit, cache string) error {
	inc := filepath.Join(toolkit, "include")
	if _, err := os.Stat(filepath.Join(inc, "cuda.h")); err != nil {
		return fmt.Errorf("headers: CUDA %s comes from a toolkit at %s, which this machine does not have (%w); "+
			"copy its %s from include/ into %s", e.Version, toolkit, ErrUnavailable, strings.Join(e.AllFiles(), ", "), e.Dir(cache))
	}
	for _, f := range e.AllFiles() {
		got, err := SumFile(filepath.Join(inc, f))
		if err != nil {
			return fmt.Errorf("headers: CUDA %s comes from the toolkit at %s: %v (%w)", e.Version, toolkit, err, ErrUnavailable)
		}
		if got != e.Files[f] {
			return fmt.Errorf("headers: CUDA %s comes from a toolkit at %s, but the one there now has another %s (sha256 %s, pinned %s) (%w); "+
				"copy the pinned toolkit's headers into %s", e.Version, toolkit, f, got, e.Files[f], ErrUnavailable, e.Dir(cache))
		}
	}
	return CopyHeaders(inc, e.Dir(cache), e.AllFiles()...)
}

// CopyHeaders copies the header files named (cuda.h and cudaTypedefs.h if
// none is) from src into dst.
func CopyHeaders(src, dst string, files ...string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if len(files) == 0 {
		files = Files
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return fmt.Errorf("headers: %w", err)
		}
		if err := writeAtomic(filepath.Join(dst, f), b); err != nil {
			return err
		}
	}
	return nil
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// fetchDebian downloads the pinned Debian package with apt-get into a private
// directory of the cache (no change to the system's apt state), checks the
// package's sha256, and extracts the two headers.
func fetchDebian(e *Entry, cache string, log io.Writer) error {
	for _, tool := range []string{"apt-get", "dpkg-deb", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("headers: %s comes from Debian's %s, and fetching it needs %s (%w): run on Debian, or copy the headers into %s",
				e.Name(), e.Source.Package, tool, ErrUnavailable, e.Dir(cache))
		}
	}
	a, err := newApt(e, cache, log)
	if err != nil {
		return err
	}
	deb, err := a.download()
	if err != nil {
		return err
	}
	defer os.Remove(deb) // ~0.9 GB; only the headers are kept
	if want := e.Source.PackageSha256; want != "" {
		size := int64(0)
		if fi, err := os.Stat(deb); err == nil {
			size = fi.Size()
		}
		a.stage("checking the package's sha256 (%s)", mb(size))
		got, err := SumFile(deb)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("headers: %s package %s: %w: pinned %s, downloaded %s", e.Name(), filepath.Base(deb), ErrMismatch, want, got)
		}
	}
	if err := a.extract(deb, e.Dir(cache)); err != nil {
		return err
	}
	a.stage("done: %s", e.Dir(cache))
	return nil
}

// apt is apt-get run on a private directory of the cache, for one pinned
// package, saying what it does on log.
type apt struct {
	e     *Entry
	dir   string   // the private apt directory
	comp  string   // the archive component
	opts  []string // apt-get's options
	log   io.Writer
	start time.Time
}

// newApt makes the private apt directory of e's suite and its sources.list
// (the mirror this machine's apt is configured with).
func newApt(e *Entry, cache string, log io.Writer) (*apt, error) {
	mirror, keyring, err := DebianMirror()
	if err != nil {
		return nil, err
	}
	a := &apt{e: e, dir: filepath.Join(cache, ".apt", e.Source.Suite), comp: e.Source.Component, log: log, start: time.Now()}
	if a.comp != "" && a.comp != "non-free" {
		a.dir += "-" + a.comp // one private apt directory per suite and component
	}
	for _, d := range []string{"lists/partial", "archives/partial", "download"} {
		if err := os.MkdirAll(filepath.Join(a.dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if a.comp == "" {
		a.comp = "non-free"
	}
	signed := ""
	if keyring != "" {
		signed = " [signed-by=" + keyring + "]"
	}
	list := fmt.Sprintf("deb%s %s %s %s\n", signed, mirror, e.Source.Suite, a.comp)
	if err := os.WriteFile(filepath.Join(a.dir, "sources.list"), []byte(list), 0o644); err != nil {
		return nil, err
	}
	a.opts = []string{
		"-qq",
		"-o", "Dir::Etc::SourceList=" + filepath.Join(a.dir, "sources.list"),
		"-o", "Dir::Etc::SourceParts=" + filepath.Join(a.dir, "none"),
		"-o", "Dir::State::Lists=" + filepath.Join(a.dir, "lists"),
		"-o", "Dir::Cache=" + a.dir,
		"-o", "Dir::Cache::Archives=" + filepath.Join(a.dir, "archives"),
		"-o", "Dir::State::status=/dev/null",
		"-o", "APT::Architecture=amd64",
		"-o", "APT::Architectures=amd64",
		"-o", "Debug::NoLocking=1",
		"-o", "APT::Sandbox::User=root",
	}
	return a, nil
}

// stage says on the log what the fetch does now, and since when it runs.
func (a *apt) stage(format string, args ...any) {
	fmt.Fprintf(a.log, "headers: %s: %s (%s)\n", a.e.Name(), fmt.Sprintf(format, args...), time.Since(a.start).Round(100*time.Millisecond))
}

// run runs apt-get with args in dir.
func (a *apt) run(dir string, args ...string) error {
	cmd := exec.Command("apt-get", append(a.opts, args...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = a.log, a.log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("headers: apt-get %s for %s (%s %s): %w", args[0], a.e.Name(), a.e.Source.Suite, a.comp, err)
	}
	return nil
}

// download reads the package index and downloads the pinned package,
// saying every few seconds how much it has; it returns the .deb's path.
func (a *apt) download() (string, error) {
	e := a.e
	pkg := e.Source.Package + "=" + e.Source.PackageVersion
	a.stage("fetching %s from Debian %s %s: reading the package index", pkg, e.Source.Suite, a.comp)
	if err := a.run(a.dir, "update"); err != nil {
		return "", err
	}
	dl := filepath.Join(a.dir, "download")
	size := packageSize(a.opts, dl, pkg)
	if size > 0 {
		a.stage("downloading %s (%s)", pkg, mb(size))
	} else {
		a.stage("downloading %s", pkg)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the download's progress, from the size of what apt-get has written so far
		defer close(done)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				got := dirSize(dl)
				if size > 0 {
					a.stage("downloaded %s of %s (%d%%)", mb(got), mb(size), got*100/size)
				} else {
					a.stage("downloaded %s", mb(got))
				}
			}
		}
	}()
	err := a.run(dl, "download", pkg)
	close(stop)
	<-done
	if err != nil {
		return "", err
	}
	debs, _ := filepath.Glob(filepath.Join(dl, e.Source.Package+"_*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("headers: apt-get download left %d packages in %s, want 1", len(debs), dl)
	}
	return debs[0], nil
}

// extract copies the pinned headers out of the package deb into dst.
func (a *apt) extract(deb, dst string) error {
	inc := a.e.Source.Include
	if inc == "" {
		inc = "usr/include"
	}
	tmp, err := os.MkdirTemp(filepath.Dir(deb), "x")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	files := a.e.AllFiles()
	members := make([]string, len(files))
	for i, f := range files {
		members[i] = "./" + inc + "/" + f
	}
	a.stage("extracting %s (decompressing the package's files up to them)", strings.Join(files, ", "))
	// --occurrence: tar stops once it has every named member, instead of
	// decompressing the rest of the package; dpkg-deb then exits on the
	// closed pipe, which is not an error here (tar's status is the script's).
	sh := exec.Command("sh", "-c", `deb=$0 dir=$1; shift; dpkg-deb --fsys-tarfile "$deb" 2>/dev/null | tar -x --occurrence -C "$dir" "$@"`, deb, tmp)
	sh.Args = append(sh.Args, members...)
	sh.Stdout, sh.Stderr = a.log, a.log
	if err := sh.Run(); err != nil {
		return fmt.Errorf("headers: extracting %s from %s: %w", strings.Join(files, ", "), filepath.Base(deb), err)
	}
	return CopyHeaders(filepath.Join(tmp, inc), dst, files...)
}

// packageSize asks apt-get for the package's size in bytes (0 if it cannot
// tell).
func packageSize(opts []string, dir, pkg string) int64 {
	cmd := exec.Command("apt-get", append(opts, "--print-uris", "download", pkg)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return 0
	}
	// 'URI' file size SHA256:...
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && strings.HasPrefix(f[0], "'") {
			var n int64
			if _, err := fmt.Sscan(f[2], &n); err == nil {
				return n
			}
		}
	}
	return 0
}

// dirSize is the total size of the regular files directly in dir and its
// partial/ directory.
func dirSize(dir string) int64 {
	var n int64
	for _, d := range []string{dir, filepath.Join(dir, "partial")} {
		ents, _ := os.ReadDir(d)
		for _, de := range ents {
			if fi, err := de.Info(); err == nil && fi.Mode().IsRegular() {
				n += fi.Size()
			}
		}
	}
	return n
}

func mb(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }

// DebianMirror reads the Debian mirror this machine's apt is configured with,
// and the keyring it is signed by. CUDAGEN_DEBIAN_MIRROR overrides the mirror.
func DebianMirror() (mirror, keyring string, err error) {
	keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
	if _, err := os.Stat(keyring); err != nil {
		keyring = ""
	}
	if m := os.Getenv("CUDAGEN_DEBIAN_MIRROR"); m != "" {
		return m, keyring, nil
	}
	etc := "/etc/apt"
	if out, err := exec.Command("apt-config", "shell", "D", "Dir::Etc/d").Output(); err == nil {
		if s := strings.Trim(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "D=")), "'"); s != "" {
			etc = s
		}
	}
	files := []string{filepath.Join(etc, "sources.list")}
	more, _ := filepath.Glob(filepath.Join(etc, "sources.list.d", "*"))
	files = append(files, more...)
	for _, f := range files {
		if m, k := mirrorIn(f); m != "" {
			if k != "" {
				keyring = k
			}
			return m, keyring, nil
		}
	}
	return "", "", fmt.Errorf("headers: no Debian mirror in %s/sources.list or sources.list.d (%w); set CUDAGEN_DEBIAN_MIRROR to the mirror's URL", etc, ErrUnavailable)
}

// mirrorIn returns the first Debian archive (not security, not updates) named
// in an apt sources file: one-line style (.list) or deb822 (.sources).
func mirrorIn(path string) (uri, keyring string) {
	if !strings.HasSuffix(path, ".list") && !strings.HasSuffix(path, ".sources") {
		return "", ""
	}
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	if strings.HasSuffix(path, ".list") {
		return mirrorInList(bufio.NewScanner(f)), ""
	}
	return mirrorInDeb822(bufio.NewScanner(f))
}

// mainSuite says whether an apt suite is a release's main archive (bookworm,
// not bookworm-updates or bookworm/updates).
func mainSuite(suite string) bool {
	return suite != "" && !strings.Contains(suite, "-") && !strings.Contains(suite, "/")
}

// debianArchive says whether an archive URI is Debian's, not its security
// archive.
func debianArchive(uri string) bool {
	return strings.Contains(uri, "debian") && !strings.Contains(uri, "security")
}

// mirrorInList returns the first Debian archive of a one-line-style sources
// file ("deb [options] URI suite components").
func mirrorInList(sc *bufio.Scanner) string {
	for sc.Scan() {
		fields := strings.Fields(strings.TrimSpace(sc.Text()))
		if len(fields) < 3 || fields[0] != "deb" {
			continue
		}
		rest := fields[1:]
		if strings.HasPrefix(rest[0], "[") {
			for len(rest) > 0 && !strings.HasSuffix(rest[0], "]") {
				rest = rest[1:]
			}
			if len(rest) > 0 {
				rest = rest[1:]
			}
		}
		if len(rest) >= 2 && mainSuite(rest[1]) && debianArchive(rest[0]) {
			return rest[0]
		}
	}
	return ""
}

// deb822Stanza is one stanza of a deb822 sources file: the fields mirrorIn
// reads.
type deb822Stanza struct {
	types, signed string
	uris, suites  []string
}

// archive is the stanza's first Debian archive of a main suite, if any.
func (st deb822Stanza) archive() string {
	if !strings.Contains(" "+st.types+" ", " deb ") {
		return ""
	}
	for _, s := range st.suites {
		if !mainSuite(s) {
			continue
		}
		for _, u := range st.uris {
			if debianArchive(u) {
				return u
			}
		}
	}
	return ""
}

// mirrorInDeb822 returns the first Debian archive of a deb822 sources file
// (stanzas of Types, URIs, Suites, Signed-By), and its stanza's keyring.
func mirrorInDeb822(sc *bufio.Scanner) (uri, keyring string) {
	var st deb822Stanza
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" {
			if u := st.archive(); u != "" {
				return u, st.signed
			}
			st = deb822Stanza{}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.ToLower(k) {
		case "types":
			st.types = v
		case "uris":
			st.uris = strings.Fields(v)
		case "suites":
			st.suites = strings.Fields(v)
		case "signed-by":
			st.signed = v
		}
	}
	if u := st.archive(); u != "" {
		return u, st.signed
	}
	return "", ""
}

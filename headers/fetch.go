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
			return "", fmt.Errorf("headers: CUDA %s is not in the cache %s, and tests do not download it (%w): fetch it first with %s",
				e.Version, e.Dir(cache), ErrUnavailable, FetchCommand)
		}
		err = fetchDebian(e, cache, log)
	case "toolkit":
		err = copyToolkit(e, e.Source.Path, cache)
	default:
		err = fmt.Errorf("headers: CUDA %s: unknown source kind %q", e.Version, e.Source.Kind)
	}
	if err != nil {
		return "", err
	}
	if err := e.Verify(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// copyToolkit copies DIR/include/{cuda.h,cudaTypedefs.h} into the cache, if
// they are the pinned ones: a toolkit directory that is missing here, or holds
// other headers (another version installed at the same path), cannot supply
// this version, and the cache is left alone.
func copyToolkit(e *Entry, toolkit, cache string) error {
	inc := filepath.Join(toolkit, "include")
	if _, err := os.Stat(filepath.Join(inc, "cuda.h")); err != nil {
		return fmt.Errorf("headers: CUDA %s comes from a toolkit at %s, which this machine does not have (%w); "+
			"copy its include/cuda.h and include/cudaTypedefs.h into %s", e.Version, toolkit, ErrUnavailable, e.Dir(cache))
	}
	for _, f := range Files {
		got, err := SumFile(filepath.Join(inc, f))
		if err != nil {
			return fmt.Errorf("headers: CUDA %s comes from the toolkit at %s: %v (%w)", e.Version, toolkit, err, ErrUnavailable)
		}
		if got != e.Files[f] {
			return fmt.Errorf("headers: CUDA %s comes from a toolkit at %s, but the one there now has another %s (sha256 %s, pinned %s) (%w); "+
				"copy the pinned toolkit's headers into %s", e.Version, toolkit, f, got, e.Files[f], ErrUnavailable, e.Dir(cache))
		}
	}
	return CopyHeaders(inc, e.Dir(cache))
}

// CopyHeaders copies the pinned header files from src into dst.
func CopyHeaders(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range Files {
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
			return fmt.Errorf("headers: CUDA %s comes from Debian's %s, and fetching it needs %s (%w): run on Debian, or copy the headers into %s",
				e.Version, e.Source.Package, tool, ErrUnavailable, e.Dir(cache))
		}
	}
	mirror, keyring, err := DebianMirror()
	if err != nil {
		return err
	}
	aptDir := filepath.Join(cache, ".apt", e.Source.Suite)
	for _, d := range []string{"lists/partial", "archives/partial", "download"} {
		if err := os.MkdirAll(filepath.Join(aptDir, d), 0o755); err != nil {
			return err
		}
	}
	comp := e.Source.Component
	if comp == "" {
		comp = "non-free"
	}
	signed := ""
	if keyring != "" {
		signed = " [signed-by=" + keyring + "]"
	}
	list := fmt.Sprintf("deb%s %s %s %s\n", signed, mirror, e.Source.Suite, comp)
	if err := os.WriteFile(filepath.Join(aptDir, "sources.list"), []byte(list), 0o644); err != nil {
		return err
	}
	opts := []string{
		"-qq",
		"-o", "Dir::Etc::SourceList=" + filepath.Join(aptDir, "sources.list"),
		"-o", "Dir::Etc::SourceParts=" + filepath.Join(aptDir, "none"),
		"-o", "Dir::State::Lists=" + filepath.Join(aptDir, "lists"),
		"-o", "Dir::Cache=" + aptDir,
		"-o", "Dir::Cache::Archives=" + filepath.Join(aptDir, "archives"),
		"-o", "Dir::State::status=/dev/null",
		"-o", "APT::Architecture=amd64",
		"-o", "APT::Architectures=amd64",
		"-o", "Debug::NoLocking=1",
		"-o", "APT::Sandbox::User=root",
	}
	run := func(dir string, args ...string) error {
		cmd := exec.Command("apt-get", append(opts, args...)...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("headers: apt-get %s for CUDA %s (%s %s): %w", args[0], e.Version, e.Source.Suite, comp, err)
		}
		return nil
	}
	pkg := e.Source.Package + "=" + e.Source.PackageVersion
	start := time.Now()
	stage := func(format string, args ...any) {
		fmt.Fprintf(log, "headers: CUDA %s: %s (%s)\n", e.Version, fmt.Sprintf(format, args...), time.Since(start).Round(100*time.Millisecond))
	}
	stage("fetching %s from Debian %s %s: reading the package index", pkg, e.Source.Suite, comp)
	if err := run(aptDir, "update"); err != nil {
		return err
	}
	dl := filepath.Join(aptDir, "download")
	size := packageSize(opts, dl, pkg)
	if size > 0 {
		stage("downloading %s (%s)", pkg, mb(size))
	} else {
		stage("downloading %s", pkg)
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
					stage("downloaded %s of %s (%d%%)", mb(got), mb(size), got*100/size)
				} else {
					stage("downloaded %s", mb(got))
				}
			}
		}
	}()
	err = run(dl, "download", pkg)
	close(stop)
	<-done
	if err != nil {
		return err
	}
	debs, _ := filepath.Glob(filepath.Join(dl, e.Source.Package+"_*.deb"))
	if len(debs) != 1 {
		return fmt.Errorf("headers: apt-get download left %d packages in %s, want 1", len(debs), dl)
	}
	deb := debs[0]
	defer os.Remove(deb) // ~0.9 GB; only the headers are kept
	if fi, err := os.Stat(deb); err == nil {
		size = fi.Size()
	}
	if want := e.Source.PackageSha256; want != "" {
		stage("checking the package's sha256 (%s)", mb(size))
		got, err := SumFile(deb)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("headers: CUDA %s package %s: %w: pinned %s, downloaded %s", e.Version, filepath.Base(deb), ErrMismatch, want, got)
		}
	}
	inc := e.Source.Include
	if inc == "" {
		inc = "usr/include"
	}
	tmp, err := os.MkdirTemp(dl, "x")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	members := make([]string, len(Files))
	for i, f := range Files {
		members[i] = "./" + inc + "/" + f
	}
	stage("extracting %s (decompressing the package's files up to them)", strings.Join(Files, " and "))
	// --occurrence: tar stops once it has every named member, instead of
	// decompressing the rest of the package; dpkg-deb then exits on the
	// closed pipe, which is not an error here (tar's status is the script's).
	sh := exec.Command("sh", "-c", `deb=$0 dir=$1; shift; dpkg-deb --fsys-tarfile "$deb" 2>/dev/null | tar -x --occurrence -C "$dir" "$@"`, deb, tmp)
	sh.Args = append(sh.Args, members...)
	sh.Stdout, sh.Stderr = log, log
	if err := sh.Run(); err != nil {
		return fmt.Errorf("headers: extracting %s from %s: %w", strings.Join(Files, ", "), filepath.Base(deb), err)
	}
	if err := CopyHeaders(filepath.Join(tmp, inc), e.Dir(cache)); err != nil {
		return err
	}
	stage("done: %s", e.Dir(cache))
	return nil
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
// in an apt sources file, one-line or deb822 style.
func mirrorIn(path string) (uri, keyring string) {
	if !strings.HasSuffix(path, ".list") && !strings.HasSuffix(path, ".sources") {
		return "", ""
	}
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	isMain := func(suite string) bool {
		return suite != "" && !strings.Contains(suite, "-") && !strings.Contains(suite, "/")
	}
	var uris, suites []string
	var types, signed string
	flush := func() string {
		defer func() { uris, suites, types, signed = nil, nil, "", "" }()
		if !strings.Contains(" "+types+" ", " deb ") {
			return ""
		}
		for _, s := range suites {
			if isMain(s) {
				for _, u := range uris {
					if strings.Contains(u, "debian") && !strings.Contains(u, "security") {
						keyring = signed
						return u
					}
				}
			}
		}
		return ""
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(path, ".list") {
			fields := strings.Fields(line)
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
			if len(rest) >= 2 && isMain(rest[1]) && strings.Contains(rest[0], "debian") && !strings.Contains(rest[0], "security") {
				return rest[0], ""
			}
			continue
		}
		if line == "" {
			if u := flush(); u != "" {
				return u, keyring
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.ToLower(k) {
		case "types":
			types = v
		case "uris":
			uris = strings.Fields(v)
		case "suites":
			suites = strings.Fields(v)
		case "signed-by":
			signed = v
		}
	}
	if u := flush(); u != "" {
		return u, keyring
	}
	return "", ""
}

// Package headers holds the pinned CUDA toolkit versions that cudagen generates
// bindings for, and fetches their headers into a cache outside the repository.
//
// The manifest (manifest.json beside this file) names, for each pinned
// version, where cuda.h and cudaTypedefs.h come from and their sha256 sums.
// NVIDIA's files themselves are never committed: they live in the cache
// (see CacheDir), which Fetch fills and verifies.
package headers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Files are the header files pinned for every version, in a fixed order.
var Files = []string{"cuda.h", "cudaTypedefs.h"}

// LibraryFiles are the headers of the toolkit's other libraries that a
// version pins where its toolkit ships them (CUDA 11.8 has no nvJitLink.h),
// in a fixed order.
var LibraryFiles = []string{"nvrtc.h", "nvJitLink.h"}

// AllFiles are the header files e pins: Files, then those of LibraryFiles
// it lists; a library's entry, its files.
func (e *Entry) AllFiles() []string {
	if e.Library != "" {
		var fs []string
		for f := range e.Files {
			fs = append(fs, f)
		}
		sort.Strings(fs)
		return fs
	}
	all := append([]string(nil), Files...)
	for _, f := range LibraryFiles {
		if _, ok := e.Files[f]; ok {
			all = append(all, f)
		}
	}
	return all
}

// Has says whether e pins the header file f.
func (e *Entry) Has(f string) bool {
	_, ok := e.Files[f]
	return ok
}

// Manifest is the list of pinned toolkit versions, and of the libraries
// pinned by their own version (NCCL, whose header is not a toolkit's).
type Manifest struct {
	Versions []Entry `json:"versions"`
	// Libraries are pinned by their own version: each entry's Library
	// names it ("nccl"), its Tag is that name and the version ("nccl2.22"),
	// and its Files are the library's headers.
	Libraries []Entry `json:"libraries,omitempty"`
}

// LibraryVersions are the pinned versions of the library named, oldest
// first.
func (m *Manifest) LibraryVersions(name string) []Entry {
	var vs []Entry
	for _, e := range m.Libraries {
		if e.Library == name {
			vs = append(vs, e)
		}
	}
	sort.SliceStable(vs, func(i, j int) bool { return Less(vs[i].Version, vs[j].Version) })
	return vs
}

// Entry is one pinned toolkit version, or one pinned version of a library
// pinned by its own (Library set).
type Entry struct {
	// Library names a library pinned by its own version ("nccl"); empty
	// for a toolkit.
	Library string `json:"library,omitempty"`
	// Version is the toolkit's major.minor, e.g. "12.4".
	Version string `json:"version"`
	// CUDAVersion is the header's CUDA_VERSION, e.g. 12040.
	CUDAVersion int `json:"cudaVersion"`
	// Tag is the Go build tag that selects this version's bindings.
	Tag    string `json:"tag"`
	Source Source `json:"source"`
	// Files maps each header file name to its sha256 (hex): cuda.h and
	// cudaTypedefs.h, and each of LibraryFiles the toolkit ships.
	Files map[string]string `json:"files"`
}

// Source says where a version's headers come from.
type Source struct {
	// Kind is "debian" (a Debian package fetched with apt) or "toolkit"
	// (a local toolkit directory holding include/cuda.h).
	Kind           string `json:"kind"`
	Suite          string `json:"suite,omitempty"`
	Component      string `json:"component,omitempty"`
	Package        string `json:"package,omitempty"`
	PackageVersion string `json:"packageVersion,omitempty"`
	PackageSha256  string `json:"packageSha256,omitempty"`
	Include        string `json:"include,omitempty"`
	Path           string `json:"path,omitempty"`
	Note           string `json:"note,omitempty"`
}

// ReadJSON decodes the JSON file at path into v, refusing a field v does
// not have: the manifest and the generator's configs are read so. A file
// that cannot be read returns os.ReadFile's error, which names it; one
// that does not decode, the decoder's, after its path.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Load reads a manifest file.
func Load(path string) (*Manifest, error) {
	var m Manifest
	if err := ReadJSON(path, &m); err != nil {
		return nil, fmt.Errorf("headers: read manifest: %w", err)
	}
	for i, e := range m.Versions {
		if e.Library != "" {
			return nil, fmt.Errorf("headers: %s: entry %d: a toolkit's entry names no library (%q goes under \"libraries\")", path, i, e.Library)
		}
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("headers: %s: entry %d: %w", path, i, err)
		}
	}
	for i, e := range m.Libraries {
		if err := e.validateLibrary(); err != nil {
			return nil, fmt.Errorf("headers: %s: library entry %d: %w", path, i, err)
		}
	}
	return &m, nil
}

func (e *Entry) validate() error {
	if _, _, err := ParseVersion(e.Version); err != nil {
		return err
	}
	if _, minor, _ := ParseVersion(e.Version); minor > 9 {
		return fmt.Errorf("version %s: a toolkit's minor version is 0 to 9", e.Version)
	}
	if e.CUDAVersion != 0 {
		if err := CheckCUDAVersion(e.CUDAVersion); err != nil {
			return fmt.Errorf("version %s: %w", e.Version, err)
		}
		if VersionFromCUDA(e.CUDAVersion) != e.Version {
			return fmt.Errorf("version %s: cudaVersion %d is CUDA %s's", e.Version, e.CUDAVersion, VersionFromCUDA(e.CUDAVersion))
		}
	}
	if e.Tag != TagFor(e.Version) {
		return fmt.Errorf("version %s: tag is %q, want %q", e.Version, e.Tag, TagFor(e.Version))
	}
	for _, f := range Files {
		if len(e.Files[f]) != 64 {
			return fmt.Errorf("version %s: no sha256 for %s", e.Version, f)
		}
	}
	for f, sum := range e.Files {
		if !slices.Contains(Files, f) && !slices.Contains(LibraryFiles, f) {
			return fmt.Errorf("version %s: %s is no header cudagen pins (%s, %s)", e.Version, f, strings.Join(Files, ", "), strings.Join(LibraryFiles, ", "))
		}
		if len(sum) != 64 {
			return fmt.Errorf("version %s: the sha256 of %s is not 64 hex digits", e.Version, f)
		}
	}
	switch e.Source.Kind {
	case "debian":
		if e.Source.Suite == "" || e.Source.Package == "" || e.Source.PackageVersion == "" {
			return fmt.Errorf("version %s: a debian source needs suite, package and packageVersion", e.Version)
		}
	case "toolkit":
	default:
		return fmt.Errorf("version %s: unknown source kind %q", e.Version, e.Source.Kind)
	}
	return nil
}

// validateLibrary checks a library's entry: its name, version, tag
// (name and version), headers with sums, and source.
func (e *Entry) validateLibrary() error {
	if e.Library == "" || strings.ToLower(e.Library) != e.Library {
		return fmt.Errorf("a library entry needs its library's name, lower case (%q)", e.Library)
	}
	if _, _, err := ParseVersion(e.Version); err != nil {
		return err
	}
	if want := e.Library + e.Version; e.Tag != want {
		return fmt.Errorf("%s %s: tag is %q, want %q", e.Library, e.Version, e.Tag, want)
	}
	if len(e.Files) == 0 {
		return fmt.Errorf("%s %s: no header pinned", e.Library, e.Version)
	}
	for f, sum := range e.Files {
		if len(sum) != 64 {
			return fmt.Errorf("%s %s: the sha256 of %s is not 64 hex digits", e.Library, e.Version, f)
		}
	}
	if e.Source.Kind != "debian" || e.Source.Suite == "" || e.Source.Package == "" || e.Source.PackageVersion == "" {
		return fmt.Errorf("%s %s: a library's source is a debian package with suite, package and packageVersion", e.Library, e.Version)
	}
	return nil
}

// Name is what messages call the entry: "CUDA 12.4", "nccl 2.22".
func (e *Entry) Name() string {
	if e.Library != "" {
		return e.Library + " " + e.Version
	}
	return "CUDA " + e.Version
}

// Save writes the manifest, versions sorted oldest first.
func (m *Manifest) Save(path string) error {
	b, err := m.Bytes()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Bytes is the manifest's file content, versions sorted oldest first.
func (m *Manifest) Bytes() ([]byte, error) {
	m.Sort()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Sort orders the versions oldest first.
func (m *Manifest) Sort() {
	sort.SliceStable(m.Versions, func(i, j int) bool {
		return Less(m.Versions[i].Version, m.Versions[j].Version)
	})
}

// Find returns the entry for a version, or nil.
func (m *Manifest) Find(version string) *Entry {
	for i := range m.Versions {
		if m.Versions[i].Version == version {
			return &m.Versions[i]
		}
	}
	return nil
}

// Newest returns the newest pinned version, the one built when no tag is given.
func (m *Manifest) Newest() *Entry {
	var n *Entry
	for i := range m.Versions {
		if n == nil || Less(n.Version, m.Versions[i].Version) {
			n = &m.Versions[i]
		}
	}
	return n
}

// Put adds or replaces an entry.
func (m *Manifest) Put(e Entry) {
	if old := m.Find(e.Version); old != nil {
		*old = e
		return
	}
	m.Versions = append(m.Versions, e)
	m.Sort()
}

// ParseVersion splits "12.4" into 12 and 4.
func ParseVersion(v string) (major, minor int, err error) {
	a, b, ok := strings.Cut(v, ".")
	if ok {
		major, err = strconv.Atoi(a)
		if err == nil {
			minor, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || major <= 0 || minor < 0 {
		return 0, 0, fmt.Errorf("version %q is not of the form MAJOR.MINOR", v)
	}
	return major, minor, nil
}

// VersionFromCUDA turns a CUDA_VERSION such as 12040 into "12.4".
func VersionFromCUDA(n int) string {
	return fmt.Sprintf("%d.%d", n/1000, n%1000/10)
}

// MaxMajor is the largest toolkit major version a CUDA_VERSION may name.
const MaxMajor = 99

// CheckCUDAVersion says whether n is a toolkit's CUDA_VERSION:
// major·1000 + minor·10 (12040 for 12.4, 13000 for 13.0), with a major of 1
// to MaxMajor and a minor of 0 to 9 (no toolkit has had a minor above 9, and
// the tag cudaX.Y names one digit). Every CUDA_VERSION a toolkit has shipped
// ends in 0; 99999 is no toolkit's.
func CheckCUDAVersion(n int) error {
	major, rest := n/1000, n%1000
	switch {
	case n%10 != 0:
		return fmt.Errorf("CUDA_VERSION %d is no toolkit's: a toolkit's is major*1000 + minor*10 (12040 for 12.4), so it ends in 0", n)
	case rest/10 > 9:
		return fmt.Errorf("CUDA_VERSION %d is no toolkit's: it would be CUDA %d.%d, and a toolkit's minor version is 0 to 9 (major*1000 + minor*10: 12040 for 12.4)", n, major, rest/10)
	case major < 1 || major > MaxMajor:
		return fmt.Errorf("CUDA_VERSION %d is no toolkit's: its major version %d is not 1 to %d", n, major, MaxMajor)
	}
	return nil
}

// Less orders versions numerically.
func Less(a, b string) bool {
	am, an, _ := ParseVersion(a)
	bm, bn, _ := ParseVersion(b)
	return am < bm || am == bm && an < bn
}

// TagFor is the build tag of a version: "cuda12.4".
func TagFor(version string) string { return "cuda" + version }

// CacheDir is where fetched headers live: $CUDAGEN_CACHE if set, else the
// user cache directory's cudagen/headers.
func CacheDir() (string, error) {
	if d := os.Getenv("CUDAGEN_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("headers: no cache directory (set CUDAGEN_CACHE): %w", err)
	}
	return filepath.Join(d, "cudagen", "headers"), nil
}

// Dir is the cache directory of one version's headers: the version's for a
// toolkit, the library's name and version for a library.
func (e *Entry) Dir(cache string) string {
	if e.Library != "" {
		return filepath.Join(cache, e.Library+"-"+e.Version)
	}
	return filepath.Join(cache, e.Version)
}

// ErrMismatch is wrapped by every checksum mismatch.
var ErrMismatch = errors.New("sha256 mismatch")

// Verify checks that dir holds this entry's header files with the pinned sums.
func (e *Entry) Verify(dir string) error {
	for _, f := range e.AllFiles() {
		got, err := SumFile(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		if want := e.Files[f]; got != want {
			return fmt.Errorf("headers: %s %s: %w: pinned %s, found %s in %s",
				e.Name(), f, ErrMismatch, want, got, dir)
		}
	}
	return nil
}

// SumFile returns the hex sha256 of a file.
func SumFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

package main

// Read stage: pinning a toolkit (-cuda DIR). The toolkit's headers are
// checked and staged in a directory of the cache, and read from there; the
// write stage (write.go) moves the staging directory into place with the
// run's files, or removes it.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cudagen/cudagen/headers"
)

// stagedPin is a toolkit pinned in memory: its manifest entry and its
// headers, copied into a staging directory of the cache.
type stagedPin struct {
	Entry headers.Entry
	Inc   string // the toolkit's directory holding cuda.h
	Stage string // the staging directory in the cache
	Same  bool   // the version was pinned already from these headers
}

// renamed is an error whose text names the toolkit's files instead of the
// staged copies; it unwraps to the original.
type renamed struct {
	msg string
	err error
}

func (e *renamed) Error() string { return e.msg }
func (e *renamed) Unwrap() error { return e.err }

// mapErr makes an error about the staged copies name the toolkit's files.
func (s *stagedPin) mapErr(err error) error {
	if err == nil || !strings.Contains(err.Error(), s.Stage) {
		return err
	}
	return &renamed{strings.ReplaceAll(err.Error(), s.Stage, s.Inc), err}
}

// remove deletes the staging directory.
func (s *stagedPin) remove() { os.RemoveAll(s.Stage) }

// toolkitInclude returns the toolkit directory dir made absolute and the
// directory holding its cuda.h: dir/include, or dir itself.
func toolkitInclude(dir string) (abs, inc string, err error) {
	if a, err := filepath.Abs(dir); err == nil {
		dir = a
	}
	inc = filepath.Join(dir, "include")
	if _, err := os.Stat(filepath.Join(inc, "cuda.h")); err != nil {
		if _, err2 := os.Stat(filepath.Join(dir, "cuda.h")); err2 != nil {
			return "", "", fmt.Errorf("gen: -cuda %s: no include/cuda.h there (nor cuda.h): not a CUDA toolkit directory", dir)
		}
		inc = dir
	}
	return dir, inc, nil
}

// stagePin reads the toolkit in dir (dir/include/cuda.h, or dir/cuda.h),
// checks its headers, and returns the entry that pins it, with the headers
// staged in the cache. A version pinned already from other headers (other
// sha256 sums) is refused unless repin is set; from the same headers, the
// entry is the pinned one. Nothing else changes: the caller puts the entry
// in the manifest and the write stage moves the staging directory into place.
func stagePin(cfg *config, man *headers.Manifest, dir, cache string, repin bool) (*stagedPin, error) {
	dir, inc, err := toolkitInclude(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, fmt.Errorf("gen: header cache: %w", err)
	}
	stage, err := os.MkdirTemp(cache, ".pin-")
	if err != nil {
		return nil, fmt.Errorf("gen: header cache: %w", err)
	}
	s := &stagedPin{Inc: inc, Stage: stage}
	fail := func(err error) (*stagedPin, error) {
		s.remove()
		return nil, s.mapErr(err)
	}
	for _, f := range slices.Concat(headers.Files, headers.LibraryFiles) {
		b, err := os.ReadFile(filepath.Join(inc, f))
		if errors.Is(err, os.ErrNotExist) {
			continue // checkHeaders says what is missing, and why it matters; a library's header is pinned where the toolkit ships it
		}
		if err != nil {
			return fail(fmt.Errorf("gen: %w", err))
		}
		if err := os.WriteFile(filepath.Join(stage, f), b, 0o644); err != nil {
			return fail(fmt.Errorf("gen: header cache: %w", err))
		}
	}
	if err := checkHeaders(cfg, stage); err != nil {
		return fail(err)
	}
	cudaH, _ := os.ReadFile(filepath.Join(stage, "cuda.h"))
	n, ok := textCUDAVersion(cudaH)
	if !ok {
		return fail(fmt.Errorf("gen: %s: no #define CUDA_VERSION: not a CUDA toolkit's cuda.h", filepath.Join(stage, "cuda.h")))
	}
	v := headers.VersionFromCUDA(n)
	s.Entry = headers.Entry{Version: v, CUDAVersion: n, Tag: headers.TagFor(v), Files: map[string]string{},
		Source: headers.Source{Kind: "toolkit", Path: dir, Note: "pinned with go run ./gen -cuda"}}
	old := man.Find(v)
	if old != nil && old.Source.Kind == "debian" {
		return fail(fmt.Errorf("gen: CUDA %s is already pinned from Debian's %s %s; remove it from headers/manifest.json first to pin %s instead",
			v, old.Source.Package, old.Source.PackageVersion, dir))
	}
	for _, f := range slices.Concat(headers.Files, headers.LibraryFiles) {
		sum, err := headers.SumFile(filepath.Join(stage, f))
		if errors.Is(err, os.ErrNotExist) && slices.Contains(headers.LibraryFiles, f) {
			continue
		}
		if err != nil {
			return fail(err)
		}
		s.Entry.Files[f] = sum
	}
	if old == nil {
		return s, nil
	}
	if err := s.against(old, inc, dir, repin); err != nil {
		return fail(err)
	}
	return s, nil
}

// against compares the staged pin with the version pinned already (old):
// the same headers leave the pin as it is (Same); the same toolkit headers
// with a library's header added take it; other headers need repin.
func (s *stagedPin) against(old *headers.Entry, inc, dir string, repin bool) error {
	v := s.Entry.Version
	var differ, added []string
	for _, f := range s.Entry.AllFiles() {
		switch {
		case !old.Has(f):
			added = append(added, f) // a library header the pin did not have: an addition, not another toolkit
		case old.Files[f] != s.Entry.Files[f]:
			differ = append(differ, fmt.Sprintf("%s: pinned sha256 %s, %s has %s", f, old.Files[f], filepath.Join(inc, f), s.Entry.Files[f]))
		}
	}
	switch {
	case len(differ) == 0 && len(added) > 0:
		// The same toolkit, with headers of its libraries pinned now: the
		// pin takes them, and keeps where it came from.
		s.Entry.Source = old.Source
	case len(differ) == 0:
		// The same headers: the pin stays as it is, wherever they were
		// found this time.
		s.Entry, s.Same = *old, true
	case !repin:
		from := ""
		if old.Source.Path != "" {
			from = " (" + old.Source.Path + ")"
		}
		return fmt.Errorf("gen: CUDA %s is already pinned from other headers%s: %s; add -repin to replace its pin and bindings with those of %s",
			v, from, strings.Join(differ, "; "), dir)
	}
	return nil
}

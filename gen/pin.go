package main

// Pinning a toolkit (-cuda DIR) and writing a run's results atomically: the
// toolkit's headers are staged in a directory of the cache and parsed from
// there; the manifest, the generated files and the cache change only when
// everything has succeeded, each by a rename, and a failure while committing
// undoes the renames already made.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// stagePin reads the toolkit in dir (dir/include/cuda.h, or dir/cuda.h),
// checks its headers, and returns the entry that pins it, with the headers
// staged in the cache. A version pinned already from other headers (other
// sha256 sums) is refused unless repin is set; from the same headers, the
// entry is the pinned one. Nothing else changes: the caller puts the entry
// in the manifest and commits the staging directory.
func stagePin(cfg *Config, man *headers.Manifest, dir, cache string, repin bool) (*stagedPin, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	inc := filepath.Join(dir, "include")
	if _, err := os.Stat(filepath.Join(inc, "cuda.h")); err != nil {
		if _, err2 := os.Stat(filepath.Join(dir, "cuda.h")); err2 != nil {
			return nil, fmt.Errorf("gen: -cuda %s: no include/cuda.h there (nor cuda.h): not a CUDA toolkit directory", dir)
		}
		inc = dir
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
	for _, f := range headers.Files {
		b, err := os.ReadFile(filepath.Join(inc, f))
		if errors.Is(err, os.ErrNotExist) {
			continue // CheckHeaders says what is missing, and why it matters
		}
		if err != nil {
			return fail(fmt.Errorf("gen: %w", err))
		}
		if err := os.WriteFile(filepath.Join(stage, f), b, 0o644); err != nil {
			return fail(fmt.Errorf("gen: header cache: %w", err))
		}
	}
	if err := CheckHeaders(cfg, stage); err != nil {
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
	for _, f := range headers.Files {
		sum, err := headers.SumFile(filepath.Join(stage, f))
		if err != nil {
			return fail(err)
		}
		s.Entry.Files[f] = sum
	}
	if old == nil {
		return s, nil
	}
	var differ []string
	for _, f := range headers.Files {
		if old.Files[f] != s.Entry.Files[f] {
			differ = append(differ, fmt.Sprintf("%s: pinned sha256 %s, %s has %s", f, old.Files[f], filepath.Join(inc, f), s.Entry.Files[f]))
		}
	}
	switch {
	case len(differ) == 0:
		// The same headers: the pin stays as it is, wherever they were
		// found this time.
		s.Entry, s.Same = *old, true
	case !repin:
		from := ""
		if old.Source.Path != "" {
			from = " (" + old.Source.Path + ")"
		}
		return fail(fmt.Errorf("gen: CUDA %s is already pinned from other headers%s: %s; add -repin to replace its pin and bindings with those of %s",
			v, from, strings.Join(differ, "; "), dir))
	}
	return s, nil
}

// commitFault, when set (by tests), is called before each change a commit
// makes; an error it returns fails the commit there.
var commitFault func(op, path string) error

// txn applies a run's changes one rename at a time and can undo them.
type txn struct {
	undo    []func() error // in the order made
	cleanup []string       // backups removed once committed
}

func (t *txn) fault(op, path string) error {
	if commitFault != nil {
		return commitFault(op, path)
	}
	return nil
}

// writeFile replaces path's content with b (a temporary file renamed over
// it), remembering the old content.
func (t *txn) writeFile(path string, b []byte) error {
	old, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if existed && bytes.Equal(old, b) {
		return nil
	}
	if err := t.fault("write", path); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := replaceFile(path, b); err != nil {
		return err
	}
	t.undo = append(t.undo, func() error {
		if existed {
			return replaceFile(path, old)
		}
		return os.Remove(path)
	})
	return nil
}

// removeFile deletes path, remembering its content.
func (t *txn) removeFile(path string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := t.fault("remove", path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	t.undo = append(t.undo, func() error { return replaceFile(path, old) })
	return nil
}

// replaceDir puts the staged directory at target, moving what was there
// aside until the commit is done.
func (t *txn) replaceDir(target, staged string) error {
	if err := t.fault("rename", target); err != nil {
		return err
	}
	backup := ""
	if _, err := os.Lstat(target); err == nil {
		backup = staged + ".old"
		if err := os.Rename(target, backup); err != nil {
			return err
		}
	}
	if err := os.Rename(staged, target); err != nil {
		if backup != "" {
			os.Rename(backup, target)
		}
		return err
	}
	t.undo = append(t.undo, func() error {
		if err := os.Rename(target, staged); err != nil {
			return err
		}
		if backup != "" {
			return os.Rename(backup, target)
		}
		return nil
	})
	if backup != "" {
		t.cleanup = append(t.cleanup, backup)
	}
	return nil
}

// rollback undoes every change made, newest first.
func (t *txn) rollback() error {
	var errs []error
	for i := len(t.undo) - 1; i >= 0; i-- {
		if err := t.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	t.undo = nil
	return errors.Join(errs...)
}

// done drops the backups of a committed run.
func (t *txn) done() {
	for _, p := range t.cleanup {
		os.RemoveAll(p)
	}
}

func replaceFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// change is one file a run writes (b != nil) or removes (b == nil).
type change struct {
	path string
	b    []byte
}

// commit applies the cache directory (when a toolkit was staged) and the
// file changes, all or nothing.
func commit(stage *stagedPin, cache string, changes []change) (err error) {
	var t txn
	defer func() {
		if err != nil {
			if rerr := t.rollback(); rerr != nil {
				err = fmt.Errorf("%w; undoing the changes made also failed: %v", err, rerr)
			}
			return
		}
		t.done()
	}()
	if stage != nil {
		if err := t.replaceDir(stage.Entry.Dir(cache), stage.Stage); err != nil {
			return fmt.Errorf("gen: header cache: %w", err)
		}
	}
	for _, c := range changes {
		if c.b == nil {
			err = t.removeFile(c.path)
		} else {
			err = t.writeFile(c.path, c.b)
		}
		if err != nil {
			return fmt.Errorf("gen: %w (nothing was changed)", err)
		}
	}
	return nil
}

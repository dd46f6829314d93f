package main

// Write stage: the run's files (and, with -cuda, the staged headers) are
// written only when everything before has succeeded, each by a rename, and
// a failure while writing undoes the renames already made; with -check
// nothing is written and the files that would change are listed.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cudagen/cudagen/headers"
)

// sortedPaths lists the changes' paths in order.
func sortedPaths(changes map[string][]byte) []string {
	paths := make([]string, 0, len(changes))
	for p := range changes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// drift lists the files (relative to the root) that differ from what the
// run would write.
func (g *generation) drift(changes map[string][]byte) []string {
	var drift []string
	for _, path := range sortedPaths(changes) {
		b := changes[path]
		old, err := os.ReadFile(path)
		if b == nil && err == nil || b != nil && (err != nil || !bytes.Equal(old, b)) {
			rel, _ := filepath.Rel(g.o.Root, path)
			drift = append(drift, rel)
		}
	}
	reportKept(g.o.Log, g.kept, "bindings not checked (build constraint checked)")
	return drift
}

// write is the write stage: it writes the changes and the staged toolkit,
// all or nothing, and says what it did.
func (g *generation) write(models []*model, changes map[string][]byte) error {
	var cs []change
	for _, path := range sortedPaths(changes) {
		cs = append(cs, change{path, changes[path]})
	}
	if err := writeAll(g.pin, g.cache, cs); err != nil {
		return err
	}
	log, root := g.o.Log, g.o.Root
	if g.pin != nil && g.pin.Same {
		fmt.Fprintf(log, "gen: CUDA %s is pinned already from the headers in %s (the same sha256 sums): its pin is unchanged\n", g.pin.Entry.Version, g.o.Cuda)
	} else if g.pin != nil {
		fmt.Fprintf(log, "gen: pinned CUDA %s from %s (build tag %s) in %s; its headers are in %s\n",
			g.pin.Entry.Version, g.o.Cuda, g.pin.Entry.Tag, relTo(root, g.o.Manifest), g.pin.Entry.Dir(g.cache))
	}
	for _, m := range models {
		fmt.Fprintf(log, "gen: generated CUDA %s (build tag %s)\n", m.Version, m.Tag)
	}
	for _, l := range g.libsDone {
		fmt.Fprintf(log, "gen: generated %s\n", l)
	}
	for _, c := range cs {
		if v, _ := generatedVersion(filepath.Base(c.path)); c.b == nil {
			fmt.Fprintf(log, "gen: removed %s: CUDA %s is no longer pinned\n", relTo(root, c.path), v)
		}
	}
	reportKept(log, g.kept, "committed bindings kept, build constraint rewritten")
	if len(g.kept) > 0 && g.o.Out == "" {
		fmt.Fprintf(log, "gen: %s not regenerated: it needs every pinned version's headers\n", docsFile)
	}
	return nil
}

// reportKept says which versions were not generated, and why.
func reportKept(w io.Writer, kept map[string]string, what string) {
	vs := make([]string, 0, len(kept))
	for v := range kept {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return headers.Less(vs[i], vs[j]) })
	for _, v := range vs {
		fmt.Fprintf(w, "gen: CUDA %s: %s: %s\n", v, what, kept[v])
	}
}

func relTo(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// commitFault, when set (by tests), is called before each change the write
// stage makes; an error it returns fails the write there.
var commitFault func(op, path string) error

// txn applies a run's changes one rename at a time and can undo them.
type txn struct {
	undo    []func() error // in the order made
	cleanup []string       // backups removed once all is written
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
// aside until the write is done.
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

// done drops the backups of a run written whole.
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

// writeAll applies the cache directory (when a toolkit was staged) and the
// file changes, all or nothing.
func writeAll(stage *stagedPin, cache string, changes []change) (err error) {
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

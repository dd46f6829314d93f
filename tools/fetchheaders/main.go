// Command fetchheaders fetches and verifies the pinned CUDA headers into the
// cache (see headers.CacheDir), without touching the system's apt state:
//
//	go run ./tools/fetchheaders            every pinned version that can be had here
//	go run ./tools/fetchheaders 12.4 11.8  those versions (an error if one cannot be had)
//	go run ./tools/fetchheaders nccl2.22   a library pinned by its own version, by tag
//
// It prints each version's cache directory. A checksum mismatch is an error
// that prints both sums.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cudagen/cudagen/headers"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(versions []string) error {
	root, err := headers.ModuleRoot(".")
	if err != nil {
		return fmt.Errorf("fetchheaders: %w", err)
	}
	m, err := headers.Load(filepath.Join(root, "headers", "manifest.json"))
	if err != nil {
		return err
	}
	cache, err := headers.CacheDir()
	if err != nil {
		return err
	}
	explicit := len(versions) > 0
	if !explicit {
		for _, e := range m.Versions {
			versions = append(versions, e.Version)
		}
	}
	for _, v := range versions {
		if slices.ContainsFunc(m.Libraries, func(l headers.Entry) bool { return l.Tag == v }) {
			continue // a library's tag: below
		}
		e := m.Find(v)
		if e == nil {
			return fmt.Errorf("fetchheaders: CUDA %s is not pinned in headers/manifest.json", v)
		}
		dir, err := headers.Ensure(e, cache, os.Stderr)
		if err != nil {
			if !explicit && errors.Is(err, headers.ErrUnavailable) {
				fmt.Printf("CUDA %s: skipped: %v\n", v, err)
				continue
			}
			return err
		}
		fmt.Printf("CUDA %s: %s (verified)\n", v, dir)
	}
	// The libraries pinned by their own version (NCCL), named by tag.
	for i := range m.Libraries {
		e := &m.Libraries[i]
		if explicit && !slices.Contains(versions, e.Tag) {
			continue
		}
		dir, err := headers.Ensure(e, cache, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %s (verified)\n", e.Name(), dir)
	}
	return nil
}

// Command gen generates cudagen's low-level driver bindings from the pinned
// CUDA headers.
//
// Run from anywhere inside the module:
//
//	go run ./gen               regenerate every version in headers/manifest.json,
//	                           fetching headers into the cache as needed
//	go run ./gen -cuda DIR     pin the toolkit in DIR (DIR/include/cuda.h and
//	                           cudaTypedefs.h), then regenerate
//	go run ./gen -check        regenerate in memory and report drift from the
//	                           committed files (exit status 1 on drift)
//
// One file is written per pinned version (cuda/driver/zdriver_cudaX_Y.go, with
// build tag cudaX.Y; the newest is built when no tag is given), and one shared
// loader (cuda/driver/zloader.go).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cudagen/cudagen/headers"
)

// Command is recorded on the first line of every generated file. Every
// generated file is reproduced by it from the manifest.
const Command = "// go run ./gen"

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Options of one run.
type Options struct {
	Root      string // module root
	Manifest  string
	Config    string
	Templates string
	Out       string // output directory; the config's when empty
	Cuda      string // a toolkit to pin first
	Check     bool
	Skip      bool   // skip versions whose headers cannot be had here
	Only      string // generate only this version (the others' files are left alone)
	Log       io.Writer
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	fs.StringVar(&o.Root, "root", "", "module root (default: found from the working directory)")
	fs.StringVar(&o.Manifest, "manifest", "", "manifest (default: ROOT/headers/manifest.json)")
	fs.StringVar(&o.Config, "config", "", "bindings config (default: ROOT/gen/bindings.json)")
	fs.StringVar(&o.Out, "out", "", "output directory (default: the config's, under ROOT)")
	fs.StringVar(&o.Cuda, "cuda", "", "pin the CUDA toolkit in `DIR` (DIR/include/cuda.h) and regenerate")
	fs.BoolVar(&o.Check, "check", false, "compare with the committed files instead of writing")
	fs.BoolVar(&o.Skip, "skip-unavailable", false, "skip versions whose headers cannot be had here, saying so (their committed files are kept)")
	fs.StringVar(&o.Only, "only", "", "generate only `VERSION` (e.g. 13.0), leaving the other versions' files alone")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Log = stderr
	drift, err := Generate(o)
	if err != nil {
		return err
	}
	if o.Check {
		if len(drift) > 0 {
			return fmt.Errorf("gen: the committed bindings differ from what the generator writes: %s; run go run ./gen and commit", strings.Join(drift, ", "))
		}
		fmt.Fprintln(stdout, "gen: no drift")
	}
	return nil
}

// FindRoot walks up from dir to the directory holding go.mod.
func FindRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", errors.New("gen: no go.mod above the working directory; use -root")
		}
		d = p
	}
}

// Generate regenerates every pinned version. With Check set it writes
// nothing and returns the files that differ.
func Generate(o Options) ([]string, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Root == "" {
		r, err := FindRoot(".")
		if err != nil {
			return nil, err
		}
		o.Root = r
	}
	if o.Manifest == "" {
		o.Manifest = filepath.Join(o.Root, "headers", "manifest.json")
	}
	if o.Config == "" {
		o.Config = filepath.Join(o.Root, "gen", "bindings.json")
	}
	if o.Templates == "" {
		o.Templates = filepath.Join(o.Root, "templates")
	}
	cfg, err := LoadConfig(o.Config)
	if err != nil {
		return nil, err
	}
	man, err := headers.Load(o.Manifest)
	if err != nil {
		return nil, err
	}
	cache, err := headers.CacheDir()
	if err != nil {
		return nil, err
	}
	if o.Cuda != "" {
		e, err := PinToolkit(man, o.Cuda, cache)
		if err != nil {
			return nil, err
		}
		if err := man.Save(o.Manifest); err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Log, "gen: pinned CUDA %s from %s (build tag %s)\n", e.Version, o.Cuda, e.Tag)
	}
	out := o.Out
	if out == "" {
		out = filepath.Join(o.Root, cfg.Output)
	}
	em := &Emitter{Cfg: cfg, Command: Command, Templates: o.Templates, Versions: man.Versions}
	var models []*Model
	var skipped []string
	for i := range man.Versions {
		e := &man.Versions[i]
		if o.Only != "" && e.Version != o.Only {
			continue
		}
		dir, err := headers.Ensure(e, cache, o.Log)
		if err != nil {
			if o.Skip && errors.Is(err, headers.ErrUnavailable) {
				fmt.Fprintf(o.Log, "gen: skipping CUDA %s: %v\n", e.Version, err)
				skipped = append(skipped, e.Version)
				continue
			}
			return nil, err
		}
		m, err := Build(cfg, e, dir)
		if err != nil {
			return nil, err
		}
		models = append(models, m)
	}
	if o.Only != "" && len(models) == 0 {
		return nil, fmt.Errorf("gen: -only %s: no such pinned version", o.Only)
	}
	if !o.Check && len(skipped) > 0 {
		fmt.Fprintf(o.Log, "gen: CUDA %s: headers not available here; their committed files are left as they are "+
			"(the drift check, where the headers are, compares them)\n", strings.Join(skipped, ", "))
	}
	files, err := em.Render(models)
	if err != nil {
		return nil, err
	}
	paths := map[string][]byte{}
	for name, b := range files {
		paths[filepath.Join(out, name)] = b
	}
	// The reference covers every version and lives in the module: only a
	// whole run into the module's own output makes it.
	if len(skipped) == 0 && o.Only == "" && o.Out == "" {
		b, err := em.Docs(models)
		if err != nil {
			return nil, err
		}
		paths[filepath.Join(o.Root, DocsFile)] = b
	}
	if o.Check {
		var drift []string
		for path, b := range paths {
			if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, b) {
				rel, _ := filepath.Rel(o.Root, path)
				drift = append(drift, rel)
			}
		}
		sort.Strings(drift)
		return drift, nil
	}
	if err := WriteAll(out, files, o.Only == "" && len(skipped) == 0); err != nil {
		return nil, err
	}
	if b, ok := paths[filepath.Join(o.Root, DocsFile)]; ok {
		if err := os.MkdirAll(filepath.Join(o.Root, filepath.Dir(DocsFile)), 0o755); err != nil {
			return nil, err
		}
		return nil, writeIfChanged(filepath.Join(o.Root, DocsFile), b)
	}
	return nil, nil
}

// Build parses one version's headers in dir and checks them against the pin.
func Build(cfg *Config, e *headers.Entry, dir string) (*Model, error) {
	m, err := ParseHeaders(cfg, dir)
	if err != nil {
		return nil, err
	}
	if e.CUDAVersion != 0 && m.CUDAVersion != e.CUDAVersion {
		return nil, fmt.Errorf("gen: %s: CUDA_VERSION is %d, the manifest pins %d for CUDA %s",
			filepath.Join(dir, "cuda.h"), m.CUDAVersion, e.CUDAVersion, e.Version)
	}
	m.Version, m.Tag, m.Sums = e.Version, e.Tag, e.Files
	return m, nil
}

// PinToolkit adds the toolkit in dir to the manifest and its headers to the
// cache.
func PinToolkit(man *headers.Manifest, dir, cache string) (*headers.Entry, error) {
	inc := filepath.Join(dir, "include")
	if _, err := os.Stat(filepath.Join(inc, "cuda.h")); err != nil {
		if _, err2 := os.Stat(filepath.Join(dir, "cuda.h")); err2 == nil {
			inc = dir
		} else {
			return nil, fmt.Errorf("gen: -cuda %s: no include/cuda.h there: %w", dir, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(inc, "cuda.h"))
	if err != nil {
		return nil, err
	}
	n, err := cudaVersionOf(b)
	if err != nil {
		return nil, fmt.Errorf("gen: %s: %w", filepath.Join(inc, "cuda.h"), err)
	}
	v := headers.VersionFromCUDA(n)
	e := headers.Entry{Version: v, CUDAVersion: n, Tag: headers.TagFor(v), Files: map[string]string{},
		Source: headers.Source{Kind: "toolkit", Path: dir, Note: "pinned with go run ./gen -cuda"}}
	if old := man.Find(v); old != nil && old.Source.Kind == "debian" {
		return nil, fmt.Errorf("gen: CUDA %s is already pinned from Debian's %s; remove it from the manifest first", v, old.Source.Package)
	}
	for _, f := range headers.Files {
		s, err := headers.SumFile(filepath.Join(inc, f))
		if err != nil {
			return nil, fmt.Errorf("gen: -cuda %s: %w", dir, err)
		}
		e.Files[f] = s
	}
	if err := headers.CopyHeaders(inc, e.Dir(cache)); err != nil {
		return nil, err
	}
	man.Put(e)
	return man.Find(v), nil
}

// cudaVersionOf reads "#define CUDA_VERSION N" from cuda.h's text.
func cudaVersionOf(b []byte) (int, error) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "#define" && f[1] == "CUDA_VERSION" {
			return strconv.Atoi(f[2])
		}
	}
	return 0, errors.New("no #define CUDA_VERSION")
}

// Command gen generates cudagen's low-level driver bindings from the pinned
// CUDA headers.
//
// Run from anywhere inside the module:
//
//	go run ./gen               regenerate every version in headers/manifest.json
//	                           whose headers can be had here (fetching them into
//	                           the cache as needed); the others keep their
//	                           committed files, and it says which and why
//	go run ./gen -cuda DIR     pin the toolkit in DIR (DIR/include/cuda.h and
//	                           cudaTypedefs.h) and generate its bindings; needs
//	                           no other version's headers. A version pinned
//	                           already from other headers is refused unless
//	                           -repin is given; from the same headers it is
//	                           a no-op
//	go run ./gen -check        regenerate in memory and report drift from the
//	                           committed files (exit status 1 on drift)
//	go run ./gen -list tags    print the pinned build tags (-list newest: the
//	                           one built when no tag is given)
//
// Each pinned version gets its files under build tag cudaX.Y (the newest is
// built when no tag is given): cuda/driver/zdriver_cudaX_Y.go (pure Go: types,
// enums, tables, wrappers), _cgo.go (the C trampolines), _nocgo.go (every
// call returns ErrNoDriver when cgo is off), _test.go (no-driver test of
// every function), and cuda/driver/internal/layout/zlayout_cudaX_Y*.go (the
// layout check against the real cuda.h); one loader (cuda/driver/zloader.go)
// is shared. Several pinned tags at once select the oldest of them.
// cuda/driver/ztags.go is built only under a cudaX.Y tag that no version
// pins (X from 10 to 19, or to the newest pinned major + 1, Y from 0 to 9):
// it does not compile, and go build prints an identifier naming the pinned
// tags (undefined: cuda_build_tag_is_not_pinned__pinned_tags_are_cuda11_8_...). Every run rewrites the build constraint of
// every generated per-version file, which needs no header. A run changes the
// manifest, the cache and the tree only when it succeeds as a whole.
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
	Cuda      string // a toolkit to pin and generate
	Repin     bool   // let Cuda replace a version pinned from other headers
	Check     bool
	// Strict makes a version whose headers cannot be had here an error.
	// Otherwise its committed files are kept (their constraint rewritten)
	// and the run says so.
	Strict bool
	// Skip is the default now; kept so that older callers compile.
	Skip bool
	Only string // generate only this version (the others' files are kept)
	Log  io.Writer
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	var list string
	fs.StringVar(&o.Root, "root", "", "module root (default: found from the working directory)")
	fs.StringVar(&o.Manifest, "manifest", "", "manifest (default: ROOT/headers/manifest.json)")
	fs.StringVar(&o.Config, "config", "", "bindings config (default: ROOT/gen/bindings.json)")
	fs.StringVar(&o.Out, "out", "", "output directory (default: the config's, under ROOT)")
	fs.StringVar(&o.Cuda, "cuda", "", "pin the CUDA toolkit in `DIR` (DIR/include/cuda.h) and generate its bindings")
	fs.BoolVar(&o.Repin, "repin", false, "with -cuda: replace a version already pinned from other headers (other sha256 sums)")
	fs.BoolVar(&o.Check, "check", false, "compare with the committed files instead of writing")
	fs.BoolVar(&o.Strict, "strict", false, "fail where a pinned version's headers cannot be had here (default: keep its committed files, saying so)")
	fs.BoolVar(&o.Skip, "skip-unavailable", true, "the default (see -strict); accepted for older scripts")
	fs.StringVar(&o.Only, "only", "", "generate only `VERSION` (e.g. 13.0), keeping the other versions' files")
	fs.StringVar(&list, "list", "", "print `WHAT` of the manifest and exit: tags (every pinned build tag) or newest (the tag built when none is given)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("gen: unexpected arguments %q (see -help)", fs.Args())
	}
	if list != "" {
		return List(o, list, stdout)
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

// List prints facts of the manifest for scripts: "tags" (every pinned build
// tag, oldest first) or "newest" (the tag built when none is given).
func List(o Options, what string, w io.Writer) error {
	if err := o.defaults(); err != nil {
		return err
	}
	man, err := headers.Load(o.Manifest)
	if err != nil {
		return err
	}
	if len(man.Versions) == 0 {
		return fmt.Errorf("gen: %s pins no version", o.Manifest)
	}
	switch what {
	case "tags":
		man.Sort()
		for _, v := range man.Versions {
			fmt.Fprintln(w, v.Tag)
		}
	case "newest":
		fmt.Fprintln(w, man.Newest().Tag)
	default:
		return fmt.Errorf("gen: -list %s: want tags or newest", what)
	}
	return nil
}

// FindRoot returns the cudagen module root holding dir.
func FindRoot(dir string) (string, error) {
	r, err := headers.ModuleRoot(dir)
	if err != nil {
		return "", fmt.Errorf("gen: %w (-root)", err)
	}
	return r, nil
}

func (o *Options) defaults() error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Root == "" {
		r, err := FindRoot(".")
		if err != nil {
			return err
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
	return nil
}

// Generate regenerates the pinned versions whose headers can be had (with
// Cuda: pins that toolkit and generates it alone), rewrites every generated
// file's build constraint, and writes it all at once. With Check set it
// writes nothing and returns the files that differ. Its steps: plan (what
// to generate, from which headers, into which files), build (the headers
// of each version parsed into its Model), render (the Models into the
// files' bytes) and commit (write them, or report drift).
func Generate(o Options) (drift []string, err error) {
	p, err := makePlan(o)
	if err != nil {
		return nil, err
	}
	defer p.close()
	models, err := p.build()
	if err != nil {
		return nil, err
	}
	changes, err := p.render(models)
	if err != nil {
		return nil, err
	}
	if o.Check {
		return p.drift(changes), nil
	}
	return nil, p.commit(models, changes)
}

// plan is what one run generates, and from what.
type plan struct {
	o         Options
	cfg       *Config
	man       *headers.Manifest
	manBefore []byte // the manifest as the run found it
	cache     string
	pin       *stagedPin // -cuda: the toolkit being pinned
	out       string     // the output directory
	em        *Emitter
	gen       []versionDir      // the versions generated
	kept      map[string]string // version → why its committed files are kept
}

// versionDir is a version to generate and its headers' directory.
type versionDir struct {
	e   *headers.Entry
	dir string
}

// makePlan checks the options, loads the config and the manifest, stages
// a toolkit to pin, and finds each version's headers.
func makePlan(o Options) (p *plan, err error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Check && o.Cuda != "" {
		return nil, errors.New("gen: -check compares the committed files; it does not combine with -cuda")
	}
	if o.Repin && o.Cuda == "" {
		return nil, errors.New("gen: -repin goes with -cuda DIR: it lets DIR's headers replace those a version is pinned from")
	}
	pl := &plan{o: o, kept: map[string]string{}}
	if err := pl.load(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			pl.close()
		}
	}()
	only, err := pl.stage()
	if err != nil {
		return nil, err
	}
	return pl, pl.versions(only)
}

// load reads the config and the manifest.
func (p *plan) load() (err error) {
	if p.cfg, err = LoadConfig(p.o.Config); err != nil {
		return err
	}
	if p.man, err = headers.Load(p.o.Manifest); err != nil {
		return err
	}
	if p.cache, err = headers.CacheDir(); err != nil {
		return err
	}
	if p.manBefore, err = p.man.Bytes(); err != nil {
		return err
	}
	p.out = p.o.Out
	if p.out == "" {
		p.out = filepath.Join(p.o.Root, p.cfg.Output)
	}
	return nil
}

// stage stages the toolkit -cuda pins; it returns the one version to
// generate ("" for all).
func (p *plan) stage() (only string, err error) {
	only = p.o.Only
	if p.o.Cuda != "" {
		if p.pin, err = stagePin(p.cfg, p.man, p.o.Cuda, p.cache, p.o.Repin); err != nil {
			return "", err
		}
		if only != "" && only != p.pin.Entry.Version {
			return "", fmt.Errorf("gen: -only %s, but %s holds CUDA %s", only, p.o.Cuda, p.pin.Entry.Version)
		}
		only = p.pin.Entry.Version
		p.man.Put(p.pin.Entry)
	}
	if only != "" && p.man.Find(only) == nil {
		return "", fmt.Errorf("gen: -only %s: no such pinned version", only)
	}
	p.em = &Emitter{Cfg: p.cfg, Command: Command, Templates: p.o.Templates, Versions: p.man.Versions}
	return only, nil
}

// versions finds the headers of each version to generate (fetching them
// into the cache as needed), and says why the others are kept.
func (p *plan) versions(only string) error {
	for i := range p.man.Versions {
		e := &p.man.Versions[i]
		switch {
		case only != "" && e.Version != only && p.o.Cuda != "":
			p.kept[e.Version] = "-cuda generates the pinned toolkit only"
		case only != "" && e.Version != only:
			p.kept[e.Version] = "-only " + only
		case p.pin != nil && e.Version == p.pin.Entry.Version:
			p.gen = append(p.gen, versionDir{e, p.pin.Stage})
		default:
			dir, err := headers.Ensure(e, p.cache, p.o.Log)
			if !p.o.Strict && errors.Is(err, headers.ErrUnavailable) {
				p.kept[e.Version] = err.Error()
			} else if err != nil {
				return err
			}
			if err == nil {
				p.gen = append(p.gen, versionDir{e, dir})
			}
		}
	}
	return nil
}

// close removes what the plan staged.
func (p *plan) close() {
	if p.pin != nil {
		p.pin.remove()
	}
}

// mapErr names the toolkit being pinned in an error about its staged copy.
func (p *plan) mapErr(err error) error {
	if p.pin != nil {
		return p.pin.mapErr(err)
	}
	return err
}

// build parses each version's headers into its Model.
func (p *plan) build() ([]*Model, error) {
	var models []*Model
	for _, v := range p.gen {
		m, err := Build(p.cfg, v.e, v.dir)
		if err != nil {
			return nil, p.mapErr(err)
		}
		models = append(models, m)
	}
	return models, nil
}

// render makes every file the run writes (nil: removes), by path: the
// generated versions' files, the kept versions' files with their build
// constraint rewritten, the reference, and the manifest.
func (p *plan) render(models []*Model) (map[string][]byte, error) {
	files, err := p.em.Render(models)
	if err != nil {
		return nil, p.mapErr(err)
	}
	changes := map[string][]byte{}
	for name, b := range files {
		changes[filepath.Join(p.out, name)] = b
	}
	if err := p.rewriteKept(changes); err != nil {
		return nil, err
	}
	if err := p.rewriteBound(models, changes); err != nil {
		return nil, err
	}
	// The reference covers every version and lives in the module: only a
	// run that generated every version into the module's own output makes it.
	if len(p.kept) == 0 && p.o.Out == "" {
		b, err := p.em.Docs(models)
		if err != nil {
			return nil, err
		}
		changes[filepath.Join(p.o.Root, DocsFile)] = b
	}
	if manAfter, err := p.man.Bytes(); err != nil {
		return nil, err
	} else if !bytes.Equal(manAfter, p.manBefore) {
		changes[p.o.Manifest] = manAfter
	}
	return changes, nil
}

// rewriteKept adds to changes the generated files not regenerated: the
// kept versions' files (wherever in the module the generator put them)
// get the constraint the manifest gives them now; files of versions no
// longer pinned, or that the generator no longer writes, go.
func (p *plan) rewriteKept(changes map[string][]byte) error {
	existing, err := p.existing()
	if err != nil {
		return err
	}
	for _, path := range existing {
		if _, regenerated := changes[path]; regenerated {
			continue
		}
		v, _ := generatedVersion(filepath.Base(path))
		_, isKept := p.kept[v]
		if p.man.Find(v) == nil || !isKept && filepath.Dir(path) == filepath.Clean(p.out) {
			changes[path] = nil
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if changes[path], err = rewriteConstraint(b, p.man.Versions, v); err != nil {
			return fmt.Errorf("gen: %s: %w", path, err)
		}
	}
	return nil
}

// existing lists the generated files in the module, and in the output
// directory where it is outside.
func (p *plan) existing() ([]string, error) {
	existing, err := generatedFiles(p.o.Root)
	if err != nil {
		return nil, err
	}
	root := filepath.Clean(p.o.Root) + string(filepath.Separator)
	if p.o.Out != "" && !strings.HasPrefix(filepath.Clean(p.o.Out)+string(filepath.Separator), root) {
		more, err := generatedFiles(p.o.Out)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		existing = append(existing, more...)
	}
	return existing, nil
}

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
func (p *plan) drift(changes map[string][]byte) []string {
	var drift []string
	for _, path := range sortedPaths(changes) {
		b := changes[path]
		old, err := os.ReadFile(path)
		if b == nil && err == nil || b != nil && (err != nil || !bytes.Equal(old, b)) {
			rel, _ := filepath.Rel(p.o.Root, path)
			drift = append(drift, rel)
		}
	}
	reportKept(p.o.Log, p.kept, "bindings not checked (build constraint checked)")
	return drift
}

// commit writes the changes and the staged toolkit, all or nothing, and
// says what it did.
func (p *plan) commit(models []*Model, changes map[string][]byte) error {
	var cs []change
	for _, path := range sortedPaths(changes) {
		cs = append(cs, change{path, changes[path]})
	}
	if err := commit(p.pin, p.cache, cs); err != nil {
		return err
	}
	log, root := p.o.Log, p.o.Root
	if p.pin != nil && p.pin.Same {
		fmt.Fprintf(log, "gen: CUDA %s is pinned already from the headers in %s (the same sha256 sums): its pin is unchanged\n", p.pin.Entry.Version, p.o.Cuda)
	} else if p.pin != nil {
		fmt.Fprintf(log, "gen: pinned CUDA %s from %s (build tag %s) in %s; its headers are in %s\n",
			p.pin.Entry.Version, p.o.Cuda, p.pin.Entry.Tag, relTo(root, p.o.Manifest), p.pin.Entry.Dir(p.cache))
	}
	for _, m := range models {
		fmt.Fprintf(log, "gen: generated CUDA %s (build tag %s)\n", m.Version, m.Tag)
	}
	for _, c := range cs {
		if v, _ := generatedVersion(filepath.Base(c.path)); c.b == nil {
			fmt.Fprintf(log, "gen: removed %s: CUDA %s is no longer pinned\n", relTo(root, c.path), v)
		}
	}
	reportKept(log, p.kept, "committed bindings kept, build constraint rewritten")
	if len(p.kept) > 0 && p.o.Out == "" {
		fmt.Fprintf(log, "gen: %s not regenerated: it needs every pinned version's headers\n", DocsFile)
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

// Build parses one version's headers in dir and checks them against the pin.
func Build(cfg *Config, e *headers.Entry, dir string) (*Model, error) {
	b, err := build(cfg, e, dir)
	if err != nil {
		return nil, err
	}
	return b.Model, nil
}

// build is Build, keeping what the model was built from.
func build(cfg *Config, e *headers.Entry, dir string) (m *builder, err error) {
	defer func() {
		// The parser library can panic on malformed input: an error, never
		// a crash (FuzzParseHeaders reports such inputs).
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("gen: %s: the C parser failed on this header (%s): the header is malformed", filepath.Join(dir, "cuda.h"), clip([]byte(fmt.Sprint(r))))
		}
	}()
	m, err = parse(cfg, dir)
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

package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cudagen/cudagen/headers"
)

// genCommand is recorded on the first line of every generated file. Every
// generated file is reproduced by it from the manifest.
const genCommand = "// go run ./gen"

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// options of one run.
type options struct {
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
	Only   string // generate only this version (the others' files are kept)
	Log    io.Writer
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var list string
	fs.StringVar(&o.Root, "root", "", "module root (default: found from the working directory)")
	fs.StringVar(&o.Manifest, "manifest", "", "manifest (default: ROOT/headers/manifest.json)")
	fs.StringVar(&o.Config, "config", "", "bindings config (default: ROOT/gen/bindings.json)")
	fs.StringVar(&o.Out, "out", "", "output directory (default: the config's, under ROOT)")
	fs.StringVar(&o.Cuda, "cuda", "", "pin the CUDA toolkit in `DIR` (DIR/include/cuda.h) and generate its bindings")
	fs.BoolVar(&o.Repin, "repin", false, "with -cuda: replace a version already pinned from other headers (other sha256 sums)")
	fs.BoolVar(&o.Check, "check", false, "compare with the committed files instead of writing")
	fs.BoolVar(&o.Strict, "strict", false, "fail where a pinned version's headers cannot be had here (default: keep its committed files, saying so)")
	fs.StringVar(&o.Only, "only", "", "generate only `VERSION` (e.g. 13.0), keeping the other versions' files")
	fs.StringVar(&list, "list", "", "print `WHAT` of the manifest and exit: tags (every pinned build tag) or newest (the tag built when none is given)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("gen: unexpected arguments %q (see -help)", fs.Args())
	}
	if list != "" {
		return listManifest(o, list, stdout)
	}
	o.Log = stderr
	drift, err := generate(o)
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

// listManifest prints facts of the manifest for scripts: "tags" (every pinned build
// tag, oldest first) or "newest" (the tag built when none is given).
func listManifest(o options, what string, w io.Writer) error {
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

// findRoot returns the cudagen module root holding dir.
func findRoot(dir string) (string, error) {
	r, err := headers.ModuleRoot(dir)
	if err != nil {
		return "", fmt.Errorf("gen: %w (-root)", err)
	}
	return r, nil
}

func (o *options) defaults() error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Root == "" {
		r, err := findRoot(".")
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

// generate regenerates the pinned versions whose headers can be had (with
// Cuda: pins that toolkit and generates it alone), rewrites every generated
// file's build constraint, and writes it all at once. With Check set it
// writes nothing and returns the files that differ. It runs the four
// stages (doc.go): read and model, one version at a time (g.model), then
// render (g.render) and write (g.write, or g.drift with Check).
func generate(o options) (drift []string, err error) {
	g, err := newGeneration(o)
	if err != nil {
		return nil, err
	}
	defer g.close()
	models, err := g.model()
	if err != nil {
		return nil, err
	}
	changes, err := g.render(models)
	if err != nil {
		return nil, err
	}
	if err := g.libraries(changes); err != nil {
		return nil, err
	}
	if o.Check {
		return g.drift(changes), nil
	}
	return nil, g.write(models, changes)
}

// generation is what one run generates, and from what: the config, the
// manifest, and the headers' directory of each version to generate.
type generation struct {
	o         options
	cfg       *config
	man       *headers.Manifest
	manBefore []byte // the manifest as the run found it
	cache     string
	pin       *stagedPin // -cuda: the toolkit being pinned
	out       string     // the output directory
	em        *renderer
	gen       []versionDir      // the versions generated
	kept      map[string]string // version → why its committed files are kept
	libsDone  []string          // the libraries' versions generated, for the log
	libDocs   []libDoc          // the libraries' tables, for docs/zlibraries.md
	libStale  []string          // the libraries whose headers of a version cannot be had here
}

// versionDir is a version to generate and its headers' directory.
type versionDir struct {
	e   *headers.Entry
	dir string
}

// newGeneration checks the options, loads the config and the manifest,
// stages a toolkit to pin, and finds each version's headers: the part of
// the read stage that every version shares.
func newGeneration(o options) (g *generation, err error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Check && o.Cuda != "" {
		return nil, errors.New("gen: -check compares the committed files; it does not combine with -cuda")
	}
	if o.Repin && o.Cuda == "" {
		return nil, errors.New("gen: -repin goes with -cuda DIR: it lets DIR's headers replace those a version is pinned from")
	}
	pl := &generation{o: o, kept: map[string]string{}}
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
func (g *generation) load() (err error) {
	if g.cfg, err = loadConfig(g.o.Config); err != nil {
		return err
	}
	if g.man, err = headers.Load(g.o.Manifest); err != nil {
		return err
	}
	if g.cache, err = headers.CacheDir(); err != nil {
		return err
	}
	if g.manBefore, err = g.man.Bytes(); err != nil {
		return err
	}
	g.out = g.o.Out
	if g.out == "" {
		g.out = filepath.Join(g.o.Root, g.cfg.Output)
	}
	return nil
}

// stage stages the toolkit -cuda pins; it returns the one version to
// generate ("" for all).
func (g *generation) stage() (only string, err error) {
	only = g.o.Only
	if g.o.Cuda != "" {
		if g.pin, err = stagePin(g.cfg, g.man, g.o.Cuda, g.cache, g.o.Repin); err != nil {
			return "", err
		}
		if only != "" && only != g.pin.Entry.Version {
			return "", fmt.Errorf("gen: -only %s, but %s holds CUDA %s", only, g.o.Cuda, g.pin.Entry.Version)
		}
		only = g.pin.Entry.Version
		g.man.Put(g.pin.Entry)
	}
	if only != "" && g.man.Find(only) == nil {
		return "", fmt.Errorf("gen: -only %s: no such pinned version", only)
	}
	g.em = &renderer{Cfg: g.cfg, Command: genCommand, Templates: g.o.Templates, Versions: g.man.Versions}
	return only, nil
}

// versions finds the headers of each version to generate (fetching them
// into the cache as needed), and says why the others are kept.
func (g *generation) versions(only string) error {
	for i := range g.man.Versions {
		e := &g.man.Versions[i]
		switch {
		case only != "" && e.Version != only && g.o.Cuda != "":
			g.kept[e.Version] = "-cuda generates the pinned toolkit only"
		case only != "" && e.Version != only:
			g.kept[e.Version] = "-only " + only
		case g.pin != nil && e.Version == g.pin.Entry.Version:
			g.gen = append(g.gen, versionDir{e, g.pin.Stage})
		default:
			dir, err := headers.Ensure(e, g.cache, g.o.Log)
			if !g.o.Strict && errors.Is(err, headers.ErrUnavailable) {
				g.kept[e.Version] = err.Error()
			} else if err != nil {
				return err
			}
			if err == nil {
				g.gen = append(g.gen, versionDir{e, dir})
			}
		}
	}
	return nil
}

// close removes what the run staged.
func (g *generation) close() {
	if g.pin != nil {
		g.pin.remove()
	}
}

// mapErr names the toolkit being pinned in an error about its staged copy.
func (g *generation) mapErr(err error) error {
	if g.pin != nil {
		return g.pin.mapErr(err)
	}
	return err
}

// model runs the read and model stages on each version to generate, one
// at a time (modelHeaders), and keeps the models.
func (g *generation) model() (models []*model, err error) {
	dir := ""
	defer func() {
		// The parser library can panic on malformed input: an error, never
		// a crash (FuzzParseHeaders reports such inputs).
		if r := recover(); r != nil {
			models, err = nil, g.mapErr(fmt.Errorf("gen: %s: the C parser failed on this header (%s): the header is malformed", filepath.Join(dir, "cuda.h"), clip([]byte(fmt.Sprint(r)))))
		}
	}()
	for _, v := range g.gen {
		dir = v.dir
		b, err := modelHeaders(g.cfg, v.e, v.dir)
		if err != nil {
			return nil, g.mapErr(err)
		}
		models = append(models, b.model)
	}
	return models, nil
}

// render makes every file the run writes (nil: removes), by path: the
// generated versions' files, the kept versions' files with their build
// constraint rewritten, the reference, and the manifest.
func (g *generation) render(models []*model) (map[string][]byte, error) {
	files, err := g.em.renderFiles(models)
	if err != nil {
		return nil, g.mapErr(err)
	}
	changes := map[string][]byte{}
	for name, b := range files {
		changes[filepath.Join(g.out, name)] = b
	}
	if err := g.rewriteKept(changes); err != nil {
		return nil, err
	}
	if err := g.rewriteBound(models, changes); err != nil {
		return nil, err
	}
	// The reference covers every version and lives in the module: only a
	// run that generated every version into the module's own output makes it.
	if len(g.kept) == 0 && g.o.Out == "" {
		b, err := g.em.docs(models)
		if err != nil {
			return nil, err
		}
		changes[filepath.Join(g.o.Root, docsFile)] = b
	}
	if manAfter, err := g.man.Bytes(); err != nil {
		return nil, err
	} else if !bytes.Equal(manAfter, g.manBefore) {
		changes[g.o.Manifest] = manAfter
	}
	return changes, nil
}

// rewriteKept adds to changes the generated files not regenerated: the
// kept versions' files (wherever in the module the generator put them)
// get the constraint the manifest gives them now; files of versions no
// longer pinned, or that the generator no longer writes, go.
func (g *generation) rewriteKept(changes map[string][]byte) error {
	existing, err := g.existing()
	if err != nil {
		return err
	}
	for _, path := range existing {
		if _, regenerated := changes[path]; regenerated {
			continue
		}
		v, _ := generatedVersion(filepath.Base(path))
		_, isKept := g.kept[v]
		if g.man.Find(v) == nil || !isKept && filepath.Dir(path) == filepath.Clean(g.out) {
			changes[path] = nil
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if changes[path], err = rewriteConstraint(b, g.man.Versions, v); err != nil {
			return fmt.Errorf("gen: %s: %w", path, err)
		}
	}
	return nil
}

// existing lists the driver's generated files in the module, and in the
// output directory where it is outside (the libraries' are library.go's).
func (g *generation) existing() ([]string, error) {
	all, err := generatedFiles(g.o.Root)
	if err != nil {
		return nil, err
	}
	var existing []string
	for _, p := range all {
		if b := filepath.Base(p); strings.HasPrefix(b, "zdriver_") || strings.HasPrefix(b, "zlayout_") {
			existing = append(existing, p)
		}
	}
	root := filepath.Clean(g.o.Root) + string(filepath.Separator)
	if g.o.Out != "" && !strings.HasPrefix(filepath.Clean(g.o.Out)+string(filepath.Separator), root) {
		more, err := generatedFiles(g.o.Out)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		existing = append(existing, more...)
	}
	return existing, nil
}

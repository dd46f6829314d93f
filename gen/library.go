package main

// Every stage, for the CUDA libraries other than the driver (NVRTC,
// nvJitLink). A library is described by a config of its own (gen/nvrtc.json:
// the same overrides as the driver's gen/bindings.json, and a "library"
// block: its header, the prefix of its names, its result type, the shared
// library's names by toolkit major version and the environment variable that
// names the file instead), listed in gen/bindings.json's "libraries". Its
// header is pinned with the toolkit's (headers/manifest.json lists it among
// a version's files where the toolkit ships it). The read and model stages
// are the driver's, less what only the driver has (cudaTypedefs.h's ABI
// versions, contexts); the render stage is the driver's
// Go and C, with wrappers named as the functions (no context variant) and
// a pure-Go file of the library's own. Each version whose toolkit ships the
// header gets its files under the version's build tag, as the driver's; the
// tags of the others build the library's unbound file, which says so.

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cudagen/cudagen/headers"
	"github.com/dave/jennifer/jen"
	"modernc.org/cc/v4"
)

// libraryConf is how a library other than the driver is bound.
type libraryConf struct {
	// Name is the library's name in messages: "NVRTC".
	Name string `json:"name"`
	// Header is its header, one of headers.LibraryFiles: "nvrtc.h".
	Header string `json:"header"`
	// Prefix starts every function and type name: "nvrtc".
	Prefix string `json:"prefix"`
	// ConstPrefix starts its enumerators: "NVRTC_".
	ConstPrefix string `json:"constPrefix"`
	// Result is the type every function returns: "nvrtcResult".
	Result string `json:"result"`
	// Sonames are the shared library's names that a toolkit major version's
	// bindings load, newest first: "12" → ["libnvrtc.so.12"].
	Sonames map[string][]string `json:"sonames"`
	// Env names a variable that gives the shared library's path instead.
	Env string `json:"env"`
	// Install says what provides the shared library, for the error that
	// finds none.
	Install string `json:"install"`
	// Pins names the library's own entries in headers/manifest.json
	// ("libraries"), for a library pinned by its own version (NCCL), whose
	// tags are its name and version (nccl2.22); empty for one pinned with
	// its toolkit. Sonames are then keyed by the library's major version.
	Pins string `json:"pins,omitempty"`
	// Stubs stand in for the headers of other APIs the header includes
	// (nccl.h includes cuda_runtime.h): file name → the C text it needs;
	// StubsWhy says why that text is what the header needs.
	Stubs    map[string]string `json:"stubs,omitempty"`
	StubsWhy string            `json:"stubsWhy,omitempty"`
	// External gives C types of other APIs a Go type the package declares
	// by hand (cudaStream_t → Stream, an alias of driver.Stream).
	External map[string]string `json:"external,omitempty"`
}

// check refuses a library block missing what binding needs.
func (l *libraryConf) check(path string) error {
	if l == nil {
		return nil
	}
	switch {
	case l.Pins == "" && !slices.Contains(headers.LibraryFiles, l.Header):
		return fmt.Errorf("%s: library.header %q is none of the pinned library headers (%s)", path, l.Header, strings.Join(headers.LibraryFiles, ", "))
	case l.Name == "" || l.Prefix == "" || l.ConstPrefix == "" || l.Result == "" || l.Env == "" || l.Install == "":
		return fmt.Errorf("%s: library needs name, header, prefix, constPrefix, result, sonames, env and install", path)
	case len(l.Sonames) == 0:
		return fmt.Errorf("%s: library.sonames is empty: give the shared library's names for each toolkit major version", path)
	case len(l.Stubs) > 0 && l.StubsWhy == "":
		return fmt.Errorf("%s: library.stubs needs stubsWhy: why the stand-in text is what the header needs", path)
	}
	return nil
}

// libraryConfigs loads the configs cfg lists in "libraries", relative to
// the directory of cfg's file.
func libraryConfigs(cfgPath string, cfg *config) ([]*config, error) {
	var libs []*config
	for _, name := range cfg.Libraries {
		c, err := loadConfig(filepath.Join(filepath.Dir(cfgPath), name))
		if err != nil {
			return nil, fmt.Errorf("gen: %w", err)
		}
		if c.Library == nil {
			return nil, fmt.Errorf("gen: %s: a library's config needs its \"library\" block", name)
		}
		libs = append(libs, c)
	}
	return libs, nil
}

// wrapperName is the Go name of fn's cgo wrapper: the driver's take the
// context to make current (XCtx); a library's are the functions.
func wrapperName(m *model, fn *function) string {
	if m.Lib != nil {
		return fn.GoName
	}
	return fn.GoName + "Ctx"
}

// fileName is the name of one of m's files: suffix "" for the pure-Go
// file, "_cgo", "_nocgo" or "_test".
func (e *renderer) fileName(m *model, suffix string) string {
	if m.Lib == nil {
		return strings.TrimSuffix(fileName(m.Version), ".go") + suffix + ".go"
	}
	return libFileName(e.Cfg.Package, m.Tag, suffix)
}

// libFileName is a library's per-version file, named by its tag:
// znvrtc_cuda12_4_cgo.go, znccl_nccl2_22.go.
func libFileName(pkg, tag, suffix string) string {
	return "z" + pkg + "_" + strings.ReplaceAll(tag, ".", "_") + suffix + ".go"
}

// libLayoutFileName is a library version's layout check, relative to its
// package: internal/layout/znccl_nccl2_22.go.
func libLayoutFileName(pkg, tag, suffix string) string {
	return layoutDir + "/" + libFileName(pkg, tag, suffix)
}

// libUnboundFile builds under the tags of the versions that do not bind
// the library.
func libUnboundFile(pkg string) string { return "z" + pkg + "_unbound.go" }

// libraryModel runs the read and model stages of cfg's library on the
// headers of version e in dir.
func libraryModel(cfg *config, e *headers.Entry, dir string) (*model, error) {
	s, err := translateLibrary(cfg, dir)
	if err != nil {
		return nil, err
	}
	lib := cfg.Library
	m := &builder{model: &model{HeaderFile: filepath.Join(dir, lib.Header), Lib: lib, Version: e.Version, Tag: e.Tag,
		CUDAVersion: e.CUDAVersion, Sums: map[string]string{lib.Header: e.Files[lib.Header]}},
		cfg: cfg, src: s, byName: map[string]*namedType{}, byTag: map[string]*namedType{}, goIDs: map[string]string{}, ct: map[*namedType]cc.Type{}}
	for _, n := range libHandWritten {
		m.goIDs[n] = "(hand-written in the library's package)"
	}
	m.PinName = e.Name()
	if err := inOrder(m.typesAndWords, m.libFunctions, m.defines); err != nil {
		return nil, err
	}
	return m.model, nil
}

// libHandWritten are the Go names every library's package defines by hand.
var libHandWritten = []string{"Load", "Functions", "FunctionInfo", "Toolkit", "BuildTag", "HeaderSHA256", "Error", "ErrNoLibrary", "ErrNotSupported", "LoadError"}

// translateLibrary parses DIR/HEADER alone with cc.
func translateLibrary(cfg *config, dir string) (*source, error) {
	lib := cfg.Library
	path := filepath.Join(dir, lib.Header)
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	if err := checkText(path, text); err != nil {
		return nil, err
	}
	ccfg, err := ccConfig()
	if err != nil {
		return nil, err
	}
	c := *ccfg
	c.EvalAllMacros = true
	inc := []string{dir}
	if len(lib.Stubs) > 0 {
		stubs, err := writeStubs(lib)
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(stubs)
		inc = append(inc, stubs)
	}
	c.IncludePaths = append(inc, ccfg.IncludePaths...)
	c.SysIncludePaths = append(inc, ccfg.SysIncludePaths...)
	ast, err := translateBounded(path, &c, []cc.Source{
		{Name: "<predefined>", Value: ccfg.Predefined},
		{Name: "<builtin>", Value: cc.Builtin},
		{Name: path},
	})
	if err != nil {
		return nil, err
	}
	s := &source{dir: dir, ast: ast, probes: map[string]string{}, files: map[string][]string{}, aliasOf: map[string]string{}, pfns: map[string]*cc.Declarator{}}
	for _, m := range aliasRe.FindAllSubmatch(text, -1) {
		s.aliasOf[string(m[2])] = string(m[1])
	}
	if err := s.libraryDecls(lib, path); err != nil {
		return nil, err
	}
	slices.SortFunc(s.funcs, func(a, b *cc.Declarator) int { return a.Position().Line - b.Position().Line })
	return s, nil
}

// libraryDecls collects the typedefs and functions lib's header declares
// (and the other APIs' types it uses, from its stubs). A function is bound
// by its name, or, where the header's static inline function of that name
// calls a versioned entry point (nvJitLink's nvJitLinkCreate calls
// __nvJitLinkCreate_12_4), by the inline function's name and doc, resolved
// by the entry point's symbol.
func (s *source) libraryDecls(lib *libraryConf, path string) error {
	defs := map[string]*cc.Declarator{} // static inline definitions, by name
	versioned := map[string]string{}    // base name → its versioned symbol
	for l := s.ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed != nil && ed.FunctionDefinition != nil {
			if d := ed.FunctionDefinition.Declarator; d != nil && filepath.Base(d.Position().Filename) == lib.Header && strings.HasPrefix(d.Name(), lib.Prefix) {
				defs[d.Name()] = d
			}
			continue
		}
		if ed == nil || ed.Declaration == nil {
			continue
		}
		for il := ed.Declaration.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
			d := il.InitDeclarator.Declarator
			if d == nil {
				continue
			}
			if _, ext := lib.External[d.Name()]; ext && d.IsTypename() {
				s.typedefs = append(s.typedefs, d) // another API's type the header uses (a stub's)
				continue
			}
			if filepath.Base(d.Position().Filename) != lib.Header {
				continue
			}
			switch name := d.Name(); {
			case d.IsTypename():
				s.typedefs = append(s.typedefs, d)
			case d.Type().Kind() == cc.Function && strings.HasPrefix(name, lib.Prefix):
				s.funcs = append(s.funcs, d)
				s.probes[name] = name // a library's names are its symbols: no macro renames them
			case d.Type().Kind() == cc.Function && strings.HasPrefix(name, "__"+lib.Prefix):
				// An entry point versioned by the header (nvJitLink's
				// __nvJitLinkCreate_12_4), which a static inline function
				// of the unversioned name calls.
				if m := libVersioned.FindStringSubmatch(name); m != nil {
					versioned[m[1]] = name
				}
			}
		}
	}
	// A static inline function that calls a versioned entry point is bound
	// by its name and doc, and resolved by the entry point's symbol.
	for base, sym := range versioned {
		d := defs[base]
		if d == nil {
			return fmt.Errorf("gen: %s: %s is declared, but no static inline %s calls it", path, sym, base)
		}
		s.funcs = append(s.funcs, d)
		s.probes[base] = sym
	}
	return nil
}

// libVersioned matches a versioned entry point: __nvJitLinkCreate_12_4.
var libVersioned = regexp.MustCompile(`^__(\w+?)_[0-9]+_[0-9]+$`)

// writeStubs writes lib's stand-in headers into a new temporary directory.
func writeStubs(lib *libraryConf) (string, error) {
	stubs, err := os.MkdirTemp("", "cudagen-stubs-")
	if err != nil {
		return "", fmt.Errorf("gen: %w", err)
	}
	for name, text := range lib.Stubs {
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(text+"\n"), 0o644); err != nil {
			os.RemoveAll(stubs)
			return "", fmt.Errorf("gen: %w", err)
		}
	}
	return stubs, nil
}

// checkText refuses a header that is not text (headercheck.go says why
// the driver's are checked the same way).
func checkText(path string, b []byte) error {
	if i := slices.Index(b, 0); i >= 0 {
		return fmt.Errorf("gen: %s: byte %d is NUL: not a C header", path, i)
	}
	if !utf8.Valid(b) {
		return fmt.Errorf("gen: %s: not UTF-8 text: not a C header", path)
	}
	return nil
}

// libFunctions builds every function the library's header declares.
func (m *builder) libFunctions() error {
	seen := map[string]bool{}
	for _, d := range m.src.funcs {
		base := d.Name()
		if seen[base] {
			continue
		}
		seen[base] = true
		m.Declared++
		sym := m.src.probes[base] // the symbol: the name, or the versioned entry point its inline function calls
		if why, ok := m.cfg.Exclude[base]; ok {
			m.Skipped = append(m.Skipped, skipped{sym, "excluded by the library's config: " + why})
			continue
		}
		f, why, err := m.function(d, sym, base, nil)
		if err != nil {
			return err
		}
		if why != "" {
			m.Skipped = append(m.Skipped, skipped{sym, why})
			continue
		}
		f.Index, f.Macro, f.NoCtx = len(m.Funcs), true, true
		m.Funcs = append(m.Funcs, f)
	}
	return inOrder(m.releases, m.sizedFuncs, m.typedKeys, m.threads)
}

// libPure renders a library version's file that needs no cgo: what the
// bindings are of, how the library is found, its types and enums, and the
// functions' table.
func (e *renderer) libPure(m *model) ([]byte, error) {
	lib := m.Lib
	f := e.newFile(e.Cfg.Package, e.constraint(m.Version, ""))
	major := strings.SplitN(m.Version, ".", 2)[0]
	names := lib.Sonames[major]
	if len(names) == 0 {
		return nil, fmt.Errorf("gen: %s: library.sonames names no shared library for %s's major version %s", m.HeaderFile, m.PinName, major)
	}
	var nameLits []jen.Code
	for _, n := range names {
		nameLits = append(nameLits, jen.Lit(n))
	}
	f.Add(comment(line("Bindings for %s from %s's %s (sha256 %s).", lib.Name, m.PinName, lib.Header, m.Sums[lib.Header])))
	f.Const().Defs(
		docConst("HeaderVersion", m.Version, "is the version the header these bindings were generated from is pinned as."),
		docConst("pinName", m.PinName, "names that version in messages."),
		docConst("BuildTag", m.Tag, "is the build tag that selects these bindings."),
		docConst("libraryEnv", lib.Env, "names the variable that gives the shared library's path."),
		docConst("libraryInstall", lib.Install, "says what provides the shared library."),
		docConst("unboundWhy", "", "is empty: this build binds the library."),
	)
	f.Line()
	f.Add(comment("// HeaderSHA256 holds the sha256 of the header the bindings were generated from."))
	f.Var().Id("HeaderSHA256").Op("=").Map(jen.String()).String().Values(jen.Dict{jen.Lit(lib.Header): jen.Lit(m.Sums[lib.Header])})
	f.Line()
	f.Add(comment("// libraryNames are the shared library's names these bindings load, tried in", "// order (the newest compatible first)."))
	f.Var().Id("libraryNames").Op("=").Index().String().Values(nameLits...)
	f.Line()
	typeDecls(f, m)
	f.Add(comment("// Functions lists every bound function: its Go name, its C name, the symbol it", "// is found by (the entry point the header's inline function calls, where it", "// has one), and the number of C parameters it takes. The wrappers index", "// procs in the same order."))
	var infos []jen.Code
	for _, fn := range m.Funcs {
		infos = append(infos, row(jen.Lit(fn.GoName), jen.Lit(fn.Base), jen.Lit(fn.Symbol), jen.Lit(len(fn.Params))))
	}
	f.Var().Id("Functions").Op("=").Index().Id("FunctionInfo").Add(rows(infos...))
	f.Line()
	f.Var().Id("procs").Index(jen.Lit(len(m.Funcs))).Id("proc")
	f.Line()
	absentDecls(f, m)
	return renderFor(m, e.fileName(m, ""), f)
}

// typeDecls declares m's types (but the external ones), their enums'
// values and tables, the #define groups, and their methods.
func typeDecls(f *jen.File, m *model) {
	var d decls
	for _, t := range m.Types {
		if !t.External {
			goTypeDecl(&d, t)
		}
	}
	defineDecls(&d, m)
	if len(d.types) > 0 {
		f.Type().Defs(d.types...)
		f.Line()
	}
	for _, c := range d.consts { // one const block per enum and per #define group
		f.Add(c)
	}
	if len(d.vars) > 0 {
		f.Var().Defs(d.vars...)
		f.Line()
	}
	for _, c := range d.funcs {
		f.Add(c)
	}
}

// libTest renders a library version's test data: a call of every bound
// function with zero arguments.
func (e *renderer) libTest(m *model) ([]byte, error) {
	f := e.newFile(e.Cfg.Package, e.constraint(m.Version, ""))
	zeroArgCalls(f, m, "noLibraryCalls", false)
	absentCalls(f, m)
	return renderFor(m, e.fileName(m, "_test"), f)
}

// libUnbound renders the files built under the tags of the pinned versions
// whose toolkit has no header of the library pinned: the API of the newest
// version that binds it (newest: its types, enums and functions), every
// function returning the error Load returns, which says why and names the
// tags that bind it; and its test's calls of every function. Code that
// uses the package compiles under every tag.
func (e *renderer) libUnbound(lib *libraryConf, unbound []headers.Entry, newest *model) (code, test []byte, err error) {
	expr, tags := unboundExpr(e.Versions, unbound)
	constraint := buildLine(expr)
	f := jen.NewFile(e.Cfg.Package)
	e.header(f, constraint)
	f.Add(comment(line("The builds of %s bind no %s: their toolkit ships no %s, or it is not pinned (headers/manifest.json lists the headers each version pins; go run ./gen -cuda DIR pins a toolkit's). They declare the API of %s's, every call returning the error Load returns.", strings.Join(tags, ", "), lib.Name, lib.Header, newest.PinName)))
	f.Const().Defs(
		jen.Id("HeaderVersion").Op("=").Lit(""),
		jen.Id("pinName").Op("=").Lit(""),
		jen.Id("BuildTag").Op("=").Lit(""),
		jen.Id("libraryEnv").Op("=").Lit(lib.Env),
		jen.Id("libraryInstall").Op("=").Lit(lib.Install),
		docConst("unboundWhy", fmt.Sprintf("this build (%s) has no %s bindings: no %s is pinned for its toolkit; build with a tag whose toolkit pins it (%s)",
			strings.Join(tags, " or "), lib.Name, lib.Header, strings.Join(boundTags(e.Versions, lib), ", ")), "is Load's error under these builds."),
	)
	f.Var().Defs(
		jen.Id("HeaderSHA256").Op("=").Map(jen.String()).String().Values(),
		jen.Id("libraryNames").Index().String(),
		jen.Id("Functions").Index().Id("FunctionInfo"),
		jen.Id("procs").Index(jen.Lit(0)).Id("proc"),
		comment("// errUnbound is every call's error: Load's."),
		jen.Id("errUnbound").Op("=").Func().Params().Error().Block(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("Load").Call(), jen.Return(jen.Err())).Call(),
	)
	typeDecls(f, newest)
	fns := newest.Funcs
	for _, a := range newest.Absent {
		fns = append(fns, a.f)
	}
	for _, fn := range fns {
		stubFunc(f, newest, fn, jen.Id("errUnbound"), line("%s calls %s: in these builds, it returns the error Load returns.", fn.GoName, fn.Base))
	}
	if code, err = e.gofmt(f); err != nil {
		return nil, nil, err
	}
	t := jen.NewFile(e.Cfg.Package)
	e.header(t, constraint)
	zeroArgCalls(t, &model{Funcs: fns}, "noLibraryCalls", false)
	absentCalls(t, &model{})
	test, err = e.gofmt(t)
	return code, test, err
}

// unboundExpr is the build constraint of the builds of the versions in
// unbound, and their tags.
func unboundExpr(versions, unbound []headers.Entry) (expr string, tags []string) {
	var exprs []string
	for _, v := range unbound {
		x := versionExpr(versions, v.Version)
		if x == "" {
			x = "!" + v.Tag // the only version pinned
		}
		if len(unbound) > 1 && strings.ContainsAny(x, "&|") {
			x = "(" + x + ")"
		}
		exprs = append(exprs, x)
		tags = append(tags, v.Tag)
	}
	return strings.Join(exprs, " || "), tags
}

// boundTags are the tags of the pinned versions that bind lib.
func boundTags(vs []headers.Entry, lib *libraryConf) []string {
	var tags []string
	for _, v := range vs {
		if v.Has(lib.Header) {
			tags = append(tags, v.Tag)
		}
	}
	return tags
}

// libraries renders every library's files into changes (generate's render
// stage, after the driver's): for each version the run generates whose
// toolkit pins the library's header, its files; for those kept, their
// committed files with the constraint rewritten; the unbound file for the
// versions without the header; and the removal of files of versions no
// longer pinned. A run into another output directory (-out) binds the
// driver only.
func (g *generation) libraries(changes map[string][]byte) error {
	if g.o.Out != "" {
		return nil
	}
	libs, err := libraryConfigs(g.o.Config, g.cfg)
	if err != nil {
		return err
	}
	for _, cfg := range libs {
		if err := g.library(cfg, changes); err != nil {
			return err
		}
	}
	return g.libraryDocs(changes)
}

// library renders one library's files into changes.
func (g *generation) library(cfg *config, changes map[string][]byte) error {
	lib := cfg.Library
	out := filepath.Join(g.o.Root, cfg.Output)
	pins, gen, err := g.libraryPins(lib)
	if err != nil {
		return err
	}
	em := &renderer{Cfg: cfg, Command: genCommand, Templates: g.o.Templates, Versions: pins}
	own := map[string]bool{}
	for path, render := range em.libRuntimeFiles(lib, out) {
		b, err := render()
		if err != nil {
			return err
		}
		changes[path], own[path] = b, true
	}
	var unbound []headers.Entry
	for _, v := range pins {
		if !v.Has(lib.Header) {
			unbound = append(unbound, v)
		}
	}
	var models []*model
	for _, v := range gen {
		m, err := libraryModel(cfg, v.e, v.dir)
		if err != nil {
			return g.mapErr(err)
		}
		models = append(models, m)
	}
	all, missing, err := g.libraryAll(cfg, pins, models)
	if err != nil {
		return err
	}
	if len(missing) > 0 && len(models) > 0 {
		models = onlyNew(g.o.Log, cfg, out, missing, models)
	}
	if len(missing) > 0 {
		g.libStale = append(g.libStale, lib.Name)
	} else {
		g.libDocs = append(g.libDocs, newLibDoc(cfg, all))
	}
	var newest *model // of the newest version that binds lib, of those here
	for _, m := range all {
		if newest == nil || headers.Less(newest.Version, m.Version) {
			newest = m
		}
	}
	// stale: a newer version binds lib, whose headers cannot be had here.
	stale := slices.ContainsFunc(missing, func(e headers.Entry) bool { return newest == nil || headers.Less(newest.Version, e.Version) })
	for _, m := range all {
		m.Absent = absentFuncs(m, all)
	}
	for _, m := range models {
		g.libsDone = append(g.libsDone, fmt.Sprintf("%s from %s (build tag %s)", lib.Name, m.PinName, m.Tag))
		for suffix, render := range map[string]func(*model) ([]byte, error){"": em.libPure, "_cgo": em.cgo, "_nocgo": em.noCgo, "_test": em.libTest} {
			b, err := render(m)
			if err != nil {
				return g.mapErr(err)
			}
			path := filepath.Join(out, libFileName(cfg.Package, m.Tag, suffix))
			changes[path], own[path] = b, true
		}
		if len(layoutChecks(m, "")) > 0 { // the layout check of its structs
			c, t, err := em.layout(m)
			if err != nil {
				return g.mapErr(err)
			}
			changes[filepath.Join(out, libLayoutFileName(cfg.Package, m.Tag, ""))] = c
			changes[filepath.Join(out, libLayoutFileName(cfg.Package, m.Tag, "_test"))] = t
		}
	}
	if err := g.libraryUnbound(em, cfg, out, unbound, newest, stale, own, changes); err != nil {
		return err
	}
	if err := libraryBound(pins, cfg, out, changes); err != nil {
		return err
	}
	return libraryKept(cfg, out, pins, own, changes)
}

// onlyNew are the models of versions with no committed files yet, where
// missing's headers cannot be had: every version's files declare the
// functions the others bind, so the committed ones stay as they are
// (libraryKept), and a new version's declare those of the versions whose
// headers are here.
func onlyNew(log io.Writer, cfg *config, out string, missing []headers.Entry, models []*model) []*model {
	lib := cfg.Library
	fmt.Fprintf(log, "gen: %s: %s's %s cannot be had here: the committed bindings stay as they are; a newly pinned version declares only the functions of the versions whose headers are here\n", lib.Name, missing[0].Name(), lib.Header)
	return slices.DeleteFunc(models, func(m *model) bool {
		_, err := os.Stat(filepath.Join(out, libFileName(cfg.Package, m.Tag, "")))
		return err == nil
	})
}

// libraryUnbound renders the unbound files (libUnbound) into changes, or
// removes them where every pinned version binds lib. Their API is the
// newest binding version's; where that version's headers cannot be had
// here (stale), the committed files stay, their constraint rewritten, or,
// where there are none, the newest version here gives the API.
func (g *generation) libraryUnbound(em *renderer, cfg *config, out string, unbound []headers.Entry, newest *model, stale bool, own map[string]bool, changes map[string][]byte) error {
	lib := cfg.Library
	paths := []string{filepath.Join(out, libUnboundFile(cfg.Package)), filepath.Join(out, strings.TrimSuffix(libUnboundFile(cfg.Package), ".go")+"_test.go")}
	if len(unbound) == 0 {
		for _, p := range paths {
			if _, err := os.Stat(p); err == nil {
				changes[p] = nil
			}
		}
		return nil
	}
	if _, err := os.Stat(paths[0]); stale && err == nil {
		fmt.Fprintf(g.o.Log, "gen: %s: %s kept, its build constraint rewritten: the API it declares is that of a version whose headers cannot be had here\n", lib.Name, libUnboundFile(cfg.Package))
		return keepUnbound(paths, em.Versions, unbound, own, changes)
	}
	if newest == nil {
		return fmt.Errorf("gen: %s: no pinned version whose headers are here binds it; pin one whose toolkit ships %s, or fetch the pinned headers", lib.Name, lib.Header)
	}
	if stale {
		fmt.Fprintf(g.o.Log, "gen: %s: %s declares %s's API: a newer version's headers cannot be had here\n", lib.Name, libUnboundFile(cfg.Package), newest.PinName)
	}
	code, test, err := em.libUnbound(lib, unbound, newest)
	if err != nil {
		return err
	}
	changes[paths[0]], changes[paths[1]] = code, test
	own[paths[0]], own[paths[1]] = true, true
	return nil
}

// keepUnbound puts in changes the committed unbound files at paths with
// the constraint of the builds of the versions in unbound.
func keepUnbound(paths []string, versions, unbound []headers.Entry, own map[string]bool, changes map[string][]byte) error {
	expr, _ := unboundExpr(versions, unbound)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		if changes[p], err = setConstraint(b, expr); err != nil {
			return fmt.Errorf("gen: %s: %w", p, err)
		}
		own[p] = true
	}
	return nil
}

// libraryKept puts in changes the library's committed files of the versions
// not generated: kept (their constraint rewritten) while the version pins
// the header, else removed.
func libraryKept(cfg *config, out string, pins []headers.Entry, own map[string]bool, changes map[string][]byte) error {
	lib := cfg.Library
	ents, err := os.ReadDir(out)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, d := range ents {
		path := filepath.Join(out, d.Name())
		tag, ok := libTag(cfg.Package, d.Name())
		if !ok || own[path] {
			continue
		}
		i := slices.IndexFunc(pins, func(e headers.Entry) bool { return e.Tag == tag })
		if i < 0 || !pins[i].Has(lib.Header) {
			changes[path] = nil
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if changes[path], err = rewriteConstraint(b, pins, pins[i].Version); err != nil {
			return fmt.Errorf("gen: %s: %w", path, err)
		}
	}
	return nil
}

// libraryAll are the models of every pinned version that binds the
// library: those generated, and the others' from the cache where their
// headers are there (a -cuda or -only run generates one version; the
// functions every version declares come from all of them). missing are the
// versions whose headers cannot be had here.
func (g *generation) libraryAll(cfg *config, pins []headers.Entry, generated []*model) (all []*model, missing []headers.Entry, err error) {
	all = append([]*model(nil), generated...)
	for i := range pins {
		e := &pins[i]
		if !e.Has(cfg.Library.Header) || slices.ContainsFunc(generated, func(m *model) bool { return m.Tag == e.Tag }) {
			continue
		}
		dir, err := headers.Ensure(e, g.cache, g.o.Log)
		if errors.Is(err, headers.ErrUnavailable) {
			missing = append(missing, *e)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		m, err := libraryModel(cfg, e, dir)
		if err != nil {
			return nil, nil, g.mapErr(err)
		}
		all = append(all, m)
	}
	return all, missing, nil
}

// absentFuncs are the functions other pinned versions of the library bind
// that m's header does not declare, each from the newest version that
// binds it, where m has every type its signature uses: m's files declare
// them, returning an error that matches ErrNotSupported, so that code
// using the package compiles under every tag.
func absentFuncs(m *model, all []*model) []absentFunc {
	have := map[string]bool{}
	for _, f := range m.Funcs {
		have[f.GoName] = true
	}
	types := map[string]bool{}
	for _, t := range m.Types {
		types[t.Go] = true
	}
	from := map[string]*model{}
	for _, o := range all {
		for _, f := range o.Funcs {
			if have[f.GoName] {
				continue
			}
			if p := from[f.GoName]; p == nil || headers.Less(p.Version, o.Version) {
				from[f.GoName] = o
			}
		}
	}
	var r []absentFunc
	for _, name := range slices.Sorted(maps.Keys(from)) {
		o := from[name]
		f := o.funcByGo(name)
		ok := true
		for _, q := range append(inParams(f), outs(f)...) {
			if t := strings.TrimLeft(q.GoType, "[]*"); t != "" && t[0] >= 'A' && t[0] <= 'Z' && !types[t] {
				ok = false // a type m does not declare
			}
		}
		var in []string
		for _, v := range all {
			if v.funcByGo(name) != nil {
				in = append(in, v.PinName)
			}
		}
		if ok {
			r = append(r, absentFunc{f, in})
		}
	}
	return r
}

// absentFunc is a function m's header does not declare, and the pins
// whose headers do.
type absentFunc struct {
	f  *function
	in []string
}

// funcByGo is m's function of that Go name, or nil.
func (m *model) funcByGo(goName string) *function {
	for _, f := range m.Funcs {
		if f.GoName == goName {
			return f
		}
	}
	return nil
}

// absentDecls declares m's absent functions, each returning an error that
// matches ErrNotSupported and names the pins that declare it; and, for
// the test, notDeclaredCalls calls each.
func absentDecls(f *jen.File, m *model) {
	for _, a := range m.Absent {
		stubFunc(f, m, a.f, jen.Id("library").Dot("NotDeclared").Call(jen.Lit(a.f.Base), jen.Lit(m.PinName), jen.Lit(strings.Join(a.in, ", "))),
			line("%s calls %s, which %s's %s does not declare: it returns an error that matches ErrNotSupported (%s declares it).", a.f.GoName, a.f.Base, m.PinName, m.Lib.Header, strings.Join(a.in, ", ")))
	}
}

// stubFunc declares fn with its Go signature, returning zero results and
// err, under the doc line doc.
func stubFunc(f *jen.File, m *model, fn *function, err jen.Code, doc string) {
	var ps, rv []jen.Code
	for _, q := range inParams(fn) {
		ps = append(ps, jen.Id(q.Go).Add(typeCode(q.GoType)))
	}
	for _, q := range outs(fn) {
		rv = append(rv, libZero(m, q.GoType))
	}
	f.Add(comment(doc))
	f.Func().Id(fn.GoName).Params(ps...).Add(resultsCode(fn, false)).Add(flat(jen.Return(append(rv, err)...)))
}

// libZero is the zero value of a result type: nil for a slice.
func libZero(m *model, t string) jen.Code {
	if strings.HasPrefix(t, "[]") {
		return jen.Nil()
	}
	return zero(m, t)
}

// absentCalls declares the test's calls of m's absent functions.
func absentCalls(f *jen.File, m *model) {
	var calls []jen.Code
	for _, a := range m.Absent {
		var args []jen.Code
		for _, q := range inParams(a.f) {
			args = append(args, sampleArg(q))
		}
		call := jen.Id(a.f.GoName).Call(args...)
		if n := len(outs(a.f)); n > 0 {
			call = jen.Id(fmt.Sprintf("e%d", n+1)).Call(call)
		}
		calls = append(calls, row(jen.Lit(a.f.GoName), jen.Func().Params().Error().Add(flat(jen.Return(call)))))
	}
	f.Add(comment("// notDeclaredCalls calls every function other versions bind and this one's header does not declare."))
	f.Var().Id("notDeclaredCalls").Op("=").Index().Struct(jen.Id("name").String(), jen.Id("call").Func().Params().Error()).Add(rows(calls...))
}

// libraryPins are the pinned versions whose tags select lib's files (the
// toolkits', or the library's own), and those of them to generate with
// their headers' directories: the toolkits this run generates that pin the
// header, or each of the library's own pins whose header can be had here
// (fetched into the cache as needed; the others keep their files, saying
// so, unless -strict).
func (g *generation) libraryPins(lib *libraryConf) ([]headers.Entry, []versionDir, error) {
	if lib.Pins == "" {
		var gen []versionDir
		for _, v := range g.gen {
			if v.e.Has(lib.Header) {
				gen = append(gen, v)
			}
		}
		return g.man.Versions, gen, nil
	}
	pins := g.man.LibraryVersions(lib.Pins)
	if len(pins) == 0 {
		return nil, nil, fmt.Errorf("gen: %s: headers/manifest.json pins no %s under \"libraries\"", lib.Name, lib.Pins)
	}
	var gen []versionDir
	for i := range pins {
		e := &pins[i]
		dir, err := headers.Ensure(e, g.cache, g.o.Log)
		if !g.o.Strict && errors.Is(err, headers.ErrUnavailable) {
			fmt.Fprintf(g.o.Log, "gen: %s: committed bindings kept, build constraint rewritten: %v\n", e.Name(), err)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		gen = append(gen, versionDir{e, dir})
	}
	return pins, gen, nil
}

// libTag is the tag of a library's per-version generated file
// (znccl_nccl2_22_cgo.go → nccl2.22).
func libTag(pkg, name string) (string, bool) {
	m := regexp.MustCompile(`^z` + regexp.QuoteMeta(pkg) + `_([a-z]+[0-9]+)_([0-9]+)(_[a-z]+)?\.go$`).FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1] + "." + m[2], true
}

// libraryBound rewrites the //go:build line of each hand-written file of
// the library's package that carries the directive //cudagen:bound (its
// tests of the bound functions, say): it builds exactly where a pinned
// version binds the library.
func libraryBound(pins []headers.Entry, cfg *config, out string, changes map[string][]byte) error {
	var exprs []string
	for _, v := range pins {
		if v.Has(cfg.Library.Header) {
			x := versionExpr(pins, v.Version)
			if strings.ContainsAny(x, "&|") {
				x = "(" + x + ")"
			}
			exprs = append(exprs, x)
		}
	}
	want := buildLine(strings.Join(exprs, " || "))
	switch {
	case len(exprs) == 0:
		want = "//go:build ignore" // no pin binds it
	case slices.Contains(exprs, ""):
		want = "//go:build cgo || !cgo" // the one pin: every build (the file keeps a build line to rewrite)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return nil // no package yet
	}
	for _, d := range ents {
		path := filepath.Join(out, d.Name())
		if !strings.HasSuffix(d.Name(), ".go") || strings.HasPrefix(d.Name(), "z") {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !regexp.MustCompile(`(?m)^//cudagen:bound$`).Match(b) {
			continue
		}
		lines := strings.SplitAfter(string(b), "\n")
		if !strings.HasPrefix(lines[0], "//go:build ") {
			return fmt.Errorf("gen: %s: a file with //cudagen:bound starts with its //go:build line", path)
		}
		lines[0] = want + "\n"
		if nb := strings.Join(lines, ""); nb != string(b) {
			changes[path] = []byte(nb)
		}
	}
	return nil
}

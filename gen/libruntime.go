package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cudagen/cudagen/headers"
	"github.com/dave/jennifer/jen"
)

// A library package's runtime: what its generated versions share and
// depends only on the library's config, not on a header. libRuntime
// renders it into four files of the package, under every tag:
// z<pkg>_lib.go (the sentinels, the loader, the result's names and the
// Error type), _cgo.go and _nocgo.go (how a wrapper reaches its entry point
// and turns a result into an error, or the error without cgo) and
// _test.go (the library missing). The package keeps by hand what is its
// own: hints.go (what each result means and what to do), doc.go, and
// hand-written calls.

const dynlibPkg = "github.com/cudagen/cudagen/cuda/internal/dynlib"

// libRuntimeFiles maps the runtime's file names to their renderers.
func (e *renderer) libRuntimeFiles(lib *libraryConf, out string) map[string]func() ([]byte, error) {
	pkg := e.Cfg.Package
	return map[string]func() ([]byte, error){
		filepath.Join(out, "z"+pkg+"_lib.go"):       func() ([]byte, error) { return e.libRuntime(lib) },
		filepath.Join(out, "z"+pkg+"_lib_cgo.go"):   func() ([]byte, error) { return e.libRuntimeCgo(lib) },
		filepath.Join(out, "z"+pkg+"_lib_nocgo.go"): func() ([]byte, error) { return e.libRuntimeNoCgo(lib) },
		filepath.Join(out, "z"+pkg+"_lib_test.go"):  func() ([]byte, error) { return e.libRuntimeTest(lib) },
	}
}

// libRuntime renders z<pkg>_lib.go.
func (e *renderer) libRuntime(lib *libraryConf) ([]byte, error) {
	f := e.newFile(e.Cfg.Package, "")
	n := lib.Name
	sentinel := func(name, doc string) {
		f.Add(comment(doc))
		f.Var().Id(name).Op("=").Qual(dynlibPkg, name)
		f.Line()
	}
	sentinel("ErrNoLibrary", line("ErrNoLibrary is matched by every error that says %s could not be loaded:\n// not installed, not found, no cgo, or no bindings in this build.", n))
	sentinel("ErrNotSupported", line("ErrNotSupported is matched by the error of a function the loaded %s does\n// not export (a library older than the pinned header).", n))
	sentinel("ErrInvalidSize", line("ErrInvalidSize is matched by a refusal before the call: slices that share a\n// count differ in length, or a size %s returned cannot be a buffer's.", n))
	f.Add(comment(line("LoadError says why %s could not be loaded; it matches ErrNoLibrary.", n)))
	f.Type().Id("LoadError").Op("=").Qual(dynlibPkg, "LoadError")
	f.Line()
	f.Add(comment("// FunctionInfo describes one bound function."))
	f.Type().Id("FunctionInfo").Struct(
		jen.Id("Name").String().Comment("the Go name"),
		jen.Id("Func").String().Comment("the C name"),
		jen.Id("Symbol").String().Comment("the exported symbol it is found by: Func, or the versioned entry point Func calls"),
		jen.Id("Params").Int().Comment("the C parameters it takes"),
	)
	f.Line()
	f.Var().Id("library").Op("=").Op("&").Qual(dynlibPkg, "Library").Values(jen.Dict{
		jen.Id("Name"): jen.Lit(n), jen.Id("Files"): jen.Id("libraryNames"), jen.Id("Env"): jen.Id("libraryEnv"),
		jen.Id("Install"): jen.Id("libraryInstall"), jen.Id("Unbound"): jen.Id("unboundWhy"),
	})
	f.Line()
	f.Add(comment(line("Load loads %s now (every call does on first use) and returns the path it\n// opened, or the error every call returns.", n)))
	f.Func().Id("Load").Params().Params(jen.String(), jen.Error()).Block(
		jen.List(jen.Id("path"), jen.Err()).Op(":=").Id("library").Dot("Open").Call(),
		jen.If(jen.Err().Op("==").Nil()).Block(
			jen.Id("library").Dot("Resolve").Call(jen.Len(jen.Id("procs")), jen.Func().Params(jen.Id("i").Int()).Params(jen.Op("*").Qual(dynlibPkg, "Proc"), jen.String(), jen.String()).Block(
				jen.Return(jen.Op("&").Id("procs").Index(jen.Id("i")).Dot("Proc"), jen.Id("Functions").Index(jen.Id("i")).Dot("Func"), jen.Id("Functions").Index(jen.Id("i")).Dot("Symbol")),
			)),
		),
		jen.Return(jen.Id("path"), jen.Err()),
	)
	f.Line()
	f.Add(comment("// proc is one function's entry point."))
	f.Type().Id("proc").Struct(jen.Qual(dynlibPkg, "Proc"))
	f.Line()
	libResultDecls(f, lib)
	return e.gofmt(f)
}

// libResultDecls declares the enum tables' row, the Result's String and the
// Error type.
func libResultDecls(f *jen.File, lib *libraryConf) {
	f.Add(comment("// enumName is one row of an enum's table: value, C name, the header's\n// description."))
	f.Type().Id("enumName").Struct(jen.Id("v").Int64(), jen.List(jen.Id("name"), jen.Id("desc")).String())
	f.Line()
	f.Add(comment("// enumString is the C name of v in t, or \"Type(v)\".\n//\n//lint:ignore U1000 the generated enums' String methods call it (a package may have none)"))
	f.Func().Id("enumString").Params(jen.Id("v").Int64(), jen.Id("t").Index().Id("enumName"), jen.Id("typ").String()).String().Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("n")).Op(":=").Range().Id("t")).Block(
			jen.If(jen.Id("n").Dot("v").Op("==").Id("v")).Block(jen.Return(jen.Id("n").Dot("name"))),
		),
		jen.Return(jen.Id("typ").Op("+").Lit("(").Op("+").Qual("strconv", "FormatInt").Call(jen.Id("v"), jen.Lit(10)).Op("+").Lit(")")),
	)
	f.Line()
	lookup := func(field string) []jen.Code {
		return []jen.Code{jen.For(jen.List(jen.Id("_"), jen.Id("n")).Op(":=").Range().Id("namesResult")).Block(
			jen.If(jen.Id("n").Dot("v").Op("==").Int64().Call(jen.Id("r"))).Block(jen.Return(jen.Id("n").Dot(field))),
		)}
	}
	f.Add(comment(line("String is the result's C name, or %s(number).", lib.Result)))
	f.Func().Params(jen.Id("r").Id("Result")).Id("String").Params().String().Block(append(lookup("name"),
		jen.Return(jen.Lit(lib.Result+"(").Op("+").Qual("strconv", "Itoa").Call(jen.Int().Call(jen.Id("r"))).Op("+").Lit(")")))...)
	f.Line()
	f.Add(comment("// description is the header's description of the result, if it has one."))
	f.Func().Params(jen.Id("r").Id("Result")).Id("description").Params().String().Block(append(lookup("desc"), jen.Return(jen.Lit("")))...)
	f.Line()
	f.Add(comment(line("Error makes a Result an error by itself: \"cuda: %s: NAME (N): cause; fix\".", lib.Prefix)))
	f.Func().Params(jen.Id("r").Id("Result")).Id("Error").Params().String().Block(
		jen.Return(jen.Parens(jen.Op("&").Id("Error").Values(jen.Dict{jen.Id("Result"): jen.Id("r")})).Dot("Error").Call()),
	)
	f.Line()
	f.Add(comment(line("Error is a failed %s call: the function and its result. errors.Is matches\n// it against its Result.", lib.Name)))
	f.Type().Id("Error").Struct(
		jen.Id("Func").String().Comment("the C function that failed; \"\" where unknown"),
		jen.Id("Result").Id("Result"),
	)
	f.Line()
	f.Func().Params(jen.Id("e").Op("*").Id("Error")).Id("Error").Params().String().Block(
		jen.Id("op").Op(":=").Lit(lib.Prefix),
		jen.If(jen.Id("e").Dot("Func").Op("!=").Lit("")).Block(jen.Id("op").Op("=").Id("e").Dot("Func")),
		jen.Id("msg").Op(":=").Lit("cuda: ").Op("+").Id("op").Op("+").Lit(": ").Op("+").Id("e").Dot("Result").Dot("String").Call().Op("+").Lit(" (").Op("+").Qual("strconv", "Itoa").Call(jen.Int().Call(jen.Id("e").Dot("Result"))).Op("+").Lit(")"),
		jen.If(jen.List(jen.Id("h"), jen.Id("ok")).Op(":=").Id("hints").Index(jen.Id("e").Dot("Result").Dot("String").Call()), jen.Id("ok")).Block(
			jen.Id("msg").Op("+=").Lit(": ").Op("+").Id("h"),
		).Else().If(jen.Id("d").Op(":=").Id("e").Dot("Result").Dot("description").Call(), jen.Id("d").Op("!=").Lit("")).Block(
			jen.Id("msg").Op("+=").Lit(": ").Op("+").Id("d"),
		),
		jen.Return(jen.Id("msg")),
	)
	f.Line()
	f.Add(comment("// Is matches the Result."))
	f.Func().Params(jen.Id("e").Op("*").Id("Error")).Id("Is").Params(jen.Id("target").Error()).Bool().Block(
		jen.List(jen.Id("r"), jen.Id("ok")).Op(":=").Id("target").Assert(jen.Id("Result")),
		jen.Return(jen.Id("ok").Op("&&").Id("r").Op("==").Id("e").Dot("Result")),
	)
}

// libRuntimeCgo renders z<pkg>_lib_cgo.go.
func (e *renderer) libRuntimeCgo(lib *libraryConf) ([]byte, error) {
	f := e.newFile(e.Cfg.Package, "//go:build cgo")
	f.CgoPreamble("#include <stdint.h>")
	f.Add(comment("// withCgo says whether this build has cgo (the tests read it)."))
	f.Const().Id("withCgo").Op("=").True()
	f.Line()
	missing := jen.Id("library").Dot("Missing").Call(jen.Op("&").Id("p").Dot("Proc"), jen.Id("pinName"))
	f.Add(comment("// fn is the entry point a wrapper calls: 0 (which the trampolines refuse,\n// returning -1) when the library or the function cannot be had."))
	f.Func().Params(jen.Id("p").Op("*").Id("proc")).Id("fn").Params().Qual("C", "uintptr_t").Block(
		jen.If(jen.Id("p").Dot("Addr").Call().Op("==").Lit(0)).Block(jen.Id("Load").Call()),
		jen.Return(jen.Qual("C", "uintptr_t").Call(jen.Id("p").Dot("Addr").Call())),
	)
	f.Line()
	f.Add(comment("// enter is fn for wrappers that check their arguments first: the entry\n// point, or the error every call of it returns."))
	f.Func().Params(jen.Id("p").Op("*").Id("proc")).Id("enter").Params().Params(jen.Uintptr(), jen.Error()).Block(
		jen.If(jen.Id("a").Op(":=").Id("p").Dot("fn").Call(), jen.Id("a").Op("!=").Lit(0)).Block(jen.Return(jen.Uintptr().Call(jen.Id("a")), jen.Nil())),
		jen.Return(jen.Lit(0), missing),
	)
	f.Line()
	f.Add(comment("// done is the error of a call's result r."))
	f.Func().Params(jen.Id("p").Op("*").Id("proc")).Id("done").Params(jen.Id("r").Qual("C", "int")).Error().Block(
		jen.Switch(jen.Id("r")).Block(
			jen.Case(jen.Lit(0)).Block(jen.Return(jen.Nil())),
			jen.Case(jen.Lit(-1)).Block(jen.Return(missing)),
		),
		jen.Return(jen.Op("&").Id("Error").Values(jen.Dict{jen.Id("Func"): jen.Id("p").Dot("Name").Call(), jen.Id("Result"): jen.Id("Result").Call(jen.Id("r"))})),
	)
	f.Line()
	f.Add(comment("// status is done for wrappers that checked their arguments first: err is\n// the refusal, if any."))
	f.Func().Params(jen.Id("p").Op("*").Id("proc")).Id("status").Params(jen.Err().Error(), jen.Id("r").Qual("C", "int")).Error().Block(
		jen.If(jen.Err().Op("!=").Nil().Op("||").Id("r").Op("==").Lit(0)).Block(jen.Return(jen.Err())),
		jen.Return(jen.Id("p").Dot("done").Call(jen.Id("r"))),
	)
	f.Line()
	f.Add(comment("//lint:ignore U1000 the generated wrappers of strings and sized results use them (a package may have none)"))
	f.Var().Defs(
		jen.Id("cString").Op("=").Qual(dynlibPkg, "CString"),
		jen.Id("cStrings").Op("=").Qual(dynlibPkg, "CStrings"),
		jen.Id("lengthError").Op("=").Qual(dynlibPkg, "LengthError"),
	)
	f.Line()
	f.Add(comment("//lint:ignore U1000 the generated wrappers of sized results use it (a package may have none)"))
	f.Func().Id("sizedLen").Types(jen.Id("N").Int32().Op("|").Uint32().Op("|").Uint64()).Params(jen.Id("n").Id("N"), jen.Id("by").String()).Params(jen.Int(), jen.Error()).Block(
		jen.Return(jen.Qual(dynlibPkg, "SizedLen").Call(jen.Id("n"), jen.Id("by"))),
	)
	return e.gofmt(f)
}

// libRuntimeNoCgo renders z<pkg>_lib_nocgo.go.
func (e *renderer) libRuntimeNoCgo(lib *libraryConf) ([]byte, error) {
	f := e.newFile(e.Cfg.Package, "//go:build !cgo")
	f.Add(comment("// withCgo says whether this build has cgo (the tests read it)."))
	f.Const().Id("withCgo").Op("=").False()
	f.Line()
	f.Add(comment(line("errNoCgo is every call's error without cgo: %s is a C library.\n//\n//lint:ignore U1000 the generated !cgo wrappers return it (a build that binds no %s has none)", lib.Name, lib.Name)))
	f.Var().Id("errNoCgo").Op("=").Func().Params().Error().Block(
		jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("Load").Call(),
		jen.Return(jen.Err()),
	).Call()
	return e.gofmt(f)
}

// libRuntimeTest renders z<pkg>_lib_test.go: Load and every bound call
// without the library (in a child process whose variable names a missing
// file), and the functions this build's header does not declare.
func (e *renderer) libRuntimeTest(lib *libraryConf) ([]byte, error) {
	f := e.newFile(e.Cfg.Package, "")
	f.Add(comment("// e2 and e3 are the error of a call of two and three results (the generated\n// tests' calls).\n//\n//lint:ignore U1000 a package's generated tests may call neither"))
	f.Func().Id("e2").Types(jen.Id("A").Any()).Params(jen.Id("_").Id("A"), jen.Err().Error()).Error().Block(jen.Return(jen.Err()))
	f.Line()
	f.Add(comment("//lint:ignore U1000 a package's generated tests may not call it"))
	f.Func().Id("e3").Types(jen.List(jen.Id("A"), jen.Id("B")).Any()).Params(jen.Id("_").Id("A"), jen.Id("_").Id("B"), jen.Err().Error()).Error().Block(jen.Return(jen.Err()))
	f.Line()
	missing := libMissingFile(lib)
	libtest := "github.com/cudagen/cudagen/cuda/internal/libtest"
	f.Func().Id("TestNoLibrary").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.Qual(libtest, "Child").Call(jen.Id("t"), jen.Lit("TestNoLibraryChild"), jen.Lit(lib.Env+"=").Op("+").Qual("path/filepath", "Join").Call(jen.Id("t").Dot("TempDir").Call(), jen.Lit(missing))),
	)
	f.Line()
	t := func(method string, args ...jen.Code) jen.Code { return jen.Id("t").Dot(method).Call(args...) }
	isErr := func(target string) *jen.Statement {
		return jen.Qual("errors", "Is").Call(jen.Err(), jen.Id(target))
	}
	f.Func().Id("TestNoLibraryChild").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.Qual(libtest, "InChild").Call(jen.Id("t")),
		jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("Load").Call(),
		jen.If(jen.Op("!").Add(isErr("ErrNoLibrary"))).Block(t("Fatalf", jen.Lit("Load without the library: %v, want an error matching ErrNoLibrary"), jen.Err())),
		jen.Id("msg").Op(":=").Err().Dot("Error").Call(),
		jen.If(jen.Id("BuildTag").Op("==").Lit("")).Block(
			jen.If(jen.Op("!").Qual("strings", "Contains").Call(jen.Id("msg"), jen.Lit("has no "+lib.Name+" bindings"))).Block(
				t("Fatalf", jen.Lit("Load in a build without bindings: %q does not say so"), jen.Id("msg")),
			),
			jen.Return(),
		),
		jen.Id("wants").Op(":=").Index().String().Values(jen.Lit("cuda: "), jen.Lit(lib.Name), jen.Lit(lib.Env), jen.Lit("install"), jen.Lit(missing)),
		jen.If(jen.Op("!").Id("withCgo")).Block(jen.Id("wants").Op("=").Index().String().Values(jen.Lit("cuda: "), jen.Lit(lib.Name), jen.Lit("without cgo"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("want")).Op(":=").Range().Id("wants")).Block(
			jen.If(jen.Qual("runtime", "GOOS").Op("==").Lit("linux").Op("&&").Op("!").Qual("strings", "Contains").Call(jen.Id("msg"), jen.Id("want"))).Block(
				t("Errorf", jen.Lit("Load's error %q does not say %q"), jen.Id("msg"), jen.Id("want")),
			),
		),
		jen.For(jen.List(jen.Id("_"), jen.Id("c")).Op(":=").Range().Id("noLibraryCalls")).Block(
			jen.If(jen.Err().Op(":=").Id("c").Dot("call").Call(), jen.Op("!").Add(isErr("ErrNoLibrary"))).Block(
				t("Errorf", jen.Lit("%s without the library: %v, want an error matching ErrNoLibrary"), jen.Id("c").Dot("name"), jen.Err()),
			),
		),
		jen.If(jen.Len(jen.Id("noLibraryCalls")).Op("!=").Len(jen.Id("Functions"))).Block(
			t("Errorf", jen.Lit("%d calls tested, %d functions bound"), jen.Len(jen.Id("noLibraryCalls")), jen.Len(jen.Id("Functions"))),
		),
	)
	f.Line()
	f.Add(comment("// TestNotDeclared: each function another pinned version binds and this\n// build's header does not declare returns an error matching\n// ErrNotSupported that names it, without loading the library."))
	f.Func().Id("TestNotDeclared").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("c")).Op(":=").Range().Id("notDeclaredCalls")).Block(
			jen.If(jen.Err().Op(":=").Id("c").Dot("call").Call(), jen.Op("!").Add(isErr("ErrNotSupported")).Op("||").Op("!").Qual("strings", "Contains").Call(jen.Err().Dot("Error").Call(), jen.Lit("does not declare it"))).Block(
				t("Errorf", jen.Lit("%s in a build whose header lacks it: %v"), jen.Id("c").Dot("name"), jen.Err()),
			),
		),
		t("Logf", jen.Lit("%d functions of other versions not declared in this build (%s)"), jen.Len(jen.Id("notDeclaredCalls")), jen.Id("BuildTag")),
	)
	return e.gofmt(f)
}

// libMissingFile names a library file that is not there: the first
// soname's stem, "-missing.so".
func libMissingFile(lib *libraryConf) string {
	majors := make([]string, 0, len(lib.Sonames))
	for k := range lib.Sonames {
		majors = append(majors, k)
	}
	slices.Sort(majors)
	stem := strings.ToLower(lib.Prefix)
	if len(majors) > 0 && len(lib.Sonames[majors[0]]) > 0 {
		stem, _, _ = strings.Cut(lib.Sonames[majors[0]][0], ".so")
	}
	return stem + "-missing.so"
}

// libDocsFile is the generated reference of the libraries' functions.
const libDocsFile = "docs/zlibraries.md"

// libDoc is a library's table in libDocsFile: a row per function, a cell
// per pinned version binding the library.
type libDoc struct {
	Name, Package, Header string
	Versions              []string
	Rows                  []docRow
}

// newLibDoc tabulates the functions of all, the models of every version
// that binds the library, oldest first.
func newLibDoc(cfg *config, all []*model) libDoc {
	ms := slices.Clone(all)
	slices.SortFunc(ms, func(a, b *model) int {
		if headers.Less(a.Version, b.Version) {
			return -1
		}
		return 1
	})
	d := libDoc{Name: cfg.Library.Name, Package: cfg.Package, Header: cfg.Library.Header,
		Rows: docRows(ms, func(f *function) string { return "`" + f.Symbol + "`" })}
	for _, m := range ms {
		d.Versions = append(d.Versions, m.PinName)
	}
	slices.SortFunc(d.Rows, func(a, b docRow) int { return strings.Compare(a.Go, b.Go) })
	return d
}

// libraryDocs renders libDocsFile into changes, where every library's
// headers of every version were here.
func (g *generation) libraryDocs(changes map[string][]byte) error {
	if len(g.libStale) > 0 {
		fmt.Fprintf(g.o.Log, "gen: %s not regenerated: the headers of a pinned version of %s cannot be had here\n", libDocsFile, strings.Join(g.libStale, ", "))
		return nil
	}
	doc, err := renderTemplate(g.o.Templates, "libraries.md.tmpl", map[string]any{"Command": strings.TrimPrefix(genCommand, "// "), "DoNotEdit": doNotEdit, "Libs": g.libDocs})
	if err != nil {
		return err
	}
	changes[filepath.Join(g.o.Root, libDocsFile)] = []byte(doc)
	return nil
}

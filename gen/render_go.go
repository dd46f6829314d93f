package main

// Render stage, Go: through jennifer (render_jen.go). Per version: a
// pure-Go file (types, enums and their tables, function metadata, the plain
// one-line variants), a cgo file (one wrapper per function, taking the
// context to make current), a !cgo file (the same wrappers, returning the
// cgo-disabled error), the no-driver test, and the layout check.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cudagen/cudagen/headers"
	"github.com/dave/jennifer/jen"
)

// oneLine squeezes a doc text onto one comment line.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "*/", "")
	s = strings.ReplaceAll(s, "/*", "")
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

// pure renders the version's file that needs no cgo.
func (e *renderer) pure(m *model) ([]byte, error) {
	f := e.newFile(e.Cfg.Package, e.constraint(m.Version, ""))
	f.Var().Id("_").Qual("reflect", "Type")
	f.Line()
	typedDecls(f, m)
	sums := sumLines(m)
	f.Add(comment(line("Bindings for CUDA %s: CUDA_VERSION %d,", m.Version, m.CUDAVersion), "// "+strings.Join(sums, ",\n// ")+"."))
	f.Const().Defs(
		docConst("HeaderVersion", m.CUDAVersion, "is the CUDA_VERSION of the header these bindings were generated from."),
		docConst("Toolkit", m.Version, "is the toolkit version of that header."),
		docConst("BuildTag", m.Tag, "is the build tag that selects these bindings."),
		docConst("PerThreadDefaultStream", m.PerThread, "says whether the _ptsz entry points are bound."),
		jen.Id("gpaSymbol").Op("=").Lit(m.GPASymbol),
		jen.Id("gpaV2").Op("=").Lit(m.GPAV2),
		jen.Id("gpaFlags").Op("=").Add(lit(m.GPAFlags)),
	)
	f.Line()
	f.Add(comment("// HeaderSHA256 holds the sha256 of each header file the bindings were generated from."))
	var shas []jen.Code
	for _, n := range headers.Files {
		shas = append(shas, jen.Lit(n).Op(":").Lit(m.Sums[n]).Op(","))
	}
	f.Var().Id("HeaderSHA256").Op("=").Map(jen.String()).String().Add(rows(shas...))
	f.Line()
	typeDecls(f, m)
	typedKeyDecls(f, m)
	tables := typedTableNames(m)
	for _, fn := range m.Funcs {
		f.Add(comment(plainDoc(fn)...))
		plainFunc(f, fn)
		if fn.typedForm() != "" {
			typedForm(f, fn, tables)
		}
	}
	f.Line()
	f.Add(comment(
		"// Functions lists every bound function: its Go name, the name it is resolved",
		"// by, the versioned entry point the header declares, and the ABI version",
		"// passed to cuGetProcAddress, and the number of C parameters it takes. The",
		"// wrappers index procs in the same order."))
	var infos []jen.Code
	for _, fn := range m.Funcs {
		infos = append(infos, row(jen.Lit(fn.GoName), jen.Lit(fn.Base), jen.Lit(fn.Symbol), jen.Lit(fn.ABI), lit(fn.Flags), jen.Lit(len(fn.Params)), jen.Nil()))
	}
	f.Var().Id("Functions").Op("=").Index().Id("FunctionInfo").Add(rows(infos...))
	f.Line()
	f.Var().Id("procs").Index(jen.Lit(len(m.Funcs))).Id("proc")
	f.Line()
	proc := func(name string) jen.Code { return jen.Op("&").Id("procs").Index(jen.Lit(m.funcNamed(name).Index)) }
	f.Var().Id("ctxProcs").Op("=").Index(jen.Lit(2)).Op("*").Id("proc").Values(proc("cuCtxGetCurrent"), proc("cuCtxSetCurrent"))
	return renderFor(m, fileName(m.Version), f)
}

// decls holds the pure file's declarations, grouped: one type block, one
// const block per enum and per #define group (so that go doc lists an
// enum's values under its type), one var block (gofmt separates top-level
// declarations with doc comments by blank lines; grouped ones it does
// not), then the funcs.
type decls struct {
	types, consts, vars, funcs []jen.Code
}

// typeDoc is the doc comment of a named type: its first line, then the
// header's doc body.
func typeDoc(t *namedType, first string, more ...string) *jen.Statement {
	return comment(append(append([]string{"// " + first}, docBody(t.Doc)...), more...)...)
}

func goTypeDecl(d *decls, t *namedType) {
	what := t.C
	if len(t.Aliases) > 0 {
		what += " (also " + strings.Join(t.Aliases, ", ") + ")"
	}
	doc := ""
	if b := brief(t.Doc); b != "" {
		doc = ": " + b
	}
	switch t.Kind {
	case tScalar, tHandle:
		d.types = append(d.types, typeDoc(t, fmt.Sprintf("%s is %s%s", t.Go, what, orDot(doc))), jen.Id(t.Go).Add(typeCode(t.Base)))
	case tCallback:
		d.types = append(d.types, comment(line("%s is %s, a C function pointer: %s. It is never Go memory, so it is an integer to the collector.", t.Go, what, t.Sig)), jen.Id(t.Go).Uintptr())
	case tEnum:
		var more []string
		switch {
		case t.Go == "Result" || len(t.Values) == 0:
		case t.Flags:
			more = []string{"//",
				"// Its String method returns the C names of the set flags joined by '|'; a",
				"// multi-bit field prints its value's name."}
		default:
			more = []string{"//", "// Its String method returns the C name of the value, or its number."}
		}
		d.types = append(d.types, typeDoc(t, fmt.Sprintf("%s is %s%s", t.Go, what, orDot(doc)), more...), jen.Id(t.Go).Add(typeCode(t.Base)))
		if len(t.Values) > 0 {
			enumDecls(d, t)
		}
	case tStruct:
		var more []string
		if t.Align > 8 {
			more = []string{"//",
				line("C aligns it to %d bytes, which a Go type cannot: place values the driver", t.Align),
				line("reads or writes in memory aligned to %d bytes (C.aligned_alloc, say).", t.Align)}
		}
		var fields []jen.Code
		for _, f := range t.Fields {
			if f.Pad > 0 {
				fields = append(fields, jen.Id("_").Index(lit(f.Pad)).Byte())
			}
			if f.Doc != "" {
				fields = append(fields, comment(commentLines(f.Doc, 76)...))
			}
			fields = append(fields, jen.Id(f.Go).Add(typeCode(f.GoType)))
		}
		d.types = append(d.types, typeDoc(t, fmt.Sprintf("%s is %s (%d bytes)%s", t.Go, what, t.Size, orDot(doc)), more...), jen.Id(t.Go).Struct(fields...))
	case tUnion, tOpaque:
		unionDecls(d, t, what, doc)
	}
}

// enumDecls writes an enum's values (a const block), its table of names
// and its String method.
func enumDecls(d *decls, t *namedType) {
	// No doc comment on the block: gofmt would set a blank line before it.
	consts := []jen.Code{comment(line("Values of %s.", t.Go))}
	for _, v := range t.Values {
		val := lit(v.Value)
		if t.Flags {
			val = number("0x" + strconv.FormatInt(v.Value, 16))
		}
		c := v.C
		if v.Sentinel {
			c += " (a sentinel, not a value)"
		}
		if t.Group != "" && v.Doc != "" { // a #define's doc
			consts = append(consts, comment(append([]string{line("%s is %s: %s", v.Go, v.C, orDot(brief(v.Doc)))}, docBody(v.Doc)...)...))
		}
		consts = append(consts, jen.Id(v.Go).Id(t.Go).Op("=").Add(val).Comment(c))
	}
	d.consts = append(d.consts, jen.Const().Defs(consts...))
	tab := "names" + t.Go
	vals := append([]*enumerator(nil), t.Values...)
	// Sorted by value; among aliases the non-deprecated name comes first.
	sort.SliceStable(vals, func(i, j int) bool {
		if vals[i].Value != vals[j].Value {
			return vals[i].Value < vals[j].Value
		}
		return !deprecated(vals[i].Doc) && deprecated(vals[j].Doc)
	})
	// One entry a line; entries without a description share lines.
	var lines []jen.Code
	var run *jen.Statement
	width := 0 // of the run's line: {1, "A", ""}, {2, "B", ""},
	for _, v := range vals {
		if v.Sentinel {
			continue
		}
		desc := oneLine(v.Doc)
		if t.Go == "Result" {
			desc = describe(v.Doc)
		}
		ent := row(lit(v.Value), jen.Lit(v.C), jen.Lit(desc))
		n := len(fmt.Sprintf("{%d, %q, %q},", v.Value, v.C, desc))
		if desc != "" {
			lines, run, width = appendRun(lines, run), nil, 0
			lines = append(lines, ent)
			continue
		}
		if width > 0 && width+1+n > 96 {
			lines, run, width = appendRun(lines, run), nil, 0
		}
		if run == nil {
			run, width = jen.Add(ent), n
		} else {
			run, width = run.Add(ent), width+1+n
		}
	}
	lines = appendRun(lines, run)
	d.vars = append(d.vars, jen.Id(tab).Op("=").Index().Id("enumName").Add(rows(lines...)))
	switch {
	case t.Go == "Result":
	// The String methods are documented on their types (a doc comment
	// here would cost each a blank line: gofmt sets one before it).
	case t.Flags:
		d.funcs = append(d.funcs, stringMethod(t.Go, jen.Id("flagString").Call(jen.Uint64().Call(jen.Id("v")), jen.Id(tab))))
	default:
		d.funcs = append(d.funcs, stringMethod(t.Go, jen.Id("enumString").Call(jen.Int64().Call(jen.Id("v")), jen.Id(tab), jen.Lit(t.Go))))
	}
}

func appendRun(lines []jen.Code, run *jen.Statement) []jen.Code {
	if run != nil {
		lines = append(lines, run)
	}
	return lines
}

func stringMethod(typ string, ret jen.Code) jen.Code {
	return jen.Func().Params(jen.Id("v").Id(typ)).Id("String").Params().String().Add(flat(jen.Return(ret)))
}

// unionDecls writes a union or a type bound as bytes, and a union's
// member accessors.
func unionDecls(d *decls, t *namedType, what, doc string) {
	why := "a union: its members are read and written through the methods"
	if t.Kind == tOpaque {
		why = "bound as bytes: " + t.Why
	}
	d.types = append(d.types, comment(line("%s is %s (%d bytes), %s%s", t.Go, what, t.Size, why, orDot(doc))))
	if t.Kind == tOpaque && t.Align == 1 {
		d.types = append(d.types, jen.Id(t.Go).Index(lit(t.Size)).Byte())
		return
	}
	var fields []jen.Code
	if a := map[int64]string{2: "uint16", 4: "uint32", 8: "uint64"}[t.Align]; a != "" {
		fields = append(fields, jen.Id("_").Index(jen.Lit(0)).Id(a))
	}
	if len(t.PtrWords) == 0 {
		fields = append(fields, jen.Id("Raw").Index(lit(t.Size)).Byte())
	} else {
		// Storage the collector scans: a pointer word where members have
		// a pointer and none has an integer, bytes elsewhere.
		fields = append(fields, comment(
			"// A pointer stored through a member stays visible to the garbage",
			"// collector; no member has an integer in a pointer word."))
		at := int64(0)
		for _, w := range t.PtrWords {
			if w > at {
				fields = append(fields, jen.Id(fmt.Sprintf("b%d", at)).Index(lit(w-at)).Byte())
			}
			fields = append(fields, jen.Id(fmt.Sprintf("p%d", w)).Qual("unsafe", "Pointer"))
			at = w + 8
		}
		if t.Size > at {
			fields = append(fields, jen.Id(fmt.Sprintf("b%d", at)).Index(lit(t.Size-at)).Byte())
		}
	}
	d.types = append(d.types, jen.Id(t.Go).Struct(fields...))
	for _, f := range t.Fields {
		if f.Padding {
			continue // padding: nothing to read or write
		}
		ret := jen.Parens(jen.Op("*").Add(typeCode(f.GoType))).Call(unsafePointer(jen.Id("u")))
		d.funcs = append(d.funcs, comment(line("%s is the member %s.", f.Go, f.C)),
			jen.Func().Params(jen.Id("u").Op("*").Id(t.Go)).Id(f.Go).Params().Op("*").Add(typeCode(f.GoType)).Add(flat(jen.Return(ret))))
	}
}

// docBody is a doc's paragraphs after its first (see doxygen.go), after an
// empty comment line.
func docBody(doc string) []string {
	lines := commentLines(body(doc), 80)
	if len(lines) == 0 {
		return nil
	}
	return append([]string{"//"}, lines...)
}

// defineDecls writes the #define constants: one const block per group;
// a group with a flags type was written as that type's values.
func defineDecls(d *decls, m *model) {
	header := "cuda.h"
	if m.Lib != nil {
		header = m.Lib.Header
	}
	for _, dg := range m.Defines {
		if dg.Flags != nil {
			continue
		}
		if len(dg.Defs) > 1 {
			d.consts = append(d.consts, comment(line("The #define constants %s* of %s.", dg.Prefix, header)))
		} else {
			d.consts = append(d.consts, comment(line("The #define constant %s of %s.", dg.Defs[0].C, header)))
		}
		var defs []jen.Code
		for _, c := range dg.Defs {
			text := c.C
			if c.GoType == "uintptr" {
				text += " (a void* value: store it in the pointer array the driver reads, e.g. *(*uintptr)(p) = " + c.Go + "; a Go constant cannot be an unsafe.Pointer)"
			}
			if b := brief(c.Doc); b != "" {
				text += ": " + b
			}
			defs = append(defs, comment(append([]string{line("%s is %s", c.Go, orDot(text))}, docBody(c.Doc)...)...))
			val := number(c.Lit)
			if c.Ref {
				val = jen.Id(c.Lit)
			}
			if c.GoType != "" && !c.Ref {
				defs = append(defs, jen.Id(c.Go).Add(typeCode(c.GoType)).Op("=").Add(val))
			} else {
				defs = append(defs, jen.Id(c.Go).Op("=").Add(val))
			}
		}
		d.consts = append(d.consts, jen.Const().Defs(defs...), jen.Line())
	}
}

func orDot(doc string) string {
	if doc == "" {
		return "."
	}
	if strings.HasSuffix(doc, ".") {
		return doc
	}
	return doc + "."
}

func deprecated(doc string) bool { return strings.Contains(strings.ToLower(doc), "deprecated") }

// inParams lists the parameters the Go signature takes, in order.
func inParams(f *function) []*param {
	return withRole(f, rIn, rPtr, rString, rStruct, rSlice, rTyped, rImage)
}

// outs lists the parameters the Go signature returns, in order.
func outs(f *function) []*param {
	return withRole(f, rOut, rOutString, rOutArray, rBuf, rOutSlice, rInOutCount, rSized)
}

// withRole lists f's parameters whose role is one of roles, in order.
func withRole(f *function, roles ...role) []*param {
	var r []*param
	for _, q := range f.Params {
		if slices.Contains(roles, q.Role) {
			r = append(r, q)
		}
	}
	return r
}

func idsOf(ps []*param) []jen.Code {
	var r []jen.Code
	for _, q := range ps {
		r = append(r, jen.Id(q.Go))
	}
	return r
}

// paramsCode is the Go parameter list (with ctx: the Ctx variant's).
func paramsCode(f *function, ctx bool) []jen.Code {
	var r []jen.Code
	if ctx {
		r = append(r, jen.Id("ctx").Id("Context"))
	}
	for _, q := range inParams(f) {
		r = append(r, jen.Id(q.Go).Add(typeCode(q.GoType)))
	}
	return r
}

// resultsCode is the Go result list; named gives the names too.
func resultsCode(f *function, named bool) *jen.Statement {
	var r []jen.Code
	for _, q := range outs(f) {
		if named {
			r = append(r, jen.Id(q.Go).Add(typeCode(q.GoType)))
		} else {
			r = append(r, typeCode(q.GoType))
		}
	}
	if named {
		return jen.Params(append(r, jen.Id("err").Error())...)
	}
	if len(r) == 0 {
		return jen.Error()
	}
	return jen.Params(append(r, jen.Error())...)
}

// signatures are the Go signatures of every bound function's plain
// variant, and of its stable versioned name where it has one.
func (m *model) signatures() []string {
	var r []string
	for _, f := range m.Funcs {
		r = append(r, f.goSignature())
		if f.Alias != "" {
			r = append(r, f.Alias+strings.TrimPrefix(f.goSignature(), f.GoName))
		}
	}
	return r
}

// goSignature is the Go signature of a function's plain variant, as a
// user sees it: "Memcpy2D(pCopy *Memcpy2D) error".
func (f *function) goSignature() string {
	var ps, rs []string
	for _, q := range inParams(f) {
		ps = append(ps, q.Go+" "+q.GoType)
	}
	for _, q := range outs(f) {
		rs = append(rs, q.GoType)
	}
	if len(rs) == 0 {
		return f.GoName + "(" + strings.Join(ps, ", ") + ") error"
	}
	return f.GoName + "(" + strings.Join(ps, ", ") + ") (" + strings.Join(append(rs, "error"), ", ") + ")"
}

// cgo renders the version's cgo file: the shared trampolines and one
// wrapper per function.
func (e *renderer) cgo(m *model) ([]byte, error) {
	f := e.newFile(e.Cfg.Package, e.constraint(m.Version, "cgo"))
	tramps, err := e.trampolines(m)
	if err != nil {
		return nil, err
	}
	f.CgoPreamble("/*\n" + tramps + "*/")
	f.Var().Id("_").Qual("unsafe", "Pointer")
	f.Var().Id("_").Qual("runtime", "Pinner")
	f.Line()
	pinTables := map[string][]int64{}
	for _, fn := range m.Funcs {
		for _, q := range fn.Params {
			if len(q.PinWords) > 0 {
				pinTables[pinTable(q)] = q.PinWords
			}
		}
	}
	if len(pinTables) > 0 {
		f.Add(comment("// The offsets of the Go pointer words in what wrappers pin, by type."))
		var names []string
		for n := range pinTables {
			names = append(names, n)
		}
		sort.Strings(names)
		var defs []jen.Code
		for _, n := range names {
			var ws []jen.Code
			for _, w := range pinTables[n] {
				ws = append(ws, lit(w))
			}
			defs = append(defs, jen.Id(n).Op("=").Index().Uintptr().Values(ws...))
		}
		f.Var().Defs(defs...)
		f.Line()
	}
	tables := typedTableNames(m)
	for _, fn := range m.Funcs {
		body, err := wrapperBody(fn, tables)
		if err != nil {
			return nil, err
		}
		res := jen.Error()
		if len(outs(fn)) > 0 {
			res = resultsCode(fn, true)
		}
		if m.Lib != nil {
			f.Add(comment(plainDoc(fn)...)) // a library's wrapper is the function
		}
		f.Func().Id(wrapperName(m, fn)).Params(paramsCode(fn, m.Lib == nil)...).Add(res).Block(body...)
	}
	return renderFor(m, e.fileName(m, "_cgo"), f)
}

// wrapper is the code of one cgo wrapper being made.
type wrapper struct {
	f     *function
	proc  *jen.Statement // procs[i]
	fnArg jen.Code       // the entry point the trampoline calls
	// status: a check before the call may have refused it, and err holds
	// the refusal: the result is status(err, r) instead of procs[i].done(r).
	status bool
	body   []jen.Code
	post   []jen.Code // after the call, with err set
}

// done is the wrapper's error from the trampoline's result r; err is the
// refusal of the checks before the call.
func (w *wrapper) done(err, r jen.Code) *jen.Statement {
	if w.status && w.f.NoCtx {
		return w.proc.Clone().Dot("status").Call(err, r) // a library's: its error names the function
	}
	if w.status {
		return jen.Id("status").Call(err, r)
	}
	return w.proc.Clone().Dot("done").Call(r)
}

func (w *wrapper) add(c ...jen.Code) { w.body = append(w.body, c...) }

// wrapperBody is the body of f's cgo wrapper. One crossing:
// procs[i].fn() is the entry point (0 on error, which the trampoline
// refuses), procs[i].done the error. A function whose slices share a
// count checks their lengths first, refusing the call.
func wrapperBody(f *function, tables map[string]string) ([]jen.Code, error) {
	w := &wrapper{f: f, proc: jen.Id("procs").Index(jen.Lit(f.Index))}
	w.fnArg = w.proc.Clone().Dot("fn").Call()
	typed := typedParams(f)
	if chk := lengthChecks(f); len(chk) > 0 || len(typed) > 0 {
		w.add(jen.List(jen.Id("fn"), jen.Id("err")).Op(":=").Add(w.proc.Clone()).Dot("enter").Call())
		w.add(chk...)
		for _, q := range typed {
			w.add(typedIn(f, q, tables)...)
		}
		w.fnArg, w.status = jen.Qual("C", "uintptr_t").Call(jen.Id("fn")), true
	}
	if pinned := pins(f); len(pinned) > 0 {
		w.add(jen.Var().Id("pin").Qual("runtime", "Pinner"), jen.Defer().Id("pin").Dot("Unpin").Call())
		w.add(pinned...)
	}
	ctx := jen.Id("ctx")
	if f.NoCtx {
		ctx = jen.Lit(0) // a library's trampolines are the driver's, given no context to make current
	}
	args := []jen.Code{jen.Qual("C", "uintptr_t").Call(ctx), w.fnArg}
	outSlices := map[int]string{} // args index → the result slice: nil in the first call of two
	for _, q := range f.Params {
		a, err := w.arg(q)
		if err != nil {
			return nil, err
		}
		if q.Role == rOutSlice {
			outSlices[len(args)] = q.Go
		}
		args = append(args, a)
	}
	t, err := trampolineOf(f)
	if err != nil {
		return nil, err
	}
	if cnt := outCount(f); cnt != nil {
		if f.Thread != nil {
			return nil, fmt.Errorf("gen: %s: %s makes two calls, which cannot run on its handle's OS thread (\"threads\" in the config)", f.Pos, f.Symbol)
		}
		w.twoCalls(cnt, t.Name, args, outSlices)
		return w.body, nil
	}
	cCall := jen.Qual("C", t.Name).Call(args...)
	w.add(takeKept(f)...)
	if f.Thread != nil {
		w.add(threadCall(f, t.Name, args[1:])...) // on the OS thread its handle owns (threads.go)
		cCall = jen.Id("rt")
	}
	call := w.done(jen.Id("err"), cCall)
	hidden := false
	for _, q := range f.Params {
		hidden = hidden || q.Hidden
	}
	if afterCall := w.afterCall(); len(afterCall) > 0 {
		// Kept copies and a handle's thread last until the handle ends.
		w.add(jen.Id("ek").Op(":=").Add(call))
		w.add(afterCall...)
		call = jen.Id("ek")
	} else if hidden && len(typed) == 0 || len(typed) > 0 {
		w.add(jen.Id("r").Op(":=").Add(cCall))
		for _, q := range f.Params {
			if q.Hidden && len(typed) == 0 {
				w.add(jen.Qual("runtime", "KeepAlive").Call(jen.Id(q.Go)))
			}
		}
		for _, q := range typed {
			w.add(jen.Id("ts"+q.Go).Dot("out").Call(jen.Id("err"), jen.Int().Call(jen.Id("r"))))
		}
		call = w.done(jen.Id("err"), jen.Id("r"))
	}
	if len(outs(f)) == 0 {
		w.add(jen.Return(call))
	} else {
		w.add(jen.Id("err").Op("=").Add(call))
		w.add(w.post...)
		w.add(jen.Return())
	}
	return w.body, nil
}

// takeKept is the code that takes, before the call that ends a handle,
// the copies it keeps: once the handle has ended, its value may be a new
// handle's, whose copies stay (cuda/driver/keep.go). afterCall frees them.
func takeKept(f *function) []jen.Code {
	var r []jen.Code
	for _, q := range f.Releases {
		r = append(r, jen.Id("kr"+q.Go).Op(":=").Id("takeKept").Call(jen.Lit(q.GoType), jen.Uintptr().Call(jen.Id(q.Go))))
	}
	return r
}

// afterCall is the code that follows the call, given its error ek: what
// the driver keeps given to its owner (or freed after a failure), a
// handle's kept memory freed (or given back after a failure) or thread let
// go, the config's onSuccess.
func (w *wrapper) afterCall() []jen.Code {
	f, ok := w.f, jen.Id("ek").Op("==").Nil()
	var r []jen.Code
	for _, q := range keptCopies(f) {
		r = append(r, jen.Id("keepOrFree").Call(jen.Id("ek"), jen.Lit(q.Keep), jen.Uintptr().Call(jen.Id(q.Owner)), jen.Id("k"+q.Go)))
	}
	for _, q := range f.Releases {
		r = append(r, jen.Id("kr"+q.Go).Dot("done").Call(jen.Id("ek")))
	}
	if f.OnSuccess != "" {
		r = append(r, jen.If(ok.Clone()).Block(jen.Id(f.OnSuccess).Call()))
	}
	if u := f.Thread; u != nil && u.Make {
		r = append(r, jen.Qual(osthreadPkg, "Own").Call(jen.Id("ek"), jen.Lit(u.Kind), jen.Uintptr().Call(jen.Id(u.Param.Go)), jen.Id("th")))
	} else if u != nil && u.End {
		r = append(r, jen.Qual(osthreadPkg, "End").Call(jen.Id("ek"), jen.Lit(u.Kind), jen.Id("hk"), jen.Id("th")))
	}
	return r
}

// osthreadPkg is the package whose threads run the calls on a handle of a
// kind in "threads".
const osthreadPkg = "github.com/cudagen/cudagen/cuda/internal/osthread"

// threadCall is the code that runs a call to the trampoline tname, with
// the arguments after the context, on the OS thread of f's handle
// (cuda/internal/osthread): a thread of its own (th) for the call that
// makes it.
// The call's result is rt. A driver call's closure is given the context
// to make current there (inCtx, cuda/driver/thread.go).
func threadCall(f *function, tname string, args []jen.Code) []jen.Code {
	u, ost := f.Thread, osthreadPkg
	var call jen.Code
	if f.NoCtx {
		call = jen.Func().Params().Block(jen.Id("rt").Op("=").Qual("C", tname).Call(append([]jen.Code{jen.Qual("C", "uintptr_t").Call(jen.Lit(0))}, args...)...))
	} else {
		call = jen.Id("inCtx").Call(jen.Id("ctx"), jen.Func().Params(jen.Id("ctx").Qual("C", "uintptr_t")).Block(
			jen.Id("rt").Op("=").Qual("C", tname).Call(append([]jen.Code{jen.Id("ctx")}, args...)...)))
	}
	r := []jen.Code{jen.Var().Id("rt").Qual("C", "int")}
	switch {
	case u.Make:
		return append(r, jen.Id("th").Op(":=").Qual(ost, "Start").Call(), jen.Id("th").Dot("Do").Call(call))
	case u.Ptr:
		r = append(r, jen.Id("hk").Op(":=").Qual(ost, "At").Call(jen.Id(u.Param.Go)))
	default:
		r = append(r, jen.Id("hk").Op(":=").Uintptr().Call(jen.Id(u.Param.Go)))
	}
	on := jen.Qual(ost, "On").Call(jen.Lit(u.Kind), jen.Id("hk"), call)
	if u.End {
		on = jen.Id("th").Op(":=").Add(on) // the thread End lets go
	}
	return append(r, on)
}

// keptCopies are the parameters copied into C memory a handle keeps.
func keptCopies(f *function) []*param {
	var r []*param
	for _, q := range f.Params {
		if q.Keep != "" {
			r = append(r, q)
		}
	}
	return r
}

// typedIn is the code that checks a typed parameter's argument against
// its table and converts it.
func typedIn(f *function, q *param, tables map[string]string) []jen.Code {
	p, n, u := "p"+q.Go, "n"+q.Go, "u"+q.Go
	if q.ByValue {
		p = "_"
	} else {
		u = "_"
	}
	if q.SizeOf == nil {
		n = "_"
	}
	r := []jen.Code{
		jen.List(jen.Id("ts"+q.Go), jen.Id("tb"+q.Go)).Op(":=").List(jen.Id("typedScratch").Values(), jen.Id("typedBuf").Values()),
		jen.List(jen.Id("fn"), jen.Id(p), jen.Id(n), jen.Id(u), jen.Id("err")).Op(":=").Id("ts"+q.Go).Dot("in").Call(
			addr("tb"+q.Go), jen.Id("fn"), jen.Id("err"), jen.Lit(f.Symbol), jen.Lit(q.C), jen.Id(q.By.Go),
			jen.Int64().Call(jen.Id(q.By.Go)), jen.Id(tables[typedTable(f, q)]), jen.Id(q.Go)),
	}
	if q.SizeOf != nil && q.SizeOf.SizePtr {
		r = append(r, jen.Id("sz"+q.SizeOf.Go).Op(":=").Qual("C", "size_t").Call(jen.Id("n"+q.Go)))
	}
	return r
}

// arg is the trampoline's argument for q, with the code it needs before
// and after the call.
func (w *wrapper) arg(q *param) (jen.Code, error) {
	c := "c" + q.Go
	switch q.Role {
	case rIn:
		return typeCode(q.CConv).Call(jen.Id(q.Go)), nil
	case rBufLen:
		return typeCode(q.CConv).Call(jen.Lit(q.Size)), nil
	case rPtr, rStruct:
		if q.GoType == "unsafe.Pointer" {
			return jen.Id(q.Go), nil
		}
		return unsafePointer(jen.Id(q.Go)), nil
	case rString:
		w.add(jen.Id(c).Op(":=").Qual("C", "CString").Call(jen.Id(q.Go)),
			jen.Defer().Qual("C", "free").Call(unsafePointer(jen.Id(c))))
		return jen.Id(c), nil
	case rOut, rOutArray:
		return unsafePointer(addr(q.Go)), nil
	case rOutString:
		w.add(jen.Var().Id(c).Op("*").Qual("C", "char"))
		w.post = append(w.post, jen.Id(q.Go).Op("=").Qual("C", "GoString").Call(jen.Id(c)))
		return unsafePointer(addr(c)), nil
	case rBuf:
		w.add(jen.Var().Id(c).Index(jen.Lit(q.Size)).Byte())
		w.post = append(w.post, jen.Id(q.Go).Op("=").Id("cString").Call(jen.Id(c).Index(jen.Empty(), jen.Empty())))
		return unsafePointer(jen.Op("&").Id(c).Index(jen.Lit(0))), nil
	case rImage, rSlice:
		if q.GoType == "[]string" { // C strings in C memory, for the call
			w.add(jen.List(jen.Id(c), jen.Id("free"+q.Go)).Op(":=").Id("cStrings").Call(jen.Id(q.Go)),
				jen.Defer().Id("free"+q.Go).Call())
			return jen.Id(c), nil
		}
		if q.Keep != "" { // copied into C memory its owner keeps
			w.add(jen.Id("k"+q.Go).Op(":=").Id("keepCopy").Call(unsafePointer(sliceData(q.Go)),
				jen.Len(jen.Id(q.Go)).Op("*").Int().Call(jen.Qual("unsafe", "Sizeof").Call(jen.Id(q.Go).Index(jen.Lit(0))))))
			return jen.Id("k" + q.Go), nil
		}
		if q.Role == rImage {
			return unsafePointer(sliceData(q.Go)), nil
		}
		if q.Hidden {
			return jen.Parens(jen.Op("*").Qual("C", "uintptr_t")).Call(unsafePointer(sliceData(q.Go))), nil
		}
		return unsafePointer(sliceData(q.Go)), nil
	case rCount:
		return typeCode(q.CConv).Call(jen.Len(jen.Id(countSlice(w.f, q)))), nil
	case rOutSlice:
		return unsafePointer(sliceData(q.Go)), nil
	case rSized:
		return w.sized(q), nil
	case rOutCount:
		return unsafePointer(addr(c)), nil
	case rInOutCount:
		ct := jen.Qual("C", "size_t")
		if q.GoType == "uint32" {
			ct = jen.Qual("C", "uint")
		}
		w.add(jen.Id(c).Op(":=").Add(ct).Call(jen.Len(jen.Id(countSlice(w.f, q)))))
		w.post = append(w.post, jen.Id(q.Go).Op("=").Id(q.GoType).Call(jen.Id(c)))
		return unsafePointer(addr(c)), nil
	case rTyped:
		if q.ByValue {
			return jen.Qual("C", "uintptr_t").Call(jen.Id("u" + q.Go)), nil
		}
		return jen.Id("p" + q.Go), nil
	case rTypedSize:
		if q.SizePtr {
			return unsafePointer(addr("sz" + q.Go)), nil
		}
		return typeCode(q.CConv).Call(jen.Id("n" + typedOf(w.f, q).Go)), nil
	}
	return nil, fmt.Errorf("gen: %s: parameter %s: no Go argument for its role %d", w.f.Symbol, q.C, q.Role)
}

// twoCalls ends the wrapper of a function that returns arrays sized by a
// count: the count with NULL arrays, then the arrays.
func (w *wrapper) twoCalls(cnt *param, tramp string, args []jen.Code, outSlices map[int]string) {
	first := append([]jen.Code(nil), args...)
	for i := range outSlices {
		first[i] = jen.Nil()
	}
	ct := jen.Qual("C", "size_t")
	if cnt.GoType == "*uint32" {
		ct = jen.Qual("C", "uint")
	}
	c := jen.Id("c" + cnt.Go)
	var outsl, makes, trims, zs []jen.Code
	for _, q := range w.f.Params {
		if q.Role == rOutSlice {
			outsl = append(outsl, jen.Id(q.Go))
			makes = append(makes, jen.Make(typeCode(q.GoType), c.Clone()))
			trims = append(trims, jen.Id(q.Go).Index(jen.Empty(), jen.Min(jen.Int().Call(c.Clone()), jen.Len(jen.Id(q.Go)))))
		}
	}
	for range outs(w.f) {
		zs = append(zs, jen.Nil())
	}
	w.add(
		jen.Var().Add(c.Clone()).Add(ct),
		jen.If(jen.Id("err").Op("=").Add(w.done(jen.Id("err"), jen.Qual("C", tramp).Call(first...))),
			jen.Id("err").Op("!=").Nil().Op("||").Add(c.Clone()).Op("==").Lit(0)).Block(jen.Return()),
		jen.List(outsl...).Op("=").List(makes...),
		jen.If(jen.Id("err").Op("=").Add(w.done(jen.Nil(), jen.Qual("C", tramp).Call(args...))), jen.Id("err").Op("!=").Nil()).Block(
			jen.Return(append(zs, jen.Id("err"))...)),
		comment("// The driver wrote at most the capacity, and says how many it wrote."),
		jen.List(outsl...).Op("=").List(trims...),
		jen.Return(),
	)
}

// outCount is the count pointer of a two-call function, or nil.
func outCount(f *function) *param {
	for _, q := range f.Params {
		if q.Role == rOutCount {
			return q
		}
	}
	return nil
}

// typedParams lists a function's typed parameters.
func typedParams(f *function) []*param { return withRole(f, rTyped) }

// typedOf is the typed parameter whose size q is.
func typedOf(f *function, q *param) *param {
	for _, t := range typedParams(f) {
		if t.SizeOf == q {
			return t
		}
	}
	return nil
}

// typedTableNames maps each typed parameter's table name to the table it
// shares: one for each distinct table (cuPointerGetAttribute and
// cuPointerSetAttribute share one).
func typedTableNames(m *model) map[string]string {
	names := map[string]string{}
	seen := map[string]string{}
	for _, f := range m.Funcs {
		for _, q := range typedParams(f) {
			key := fmt.Sprint(q.Entries)
			if _, ok := seen[key]; !ok {
				seen[key] = typedTable(f, q)
			}
			names[typedTable(f, q)] = seen[key]
		}
	}
	return names
}

// typedDecls writes the typed parameters' tables.
func typedDecls(file *jen.File, m *model) {
	tables := typedTableNames(m)
	var defs []jen.Code
	for _, f := range m.Funcs {
		for _, q := range typedParams(f) {
			if tables[typedTable(f, q)] != typedTable(f, q) {
				continue
			}
			var ents []jen.Code
			for _, e := range q.Entries {
				kind := map[string]string{"value": "typedValue", "bool": "typedBool", "slice": "typedSlice", "byValue": "typedByValue", "refused": "typedRefused"}[e.Kind]
				t := jen.Nil()
				if e.GoType != "" {
					t = jen.Qual("reflect", "TypeFor").Types(typeCode(e.GoType)).Call()
				}
				ents = append(ents, row(jen.Int64().Call(jen.Id(e.Go)), t, jen.Id(kind)).Comment(e.C))
			}
			defs = append(defs, jen.Id(typedTable(f, q)).Op("=").Index().Id("typedEntry").Add(rows(ents...)))
		}
	}
	if len(defs) > 0 {
		file.Add(comment("// The Go type of each typed parameter per value of the parameter that picks it."))
		file.Var().Defs(defs...)
		file.Line()
	}
}

// pinTable names the table of a pinned parameter's pointer words.
func pinTable(q *param) string {
	t := strings.TrimLeft(q.GoType, "*[]")
	return "pin" + strings.ReplaceAll(t, "unsafe.", "")
}

// pins is the code that pins, for the call, the Go memory the caller's
// arguments point to: cgo refuses Go memory holding unpinned Go pointers.
func pins(f *function) []jen.Code {
	var r []jen.Code
	for _, q := range f.Params {
		if len(q.PinWords) == 0 {
			continue
		}
		if q.Role == rSlice {
			r = append(r, jen.Id("pinElems").Call(addr("pin"), unsafePointer(sliceData(q.Go)), jen.Cap(jen.Id(q.Go)), lit(q.ElemSize), jen.Id(pinTable(q))))
		} else {
			r = append(r, jen.Id("pinWords").Call(addr("pin"), unsafePointer(jen.Id(q.Go)), jen.Id(pinTable(q))))
		}
	}
	return r
}

// countSlice is the slice whose length a count takes: the first that is
// not optional (an optional one may be empty).
func countSlice(f *function, count *param) string {
	for _, s := range count.Slices {
		if !sliceParam(f, s).Optional {
			return s
		}
	}
	return count.Slices[0]
}

func sliceParam(f *function, goName string) *param {
	for _, q := range f.Params {
		if q.Go == goName {
			return q
		}
	}
	return nil
}

// lengthChecks is the code that refuses a call before it is made: a
// module image the check rejects, slices sharing a count whose lengths
// differ.
func lengthChecks(f *function) []jen.Code {
	var r []jen.Code
	errNil := func() *jen.Statement { return jen.Id("err").Op("==").Nil() }
	if f.Check != "" {
		args := []jen.Code{jen.Id("fn"), jen.Id("ctx"), jen.Lit(f.Symbol)}
		for _, a := range f.CheckArgs {
			args = append(args, jen.Id(a))
		}
		r = append(r, jen.If(errNil()).Block(jen.List(jen.Id("fn"), jen.Id("err")).Op("=").Id(f.Check).Call(args...)))
	}
	for _, q := range f.Params {
		if q.Role == rImage {
			r = append(r, jen.If(errNil()).Block(
				jen.List(jen.Id("fn"), jen.Id("err")).Op("=").Id("checkImage").Call(jen.Id("fn"), jen.Lit(f.Symbol), jen.Lit(q.Go), jen.Id(q.Go))))
		}
		if q.Rank != "" {
			need := jen.Int().Call(jen.Id(q.Rank))
			if q.RankMinus > 0 {
				need = need.Op("-").Lit(q.RankMinus)
			}
			r = append(r, jen.If(errNil().Op("&&").Len(jen.Id(q.Go)).Op("<").Add(need)).Block(
				jen.List(jen.Id("fn"), jen.Id("err")).Op("=").List(jen.Lit(0), jen.Id("rankError").Call(jen.Lit(f.Symbol), jen.Lit(q.Go), jen.Len(jen.Id(q.Go)), need.Clone(), jen.Lit(q.Rank)))))
		}
		if q.Role != rCount && q.Role != rInOutCount || len(q.Slices) < 2 {
			continue
		}
		first := countSlice(f, q)
		for _, s := range q.Slices {
			if s == first {
				continue
			}
			cond := errNil().Op("&&")
			if sliceParam(f, s).Optional {
				cond = cond.Len(jen.Id(s)).Op("!=").Lit(0).Op("&&")
			}
			cond = cond.Len(jen.Id(first)).Op("!=").Len(jen.Id(s))
			r = append(r, jen.If(cond).Block(jen.List(jen.Id("fn"), jen.Id("err")).Op("=").List(jen.Lit(0),
				jen.Id("lengthError").Call(jen.Lit(f.Symbol), jen.Lit(first), jen.Lit(s), jen.Len(jen.Id(first)), jen.Len(jen.Id(s))))))
		}
	}
	return r
}

// noCgo renders the version's !cgo file: every wrapper returns the
// cgo-disabled error.
func (e *renderer) noCgo(m *model) ([]byte, error) {
	f := e.newFile(e.Cfg.Package, e.constraint(m.Version, "!cgo"))
	f.Var().Id("_").Qual("unsafe", "Pointer")
	f.Line()
	if m.Lib == nil {
		f.Add(comment("// Without cgo every function returns errNoCgo (it matches ErrNoDriver)."))
	} else {
		f.Add(comment("// Without cgo every function returns errNoCgo (it matches ErrNoLibrary)."))
	}
	f.Line()
	for _, fn := range m.Funcs {
		var ps []jen.Code
		if m.Lib == nil {
			ps = append(ps, jen.Id("Context"))
		}
		for _, q := range inParams(fn) {
			ps = append(ps, typeCode(q.GoType))
		}
		var rv []jen.Code
		for _, q := range outs(fn) {
			rv = append(rv, zero(m, q.GoType))
		}
		rv = append(rv, jen.Id("errNoCgo"))
		f.Func().Id(wrapperName(m, fn)).Params(ps...).Add(resultsCode(fn, false)).Add(flat(jen.Return(rv...)))
	}
	return renderFor(m, e.fileName(m, "_nocgo"), f)
}

// zero is the zero value of a result type.
func zero(m *model, t string) jen.Code {
	switch {
	case t == "string":
		return jen.Lit("")
	case t == "unsafe.Pointer", strings.HasPrefix(t, "*"):
		return jen.Nil()
	case strings.HasPrefix(t, "["):
		return typeCode(t).Values()
	}
	for _, ty := range m.Types {
		if ty.Go == t {
			switch ty.Kind {
			case tStruct, tUnion, tOpaque:
				return typeCode(t).Values()
			}
		}
	}
	return jen.Lit(0)
}

// driverTest renders a version's test that calls every bound function
// without a driver.
func (e *renderer) driverTest(m *model) ([]byte, error) {
	f := e.newFile(e.Cfg.Package, e.constraint(m.Version, ""))
	zeroArgCalls(f, m, "noDriverCalls", true)
	f.Line()
	f.Add(comment("// typedFormCalls calls every typed form with each variable of its key: the",
		"// function's name, the key's variable, and the call."))
	var typed []jen.Code
	for _, fn := range m.Funcs {
		for _, q := range typedParams(fn) {
			for _, e := range q.Entries {
				if !keyed(e) {
					continue
				}
				var args []jen.Code
				for _, p := range inParams(fn) {
					switch {
					case p == q && q.Dir == "out":
					case p == q:
						args = append(args, jen.Op("*").New(typeCode(e.GoType)))
					case p == q.By:
						args = append(args, jen.Id(e.Go+"Of"))
					default:
						args = append(args, sampleArg(p))
					}
				}
				call := jen.Id(fn.typedForm()).Call(args...)
				n := len(outs(fn))
				if q.Dir == "out" {
					n++
				}
				if n > 0 {
					call = jen.Id(fmt.Sprintf("e%d", n+1)).Call(call)
				}
				typed = append(typed, row(jen.Lit(fn.GoName), jen.Lit(e.Go+"Of"), jen.Func().Params().Error().Add(flat(jen.Return(call)))))
			}
		}
	}
	f.Var().Id("typedFormCalls").Op("=").Index().Struct(jen.Id("name").String(), jen.Id("key").String(), jen.Id("call").Func().Params().Error()).Add(rows(typed...))
	f.Line()
	f.Add(comment("// unionMembers lists every union member with an accessor: a new union, the",
		"// member's address in it, and the offsets of the member's words that hold",
		"// integers (TestUnionIntegersNeverInPointerWords fills them)."))
	members := unionMemberRows(m)
	f.Var().Id("unionMembers").Op("=").Index().Struct(jen.Id("name").String(), jen.Id("new").Func().Params().Params(jen.Any(), jen.Qual("unsafe", "Pointer")),
		jen.Id("words").Index().Uintptr()).Add(rows(members...))
	return renderFor(m, testFileName(m.Version), f)
}

// zeroArgCalls declares a test's table name: every function of m called
// with zero arguments, with the name of each. Where picked is set (the
// driver's test), a typed parameter's picker gets the value its sample is
// for; the libraries' tests leave it zero.
func zeroArgCalls(f *jen.File, m *model, name string, picked bool) {
	f.Var().Id("_").Qual("unsafe", "Pointer")
	f.Line()
	f.Add(comment("// " + name + " calls every bound function with zero arguments."))
	var calls []jen.Code
	for _, fn := range m.Funcs {
		var args []jen.Code
		for _, q := range inParams(fn) {
			args = append(args, sampleArg(q))
		}
		for _, q := range typedParams(fn) {
			for i, a := range inParams(fn) {
				if picked && a.Go == q.By.Go {
					args[i] = typeCode(q.By.GoType).Call(lit(firstTyped(q).Value)) // the picker of the sample's value
				}
			}
		}
		call := jen.Id(fn.GoName).Call(args...)
		if n := len(outs(fn)); n > 0 {
			call = jen.Id(fmt.Sprintf("e%d", n+1)).Call(call)
		}
		calls = append(calls, row(jen.Lit(fn.GoName), jen.Func().Params().Error().Add(flat(jen.Return(call)))))
	}
	f.Var().Id(name).Op("=").Index().Struct(jen.Id("name").String(), jen.Id("call").Func().Params().Error()).Add(rows(calls...))
}

// unionMemberRows are the rows of the no-driver test's unionMembers: each
// union member with data words, its accessor and those words' offsets.
func unionMemberRows(m *model) []jen.Code {
	var members []jen.Code
	for _, t := range m.Types {
		if t.Kind != tUnion {
			continue
		}
		for _, fd := range t.Fields {
			if fd.Padding || len(fd.DataWords) == 0 {
				continue
			}
			var ws []jen.Code
			for _, w := range fd.DataWords {
				ws = append(ws, lit(w))
			}
			newFn := jen.Func().Params().Params(jen.Any(), jen.Qual("unsafe", "Pointer")).Block(
				jen.Id("u").Op(":=").New(jen.Id(t.Go)),
				jen.Return(jen.Id("u"), unsafePointer(jen.Id("u").Dot(fd.Go).Call())))
			members = append(members, row(jen.Lit(t.Go+"."+fd.Go), newFn, jen.Index().Uintptr().Values(ws...)))
		}
	}
	return members
}

// sampleArg is a zero argument for q that the wrapper accepts.
func sampleArg(q *param) jen.Code {
	switch q.Role {
	case rIn:
		switch {
		case q.CConv == "unsafe.Pointer":
			return jen.Nil()
		case q.GoType == "bool":
			return jen.False()
		}
		return jen.Lit(0)
	case rImage:
		return jen.Index().Byte().Values(jen.Lit(0)) // empty PTX text: an image the check passes
	case rStruct:
		return jen.New(typeCode(strings.TrimPrefix(q.GoType, "*")))
	case rString:
		return jen.Lit("")
	case rTyped:
		return typedSample(q)
	}
	return jen.Nil()
}

// firstTyped is the first row of a typed parameter's table with data.
func firstTyped(q *param) typedEntry {
	for _, e := range q.Entries {
		if e.Kind != "refused" {
			return e
		}
	}
	return typedEntry{}
}

// typedSample is an argument the typed parameter's first row accepts.
func typedSample(q *param) jen.Code {
	e := firstTyped(q)
	switch e.Kind {
	case "value", "bool":
		return jen.New(typeCode(e.GoType))
	case "slice":
		return jen.Make(typeCode(e.GoType), jen.Lit(1))
	case "byValue":
		return typeCode(e.GoType).Call(jen.Lit(0))
	}
	return jen.Nil()
}

func cpath(path, c string) string {
	if path == "" {
		return c
	}
	return path + "." + c
}

// layoutCheck is a C expression and the Go expression that must equal it.
type layoutCheck struct {
	C  string
	Go jen.Code
}

// layoutChecks lists, for every struct and union, C expressions and the Go
// expressions that must equal them. Anonymous members, which C cannot
// name, are checked through their first named member.
func layoutChecks(m *model, pkgPath string) []layoutCheck {
	var r []layoutCheck
	add := func(c string, g jen.Code) { r = append(r, layoutCheck{c, g}) }
	sizeof := func(t jen.Code) jen.Code { return jen.Qual("unsafe", "Sizeof").Call(jen.Op("*").New(t)) }
	for _, t := range m.Types {
		if t.Kind != tStruct && t.Kind != tUnion && t.Kind != tOpaque {
			continue
		}
		goT := func() jen.Code { return jen.Qual(pkgPath, t.Go) }
		outer, path, base := t.C, "", ""
		if t.Nested {
			outer, path = t.Outer.C, t.Path
			if t.Anon {
				base = fmt.Sprintf("offsetof(%s, %s)", outer, cpath(path, t.First))
			} else {
				base = fmt.Sprintf("offsetof(%s, %s)", outer, path)
				add(fmt.Sprintf("sizeof(((%s *)0)->%s)", outer, path), sizeof(goT()))
			}
		} else {
			add("sizeof("+t.C+")", sizeof(goT()))
			if t.Align > 8 {
				// Go cannot align beyond 8: the C alignment is documented
				// on the type, and compared with the model's number.
				add("_Alignof("+t.C+")", lit(t.Align))
			} else {
				add("_Alignof("+t.C+")", jen.Qual("unsafe", "Alignof").Call(jen.Op("*").New(goT())))
			}
		}
		for _, f := range t.Fields {
			c := f.C
			if c == "" {
				c = f.First
			}
			if c == "" {
				continue
			}
			switch t.Kind {
			case tStruct:
				off := fmt.Sprintf("offsetof(%s, %s)", outer, cpath(path, c))
				if base != "" {
					off += " - " + base
				}
				add(off, jen.Qual("unsafe", "Offsetof").Call(jen.New(goT()).Dot(f.Go)))
			case tUnion:
				if f.C != "" {
					add(fmt.Sprintf("sizeof(((%s *)0)->%s)", outer, cpath(path, f.C)), sizeof(typeIn(f.GoType, pkgPath)))
				}
			}
		}
	}
	return r
}

// layout renders the layout check: a cgo file that includes the real
// cuda.h (only with -tags cudagen_layout) and its test.
func (e *renderer) layout(m *model) (cgo, test []byte, err error) {
	pkgPath, header, name := driverPath, "cuda.h", layoutFileName(m.Version, "")
	if m.Lib != nil {
		pkgPath, header, name = modulePath+"/"+e.Cfg.Output, m.Lib.Header, libLayoutFileName(e.Cfg.Package, m.Tag, "")
	}
	checks := layoutChecks(m, pkgPath)
	pre, err := e.render("layout.c.tmpl", map[string]any{"Header": header, "Checks": checks})
	if err != nil {
		return nil, nil, err
	}
	f := e.newFile("layout", e.constraint(m.Version, "cudagen_layout && cgo"))
	f.CgoPreamble("/*\n" + pre + "*/")
	f.Add(comment("// cLayout is what the C compiler says, in the order of goLayout."))
	first := unsafePointer(jen.Op("&").Qual("C", "cg_layout").Index(jen.Lit(0)))
	f.Func().Id("cLayout").Params().Index().Int64().Add(flat(jen.Return(
		jen.Qual("unsafe", "Slice").Call(jen.Parens(jen.Op("*").Int64()).Call(first), jen.Lit(len(checks))))))
	if cgo, err = renderFor(m, name, f); err != nil {
		return nil, nil, err
	}
	f = e.newFile("layout", e.constraint(m.Version, "cudagen_layout && cgo"))
	f.ImportName(pkgPath, e.Cfg.Package)
	f.Add(comment("// goLayout is each C expression's value on the Go side."))
	var vs []jen.Code
	for _, c := range checks {
		vs = append(vs, row(jen.Lit(c.C), c.Go))
	}
	f.Var().Id("goLayout").Op("=").Index().Struct(jen.Id("c").String(), jen.Id("v").Uintptr()).Add(rows(vs...))
	if test, err = renderFor(m, strings.TrimSuffix(name, ".go")+"_test.go", f); err != nil {
		return nil, nil, err
	}
	return cgo, test, nil
}

// typedKinds says, for the any form's doc, what a typed parameter takes
// for a value of each kind of table entry.
var typedKinds = map[string]string{
	"value":   "*%s",
	"bool":    "*%s",
	"slice":   "%s with room for the data",
	"byValue": "%s (the value itself, not a pointer)",
	"refused": "none: refused before the call%.0s",
}

// typedDocLines list, in the any form's doc, what its typed parameter
// takes for each value of its picker.
func typedDocLines(fn *function) []string {
	var r []string
	for _, q := range typedParams(fn) {
		r = append(r, "//", line("The Go type of %s for each %s (a mismatch is refused before the call; %s checks it at compile time):", q.Go, q.By.Go, fn.typedForm()), "//")
		for _, e := range q.Entries {
			r = append(r, "//   - "+e.Go+": "+fmt.Sprintf(typedKinds[e.Kind], e.GoType))
		}
	}
	return r
}

// typedKeyDecls writes each typed key: the generic type, its methods, and
// its variables in one var block of that type (go doc lists them under
// the type).
func typedKeyDecls(f *jen.File, m *model) {
	for _, k := range m.Keys {
		doc := []string{
			line("%s is a %s that carries the Go type T of its value, so that a value of another type does not compile: %s take one.", k.Go, k.Enum, strings.Join(k.Funcs, ", ")),
			"//",
			line("Its values are the variables below, one per %s with a Go type a typed form takes or returns whole. Any other (the zero value of another T) is refused at run time, as the any forms refuse a mismatch.", k.Enum),
		}
		if len(k.Left) > 0 {
			var left []string
			for _, v := range k.Left {
				left = append(left, v.Const+" ("+v.GoType+")")
			}
			doc = append(doc, "//", line("Without a variable (the any forms take them): %s.", strings.Join(left, ", ")))
		}
		f.Add(comment(doc...))
		f.Type().Id(k.Go).Types(jen.Id("T").Any()).Struct(jen.Id("v").Id(k.Enum))
		f.Line()
		recv := func() *jen.Statement { return jen.Params(jen.Id("k").Id(k.Go).Types(jen.Id("T"))) }
		f.Add(comment(line("%s is the key's value, for the any forms.", k.Enum)))
		f.Func().Add(recv()).Id(k.Enum).Params().Id(k.Enum).Add(flat(jen.Return(jen.Id("k").Dot("v"))))
		f.Line()
		f.Add(comment(line("String is the name of the key's %s.", k.Enum)))
		f.Func().Add(recv()).Id("String").Params().String().Add(flat(jen.Return(jen.Id("k").Dot("v").Dot("String").Call())))
		f.Line()
		var defs []jen.Code
		for _, v := range k.Vars {
			t := jen.Id(k.Go).Types(typeCode(v.GoType))
			defs = append(defs, jen.Id(v.Go).Add(t).Op("=").Add(t.Clone()).Values(jen.Id(v.Const)).Comment(v.C))
		}
		f.Add(comment(line("The %s values with their Go types.", k.Enum)))
		f.Var().Defs(defs...)
		f.Line()
	}
}

// typedForm writes a function's typed form and its Ctx variant: the
// picker's parameter takes the key, the typed parameter is a T (returned
// where the driver writes it), and the call goes through the any form.
func typedForm(f *jen.File, fn *function, tables map[string]string) {
	q := typedParams(fn)[0]
	k, name := q.Key, fn.typedForm()
	byValue := false
	for _, e := range q.Entries {
		byValue = byValue || e.Kind == "byValue"
	}
	var ps, names, args []jen.Code // the parameters after ctx, their names, the any form's arguments after ctx
	for _, p := range inParams(fn) {
		switch {
		case p == q && q.Dir == "out":
			args = append(args, addr(q.Go))
		case p == q:
			ps, names = append(ps, jen.Id(p.Go).Id("T")), append(names, jen.Id(p.Go))
			if byValue { // the value itself or its address, as the table says for the key
				args = append(args, jen.Id("typedArg").Call(jen.Id(tables[typedTable(fn, q)]), jen.Int64().Call(jen.Id(q.By.Go).Dot("v")), jen.Id(q.Go)))
			} else {
				args = append(args, addr(q.Go))
			}
		case p == q.By:
			ps, names = append(ps, jen.Id(p.Go).Id(k.Go).Types(jen.Id("T"))), append(names, jen.Id(p.Go))
			args = append(args, jen.Id(p.Go).Dot("v"))
		default:
			ps, names = append(ps, jen.Id(p.Go).Add(typeCode(p.GoType))), append(names, jen.Id(p.Go))
			args = append(args, jen.Id(p.Go))
		}
	}
	isOut := map[*param]bool{}
	for _, p := range outs(fn) {
		isOut[p] = true
	}
	var named, types, others []jen.Code
	for _, p := range fn.Params {
		switch {
		case p == q && q.Dir == "out":
			named, types = append(named, jen.Id(p.Go).Id("T")), append(types, jen.Id("T"))
		case isOut[p]:
			named, types = append(named, jen.Id(p.Go).Add(typeCode(p.GoType))), append(types, typeCode(p.GoType))
			others = append(others, jen.Id(p.Go))
		}
	}
	res := jen.Error()
	if len(types) > 0 {
		res = jen.Params(append(types, jen.Error())...)
	}
	what := "is taken as a T"
	if q.Dir == "out" {
		what = "is returned as a T"
	}
	doc := []string{
		line("%s is %s with %s's Go type checked at compile time: %s is a %s[T] (one of the variables below), and %s %s. It calls %sCtx, which checks it again, and costs no more.",
			name, fn.GoName, q.Go, q.By.Go, k.Go, q.Go, what, fn.GoName),
		"//", line("The Go type T for each %s:", q.By.Go), "//",
	}
	var left []string
	for _, e := range q.Entries {
		switch {
		case keyed(e):
			doc = append(doc, "//   - "+e.Go+"Of: "+e.GoType)
		case e.Kind == "slice":
			left = append(left, e.Go+" ("+e.GoType+", a slice the caller sizes)")
		}
	}
	if len(left) > 0 {
		doc = append(doc, "//", line("Left to %s: %s.", fn.GoName, strings.Join(left, ", ")))
	}
	f.Add(comment(doc...))
	f.Func().Id(name).Types(jen.Id("T").Any()).Params(ps...).Add(res).Add(flat(jen.Return(jen.Id(name + "Ctx").Call(append([]jen.Code{jen.Lit(0)}, names...)...))))
	f.Add(comment(line("%sCtx is %s through %sCtx: ctx is made current on the calling thread first, and stays current after the call.", name, name, fn.GoName)))
	call := jen.Id(fn.GoName + "Ctx").Call(append([]jen.Code{jen.Id("ctx")}, args...)...)
	ctxPs := append([]jen.Code{jen.Id("ctx").Id("Context")}, ps...)
	if len(types) == 0 {
		f.Func().Id(name + "Ctx").Types(jen.Id("T").Any()).Params(ctxPs...).Error().Add(flat(jen.Return(call)))
		return
	}
	f.Func().Id(name+"Ctx").Types(jen.Id("T").Any()).Params(ctxPs...).Params(append(named, jen.Id("err").Error())...).Block(
		jen.List(append(others, jen.Id("err"))...).Op("=").Add(call),
		jen.Return(),
	)
}

// plainDoc is the doc comment of a function's plain variant: what it
// calls, the header's doc, its typed values, raw pointers and what the
// driver keeps.
func plainDoc(fn *function) []string {
	doc := fmt.Sprintf("%s calls %s (%sCtx makes a context current first and leaves it current)", fn.GoName, fn.Symbol, fn.GoName)
	if fn.NoCtx {
		doc = fmt.Sprintf("%s calls %s", fn.GoName, fn.Symbol)
	} else if fn.Thread != nil {
		doc = fmt.Sprintf("%s calls %s on the OS thread its %s owns (%sCtx makes a context current there first, not on the caller's thread)", fn.GoName, fn.Symbol, fn.Thread.GoType, fn.GoName)
	}
	if b := brief(fn.Doc); b != "" {
		doc += ": " + orDot(b)
	} else {
		doc += "."
	}
	lines := append([]string{"// " + doc}, docBody(fn.Doc)...)
	lines = append(lines, typedDocLines(fn)...)
	if len(fn.RawDocs) > 0 {
		lines = append(lines, "//", "// The raw pointers:")
		for _, r := range fn.RawDocs {
			lines = append(lines, "//   - "+r)
		}
	}
	var kept []string
	for _, l := range fn.Lives {
		if l.Kind == lifeKept {
			k := "//   - " + l.Path + ": until " + l.Until
			if strings.Contains(l.Size, "copied") {
				k += " (" + l.Size[strings.Index(l.Size, "copied"):] + ")"
			}
			kept = append(kept, k)
		}
	}
	if len(kept) > 0 {
		lines = append(append(lines, "//", "// What the driver keeps after the call returns (so never Go memory):"), kept...)
	}
	if u := fn.Thread; u != nil {
		lines = append(lines, "//")
		ctx := "; with no context given, the caller's current context is made current there"
		if fn.NoCtx {
			ctx = ""
		}
		lines = append(lines, line("The OS thread: every call on a %s runs on one OS thread that it owns, from the call that makes it (on a thread of its own) to the one that ends it, whichever goroutine calls%s. Why: %s.", u.GoType, ctx, u.Why))
	}
	return lines
}

// plainFunc renders a function's plain variant (the context left as it is)
// and, for a default entry point, its versioned names.
func plainFunc(f *jen.File, fn *function) {
	call := jen.Id(fn.GoName + "Ctx").Call(append([]jen.Code{jen.Lit(0)}, idsOf(inParams(fn))...)...)
	f.Func().Id(fn.GoName).Params(paramsCode(fn, false)...).Add(resultsCode(fn, false)).Add(flat(jen.Return(call)))
	if fn.Alias != "" {
		// The stable versioned name: the same function, under the name
		// of its entry point, which every pin declaring it binds alike.
		f.Add(comment(line("%s is %s under its entry point's versioned name (%s): code that means this form of %s compiles on every pinned toolkit that declares %s.", fn.Alias, fn.GoName, fn.Symbol, fn.Base, fn.Symbol)))
		f.Func().Id(fn.Alias).Params(paramsCode(fn, false)...).Add(resultsCode(fn, false)).Add(flat(jen.Return(call.Clone())))
		f.Add(comment(line("%sCtx is %sCtx under its entry point's versioned name (%s).", fn.Alias, fn.GoName, fn.Symbol)))
		callCtx := jen.Id(fn.GoName + "Ctx").Call(append([]jen.Code{jen.Id("ctx")}, idsOf(inParams(fn))...)...)
		f.Func().Id(fn.Alias + "Ctx").Params(paramsCode(fn, true)...).Add(resultsCode(fn, false)).Add(flat(jen.Return(callCtx)))
	}
}

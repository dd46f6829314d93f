package main

// Stage 3: emitting Go. Per version: a pure-Go file (types, enums and
// their tables, function metadata, the plain one-line variants), a cgo
// file (one wrapper per function, taking the context to make current), a
// !cgo file (the same wrappers, returning the cgo-disabled error), the
// no-driver test, and the layout check.

import (
	"bytes"
	"fmt"
	"go/format"
	"sort"
	"strconv"
	"strings"

	"github.com/cudagen/cudagen/headers"
)

// goFile is one generated Go file being written.
type goFile struct {
	b bytes.Buffer
}

func (g *goFile) p(format string, args ...any) {
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteByte('\n')
}

func (e *Emitter) start(g *goFile, pkg, constraint string) {
	g.p("%s", e.Command)
	g.p("// %s", doNotEdit)
	if constraint != "" {
		g.p("//")
		g.p("%s", constraint)
	}
	g.p("")
	g.p("package %s", pkg)
	g.p("")
}

// gofmtSource formats generated source. Its error never quotes the
// source; formatFor names the header declaration behind it.
func gofmtSource(name string, b []byte) ([]byte, error) {
	out, err := format.Source(b)
	if err != nil {
		re := renderError(err).(*RenderError)
		re.Src = string(b)
		re.Msg = name + ": " + re.Msg
		return nil, re
	}
	return out, nil
}

// formatFor is gofmtSource for one version's file, naming the header
// declaration behind a failure.
func formatFor(m *Model, name string, b []byte) ([]byte, error) {
	out, err := gofmtSource(name, b)
	if err != nil {
		return nil, explainRender(err, m)
	}
	return out, nil
}

// oneLine squeezes a doc text onto one comment line.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "*/", "")
	s = strings.ReplaceAll(s, "/*", "")
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

// Pure renders the version's file that needs no cgo.
func (e *Emitter) Pure(m *Model) ([]byte, error) {
	g := &goFile{}
	e.start(g, e.Cfg.Package, e.constraint(m.Version, ""))
	g.p(`import (`)
	g.p(`"reflect"`)
	g.p(`"unsafe"`)
	g.p(`)`)
	g.p("")
	g.p("var _ reflect.Type")
	g.p("")
	typedDecls(g, m)
	g.p("// Bindings for CUDA %s: CUDA_VERSION %d,", m.Version, m.CUDAVersion)
	g.p("// %s.", strings.Join(sumLines(m), ",\n// "))
	g.p("const (")
	g.p("// HeaderVersion is the CUDA_VERSION of the header these bindings were generated from.")
	g.p("HeaderVersion = %d", m.CUDAVersion)
	g.p("// Toolkit is the toolkit version of that header.")
	g.p("Toolkit = %q", m.Version)
	g.p("// BuildTag is the build tag that selects these bindings.")
	g.p("BuildTag = %q", m.Tag)
	g.p("// PerThreadDefaultStream says whether the _ptsz entry points are bound.")
	g.p("PerThreadDefaultStream = %v", m.PerThread)
	g.p("gpaSymbol = %q", m.GPASymbol)
	g.p("gpaV2 = %v", m.GPAV2)
	g.p("gpaFlags = %d", m.GPAFlags)
	g.p(")")
	g.p("")
	g.p("// HeaderSHA256 holds the sha256 of each header file the bindings were generated from.")
	g.p("var HeaderSHA256 = map[string]string{")
	for _, n := range headers.Files {
		g.p("%q: %q,", n, m.Sums[n])
	}
	g.p("}")
	g.p("")
	var d decls
	for _, t := range m.Types {
		e.goTypeDecl(&d, t)
	}
	e.defineDecls(&d, m)
	for _, part := range []struct {
		kw string
		g  *goFile
	}{{"type", &d.types}, {"", &d.consts}, {"var", &d.vars}} {
		if part.g.b.Len() > 0 && part.kw == "" {
			g.b.Write(part.g.b.Bytes()) // one const block per enum and per #define group
		} else if part.g.b.Len() > 0 {
			g.p("%s (", part.kw)
			g.b.Write(part.g.b.Bytes())
			g.p(")")
			g.p("")
		}
	}
	g.b.Write(d.funcs.b.Bytes())
	for _, f := range m.Funcs {
		doc := fmt.Sprintf("%s calls %s (%sCtx makes a context current first)", f.GoName, f.Symbol, f.GoName)
		if b := brief(f.Doc); b != "" {
			doc += ": " + orDot(b)
		} else {
			doc += "."
		}
		g.p("// %s", doc)
		docBody(g, f.Doc)
		if len(f.RawDocs) > 0 {
			g.p("//")
			g.p("// The raw pointers:")
			for _, r := range f.RawDocs {
				g.p("//   - %s", r)
			}
		}
		g.p("func %s(%s) %s { return %sCtx(%s) }", f.GoName, strings.Join(sigParams(f, false), ", "), results(f, false), f.GoName, strings.Join(append([]string{"0"}, callNames(f)...), ", "))
	}
	g.p("")
	g.p("// Functions lists every bound function: its Go name, the name it is resolved")
	g.p("// by, the versioned entry point the header declares, and the ABI version")
	g.p("// passed to cuGetProcAddress, and the number of C parameters it takes. The")
	g.p("// wrappers index procs in the same order.")
	g.p("var Functions = []FunctionInfo{")
	for _, f := range m.Funcs {
		g.p("{%q, %q, %q, %d, %d, %d, nil},", f.GoName, f.Base, f.Symbol, f.ABI, f.Flags, len(f.Params))
	}
	g.p("}")
	g.p("")
	g.p("var procs [%d]proc", len(m.Funcs))
	g.p("")
	g.p("var ctxProcs = [2]*proc{&procs[%d], &procs[%d]}", m.Func("cuCtxGetCurrent").Index, m.Func("cuCtxSetCurrent").Index)
	return formatFor(m, fileName(m.Version), wrapComments(g.b.Bytes()))
}

// decls holds the pure file's declarations, grouped: one type block, one
// const block per enum and per #define group (so that go doc lists an
// enum's values under its type), one var block (gofmt separates top-level
// declarations with doc comments by blank lines; grouped ones it does
// not), then the funcs.
type decls struct {
	types, consts, vars, funcs goFile
}

func (e *Emitter) goTypeDecl(d *decls, t *Type) {
	g := &d.types
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
		g.p("// %s is %s%s", t.Go, what, orDot(doc))
		docBody(g, t.Doc)
		g.p("%s %s", t.Go, t.Base)
	case tCallback:
		g.p("// %s is %s, a C function pointer: %s.", t.Go, what, t.Sig)
		g.p("%s unsafe.Pointer", t.Go)
	case tEnum:
		g.p("// %s is %s%s", t.Go, what, orDot(doc))
		docBody(g, t.Doc)
		switch {
		case t.Go == "Result" || len(t.Values) == 0:
		case t.Flags:
			g.p("//")
			g.p("// Its String method returns the C names of the set flags joined by '|'; a")
			g.p("// multi-bit field prints its value's name.")
		default:
			g.p("//")
			g.p("// Its String method returns the C name of the value, or its number.")
		}
		g.p("%s %s", t.Go, t.Base)
		if len(t.Values) == 0 {
			break
		}
		g = &d.consts
		// No doc comment on the block: gofmt would set a blank line before it.
		g.p("const (")
		g.p("// Values of %s.", t.Go)
		defer g.p(")")
		for _, v := range t.Values {
			lit := strconv.FormatInt(v.Value, 10)
			if t.Flags {
				lit = "0x" + strconv.FormatInt(v.Value, 16)
			}
			c := v.C
			if v.Sentinel {
				c += " (a sentinel, not a value)"
			}
			if t.Group != "" && v.Doc != "" { // a #define's doc
				g.p("// %s is %s: %s", v.Go, v.C, orDot(brief(v.Doc)))
				docBody(g, v.Doc)
			}
			g.p("%s %s = %s // %s", v.Go, t.Go, lit, c)
		}
		g = &d.vars
		tab := "names" + t.Go
		vals := append([]*EnumValue(nil), t.Values...)
		// Sorted by value; among aliases the non-deprecated name comes first.
		sort.SliceStable(vals, func(i, j int) bool {
			if vals[i].Value != vals[j].Value {
				return vals[i].Value < vals[j].Value
			}
			return !deprecated(vals[i].Doc) && deprecated(vals[j].Doc)
		})
		g.p("%s = []enumName{", tab)
		// One entry a line; entries without a description share lines.
		var run []string
		flush := func() {
			if len(run) > 0 {
				g.p("%s", strings.Join(run, " "))
				run = nil
			}
		}
		for _, v := range vals {
			if v.Sentinel {
				continue
			}
			d := oneLine(v.Doc)
			if t.Go == "Result" {
				d = describe(v.Doc)
			}
			ent := fmt.Sprintf("{%d, %q, %q},", v.Value, v.C, d)
			if d != "" {
				flush()
				g.p("%s", ent)
				continue
			}
			if n := len(strings.Join(run, " ")); n > 0 && n+1+len(ent) > 96 {
				flush()
			}
			run = append(run, ent)
		}
		flush()
		g.p("}")
		g = &d.funcs
		switch {
		case t.Go == "Result":
		// The String methods are documented on their types (a doc comment
		// here would cost each a blank line: gofmt sets one before it).
		case t.Flags:
			g.p("func (v %s) String() string { return flagString(uint64(v), %s) }", t.Go, tab)
		default:
			g.p("func (v %s) String() string { return enumString(int64(v), %s, %q) }", t.Go, tab, t.Go)
		}
	case tStruct:
		g.p("// %s is %s (%d bytes)%s", t.Go, what, t.Size, orDot(doc))
		docBody(g, t.Doc)
		if t.Align > 8 {
			g.p("//")
			g.p("// C aligns it to %d bytes, which a Go type cannot: place values the driver", t.Align)
			g.p("// reads or writes in memory aligned to %d bytes (C.aligned_alloc, say).", t.Align)
		}
		g.p("%s struct {", t.Go)
		for _, f := range t.Fields {
			if f.Pad > 0 {
				g.p("_ [%d]byte", f.Pad)
			}
			g.p("%s %s", f.Go, f.GoType)
		}
		g.p("}")
	case tUnion, tOpaque:
		why := "a union: its members are read and written through the methods"
		if t.Kind == tOpaque {
			why = "bound as bytes: " + t.Why
		}
		g.p("// %s is %s (%d bytes), %s%s", t.Go, what, t.Size, why, orDot(doc))
		if t.Kind == tOpaque && t.Align == 1 {
			g.p("%s [%d]byte", t.Go, t.Size)
			break
		}
		g.p("%s struct {", t.Go)
		if a := map[int64]string{2: "uint16", 4: "uint32", 8: "uint64"}[t.Align]; a != "" {
			g.p("_ [0]%s", a)
		}
		if len(t.PtrWords) == 0 {
			g.p("Raw [%d]byte", t.Size)
		} else {
			// Storage the collector scans: a pointer word wherever a
			// member has a pointer, bytes elsewhere.
			g.p("// A pointer stored through a member stays visible to the garbage")
			g.p("// collector. Zero the value (*u = %s{}) before reusing it with a", t.Go)
			g.p("// member that has an integer where another had a pointer.")
			at := int64(0)
			for _, w := range t.PtrWords {
				if w > at {
					g.p("b%d [%d]byte", at, w-at)
				}
				g.p("p%d unsafe.Pointer", w)
				at = w + 8
			}
			if t.Size > at {
				g.p("b%d [%d]byte", at, t.Size-at)
			}
		}
		g.p("}")
		g = &d.funcs
		for _, f := range t.Fields {
			g.p("// %s is the member %s.", f.Go, f.C)
			g.p("func (u *%s) %s() *%s { return (*%s)(unsafe.Pointer(u)) }", t.Go, f.Go, f.GoType, f.GoType)
		}
	}
}

// docBody writes a doc's paragraphs after its first (see doc.go), after
// an empty comment line.
func docBody(g *goFile, doc string) {
	if lines := commentLines(body(doc), 80); len(lines) > 0 {
		g.p("//")
		for _, l := range lines {
			g.p("%s", l)
		}
	}
}

// defineDecls writes the #define constants: one const block per group;
// a group with a flags type was written as that type's values.
func (e *Emitter) defineDecls(d *decls, m *Model) {
	g := &d.consts
	for _, dg := range m.Defines {
		if dg.Flags != nil {
			continue
		}
		if len(dg.Defs) > 1 {
			g.p("// The #define constants %s* of cuda.h.", dg.Prefix)
		} else {
			g.p("// The #define constant %s of cuda.h.", dg.Defs[0].C)
		}
		g.p("const (")
		for _, c := range dg.Defs {
			line := c.C
			if c.GoType == "uintptr" {
				line += " (a void* value: store it in the pointer array the driver reads, e.g. *(*uintptr)(p) = " + c.Go + "; a Go constant cannot be an unsafe.Pointer)"
			}
			if b := brief(c.Doc); b != "" {
				line += ": " + b
			}
			g.p("// %s is %s", c.Go, orDot(line))
			docBody(g, c.Doc)
			if c.GoType != "" && !c.Ref {
				g.p("%s %s = %s", c.Go, c.GoType, c.Lit)
			} else {
				g.p("%s = %s", c.Go, c.Lit)
			}
		}
		g.p(")")
		g.p("")
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

// sigParams lists the Go parameters: "hEvent Event".
func sigParams(f *Func, ctx bool) []string {
	var r []string
	if ctx {
		r = append(r, "ctx Context")
	}
	for _, q := range f.Params {
		switch q.Role {
		case rIn, rPtr, rString, rStruct, rSlice, rTyped, rImage:
			r = append(r, q.Go+" "+q.GoType)
		}
	}
	return r
}

// callNames lists the Go argument names, in sigParams order.
func callNames(f *Func) []string {
	var r []string
	for _, q := range f.Params {
		switch q.Role {
		case rIn, rPtr, rString, rStruct, rSlice, rTyped, rImage:
			r = append(r, q.Go)
		}
	}
	return r
}

func outs(f *Func) []*Param {
	var r []*Param
	for _, q := range f.Params {
		switch q.Role {
		case rOut, rOutString, rOutArray, rBuf, rOutSlice:
			r = append(r, q)
		}
	}
	return r
}

// results is the Go result list; named gives the names too.
func results(f *Func, named bool) string {
	var r []string
	for _, q := range outs(f) {
		if named {
			r = append(r, q.Go+" "+q.GoType)
		} else {
			r = append(r, q.GoType)
		}
	}
	if named {
		r = append(r, "err error")
	} else {
		r = append(r, "error")
	}
	if len(r) == 1 && !named {
		return r[0]
	}
	return "(" + strings.Join(r, ", ") + ")"
}

// GoSignature is the Go signature of a function's plain variant, as a
// user sees it: "Memcpy2D(pCopy *Memcpy2D) error".
func (f *Func) GoSignature() string {
	return f.GoName + "(" + strings.Join(sigParams(f, false), ", ") + ") " + results(f, false)
}

// Cgo renders the version's cgo file: the shared trampolines and one
// wrapper per function.
func (e *Emitter) Cgo(m *Model) ([]byte, error) {
	g := &goFile{}
	e.start(g, e.Cfg.Package, e.constraint(m.Version, "cgo"))
	tramps, err := e.trampolines(m)
	if err != nil {
		return nil, err
	}
	g.p("/*")
	g.b.WriteString(tramps)
	g.p("*/")
	g.p(`import "C"`)
	g.p("")
	g.p(`import (`)
	g.p(`"runtime"`)
	g.p(`"unsafe"`)
	g.p(`)`)
	g.p("")
	g.p("var _ unsafe.Pointer")
	g.p("var _ runtime.Pinner")
	g.p("")
	pinTables := map[string]string{}
	for _, f := range m.Funcs {
		for _, q := range f.Params {
			if len(q.PinWords) > 0 {
				var ws []string
				for _, w := range q.PinWords {
					ws = append(ws, strconv.FormatInt(w, 10))
				}
				pinTables[pinTable(q)] = strings.Join(ws, ", ")
			}
		}
	}
	if len(pinTables) > 0 {
		g.p("// The offsets of the Go pointer words in what wrappers pin, by type.")
		g.p("var (")
		var names []string
		for n := range pinTables {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			g.p("%s = []uintptr{%s}", n, pinTables[n])
		}
		g.p(")")
		g.p("")
	}
	for _, f := range m.Funcs {
		if len(outs(f)) == 0 {
			g.p("func %sCtx(%s) error {", f.GoName, strings.Join(sigParams(f, true), ", "))
		} else {
			g.p("func %sCtx(%s) %s {", f.GoName, strings.Join(sigParams(f, true), ", "), results(f, true))
		}
		// One crossing: procs[i].fn() is the entry point (0 on error, which
		// the trampoline refuses), procs[i].done the error. A function whose
		// slices share a count checks their lengths first, refusing the call.
		fnArg, done := fmt.Sprintf("procs[%d].fn()", f.Index), fmt.Sprintf("procs[%d].done(", f.Index)
		typed := typedParams(f)
		if chk := lengthChecks(f); chk != "" || len(typed) > 0 {
			g.p("fn, err := procs[%d].enter()", f.Index)
			g.b.WriteString(chk)

			for _, q := range typed {
				p, n, u := "p"+q.Go, "n"+q.Go, "u"+q.Go
				if q.ByValue {
					p = "_"
				} else {
					u = "_"
				}
				if q.SizeOf == nil {
					n = "_"
				}
				g.p("ts%s, tb%s := typedScratch{}, typedBuf{}", q.Go, q.Go)
				g.p("fn, %s, %s, %s, err := ts%s.in(&tb%s, fn, err, %q, %q, %s, int64(%s), %s, %s)", p, n, u, q.Go, q.Go, f.Symbol, q.C, q.By.Go, q.By.Go, m.typedTables[typedTable(f, q)], q.Go)
				if q.SizeOf != nil && q.SizeOf.SizePtr {
					g.p("sz%s := C.size_t(n%s)", q.SizeOf.Go, q.Go)
				}
			}
			fnArg, done = "C.uintptr_t(fn)", "status(err, "
		}
		if pinned := pins(f); pinned != "" {
			g.p("var pin runtime.Pinner")
			g.p("defer pin.Unpin()")
			g.b.WriteString(pinned)
		}
		args := []string{"C.uintptr_t(ctx)", fnArg}
		var post []string
		for _, q := range f.Params {
			switch q.Role {
			case rIn, rBufLen:
				v := q.Go
				if q.Role == rBufLen {
					v = strconv.Itoa(q.Size)
				}
				args = append(args, q.CConv+"("+v+")")
			case rPtr, rStruct:
				if q.GoType == "unsafe.Pointer" {
					args = append(args, q.Go)
				} else {
					args = append(args, "unsafe.Pointer("+q.Go+")")
				}
			case rString:
				g.p("c%s := C.CString(%s)", q.Go, q.Go)
				g.p("defer C.free(unsafe.Pointer(c%s))", q.Go)
				args = append(args, "c"+q.Go)
			case rOut, rOutArray:
				args = append(args, "unsafe.Pointer(&"+q.Go+")")
			case rOutString:
				g.p("var c%s *C.char", q.Go)
				args = append(args, "unsafe.Pointer(&c"+q.Go+")")
				post = append(post, fmt.Sprintf("%s = C.GoString(c%s)", q.Go, q.Go))
			case rBuf:
				g.p("var c%s [%d]byte", q.Go, q.Size)
				args = append(args, "unsafe.Pointer(&c"+q.Go+"[0])")
				post = append(post, fmt.Sprintf("%s = cString(c%s[:])", q.Go, q.Go))
			case rImage:
				args = append(args, "unsafe.Pointer(unsafe.SliceData("+q.Go+"))")
			case rSlice:
				if q.Hidden {
					args = append(args, "(*C.uintptr_t)(unsafe.Pointer(unsafe.SliceData("+q.Go+")))")
				} else {
					args = append(args, "unsafe.Pointer(unsafe.SliceData("+q.Go+"))")
				}
			case rCount:
				args = append(args, q.CConv+"(len("+countSlice(f, q)+"))")
			case rOutSlice:
				args = append(args, "\x00"+q.Go) // nil in the first call of two
			case rOutCount:
				args = append(args, "unsafe.Pointer(&c"+q.Go+")")
			case rTyped:
				if q.ByValue {
					args = append(args, "C.uintptr_t(u"+q.Go+")")
				} else {
					args = append(args, "p"+q.Go)
				}
			case rTypedSize:
				tq := typedOf(f, q)
				if q.SizePtr {
					args = append(args, "unsafe.Pointer(&sz"+q.Go+")")
				} else {
					args = append(args, q.CConv+"(n"+tq.Go+")")
				}
			default:
				return nil, fmt.Errorf("gen: %s: parameter %s: no Go argument for its role %d", f.Symbol, q.C, q.Role)
			}
		}
		t, err := trampolineOf(f)
		if err != nil {
			return nil, err
		}
		call := fmt.Sprintf("%sC.%s(%s))", done, t.Name, strings.Join(args, ", "))
		if cnt := outCount(f); cnt != nil {
			// Two calls: the count with NULL arrays, then the arrays.
			first := make([]string, len(args))
			second := make([]string, len(args))
			for i, a := range args {
				first[i], second[i] = a, a
				if strings.HasPrefix(a, "\x00") {
					first[i] = "nil"
					second[i] = "unsafe.Pointer(unsafe.SliceData(" + a[1:] + "))"
				}
			}
			ct := "C.size_t"
			if cnt.GoType == "*uint32" {
				ct = "C.uint"
			}
			var outsl, makes, trims, zs []string
			for _, q := range f.Params {
				if q.Role == rOutSlice {
					outsl = append(outsl, q.Go)
					makes = append(makes, fmt.Sprintf("make(%s, c%s)", q.GoType, cnt.Go))
					trims = append(trims, fmt.Sprintf("%s[:min(int(c%s), len(%s))]", q.Go, cnt.Go, q.Go))
				}
			}
			for range outs(f) {
				zs = append(zs, "nil")
			}
			g.p("var c%s %s", cnt.Go, ct)
			g.p("if err = %sC.%s(%s)); err != nil || c%s == 0 {", done, t.Name, strings.Join(first, ", "), cnt.Go)
			g.p("return")
			g.p("}")
			g.p("%s = %s", strings.Join(outsl, ", "), strings.Join(makes, ", "))
			g.p("if err = %sC.%s(%s)); err != nil {", strings.Replace(done, "status(err, ", "status(nil, ", 1), t.Name, strings.Join(second, ", "))
			g.p("return %s, err", strings.Join(zs, ", "))
			g.p("}")
			g.p("// The driver wrote at most the capacity, and says how many it wrote.")
			g.p("%s = %s", strings.Join(outsl, ", "), strings.Join(trims, ", "))
			g.p("return")
			g.p("}")
			continue
		}
		var hidden []string
		for _, q := range f.Params {
			if q.Hidden {
				hidden = append(hidden, q.Go)
			}
		}
		if len(hidden) > 0 && len(typed) == 0 {
			g.p("r := C.%s(%s)", t.Name, strings.Join(args, ", "))
			for _, h := range hidden {
				g.p("runtime.KeepAlive(%s)", h)
			}
			call = strings.TrimSuffix(done, "(") + "(r)"
			if strings.HasPrefix(done, "status(") {
				call = "status(err, r)"
			}
		}
		if len(typed) > 0 {
			g.p("r := C.%s(%s)", t.Name, strings.Join(args, ", "))
			for _, q := range typed {
				g.p("ts%s.out(err, int(r))", q.Go)
			}
			call = "status(err, r)"
		}
		if len(outs(f)) == 0 {
			g.p("return %s", call)
		} else {
			g.p("err = %s", call)
			for _, s := range post {
				g.p("%s", s)
			}
			g.p("return")
		}
		g.p("}")
	}
	return formatFor(m, cgoFileName(m.Version), g.b.Bytes())
}

// outCount is the count pointer of a two-call function, or nil.
func outCount(f *Func) *Param {
	for _, q := range f.Params {
		if q.Role == rOutCount {
			return q
		}
	}
	return nil
}

// typedParams lists a function's typed parameters.
func typedParams(f *Func) []*Param {
	var r []*Param
	for _, q := range f.Params {
		if q.Role == rTyped {
			r = append(r, q)
		}
	}
	return r
}

// typedOf is the typed parameter whose size q is.
func typedOf(f *Func, q *Param) *Param {
	for _, t := range typedParams(f) {
		if t.SizeOf == q {
			return t
		}
	}
	return nil
}

// typedDecls writes the typed parameters' tables, one for each distinct
// table (cuPointerGetAttribute and cuPointerSetAttribute share one), and
// records each parameter's table in m.typedTables.
func typedDecls(g *goFile, m *Model) {
	var any bool
	m.typedTables = map[string]string{}
	seen := map[string]string{}
	for _, f := range m.Funcs {
		for _, q := range typedParams(f) {
			key := fmt.Sprint(q.Entries)
			if name, ok := seen[key]; ok {
				m.typedTables[typedTable(f, q)] = name
				continue
			}
			seen[key] = typedTable(f, q)
			m.typedTables[typedTable(f, q)] = typedTable(f, q)
			if !any {
				g.p("// The Go type of each typed parameter per value of the parameter that picks it.")
				g.p("var (")
				any = true
			}
			g.p("%s = []typedEntry{", typedTable(f, q))
			for _, e := range q.Entries {
				kind := map[string]string{"value": "typedValue", "bool": "typedBool", "slice": "typedSlice", "byValue": "typedByValue", "refused": "typedRefused"}[e.Kind]
				t := "nil"
				if e.GoType != "" {
					t = "reflect.TypeFor[" + e.GoType + "]()"
				}
				g.p("{int64(%s), %s, %s}, // %s", e.Go, t, kind, e.C)
			}
			g.p("}")
		}
	}
	if any {
		g.p(")")
		g.p("")
	}
}

// pinTable names the table of a pinned parameter's pointer words.
func pinTable(q *Param) string {
	t := strings.TrimLeft(q.GoType, "*[]")
	return "pin" + strings.ReplaceAll(t, "unsafe.", "")
}

// pins is the code that pins, for the call, the Go memory the caller's
// arguments point to: cgo refuses Go memory holding unpinned Go pointers.
func pins(f *Func) string {
	var b strings.Builder
	for _, q := range f.Params {
		if len(q.PinWords) == 0 {
			continue
		}
		if q.Role == rSlice {
			fmt.Fprintf(&b, "pinElems(&pin, unsafe.Pointer(unsafe.SliceData(%s)), cap(%s), %d, %s)\n", q.Go, q.Go, q.ElemSize, pinTable(q))
		} else {
			fmt.Fprintf(&b, "pinWords(&pin, unsafe.Pointer(%s), %s)\n", q.Go, pinTable(q))
		}
	}
	return b.String()
}

// countSlice is the slice whose length a count takes: the first that is
// not optional (an optional one may be empty).
func countSlice(f *Func, count *Param) string {
	for _, s := range count.Slices {
		if !sliceParam(f, s).Optional {
			return s
		}
	}
	return count.Slices[0]
}

func sliceParam(f *Func, goName string) *Param {
	for _, q := range f.Params {
		if q.Go == goName {
			return q
		}
	}
	return nil
}

func lengthChecks(f *Func) string {
	var b strings.Builder
	for _, q := range f.Params {
		if q.Role == rImage {
			fmt.Fprintf(&b, "if err == nil {\nfn, err = checkImage(fn, %q, %q, %s)\n}\n", f.Symbol, q.Go, q.Go)
		}
		if q.Role != rCount || len(q.Slices) < 2 {
			continue
		}
		first := countSlice(f, q)
		for _, s := range q.Slices {
			if s == first {
				continue
			}
			cond := fmt.Sprintf("len(%s) != len(%s)", first, s)
			if sliceParam(f, s).Optional {
				cond = fmt.Sprintf("len(%s) != 0 && %s", s, cond)
			}
			fmt.Fprintf(&b, "if err == nil && %s {\nfn, err = 0, lengthError(%q, %q, %q, len(%s), len(%s))\n}\n",
				cond, f.Symbol, first, s, first, s)
		}
	}
	return b.String()
}

// NoCgo renders the version's !cgo file: every wrapper returns the
// cgo-disabled error.
func (e *Emitter) NoCgo(m *Model) ([]byte, error) {
	g := &goFile{}
	e.start(g, e.Cfg.Package, e.constraint(m.Version, "!cgo"))
	g.p(`import "unsafe"`)
	g.p("")
	g.p("var _ unsafe.Pointer")
	g.p("")
	g.p("// Without cgo every function returns errNoCgo (it matches ErrNoDriver).")
	g.p("")
	for _, f := range m.Funcs {
		var ps, rv []string
		for _, p := range sigParams(f, true) {
			ps = append(ps, p[strings.Index(p, " ")+1:])
		}
		for _, q := range outs(f) {
			rv = append(rv, zero(m, q.GoType))
		}
		rv = append(rv, "errNoCgo")
		g.p("func %sCtx(%s) %s { return %s }", f.GoName, strings.Join(ps, ", "), results(f, false), strings.Join(rv, ", "))
	}
	return formatFor(m, noCgoFileName(m.Version), g.b.Bytes())
}

// zero is the zero value of a result type.
func zero(m *Model, t string) string {
	switch {
	case t == "string":
		return `""`
	case t == "unsafe.Pointer":
		return "nil"
	case strings.HasPrefix(t, "["):
		return t + "{}"
	}
	for _, ty := range m.Types {
		if ty.Go == t {
			switch ty.Kind {
			case tStruct, tUnion, tOpaque:
				return t + "{}"
			case tCallback:
				return "nil"
			}
		}
	}
	return "0"
}

// DriverTest renders a version's test that calls every bound function
// without a driver.
func (e *Emitter) DriverTest(m *Model) ([]byte, error) {
	g := &goFile{}
	e.start(g, e.Cfg.Package, e.constraint(m.Version, ""))
	g.p(`import "unsafe"`)
	g.p("")
	g.p("var _ unsafe.Pointer")
	g.p("")
	g.p("// noDriverCalls calls every bound function with zero arguments.")
	g.p("var noDriverCalls = []struct {")
	g.p("name string")
	g.p("call func() error")
	g.p("}{")
	for _, f := range m.Funcs {
		var args []string
		for _, q := range f.Params {
			switch q.Role {
			case rIn:
				switch {
				case q.CConv == "unsafe.Pointer":
					args = append(args, "nil")
				case q.GoType == "bool":
					args = append(args, "false")
				default:
					args = append(args, "0")
				}
			case rPtr, rSlice:
				args = append(args, "nil")
			case rImage:
				args = append(args, "[]byte{0}") // empty PTX text: an image the check passes
			case rStruct:
				args = append(args, "new("+strings.TrimPrefix(q.GoType, "*")+")")
			case rString:
				args = append(args, `""`)
			case rTyped:
				args = append(args, typedSample(q))
			}
		}
		// A typed parameter's picker gets the value its sample is for.
		for _, q := range typedParams(f) {
			for i, a := range callNames(f) {
				if a == q.By.Go {
					args[i] = fmt.Sprintf("%s(%d)", q.By.GoType, firstTyped(q).Value)
				}
			}
		}
		call := fmt.Sprintf("%s(%s)", f.GoName, strings.Join(args, ", "))
		n := len(outs(f))
		if n > 0 {
			call = fmt.Sprintf("e%d(%s)", n+1, call)
		}
		g.p("{%q, func() error { return %s }},", f.GoName, call)
	}
	g.p("}")
	return formatFor(m, testFileName(m.Version), g.b.Bytes())
}

// firstTyped is the first row of a typed parameter's table with data.
func firstTyped(q *Param) TypedEntry {
	for _, e := range q.Entries {
		if e.Kind != "refused" {
			return e
		}
	}
	return TypedEntry{}
}

// typedSample is an argument the typed parameter's first row accepts.
func typedSample(q *Param) string {
	e := firstTyped(q)
	switch e.Kind {
	case "value", "bool":
		return "new(" + e.GoType + ")"
	case "slice":
		return "make(" + e.GoType + ", 1)"
	case "byValue":
		return e.GoType + "(0)"
	}
	return "nil"
}

func cpath(path, c string) string {
	if path == "" {
		return c
	}
	return path + "." + c
}

// layoutChecks lists, for every struct and union, C expressions and the Go
// expressions that must equal them. Anonymous members, which C cannot
// name, are checked through their first named member.
func layoutChecks(m *Model) (cs, gos []string) {
	add := func(c, g string) { cs, gos = append(cs, c), append(gos, g) }
	for _, t := range m.Types {
		if t.Kind != tStruct && t.Kind != tUnion && t.Kind != tOpaque {
			continue
		}
		goT := "driver." + t.Go
		outer, path, base := t.C, "", ""
		if t.Nested {
			outer, path = t.Outer.C, t.Path
			if t.Anon {
				base = fmt.Sprintf("offsetof(%s, %s)", outer, cpath(path, t.First))
			} else {
				base = fmt.Sprintf("offsetof(%s, %s)", outer, path)
				add(fmt.Sprintf("sizeof(((%s *)0)->%s)", outer, path), fmt.Sprintf("unsafe.Sizeof(*new(%s))", goT))
			}
		} else {
			add("sizeof("+t.C+")", fmt.Sprintf("unsafe.Sizeof(*new(%s))", goT))
			if t.Align > 8 {
				// Go cannot align beyond 8: the C alignment is documented
				// on the type, and compared with the model's number.
				add("_Alignof("+t.C+")", fmt.Sprintf("%d", t.Align))
			} else {
				add("_Alignof("+t.C+")", fmt.Sprintf("unsafe.Alignof(*new(%s))", goT))
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
				add(off, fmt.Sprintf("unsafe.Offsetof(new(%s).%s)", goT, f.Go))
			case tUnion:
				if f.C != "" {
					add(fmt.Sprintf("sizeof(((%s *)0)->%s)", outer, cpath(path, f.C)), fmt.Sprintf("unsafe.Sizeof(*new(%s))", qualify(f.GoType)))
				}
			}
		}
	}
	return cs, gos
}

// qualify prefixes the package to a Go type defined there.
func qualify(t string) string {
	pre := strings.TrimLeft(t, "[]*0123456789")
	i := len(t) - len(pre)
	switch pre {
	case "byte", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64", "bool", "uintptr", "unsafe.Pointer":
		return t
	}
	return t[:i] + "driver." + pre
}

// Layout renders the layout check: a cgo file that includes the real
// cuda.h (only with -tags cudagen_layout) and its test.
func (e *Emitter) Layout(m *Model) (cgo, test []byte, err error) {
	cs, gos := layoutChecks(m)
	g := &goFile{}
	e.start(g, "layout", e.constraint(m.Version, "cudagen_layout && cgo"))
	g.p("/*")
	g.p("#include <stddef.h>")
	g.p("#include <cuda.h>")
	g.p("const long long cg_layout[%d] = {", len(cs))
	for _, c := range cs {
		g.p("\t%s,", c)
	}
	g.p("};")
	g.p("*/")
	g.p(`import "C"`)
	g.p("")
	g.p(`import "unsafe"`)
	g.p("")
	g.p("// cLayout is what the C compiler says, in the order of goLayout.")
	g.p("func cLayout() []int64 { return unsafe.Slice((*int64)(unsafe.Pointer(&C.cg_layout[0])), %d) }", len(cs))
	if cgo, err = formatFor(m, layoutFileName(m.Version, ""), g.b.Bytes()); err != nil {
		return nil, nil, err
	}
	g = &goFile{}
	e.start(g, "layout", e.constraint(m.Version, "cudagen_layout && cgo"))
	g.p("import (")
	g.p(`"unsafe"`)
	g.p("")
	g.p(`"github.com/cudagen/cudagen/cuda/driver"`)
	g.p(")")
	g.p("")
	g.p("// goLayout is each C expression's value on the Go side.")
	g.p("var goLayout = []struct {")
	g.p("c string")
	g.p("v uintptr")
	g.p("}{")
	for i := range cs {
		g.p("{%q, %s},", cs[i], gos[i])
	}
	g.p("}")
	if test, err = formatFor(m, layoutFileName(m.Version, "_test"), g.b.Bytes()); err != nil {
		return nil, nil, err
	}
	return cgo, test, nil
}

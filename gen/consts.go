package main

// Model stage: the #define constants: every object-like macro of cuda.h
// (or of a library's header: NCCL_UNIQUE_ID_BYTES) whose value cc/v4
// evaluates to an integer constant (Config.EvalAllMacros) is bound, grouped by the prefix of consecutive names (CU_MEMHOSTALLOC_).
// A cast gives the type: ((CUstream)0x1) a Stream, ((void*)0x01) a uintptr;
// a macro naming an enumerator has the enumerator's type. A group whose
// constants the function docs tie to one kind of unsigned int parameter
// ("The \p Flags parameter ... ::CU_MEMHOSTALLOC_PORTABLE") becomes a flags
// type (MemHostAllocFlags), and that parameter has it; otherwise the
// constants stay untyped.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"modernc.org/cc/v4"
)

// define is one bound #define.
type define struct {
	C, Go  string
	Lit    string // the Go literal, or the enumerator's Go name (Ref)
	GoType string // "" (untyped), "uintptr", a handle or scalar type, or the group's flags type
	Ref    bool   // Lit names the enumerator the macro expands to
	Doc    string
	Pos    string
	line   int
	value  int64
}

// defineGroup is consecutive #defines sharing a prefix.
type defineGroup struct {
	Prefix string     // "CU_MEMHOSTALLOC_"
	Flags  *namedType // the flags type, where a parameter takes them
	Defs   []*define
	ties   map[string]bool // "cuMemHostAlloc.Flags"
	re     *regexp.Regexp  // matches its names
}

// notConstant are object-like macros bound otherwise.
var notConstant = map[string]string{"CUDA_VERSION": "HeaderVersion"}

// macroDefine is the constant an object-like macro of cuda.h binds: its
// value, literal and Go type; nil where it binds none.
func (m *builder) macroDefine(name string, mac *cc.Macro) *define {
	pos := mac.Position()
	header, funcs := "cuda.h", "cu"
	if lib := m.cfg.Library; lib != nil {
		header, funcs = lib.Header, lib.Prefix
	}
	if mac.IsFnLike || filepath.Base(pos.Filename) != header || strings.HasPrefix(name, "__") || strings.HasPrefix(name, funcs) || notConstant[name] != "" {
		return nil
	}
	d := &define{C: name, Go: m.cfg.constGoName(name), Pos: pos.String(), line: pos.Line}
	switch v := mac.Value().(type) {
	case cc.Int64Value:
		d.value = int64(v)
	case cc.UInt64Value:
		d.value = int64(v)
		if d.value < 0 {
			return nil // beyond int64: none in the pinned headers
		}
	default:
		return nil // not a constant (CUDAAPI, include guards, function renames)
	}
	d.Lit = strconv.FormatInt(d.value, 10)
	var src []string
	for _, t := range mac.ReplacementList() {
		src = append(src, t.SrcStr())
	}
	if strings.Contains(strings.ToLower(strings.Join(src, "")), "0x") && d.value >= 0 {
		d.Lit = "0x" + strconv.FormatInt(d.value, 16)
	}
	if len(src) == 1 {
		if ty, ev := m.enumeratorOf(src[0]); ev != nil {
			d.Lit, d.GoType, d.Ref = ev.Go, ty.Go, true
		}
	}
	if t := mac.Type(); !d.Ref && t != nil {
		if ty := m.named(t); ty != nil && (ty.Kind == tHandle || ty.Kind == tScalar || ty.Kind == tEnum) {
			d.GoType = ty.Go
		} else if t.Kind() == cc.Ptr && ty == nil {
			d.GoType = "uintptr"
		} else if !cc.IsIntegerType(t) {
			return nil // a pointer to a named struct, a float: not bound
		}
	}
	if m.cfg.Library != nil && d.GoType == "uintptr" {
		// A library's pointer constants are NULL (NCCL_COMM_NULL): the
		// zero value of the Go type stands for them.
		return nil
	}
	d.Doc = m.src.trailing(pos.Filename, pos.Line)
	return d
}

// defines reads the #define constants and infers their flags types.
func (m *builder) defines() error {
	s := m.src
	var defs []*define
	for name, mac := range s.ast.Macros {
		if d := m.macroDefine(name, mac); d != nil {
			defs = append(defs, d)
		}
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].line < defs[j].line })
	// Groups: runs of names sharing their first two words.
	for _, d := range defs {
		w := strings.Split(d.C, "_")
		if n := len(m.Defines); n > 0 {
			g := m.Defines[n-1]
			pw := strings.Split(strings.TrimSuffix(g.Prefix, "_"), "_")
			if c := commonWords(pw, w); c >= 2 {
				g.Prefix = strings.Join(w[:c], "_") + "_"
				g.Defs = append(g.Defs, d)
				continue
			}
		}
		p := d.C
		if len(w) > 2 {
			p = strings.Join(w[:len(w)-1], "_") + "_"
		}
		m.Defines = append(m.Defines, &defineGroup{Prefix: p, Defs: []*define{d}, ties: map[string]bool{}})
	}
	for _, g := range m.Defines {
		var alt []string
		for _, d := range g.Defs {
			alt = append(alt, d.C)
		}
		g.re = regexp.MustCompile(`\b(` + strings.Join(alt, "|") + `)\b`)
	}
	m.tieFlags()
	for _, g := range m.Defines {
		if g.Flags != nil {
			m.byName[g.Prefix+"*"] = g.Flags
			m.Types = append(m.Types, g.Flags)
			if err := m.claim(g.Flags.Go, g.Flags.C, g.Defs[0].Pos); err != nil {
				return err
			}
		}
		for _, d := range g.Defs {
			if err := m.claim(d.Go, d.C, d.Pos); err != nil {
				return err
			}
		}
	}
	return nil
}

func commonWords(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b)-1 && a[n] == b[n] {
		n++
	}
	return n
}

// enumeratorOf finds the enumerator named name.
func (m *builder) enumeratorOf(name string) (*namedType, *enumerator) {
	for _, ty := range m.Types {
		for _, v := range ty.Values {
			if v.C == name && !v.Sentinel {
				return ty, v
			}
		}
	}
	return nil, nil
}

var (
	refRe      = regexp.MustCompile(`(?:\\p|\\param(?:\[[a-z, ]+\])?)\s+(\w+)`)
	sentenceRe = regexp.MustCompile(`[.:]\s`)
	blankRe    = regexp.MustCompile(`\n\s*\n`)
)

// tiedParam is the unsigned int parameter a doc ties the mention at i to:
// for a list item ("- ::CU_X: ..."), the one parameter the paragraph
// introducing the list names ("The \p Flags parameter ..., as follows.");
// otherwise the one named in the mention's own sentence ("\p Flags must
// be set to ::CU_X") or on its \param line. "" where that is not one.
func tiedParam(text string, i int, uints map[string]bool) string {
	lineStart := strings.LastIndex(text[:i], "\n") + 1
	var window string
	if lead := strings.TrimSpace(text[lineStart:i]); strings.HasPrefix(lead, "-") {
		ps := blankRe.Split(text[:lineStart], -1)
		for j := len(ps) - 1; j >= 0; j-- {
			if t := strings.TrimSpace(ps[j]); t != "" {
				// The list's lead-in: the text before its first item.
				if k := strings.Index(t, "\n-"); k >= 0 {
					t = t[:k]
				}
				if !strings.HasPrefix(t, "-") {
					window = t
				}
				break
			}
		}
	} else {
		window = text[max(0, i-300):i]
		if locs := sentenceRe.FindAllStringIndex(window, -1); len(locs) > 0 {
			window = window[locs[len(locs)-1][1]:]
		}
		if l := strings.TrimSpace(text[lineStart:i]); strings.HasPrefix(l, `\param`) {
			window = l
		}
	}
	found := ""
	for _, r := range refRe.FindAllStringSubmatch(window, -1) {
		if uints[r[1]] {
			if found != "" && found != r[1] {
				return ""
			}
			found = r[1]
		}
	}
	return found
}

// tieFlags finds, for each group, the unsigned int parameters the function
// docs tie its constants to: the parameter named (\p Flags, or \param
// Flags) closest before the first mention, within five lines. A group tied
// to parameters of one name, each tied to no other group, gets a flags type.
func (m *builder) tieFlags() {
	byParam := map[string][]*defineGroup{}
	names := map[*defineGroup]map[string]bool{}
	for _, fd := range m.src.funcs {
		m.tieFlagsOf(fd, byParam, names)
	}
	for _, g := range m.Defines {
		if len(names[g]) != 1 || !flagBits(g) {
			continue
		}
		fn := ""
		single := true
		for key := range g.ties {
			if len(byParam[key]) != 1 {
				single = false
			}
			if fn == "" || key < fn {
				fn = key
			}
		}
		if single {
			g.Flags = m.flagsType(g, fn)
		}
	}
}

// tieFlagsOf records the groups fd's doc ties to its unsigned int
// parameters: by "base.param" in byParam, and each group's parameter names.
func (m *builder) tieFlagsOf(fd *cc.Declarator, byParam map[string][]*defineGroup, names map[*defineGroup]map[string]bool) {
	ft, ok := fd.Type().(*cc.FunctionType)
	if !ok {
		return
	}
	uints := map[string]bool{}
	for _, p := range ft.Parameters() {
		if t := p.Type(); t.Kind() == cc.UInt && t.Typedef() == nil {
			uints[p.Name()] = true
		}
	}
	if len(uints) == 0 {
		return
	}
	pos := fd.Position()
	text := blockAbove(m.src.lines(pos.Filename), pos.Line-1)
	base := baseName(fd.Name())
	for _, g := range m.Defines {
		if g.Defs[0].GoType != "" || len(g.Defs) < 2 && !strings.HasSuffix(g.Prefix, "_") {
			continue
		}
		if !strings.Contains(text, g.Prefix) && !strings.Contains(text, g.Defs[0].C) {
			continue
		}
		loc := g.re.FindStringIndex(text)
		if loc == nil {
			continue
		}
		param := tiedParam(text, loc[0], uints)
		if !uints[param] {
			continue
		}
		key := base + "." + param
		byParam[key] = append(byParam[key], g)
		if names[g] == nil {
			names[g] = map[string]bool{}
		}
		names[g][param] = true
		g.ties[key] = true
	}
}

// flagBits says whether a group's values are flags: distinct single bits
// of an unsigned int.
func flagBits(g *defineGroup) bool {
	bits := int64(0)
	for _, d := range g.Defs {
		if d.value <= 0 || d.value > 0xffffffff || d.value&(d.value-1) != 0 || bits&d.value != 0 {
			return false
		}
		bits |= d.value
	}
	return true
}

// flagsType makes a group's flags type; fn ("base.param") is the first
// parameter it is tied to.
func (m *builder) flagsType(g *defineGroup, fn string) *namedType {
	fnBase, param, _ := strings.Cut(fn, ".")
	name := m.flagsTypeName(g.Prefix, fnBase)
	var users []string
	for key := range g.ties {
		b, p, _ := strings.Cut(key, ".")
		users = append(users, b+"'s "+p)
	}
	sort.Strings(users)
	ty := &namedType{Kind: tEnum, C: g.Prefix + "*", Go: name, Base: "uint32", Flags: true, Size: 4, Align: 4, Group: g.Prefix, Pos: g.Defs[0].Pos,
		Doc: fmt.Sprintf("the #define flags %s takes (its parameter %s is this type).", strings.Join(users, " and "), param)}
	for _, d := range g.Defs {
		d.GoType = name
		ty.Values = append(ty.Values, &enumerator{C: d.C, Go: d.Go, Value: d.value, Doc: d.Doc, Pos: d.Pos})
	}
	return ty
}

// flagsTypeName names the flags type of the group prefix: the config's
// name, the function's name + Flags where the prefix spells the function
// (CU_MEMHOSTALLOC_ for cuMemHostAlloc: MemHostAllocFlags), else the
// prefix's + Flags.
func (m *builder) flagsTypeName(prefix, fnBase string) string {
	if r, ok := m.cfg.Names[prefix]; ok {
		return r.Go
	}
	unprefixed := strings.TrimPrefix(strings.TrimPrefix(prefix, "CUDA_"), "CU_")
	spelled := strings.ReplaceAll(strings.TrimSuffix(unprefixed, "_"), "_", "")
	if strings.EqualFold(strings.TrimPrefix(fnBase, "cu"), spelled) {
		return m.cfg.funcGoName(fnBase) + "Flags"
	}
	return m.cfg.constGoName(strings.TrimSuffix(prefix, "_")) + "Flags"
}

// inferred adds to a function's config what its doc makes certain: the
// flags types of parameters the docs tie to a #define group, and results:
// a single non-const pointer to a named scalar, handle, enum or struct, or
// to an arithmetic type, that the doc marks \param[out] (and no other
// parameter's doc counts), or documents "Returned array" where the array
// is a CUDA array handle (CUarray, CUmipmappedArray: the word names the
// handle, not a plural).
func (m *builder) inferred(d *cc.Declarator, base string, fc funcConf) funcConf {
	pd := m.src.parsedDoc(d)
	if ft, ok := d.Type().(*cc.FunctionType); ok {
		for _, p := range ft.Parameters() {
			name, doc := p.Name(), pd.first[p.Name()]
			pt, ok := p.Type().(*cc.PointerType)
			if !ok || pt.Elem().Attributes().IsConst() || slices.Contains(fc.In, name) || slices.Contains(fc.Out, name) || fc.Arrays[name] != 0 || fc.Slices[name] != "" {
				continue
			}
			ty := m.named(pt.Elem())
			// docOut (shapes.go) reads the doc's outputs; a CUarray handle
			// "Returned" is one too, though the doc says "array".
			out := docReturned.MatchString(doc) && ty != nil && ty.Kind == tHandle && strings.Contains(strings.ToLower(ty.C), "array") &&
				!regexp.MustCompile(`(?i)\b(each|arrays|list|all|every)\b`).MatchString(doc)
			if out {
				fc.Out = append(append([]string(nil), fc.Out...), name)
			}
		}
	}
	types := map[string]string{}
	for _, g := range m.Defines {
		for key := range g.ties {
			if b, p, _ := strings.Cut(key, "."); g.Flags != nil && b == base {
				types[p] = g.Flags.Go
			}
		}
	}
	if len(types) == 0 {
		return fc
	}
	for p, t := range fc.Types { // the config's own word wins
		types[p] = t
	}
	fc.Types = types
	return fc
}

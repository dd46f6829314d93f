package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"modernc.org/cc/v4"
)

// Model is what one header version binds, ready to emit.
type Model struct {
	Version     string // "13.0"
	Tag         string // "cuda13.0"
	CUDAVersion int    // the header's CUDA_VERSION
	Sums        map[string]string
	PerThread   bool
	// GPASymbol is the exported cuGetProcAddress entry point the loader
	// opens with dlsym; GPAV2 says whether it has the 12.0 signature (with
	// the symbol status result).
	GPASymbol  string
	GPAV2      bool
	GPAFlags   uint64 // flags every function is resolved with
	Handles    []Handle
	Structs    []Struct
	Enums      []Enum
	Funcs      []Func
	CtxGet     *Func
	CtxSet     *Func
	HeaderFile string
}

// Handle is an opaque driver type.
type Handle struct {
	C, Go   string
	Pointer bool   // a pointer handle (uintptr in Go)
	GoBase  string // Go underlying type
	CBase   string // C type used in trampolines
}

// Struct is a struct passed by value (an IPC handle).
type Struct struct {
	C, Go string
	Size  int64
}

// Enum is a bound enum type.
type Enum struct {
	Conf   EnumConf
	GoBase string
	Values []EnumValue
}

// EnumValue is one enumerator.
type EnumValue struct {
	C, Go string
	Value int64
	Doc   string
}

// Func is one bound driver function.
type Func struct {
	Conf   FuncConf
	Base   string // the name passed to cuGetProcAddress: "cuEventElapsedTime"
	Symbol string // the entry point the header declares: "cuEventElapsedTime_v2"
	GoName string
	ABI    int    // the ABI version it is resolved with: 12080
	Flags  uint64 // cuGetProcAddress flags
	Params []Param
	Pos    string
	Doc    string
}

// Param kinds.
const (
	pIn        = iota // by value
	pString           // const char * input
	pStruct           // struct by value, passed by pointer from Go
	pOut              // pointer result
	pOutString        // const char ** result
	pOutStruct        // struct result
	pBufBuf           // char * buffer of a buffer pair
	pBufLen           // int length of a buffer pair
)

// Param is one C parameter.
type Param struct {
	C      string // C name
	GoName string
	Kind   int
	GoType string // Go type of the argument or result
	CType  string // C type in the trampoline's signature or result struct
}

var versionSuffix = regexp.MustCompile(`_v([0-9]+)$`)

// ParseHeaders reads DIR/cudaTypedefs.h (which includes DIR/cuda.h) and
// builds the model of what cfg binds.
func ParseHeaders(cfg *Config, dir string) (*Model, error) {
	if err := CheckHeaders(cfg, dir); err != nil { // issue 7: bad headers fail fast (headercheck.go)
		return nil, err
	}
	ccfg, err := ccConfig()
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"cuda.h", "cudaTypedefs.h"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("gen: %w", err)
		}
	}
	c := *ccfg
	c.IncludePaths = append([]string{dir}, ccfg.IncludePaths...)
	c.SysIncludePaths = append([]string{dir}, ccfg.SysIncludePaths...)
	predefined := ccfg.Predefined
	if cfg.PerThreadDefaultStream {
		predefined += "\n#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1\n"
	}
	// The probe stringifies each bound name after macro expansion, so the
	// header's own macros say which versioned entry point a name denotes.
	var probe strings.Builder
	probe.WriteString("#define cudagen_str2(x) #x\n#define cudagen_str(x) cudagen_str2(x)\n")
	names := []string{"cuGetProcAddress"}
	for _, f := range cfg.Functions {
		names = append(names, f.C)
	}
	for i, n := range names {
		fmt.Fprintf(&probe, "static const char cudagen_probe_%d[] = cudagen_str(%s);\n", i, n)
	}
	typedefs := filepath.Join(dir, "cudaTypedefs.h")
	ast, err := cc.Translate(&c, []cc.Source{
		{Name: "<predefined>", Value: predefined},
		{Name: "<builtin>", Value: cc.Builtin},
		{Name: typedefs},
		{Name: "<cudagen-probe>", Value: probe.String()},
	})
	if err != nil {
		return nil, fmt.Errorf("gen: parse %s: %w", typedefs, CCError(err)) // issue 7: short, no cc-internal locations
	}
	p := &parser{cfg: cfg, ast: ast, dir: dir, files: map[string][]string{}}
	m, err := p.model(names)
	return checkModel(dir, m, err) // issue 7: refuse what the header's text hid (headercheck.go)
}

var ccCached *cc.Config

func ccConfig() (*cc.Config, error) {
	if ccCached != nil {
		return ccCached, nil
	}
	c, err := cc.NewConfig("linux", "amd64")
	if err != nil {
		return nil, fmt.Errorf("gen: C preprocessor configuration (needs a C compiler, cc or gcc): %w", err)
	}
	ccCached = c
	return c, nil
}

func firstErrors(err error, n int) error {
	lines := strings.Split(err.Error(), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("(and %d more)", len(lines)-n))
	}
	return fmt.Errorf("%s", strings.Join(lines, "\n"))
}

type parser struct {
	cfg   *Config
	ast   *cc.AST
	dir   string
	files map[string][]string
}

func (p *parser) declarator(name string) *cc.Declarator {
	for _, n := range p.ast.Scope.Nodes[name] {
		if d, ok := n.(*cc.Declarator); ok {
			return d
		}
	}
	return nil
}

// probed returns the macro-expanded spelling of probe i.
func (p *parser) probed(i int) (string, error) {
	name := fmt.Sprintf("cudagen_probe_%d", i)
	for l := p.ast.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed == nil || ed.Declaration == nil {
			continue
		}
		for il := ed.Declaration.InitDeclaratorList; il != nil; il = il.InitDeclaratorList {
			id := il.InitDeclarator
			if id == nil || id.Declarator == nil || id.Declarator.Name() != name || id.Initializer == nil {
				continue
			}
			if v, ok := id.Initializer.AssignmentExpression.Value().(cc.StringValue); ok {
				return strings.TrimRight(string(v), "\x00"), nil
			}
		}
	}
	return "", fmt.Errorf("gen: internal error: probe %s not found", name)
}

func (p *parser) macroInt(name string) (int, error) {
	m := p.ast.Macros[name]
	if m == nil {
		return 0, fmt.Errorf("gen: %s: %s is not defined", filepath.Join(p.dir, "cuda.h"), name)
	}
	rl := m.ReplacementList()
	if len(rl) != 1 {
		return 0, fmt.Errorf("gen: %s: %s is not a number", m.Position(), name)
	}
	n, err := strconv.Atoi(rl[0].SrcStr())
	if err != nil {
		return 0, fmt.Errorf("gen: %s: %s: %w", m.Position(), name, err)
	}
	return n, nil
}

func (p *parser) model(names []string) (*Model, error) {
	m := &Model{PerThread: p.cfg.PerThreadDefaultStream}
	v, err := p.macroInt("CUDA_VERSION")
	if err != nil {
		return nil, err
	}
	m.CUDAVersion = v
	// ABI versions declared by cudaTypedefs.h, read from its text so that
	// typedefs in blocks the preprocessor skipped (older entry points kept
	// for the driver's own build) count too.
	typedefText, err := os.ReadFile(filepath.Join(p.dir, "cudaTypedefs.h"))
	if err != nil {
		return nil, err
	}
	pfn := map[string][]pfnVersion{}
	for _, mm := range regexp.MustCompile(`\bPFN_(cu\w+?)_v([0-9]+)(_pt[sd][sz])?\b`).FindAllSubmatch(typedefText, -1) {
		n, _ := strconv.Atoi(string(mm[2]))
		pv := pfnVersion{n, string(mm[3])}
		base := string(mm[1])
		if !containsPFN(pfn[base], pv) {
			pfn[base] = append(pfn[base], pv)
		}
	}
	if err := p.enums(m); err != nil {
		return nil, err
	}
	if err := p.types(m); err != nil {
		return nil, err
	}
	gpaName, err := p.probed(0)
	if err != nil {
		return nil, err
	}
	gpa := p.declarator(gpaName)
	if gpa == nil {
		return nil, fmt.Errorf("gen: %s: cuGetProcAddress (%s) is not declared: headers older than CUDA 11.3 cannot be bound", filepath.Join(p.dir, "cuda.h"), gpaName)
	}
	m.GPASymbol = gpaName
	m.GPAV2 = len(gpa.Type().(*cc.FunctionType).Parameters()) == 5
	flagName := "CU_GET_PROC_ADDRESS_LEGACY_STREAM"
	if m.PerThread {
		flagName = "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM"
	}
	fv, err := p.enumerator(flagName)
	if err != nil {
		return nil, err
	}
	m.GPAFlags = uint64(fv)

	for i, fc := range p.cfg.Functions {
		sym, err := p.probed(i + 1)
		if err != nil {
			return nil, err
		}
		d := p.declarator(sym)
		if d == nil || d.Type().Kind() != cc.Function {
			if fc.Optional {
				continue
			}
			return nil, fmt.Errorf("gen: %s: allow-listed function %s is not declared (the header names it %s); mark it optional in the config if this toolkit lacks it",
				filepath.Join(p.dir, "cuda.h"), fc.C, sym)
		}
		f, err := p.function(m, fc, sym, d, pfn)
		if err != nil {
			return nil, err
		}
		m.Funcs = append(m.Funcs, f)
	}
	for i := range m.Funcs {
		switch m.Funcs[i].Base {
		case "cuCtxGetCurrent":
			m.CtxGet = &m.Funcs[i]
		case "cuCtxSetCurrent":
			m.CtxSet = &m.Funcs[i]
		}
	}
	for _, f := range m.Funcs {
		if f.Conf.Ctx && (m.CtxGet == nil || m.CtxSet == nil) {
			return nil, fmt.Errorf("gen: %s asks for a context variant, which needs cuCtxGetCurrent and cuCtxSetCurrent bound", f.Base)
		}
	}
	return m, nil
}

type pfnVersion struct {
	n      int
	suffix string
}

func containsPFN(s []pfnVersion, v pfnVersion) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (p *parser) enumerator(name string) (int64, error) {
	for _, n := range p.ast.Scope.Nodes[name] {
		if e, ok := n.(*cc.Enumerator); ok {
			return enumValue(e)
		}
	}
	return 0, fmt.Errorf("gen: %s: enumerator %s is not declared", filepath.Join(p.dir, "cuda.h"), name)
}

func enumValue(e *cc.Enumerator) (int64, error) {
	switch v := e.Value().(type) {
	case cc.Int64Value:
		return int64(v), nil
	case cc.UInt64Value:
		return int64(v), nil
	}
	return 0, fmt.Errorf("gen: %s: enumerator %s has no constant value", e.Position(), e.Token.SrcStr())
}

// function builds one bound function: its ABI version and typed parameters.
func (p *parser) function(m *Model, fc FuncConf, sym string, d *cc.Declarator, pfn map[string][]pfnVersion) (Func, error) {
	f := Func{Conf: fc, Symbol: sym, GoName: p.cfg.goFuncName(fc), Pos: d.Position().String(), Flags: m.GPAFlags}
	f.Doc = p.brief(d)
	base := strings.TrimSuffix(strings.TrimSuffix(sym, "_ptsz"), "_ptds")
	ordinal := 1
	if mm := versionSuffix.FindStringSubmatch(base); mm != nil {
		ordinal, _ = strconv.Atoi(mm[1])
		base = base[:len(base)-len(mm[0])]
	}
	f.Base = base
	ptsz := strings.HasSuffix(sym, "_ptsz") || strings.HasSuffix(sym, "_ptds")
	var plain, per []int
	for _, v := range pfn[base] {
		if v.suffix == "" {
			plain = append(plain, v.n)
		} else {
			per = append(per, v.n)
		}
	}
	sort.Ints(plain)
	sort.Ints(per)
	switch {
	case ptsz && len(per) > 0:
		f.ABI = per[len(per)-1]
	default:
		// A per-thread name with no per-thread ABI (cuGetProcAddress) is the
		// plain entry point. Where cudaTypedefs.h maps the unversioned PFN
		// name (11.x, 12.x), that mapping is the header's word; otherwise the
		// N-th declared ABI version is the entry point _vN.
		if v, ok := p.pfnMacro(base); ok && sym == p.defaultSymbol(base, sym) {
			f.ABI = v
		} else if ordinal <= len(plain) {
			f.ABI = plain[ordinal-1]
		} else {
			return f, fmt.Errorf("gen: %s: cannot tell the ABI version of %s: cudaTypedefs.h declares %d versions of PFN_%s", f.Pos, sym, len(plain), base)
		}
	}
	ft := d.Type().(*cc.FunctionType)
	if ft.IsVariadic() {
		return f, fmt.Errorf("gen: %s: %s is variadic", f.Pos, sym)
	}
	if rt := ft.Result(); rt.Typedef() == nil || rt.Typedef().Name() != "CUresult" {
		return f, fmt.Errorf("gen: %s: %s does not return CUresult", f.Pos, sym)
	}
	outs := map[string]bool{}
	for _, o := range fc.Out {
		outs[o] = true
	}
	ins := map[string]bool{}
	for _, o := range fc.In {
		ins[o] = true
	}
	for _, prm := range ft.Parameters() {
		if prm.Type().Kind() == cc.Void {
			continue // f(void)
		}
		q, err := p.param(m, fc, prm, outs[prm.Name()], ins[prm.Name()])
		if err != nil {
			return f, fmt.Errorf("gen: %s: %s parameter %s: %w", f.Pos, sym, prm.Name(), err)
		}
		f.Params = append(f.Params, q)
	}
	return f, nil
}

// defaultSymbol is what the unversioned base name expands to; sym is
// returned when the probe list holds no such entry.
func (p *parser) defaultSymbol(base, sym string) string {
	for i, fc := range p.cfg.Functions {
		if fc.C == base {
			if s, err := p.probed(i + 1); err == nil {
				return s
			}
		}
	}
	return sym
}

var pfnDirect = regexp.MustCompile(`^PFN_\w+?_v([0-9]+)$`)

// pfnMacro reads "#define PFN_cuX PFN_cuX_vN" or the __API_TYPEDEF_PTSZ form.
func (p *parser) pfnMacro(base string) (int, bool) {
	mac := p.ast.Macros["PFN_"+base]
	if mac == nil {
		return 0, false
	}
	var toks []string
	for _, t := range mac.ReplacementList() {
		toks = append(toks, t.SrcStr())
	}
	if len(toks) == 1 {
		if mm := pfnDirect.FindStringSubmatch(toks[0]); mm != nil {
			n, _ := strconv.Atoi(mm[1])
			return n, true
		}
	}
	// __API_TYPEDEF_PTSZ ( PFN_cuX , default , ptsz )
	if len(toks) == 8 && strings.HasPrefix(toks[0], "__API_TYPEDEF_PT") {
		n, err := strconv.Atoi(toks[4])
		return n, err == nil
	}
	return 0, false
}

func (p *parser) handle(name string) *Handle {
	for _, h := range p.cfg.Handles {
		if h.C == name {
			return &Handle{C: h.C, Go: h.Go}
		}
	}
	return nil
}

// typedefChain lists the typedef names a type goes through: CUdevice, CUdevice_v1.
func typedefChain(t cc.Type) []string {
	var r []string
	for d := t.Typedef(); d != nil && len(r) < 8; {
		r = append(r, d.Name())
		next := d.Type().Typedef()
		if next == d {
			break
		}
		d = next
	}
	return r
}

func (p *parser) lookupNamed(t cc.Type) (goType, cType string, kind int, ok bool) {
	for _, n := range typedefChain(t) {
		for _, h := range p.cfg.Handles {
			if h.C == n {
				if t.Kind() == cc.Ptr {
					return h.Go, "uintptr_t", pIn, true
				}
				ct, gt := scalar(t)
				_ = gt
				return h.Go, ct, pIn, true
			}
		}
		for _, e := range p.cfg.Enums {
			if e.C == n {
				return e.Go, "int", pIn, true
			}
		}
		for _, s := range p.cfg.Structs {
			if s.C == n {
				return s.Go, "cg_" + s.C, pStruct, true
			}
		}
	}
	return "", "", 0, false
}

// scalar maps an arithmetic C type to its C spelling and Go type.
func scalar(t cc.Type) (cType, goType string) {
	switch t.Kind() {
	case cc.Int, cc.Enum:
		return "int", "int32"
	case cc.UInt:
		return "unsigned int", "uint32"
	case cc.Long:
		return "long", "int64"
	case cc.ULong:
		return "unsigned long", "uint64"
	case cc.LongLong:
		return "long long", "int64"
	case cc.ULongLong:
		return "unsigned long long", "uint64"
	case cc.Float:
		return "float", "float32"
	case cc.Double:
		return "double", "float64"
	case cc.Short:
		return "short", "int16"
	case cc.UShort:
		return "unsigned short", "uint16"
	case cc.Char, cc.SChar:
		return "signed char", "int8"
	case cc.UChar:
		return "unsigned char", "uint8"
	}
	return "", ""
}

var goReserved = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true, "defer": true,
	"else": true, "fallthrough": true, "for": true, "func": true, "go": true, "goto": true, "if": true,
	"import": true, "interface": true, "map": true, "package": true, "range": true, "return": true,
	"select": true, "struct": true, "switch": true, "type": true, "var": true, "error": true, "len": true,
	"string": true, "int": true, "uint": true, "byte": true, "rune": true, "cap": true, "new": true,
	"make": true, "copy": true, "close": true, "ret": true, "fn": true, "err": true, "ctx": true,
}

func goParamName(c string) string {
	if c == "" {
		return "arg"
	}
	r := []rune(c)
	// hEvent stays hEvent; Flags becomes flags; CUDAVersion → cudaVersion.
	i := 0
	for i < len(r) && i < 1 || (i < len(r)-1 && r[i] >= 'A' && r[i] <= 'Z' && r[i+1] >= 'A' && r[i+1] <= 'Z') {
		i++
	}
	s := strings.ToLower(string(r[:i])) + string(r[i:])
	if goReserved[s] {
		s += "Arg"
	}
	return s
}

func (p *parser) param(m *Model, fc FuncConf, prm *cc.Parameter, forceOut, forceIn bool) (Param, error) {
	t := prm.Type()
	q := Param{C: prm.Name(), GoName: goParamName(prm.Name())}
	if fc.Buffer != nil {
		switch prm.Name() {
		case fc.Buffer.Buf:
			q.Kind, q.GoType, q.CType = pBufBuf, "string", "char*"
			return q, nil
		case fc.Buffer.Len:
			q.Kind, q.CType = pBufLen, "int"
			return q, nil
		}
	}
	if over, ok := fc.Types[prm.Name()]; ok {
		ct, _ := scalar(t)
		if ct == "" {
			return q, fmt.Errorf("type override %s needs an arithmetic C type, found %v", over, t)
		}
		q.Kind, q.GoType, q.CType = pIn, over, ct
		return q, nil
	}
	if gt, ct, k, ok := p.lookupNamed(t); ok {
		q.Kind, q.GoType, q.CType = k, gt, ct
		return q, nil
	}
	if t.Kind() != cc.Ptr {
		ct, gt := scalar(t)
		if ct == "" {
			return q, fmt.Errorf("unsupported type %v", t)
		}
		q.Kind, q.GoType, q.CType = pIn, gt, ct
		return q, nil
	}
	elem := t.(*cc.PointerType).Elem()
	constElem := strings.HasPrefix(elem.String(), "const ")
	switch {
	case elem.Kind() == cc.Void && !forceOut:
		q.Kind, q.GoType, q.CType = pIn, "unsafe.Pointer", "void*"
		return q, nil
	case (elem.Kind() == cc.Char || elem.Kind() == cc.SChar) && constElem && !forceOut:
		q.Kind, q.GoType, q.CType = pString, "string", "const char*"
		return q, nil
	case elem.Kind() == cc.Ptr && elem.(*cc.PointerType).Elem().Kind() == cc.Void && !forceOut:
		q.Kind, q.GoType, q.CType = pIn, "unsafe.Pointer", "void*"
		return q, nil
	case forceIn:
		q.Kind, q.GoType, q.CType = pIn, "unsafe.Pointer", "void*"
		return q, nil
	}
	// A pointer to a non-const object: a result.
	if elem.Kind() == cc.Ptr {
		inner := elem.(*cc.PointerType).Elem()
		if (inner.Kind() == cc.Char || inner.Kind() == cc.SChar) && len(typedefChain(elem)) == 0 {
			q.Kind, q.GoType, q.CType = pOutString, "string", "const char*"
			return q, nil
		}
		if gt, _, _, ok := p.lookupNamed(elem); ok {
			q.Kind, q.GoType, q.CType = pOut, gt, "uintptr_t"
			return q, nil
		}
		if inner.Kind() == cc.Void {
			q.Kind, q.GoType, q.CType = pOut, "uintptr", "uintptr_t"
			return q, nil
		}
		return q, fmt.Errorf("unsupported result type %v", t)
	}
	if gt, ct, k, ok := p.lookupNamed(elem); ok {
		if k == pStruct {
			q.Kind, q.GoType, q.CType = pOutStruct, gt, ct
			return q, nil
		}
		q.Kind, q.GoType, q.CType = pOut, gt, ct
		return q, nil
	}
	ct, gt := scalar(elem)
	if ct == "" {
		return q, fmt.Errorf("unsupported result type %v", t)
	}
	q.Kind, q.GoType, q.CType = pOut, gt, ct
	return q, nil
}

// enums reads every configured enum's enumerators.
func (p *parser) enums(m *Model) error {
	for _, ec := range p.cfg.Enums {
		d := p.declarator(ec.C)
		if d == nil {
			if ec.Optional {
				continue
			}
			return fmt.Errorf("gen: %s: allow-listed enum %s is not declared", filepath.Join(p.dir, "cuda.h"), ec.C)
		}
		et, ok := d.Type().(*cc.EnumType)
		if !ok {
			return fmt.Errorf("gen: %s: %s is not an enum", d.Position(), ec.C)
		}
		e := Enum{Conf: ec, GoBase: "int32"}
		if ec.Flags {
			e.GoBase = "uint32"
		}
		for _, en := range et.Enumerators() {
			v, err := enumValue(en)
			if err != nil {
				return err
			}
			cname := en.Token.SrcStr()
			gname := p.cfg.camel(strings.TrimPrefix(cname, ec.Prefix))
			if strings.HasSuffix(cname, "_MAX") || strings.HasSuffix(cname, "_FORCE_INT") {
				continue
			}
			e.Values = append(e.Values, EnumValue{C: cname, Go: gname, Value: v, Doc: p.enumDoc(en)})
		}
		m.Enums = append(m.Enums, e)
	}
	return nil
}

func (p *parser) types(m *Model) error {
	for _, h := range p.cfg.Handles {
		d := p.declarator(h.C)
		if d == nil {
			return fmt.Errorf("gen: %s: allow-listed type %s is not declared", filepath.Join(p.dir, "cuda.h"), h.C)
		}
		t := d.Type()
		hd := Handle{C: h.C, Go: h.Go}
		if t.Kind() == cc.Ptr {
			hd.Pointer, hd.GoBase, hd.CBase = true, "uintptr", "uintptr_t"
		} else {
			hd.CBase, hd.GoBase = scalar(t)
			if hd.CBase == "" {
				return fmt.Errorf("gen: %s: %s has unsupported type %v", d.Position(), h.C, t)
			}
		}
		m.Handles = append(m.Handles, hd)
	}
	for _, s := range p.cfg.Structs {
		d := p.declarator(s.C)
		if d == nil {
			return fmt.Errorf("gen: %s: allow-listed type %s is not declared", filepath.Join(p.dir, "cuda.h"), s.C)
		}
		m.Structs = append(m.Structs, Struct{C: s.C, Go: s.Go, Size: d.Type().Size()})
	}
	return nil
}

// lines returns a file's lines, cached.
func (p *parser) lines(file string) []string {
	if l, ok := p.files[file]; ok {
		return l
	}
	b, _ := os.ReadFile(file)
	l := strings.Split(string(b), "\n")
	p.files[file] = l
	return l
}

var (
	trailingDoc = regexp.MustCompile(`(?s)/\*\*<\s*(.*?)\s*\*/`)
	spaces      = regexp.MustCompile(`\s+`)
)

// enumDoc is an enumerator's doc comment: the /**< */ on its line, or the
// /** */ block above it.
func (p *parser) enumDoc(e *cc.Enumerator) string {
	pos := e.Position()
	lines := p.lines(pos.Filename)
	if pos.Line < 1 || pos.Line > len(lines) {
		return ""
	}
	if i := strings.Index(lines[pos.Line-1], "/**<"); i >= 0 {
		// A trailing comment, possibly continued on the following lines.
		text := lines[pos.Line-1][i:]
		for j := pos.Line; !strings.Contains(text, "*/") && j < len(lines) && j < pos.Line+20; j++ {
			text += "\n" + lines[j]
		}
		if mm := trailingDoc.FindStringSubmatch(text); mm != nil {
			return clean(strings.ReplaceAll(mm[1], "*", ""))
		}
	}
	return p.blockAbove(lines, pos.Line-1)
}

// blockAbove returns the text of the /** ... */ comment that ends just
// above line index i.
func (p *parser) blockAbove(lines []string, i int) string {
	j := i - 1
	for j >= 0 && strings.TrimSpace(lines[j]) == "" {
		j--
	}
	if j < 0 || !strings.HasSuffix(strings.TrimSpace(lines[j]), "*/") {
		return ""
	}
	end := j
	for j >= 0 && !strings.Contains(lines[j], "/**") {
		j--
	}
	if j < 0 || end-j > 200 {
		return ""
	}
	var b strings.Builder
	for _, l := range lines[j : end+1] {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "/**")
		l = strings.TrimSuffix(l, "*/")
		l = strings.TrimPrefix(l, "*")
		b.WriteString(l)
		b.WriteString("\n")
	}
	return b.String()
}

var briefRe = regexp.MustCompile(`(?s)\\brief\s+(.*?)(\n\s*\n|\\)`)

// brief is the \brief line of a function's doc block.
func (p *parser) brief(d *cc.Declarator) string {
	pos := d.Position()
	block := p.blockAbove(p.lines(pos.Filename), pos.Line-1)
	if mm := briefRe.FindStringSubmatch(block); mm != nil {
		return clean(mm[1])
	}
	return ""
}

func clean(s string) string {
	s = strings.ReplaceAll(s, "::", "")
	s = strings.ReplaceAll(s, "\\p ", "")
	s = strings.ReplaceAll(s, "\\e ", "")
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

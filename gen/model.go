package main

// Model stage. From what the header declares it builds every named
// type (handles, enums, structs, unions, callbacks), every function with
// its ABI version and the shape of each parameter, and what is left unbound
// and why. Shapes are typed from what is certain: the C type, the header's
// doxygen (\param x - Returned ...) and the config; otherwise a pointer
// stays a pointer.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cudagen/cudagen/headers"
	"modernc.org/cc/v4"
)

// model is what one header version binds, ready to render.
type model struct {
	Version     string // "13.0"
	Tag         string // "cuda13.0"
	CUDAVersion int    // the header's CUDA_VERSION
	Sums        map[string]string
	PerThread   bool
	// GPASymbol is the exported cuGetProcAddress entry point the loader
	// opens with dlsym; GPAV2 says whether it has the 12.0 signature.
	GPASymbol string
	GPAV2     bool
	GPAFlags  uint64 // flags every function is resolved with
	Types     []*namedType
	Funcs     []*function
	Skipped   []skipped // declared functions left unbound, and why
	Declared  int       // functions cuda.h declares
	// HeaderFile is cuda.h's path, to name a declaration in errors.
	HeaderFile string
	// Defines are the #define constants (consts.go).
	Defines []*defineGroup
	// Keys are the generic types of the typed forms (typed.go).
	Keys []*typedKey
	// Lib is the library bound, where it is not the driver (library.go),
	// and PinName its pinned version in messages ("CUDA 12.4", "nccl 2.22").
	Lib     *libraryConf
	PinName string
	// Absent are the functions other pinned versions of the library bind
	// and this version's header does not declare (library.go).
	Absent []absentFunc
}

// builder makes a model from the parsed headers. What it needs while it
// works (the config, the syntax tree, its indexes) stays here: the model
// it hands on is plain data.
type builder struct {
	*model
	cfg    *config
	src    *source
	byName map[string]*namedType // typedef name (and aliases) → type
	byTag  map[string]*namedType // struct/union/enum tag → type
	byGo   map[string]*namedType // Go name → type, once every type is known
	goIDs  map[string]string
	ct     map[*namedType]cc.Type // each type's C type
}

// skipped is a declared function that is not bound.
type skipped struct{ Symbol, Why string }

// typeKind says what a named type is.
type typeKind int

const (
	tScalar   typeKind = iota // a named arithmetic type: CUdevice, CUdeviceptr
	tHandle                   // a pointer to an opaque struct: CUcontext
	tEnum                     // an enum
	tStruct                   // a struct with the C layout
	tUnion                    // a union: bytes with typed accessors
	tOpaque                   // a struct bound as bytes (bit fields, or the config says so)
	tCallback                 // a C function pointer
)

// namedType is one named Go type.
type namedType struct {
	Kind    typeKind
	C       string   // the C name: the unversioned typedef, or Parent.field for nested types
	Aliases []string // other typedef names of the same type
	Go      string
	Doc     string
	Pos     string
	Base    string // Go underlying type of a scalar, handle or enum
	Size    int64
	Align   int64
	Fields  []*structField // struct fields, union members
	Values  []*enumerator  // enumerators
	Flags   bool           // a bit set: String joins the names of set bits
	Sig     string         // callback: the C signature
	Why     string         // opaque: why
	Group   string         // a flags type of #define constants: their prefix (consts.go)
	Nested  bool           // an anonymous struct or union inside another
	Path    string         // nested: the C path from the outermost named type
	Outer   *namedType     // nested: that type
	Anon    bool           // nested: an anonymous member (C cannot name it)
	// PtrWords are the offsets of the Go pointer words in a value (structs,
	// unions, opaque types): a union's or opaque type's storage keeps them
	// unsafe.Pointer, and wrappers pin what they point to.
	PtrWords []int64
	First    string // anonymous: its first named member
	// External: a type of another API a library's header uses (NCCL's
	// cudaStream_t), declared by hand in the package (library.go).
	External bool
}

// structField is a struct field or a union member.
type structField struct {
	C, Go  string // C is "" for an anonymous member
	First  string // an anonymous member's first named member
	GoType string
	Offset int64
	Size   int64
	Pad    int64 // explicit padding before the field
	// Doc says why a pointer field is an integer to Go: the driver keeps
	// it (C memory only), or a union member's integer shares its word.
	Doc string
	// Padding: a union member that only pads the union (reserved1[29]):
	// it has no accessor, so no integer can be written through it.
	Padding bool
	// DataWords: a union member's 8-byte words that hold integers (none of
	// them is a pointer word of the union's storage).
	DataWords []int64
}

// enumerator is one enumerator.
type enumerator struct {
	C, Go    string
	Value    int64
	Doc      string
	Sentinel bool // a count or force-int marker, not a value: left out of String
	Pos      string
	init     bool // written with an initializer (NAME = value)
}

// role is what a parameter becomes in Go.
type role int

const (
	rIn         role = iota // by value
	rPtr                    // a pointer the caller passes: *T or unsafe.Pointer
	rString                 // const char * input
	rStruct                 // a struct by value, passed as *T from Go
	rOut                    // a single result
	rOutString              // const char ** result
	rOutArray               // a fixed-size array result
	rBuf                    // a char buffer whose text is the result
	rBufLen                 // its length
	rSlice                  // a slice: pointer and count
	rCount                  // the count of slices
	rOutSlice               // an output array sized by a count pointer: a result
	rOutCount               // that count pointer, the wrapper's
	rTyped                  // a void* typed by another parameter's value: an any
	rTypedSize              // the size of a typed parameter, set by the wrapper
	rImage                  // a module image: a []byte checked before the call
	rInOutCount             // a count pointer: in, the slice's length; out, how many the driver wrote (a result)
	rSized                  // an output array whose length another function returns: a result
)

// param is one C parameter.
type param struct {
	C      string // C name
	Go     string
	Role   role
	GoType string // Go type of the argument or result
	CArg   string // the trampoline's C parameter type
	CCall  string // the C type in the entry point's signature
	Size   int    // buffer or array length
	Count  string // slice: the count parameter (C name)
	Slices []string
	CConv  string // cgo conversion of a by-value argument: "C.uint"
	typed  string // the typed pointer an unsafe.Pointer stands for, for slices
	// PinWords are the offsets of the Go pointer words in what the
	// parameter points to (each element, for a slice of ElemSize bytes):
	// the wrapper pins their targets for the call.
	PinWords []int64
	ElemSize int64
	// Typed: the parameter whose value picks the type, the table, and the
	// size parameter (rTyped); the typed parameter (rTypedSize).
	By      *param
	Entries []typedEntry
	SizeOf  *param
	ByValue bool // some entries pass the value itself: the C argument is an integer
	// Dir is "out" where the driver writes the typed value, "in" where it
	// reads it; Key is the generic type that carries its Go type (typed.go).
	Dir string
	Key *typedKey
	// Ranked: a slice that must hold at least Rank-RankMinus elements,
	// Rank a by-value parameter (tensorRank).
	Rank      string
	RankMinus int
	// Keep: the argument is copied into C memory that a handle owns (Keep
	// the kind, Owner the parameter or result holding the handle).
	Keep, Owner string
	SizePtr     bool // rTypedSize: the size is passed by pointer
	// Optional: a slice that may be empty (NULL) though others sharing its
	// count are not.
	Optional bool
	// Hidden: a []unsafe.Pointer the driver reads during the call only,
	// passed as an array of integers and kept alive.
	Hidden    bool
	constElem bool // a pointer to const
	// SizedBy is the function whose result is an rSized array's length,
	// SizedArgs the Go names of the parameters passed to it, and Text
	// says the result is a string.
	SizedBy   *function
	SizedArgs []string
	Text      bool
	// Life is how long the driver uses the memory it names (shapes.go).
	Life     *life
	callback bool   // a C function pointer
	shape    string // the shape that typed it (shapes.go)
}

// typedEntry is one row of a typed parameter's table.
type typedEntry struct {
	C      string // the enumerator
	Go     string // its Go constant
	Value  int64
	Kind   string // "value", "bool", "slice", "byValue", "refused"
	GoType string // the Go type (a slice's type, for "slice")
}

// function is one bound driver function.
type function struct {
	Base     string // the name passed to cuGetProcAddress: "cuEventElapsedTime"
	Symbol   string // the entry point the header declares: "cuEventElapsedTime_v2"
	GoName   string
	ABI      int // the ABI version it is resolved with: 12080
	Flags    uint64
	Params   []*param
	Pos      string
	Doc      string
	NoEscape bool     // no pointer the caller owns outlives the call
	Quiet    bool     // may run a compiler: asynchronous signals blocked during the call (config.Compilers)
	RawDocs  []string // what each raw pointer parameter takes
	// Lives are the lifetimes of its pointer parameters and of the pointer
	// fields of what they point to (shapes.go).
	Lives []life
	// Check: a hand-written check before the call, with its arguments'
	// Go names ("nil" where absent); OnSuccess: a hand-written func()
	// after a successful call.
	Check     string
	CheckArgs []string
	OnSuccess string
	// Releases are the handle parameters whose kept C memory (Keep) a
	// successful call frees (cuLinkDestroy's state).
	Releases []*param
	// Thread: the call runs on the OS thread that a handle of a kind in a
	// config's "threads" owns (threads.go).
	Thread *threadUse
	Index  int
	Macro  bool // the entry point the header's macro for Base names
	// Alias: the default entry point's stable versioned name (cuCtxCreate_v2
	// → CtxCreateV2), bound beside GoName.
	Alias string
	// NoCtx: a library's function, called with no context to make current.
	NoCtx bool
}

// modelHeaders runs the read and model stages on one version's headers in
// dir: readHeaders checks and parses them, newModel makes their model, and
// checkModel refuses what the header's text hid (headercheck.go). e is the
// version's manifest entry, whose CUDA_VERSION the header must have; nil
// for headers no manifest pins.
func modelHeaders(cfg *config, e *headers.Entry, dir string) (*builder, error) {
	src, err := readHeaders(cfg, dir)
	if err != nil {
		return nil, err
	}
	b, err := newModel(cfg, src)
	if err != nil {
		return nil, err
	}
	if _, err := checkModel(dir, b.model, nil); err != nil {
		return nil, err
	}
	if e == nil {
		return b, nil
	}
	if e.CUDAVersion != 0 && b.CUDAVersion != e.CUDAVersion {
		return nil, fmt.Errorf("gen: %s: CUDA_VERSION is %d, the manifest pins %d for CUDA %s",
			filepath.Join(dir, "cuda.h"), b.CUDAVersion, e.CUDAVersion, e.Version)
	}
	b.Version, b.Tag, b.Sums = e.Version, e.Tag, e.Files
	return b, nil
}

// newModel is the model stage: it makes the model of everything the
// parsed headers declare.
func newModel(cfg *config, s *source) (*builder, error) {
	dir := s.dir
	var err error
	m := &builder{model: &model{HeaderFile: filepath.Join(dir, "cuda.h"), PerThread: cfg.PerThreadDefaultStream},
		cfg: cfg, src: s, byName: map[string]*namedType{}, byTag: map[string]*namedType{}, goIDs: map[string]string{}, ct: map[*namedType]cc.Type{}}
	for _, n := range handWritten {
		m.goIDs[n] = "(hand-written in cuda/driver)"
	}
	if m.CUDAVersion, err = s.macroInt("CUDA_VERSION"); err != nil {
		return nil, err
	}
	gpaName := s.probes["cuGetProcAddress"]
	gpa := s.declarator(gpaName)
	if gpa == nil || gpa.Type().Kind() != cc.Function {
		return nil, fmt.Errorf("gen: %s: cuGetProcAddress (%s) is not declared: headers older than CUDA 11.3 cannot be bound", filepath.Join(dir, "cuda.h"), gpaName)
	}
	m.GPASymbol = gpaName
	m.GPAV2 = len(gpa.Type().(*cc.FunctionType).Parameters()) == 5
	flagName := "CU_GET_PROC_ADDRESS_LEGACY_STREAM"
	if m.PerThread {
		flagName = "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM"
	}
	fv, err := s.enumerator(flagName)
	if err != nil {
		return nil, err
	}
	m.GPAFlags = uint64(fv)
	if err := inOrder(m.typesAndWords, m.defines, m.functions); err != nil {
		return nil, err
	}
	return m, nil
}

// inOrder runs the stages in order and returns the first one's error.
func inOrder(stages ...func() error) error {
	for _, s := range stages {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// countingName is the name of an enumerator that counts the others.
var countingName = regexp.MustCompile(`_(MAX|COUNT|NUM_\w+|LAST)$|^[a-z]+Num[A-Z]\w*$`)

// typesAndWords builds the named types, types the fields that hold C memory
// only, and finds each value type's pointer words and each union's data
// words.
func (m *builder) typesAndWords() error {
	if err := inOrder(m.types, m.nonGoFields); err != nil {
		return err
	}
	for _, t := range m.Types {
		if t.Kind == tStruct || t.Kind == tUnion || t.Kind == tOpaque {
			t.PtrWords = m.ptrWords(t.Go)
		}
		if t.Kind == tUnion {
			m.dataWords(t)
		}
	}
	return nil
}

// handWritten are the Go names the package defines by hand.
var handWritten = []string{"DefaultLibrary", "Load", "DriverVersion", "Lookup", "FunctionInfo", "ErrNoDriver", "ErrNotSupported",
	"LoadError", "NotSupportedError", "NoCgoError", "VersionString", "PollEventCtx", "Functions", "HeaderVersion", "Toolkit", "BuildTag",
	"PerThreadDefaultStream", "HeaderSHA256", "Results", "Dim3", "LaunchArgs", "LaunchArgsCtx",
	"NewHostFn", "LaunchHostFuncGo", "LaunchHostFuncGoCtx", "StreamAddCallbackGo", "StreamAddCallbackGoCtx", "UserObjectCreateGo", "UserObjectCreateGoCtx",
	"OccupancyMaxPotentialBlockSizeGo", "OccupancyMaxPotentialBlockSizeGoCtx", "EventElapsedTimeAtCtx",
	"Memcpy2DHost", "Memcpy2DHostCtx", "Memcpy2DUnalignedHost", "Memcpy2DUnalignedHostCtx", "Memcpy3DHost", "Memcpy3DHostCtx", "Memcpy3DPeerHost", "Memcpy3DPeerHostCtx"}

// claim registers a Go identifier; two C names for one Go name are an error.
func (m *builder) claim(goName, cName, pos string) error {
	if old, ok := m.goIDs[goName]; ok && old != cName {
		return fmt.Errorf("gen: %s: Go name clash: %s and %s both become %s; give one another name under \"names\" in gen/bindings.json", pos, old, cName, goName)
	}
	m.goIDs[goName] = cName
	return nil
}

// chain lists the typedef declarators a type goes through, outermost first.
func chain(t cc.Type) []*cc.Declarator {
	var r []*cc.Declarator
	for d := t.Typedef(); d != nil && len(r) < 8; {
		r = append(r, d)
		next := d.Type().Typedef()
		if next == d || next == nil {
			break
		}
		d = next
	}
	return r
}

func tagOf(t cc.Type) string {
	var tok cc.Token
	var kind string
	switch x := t.(type) {
	case *cc.StructType:
		tok, kind = x.Tag(), "struct "
	case *cc.UnionType:
		tok, kind = x.Tag(), "union "
	case *cc.EnumType:
		tok, kind = x.Tag(), "enum "
	default:
		return ""
	}
	if n := tok.SrcStr(); n != "" {
		return kind + n
	}
	return ""
}

var versioned = regexp.MustCompile(`_v[0-9]+$`)

// typedefGroup is the typedef names that resolve to one declaration, the
// first declared first.
type typedefGroup struct {
	root  *cc.Declarator
	names []string
}

// name is the group's type name: its first name without a version suffix
// (CUdevice, not CUdevice_v1), else its first.
func (g *typedefGroup) name() string {
	for _, n := range g.names {
		if !versioned.MatchString(n) {
			return n
		}
	}
	return g.names[0]
}

// typedefGroups groups cuda.h's typedef names by the declaration they
// resolve to, in the order of their first names.
func typedefGroups(s *source) []*typedefGroup {
	var order []*typedefGroup
	byName := map[string]*typedefGroup{}
	for _, d := range s.typedefs {
		var g *typedefGroup
		// "typedef CUdevice_v1 CUdevice;" joins CUdevice_v1's group.
		if a, ok := s.aliasOf[d.Name()]; ok {
			g = byName[a]
		}
		// A typedef of a tagged type already named joins that group.
		if tag := tagOf(d.Type()); g == nil && tag != "" {
			for _, og := range order {
				if tagOf(og.root.Type()) == tag {
					g = og
				}
			}
		}
		if g == nil {
			g = &typedefGroup{root: d}
			order = append(order, g)
		}
		g.names = append(g.names, d.Name())
		byName[d.Name()] = g
	}
	return order
}

// types registers every typedef cuda.h declares.
func (m *builder) types() error {
	s := m.src
	order := typedefGroups(s)
	for _, g := range order {
		name := g.name()
		goName, external, ok := m.cfg.boundType(name)
		if !ok {
			continue // cuuint64_t and such: plain scalars
		}
		d := g.root
		t := d.Type()
		ty := &namedType{C: name, Go: goName, External: external, Pos: d.Position().String(), Size: t.Size(), Align: int64(t.Align())}
		m.ct[ty] = t
		ty.Doc = s.trailing(d.Position().Filename, d.Position().Line)
		for _, n := range g.names {
			if n != name {
				ty.Aliases = append(ty.Aliases, n)
			}
		}
		switch t.Kind() {
		case cc.Ptr:
			elem := t.(*cc.PointerType).Elem()
			switch elem.Kind() {
			case cc.Function:
				ty.Kind, ty.Sig, ty.Base = tCallback, cSpell(elem, ""), "uintptr"
			case cc.Struct, cc.Union:
				ty.Kind, ty.Base = tHandle, "uintptr"
			default:
				continue
			}
		case cc.Enum:
			ty.Kind = tEnum
		case cc.Struct, cc.Union:
			if t.IsIncomplete() {
				continue
			}
			ty.Kind = tStruct
			if t.Kind() == cc.Union {
				ty.Kind = tUnion
			}
			if why, ok := m.cfg.Opaque[name]; ok {
				ty.Kind, ty.Why = tOpaque, why
			}
		default:
			_, gt := scalar(t)
			if gt == "" {
				continue
			}
			ty.Kind, ty.Base = tScalar, gt
		}
		for _, n := range g.names {
			m.byName[n] = ty
		}
		if tag := tagOf(t); tag != "" {
			m.byTag[tag] = ty
		}
		m.Types = append(m.Types, ty)
	}
	// Now that every name is known, fill in enums and layouts.
	all := m.Types
	for _, ty := range all {
		if err := m.claim(ty.Go, ty.C, ty.Pos); err != nil && !ty.External { // an external type is declared by hand
			return err
		}
		switch ty.Kind {
		case tEnum:
			if err := m.enum(ty); err != nil {
				return err
			}
		case tStruct, tUnion:
			if err := m.layout(ty, ty, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// scalars is each arithmetic C kind's C spelling and Go type.
var scalars = map[cc.Kind]struct{ c, goType string }{
	cc.Int:       {"int", "int32"},
	cc.UInt:      {"unsigned int", "uint32"},
	cc.Long:      {"long", "int64"},
	cc.ULong:     {"unsigned long", "uint64"},
	cc.LongLong:  {"long long", "int64"},
	cc.ULongLong: {"unsigned long long", "uint64"},
	cc.Float:     {"float", "float32"},
	cc.Double:    {"double", "float64"},
	cc.Short:     {"short", "int16"},
	cc.UShort:    {"unsigned short", "uint16"},
	cc.Char:      {"char", "byte"},
	cc.SChar:     {"signed char", "int8"},
	cc.UChar:     {"unsigned char", "uint8"},
	cc.Bool:      {"_Bool", "bool"},
}

// scalar maps an arithmetic C type to its C spelling and Go type ("" and
// "" for another type).
func scalar(t cc.Type) (cType, goType string) {
	s := scalars[t.Kind()]
	return s.c, s.goType
}

// cSpell spells a C type for documentation.
func cSpell(t cc.Type, name string) string {
	if ch := chain(t); len(ch) > 0 {
		return strings.TrimSpace(ch[0].Name() + " " + name)
	}
	switch x := t.(type) {
	case *cc.PointerType:
		return cSpell(x.Elem(), "*"+name)
	case *cc.FunctionType:
		var ps []string
		for _, p := range x.Parameters() {
			ps = append(ps, cSpell(p.Type(), p.Name()))
		}
		return cSpell(x.Result(), "(*)") + "(" + strings.Join(ps, ", ") + ")"
	}
	if ct, _ := scalar(t); ct != "" {
		return strings.TrimSpace(ct + " " + name)
	}
	return strings.TrimSpace(t.String() + " " + name)
}

// named returns the registered type t is, if any.
func (m *builder) named(t cc.Type) *namedType {
	for _, d := range chain(t) {
		if ty := m.byName[d.Name()]; ty != nil {
			return ty
		}
	}
	if tag := tagOf(t); tag != "" {
		return m.byTag[tag]
	}
	return nil
}

// goType is the Go type of a C type inside a struct or as a pointer's
// element; nested names anonymous structs and unions after where they are.
func (m *builder) goType(t cc.Type, outer *namedType, path, goName string) (string, error) {
	if ty := m.named(t); ty != nil {
		return ty.Go, nil
	}
	switch x := t.(type) {
	case *cc.PointerType:
		e := x.Elem()
		switch e.Kind() {
		case cc.Void, cc.Function:
			return "unsafe.Pointer", nil
		case cc.Struct, cc.Union:
			if m.named(e) == nil {
				return "unsafe.Pointer", nil
			}
		}
		g, err := m.goType(e, outer, path, goName)
		if err != nil {
			return "", err
		}
		return "*" + g, nil
	case *cc.ArrayType:
		if x.IsVLA() || x.Len() <= 0 {
			return "", fmt.Errorf("an array of unknown length")
		}
		g, err := m.goType(x.Elem(), outer, path, goName)
		if err != nil {
			return "", err
		}
		return "[" + strconv.FormatInt(x.Len(), 10) + "]" + g, nil
	case *cc.StructType, *cc.UnionType:
		if outer == nil {
			return "", fmt.Errorf("an anonymous struct or union")
		}
		ty := &namedType{Kind: tStruct, C: outer.C + "." + path, Go: goName, Nested: true, Path: path, Outer: outer, Size: t.Size(), Align: int64(t.Align())}
		m.ct[ty] = t
		if t.Kind() == cc.Union {
			ty.Kind = tUnion
		}
		if err := m.claim(ty.Go, ty.C, outer.Pos); err != nil {
			return "", err
		}
		m.Types = append(m.Types, ty)
		if err := m.layout(ty, outer, path); err != nil {
			return "", err
		}
		return ty.Go, nil
	case *cc.EnumType:
		if t.Size() == 4 {
			return "int32", nil
		}
	}
	if _, g := scalar(t); g != "" {
		return g, nil
	}
	return "", fmt.Errorf("unsupported type %s", t)
}

// layout fills a struct's or union's fields from cc/v4's layout.
func (m *builder) layout(ty, outer *namedType, path string) error {
	var n int
	var field func(i int) *cc.Field
	switch x := m.ct[ty].(type) {
	case *cc.StructType:
		n, field = x.NumFields(), x.FieldByIndex
	case *cc.UnionType:
		n, field = x.NumFields(), x.FieldByIndex
	}
	var goOff int64
	used := map[string]bool{}
	for i := 0; i < n; i++ {
		f := field(i)
		if f.IsBitfield() || f.IsFlexibleArrayMember() {
			ty.Why = "it has bit fields or a flexible array member, which Go cannot mirror"
			if ty.Kind == tStruct {
				ty.Kind = tOpaque
			}
			ty.Fields = nil
			return nil
		}
		cname := f.Name()
		anon := cname == ""
		gname := exported(cname)
		if anon {
			gname = fmt.Sprintf("Anon%d", i)
		}
		for used[gname] {
			gname += "_"
		}
		used[gname] = true
		p := cname
		if path != "" && !anon {
			p = path + "." + cname
		} else if anon {
			p = path // an anonymous member's members are reached through its parent
		}
		gt, err := m.goType(f.Type(), outer, p, ty.Go+gname)
		if err != nil {
			return fmt.Errorf("gen: %s: %s field %s: %w", outer.Pos, ty.C, cname, err)
		}
		fd := &structField{C: cname, Go: gname, GoType: gt, Offset: f.Offset(), Size: f.Type().Size()}
		if anon {
			fd.First = firstNamed(f.Type())
			if nt := m.lastNested(); nt != nil && nt.Go == gt {
				nt.Anon, nt.First = true, fd.First
			}
		}
		if ty.Kind == tStruct {
			al := int64(f.Type().Align())
			if al > 0 {
				goOff = (goOff + al - 1) / al * al
			}
			if fd.Offset < goOff {
				return fmt.Errorf("gen: %s: %s field %s at offset %d overlaps the one before (ends at %d)", outer.Pos, ty.C, cname, fd.Offset, goOff)
			}
			fd.Pad = fd.Offset - goOff
			goOff = fd.Offset + fd.Size
		}
		ty.Fields = append(ty.Fields, fd)
	}
	return nil
}

func (m *builder) lastNested() *namedType {
	if len(m.Types) == 0 || !m.Types[len(m.Types)-1].Nested {
		return nil
	}
	return m.Types[len(m.Types)-1]
}

// firstNamed is the first named member of an anonymous struct or union,
// looking through anonymous members.
func firstNamed(t cc.Type) string {
	var n int
	var field func(i int) *cc.Field
	switch x := t.(type) {
	case *cc.StructType:
		n, field = x.NumFields(), x.FieldByIndex
	case *cc.UnionType:
		n, field = x.NumFields(), x.FieldByIndex
	}
	for i := 0; i < n; i++ {
		f := field(i)
		if f.Name() != "" {
			return f.Name()
		}
		if s := firstNamed(f.Type()); s != "" {
			return s
		}
	}
	return ""
}

// exported makes a C field name a Go one: srcXInBytes → SrcXInBytes.
func exported(s string) string {
	s = strings.TrimLeft(s, "_")
	if s == "" {
		return "X"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// enum reads an enum's values, checks them against its Go type, and marks
// sentinels and aliases.
func (m *builder) enum(ty *namedType) error {
	et, ok := m.ct[ty].(*cc.EnumType)
	if !ok {
		return fmt.Errorf("gen: %s: %s is not an enum", ty.Pos, ty.C)
	}
	lc := strings.ToLower(ty.C)
	ty.Flags = strings.HasSuffix(lc, "flags") || strings.HasSuffix(lc, "_flags_enum")
	var vals []*enumerator
	for _, en := range et.Enumerators() {
		v, err := enumValue(en)
		if err != nil {
			return err
		}
		cname := en.Token.SrcStr()
		pos := en.Position()
		vals = append(vals, &enumerator{C: cname, Go: m.cfg.constGoName(cname), Value: v, Doc: m.src.trailing(pos.Filename, pos.Line), Pos: pos.String(),
			init: en.Case == cc.EnumeratorExpr})
	}
	// Sentinels: the force-int marker 0x7fffffff, or a last enumerator with
	// no initializer and no doc that only counts the others.
	var max int64 = math.MinInt64
	for i, v := range vals {
		last := i == len(vals)-1
		if v.Value == 0x7fffffff {
			v.Sentinel = true
			continue
		}
		if last && v.Doc == "" && v.Value == max+1 && !v.init && (m.Lib == nil || countingName.MatchString(v.C)) {
			v.Sentinel = true // a library's last enumerator counts only by its name (NVJITLINK_ERROR_UNRECOGNIZED_INPUT is a value)
		}
		if v.Value > max {
			max = v.Value
		}
	}
	// The Go type: 32 bits as in C; unsigned for flags and values above MaxInt32.
	size := m.ct[ty].Size()
	ty.Base = "int32"
	neg := false
	var hi int64
	for _, v := range vals {
		if v.Value < 0 {
			neg = true
		}
		if v.Value > hi {
			hi = v.Value
		}
	}
	if !neg && (ty.Flags || hi > math.MaxInt32) {
		ty.Base = "uint32"
	}
	for _, v := range vals {
		if size != 4 && !fits(v.Value, "int32") && !fits(v.Value, "uint32") {
			return fmt.Errorf("gen: %s: %s = %#x does not fit %s's Go type %s (the C enum grew to %d bytes; cudagen binds 4-byte enums)", v.Pos, v.C, v.Value, ty.C, ty.Base, size)
		}
		if !fits(v.Value, ty.Base) {
			return fmt.Errorf("gen: %s: %s = %d does not fit %s's Go type %s", v.Pos, v.C, v.Value, ty.C, ty.Base)
		}
	}
	ty.Values = vals
	for _, v := range vals {
		if err := m.claim(v.Go, v.C, v.Pos); err != nil {
			return err
		}
	}
	return nil
}

func fits(v int64, base string) bool {
	switch base {
	case "int32":
		return v >= math.MinInt32 && v <= math.MaxInt32
	case "uint32":
		return v >= 0 && v <= math.MaxUint32
	case "uint64":
		return v >= 0
	}
	return true
}

// functions models every function cuda.h declares.
func (m *builder) functions() error {
	s := m.src
	typedefText, err := os.ReadFile(filepath.Join(s.dir, "cudaTypedefs.h"))
	if err != nil {
		return err
	}
	abi := abiTable(typedefText)
	seen := map[string]bool{}
	for _, d := range s.funcs {
		sym := d.Name()
		if seen[sym] {
			continue
		}
		seen[sym] = true
		m.Declared++
		base := baseName(sym)
		if why, ok := m.cfg.Exclude[base]; ok {
			m.Skipped = append(m.Skipped, skipped{sym, "excluded by gen/bindings.json: " + why})
			continue
		}
		f, why, err := m.function(d, sym, base, abi[base])
		if err != nil {
			return err
		}
		if why != "" {
			m.Skipped = append(m.Skipped, skipped{sym, why})
			continue
		}
		f.Index = len(m.Funcs)
		f.Macro = f.Symbol == m.src.probes[f.Base]
		m.Funcs = append(m.Funcs, f)
	}
	if err := inOrder(m.releases, m.typedKeys, m.threads); err != nil {
		return err
	}
	for _, n := range []string{"cuCtxGetCurrent", "cuCtxSetCurrent"} {
		if m.funcNamed(n) == nil {
			return fmt.Errorf("gen: %s: %s is not bound; every Ctx variant needs it", filepath.Join(s.dir, "cuda.h"), n)
		}
	}
	return nil
}

// funcNamed returns the bound function resolved by base name, if any.
func (m *model) funcNamed(base string) *function {
	for _, f := range m.Funcs {
		if f.Base == base && f.Macro {
			return f
		}
	}
	for _, f := range m.Funcs {
		if f.Base == base {
			return f
		}
	}
	return nil
}

// function builds one function, or says why it is not bound: its names,
// its ABI version, its parameters' shapes (shapes.go), their pairs
// (pairs.go, slices), the raw and kept pointers, and their lifetimes.
func (m *builder) function(d *cc.Declarator, sym, base string, abi *abiVersions) (*function, string, error) {
	f := &function{Symbol: sym, Base: base, Pos: d.Position().String(), Flags: m.GPAFlags}
	// The Go name: the base's, where the base name denotes this entry
	// point; otherwise the symbol's (cuCtxCreate_v3 → CtxCreateV3).
	isDefault := m.src.probes[base] == sym
	if isDefault {
		f.GoName = m.cfg.funcGoName(base)
	} else {
		f.GoName = m.cfg.funcGoName(strings.TrimSuffix(strings.TrimSuffix(sym, "_ptsz"), "_ptds"))
	}
	pd := m.src.parsedDoc(d)
	f.Doc = pd.text()
	result := "CUresult"
	if m.Lib != nil {
		result = m.Lib.Result // a library's functions are found by their symbol, not at an ABI version
	} else {
		abiV, why, err := m.pickABI(d, sym, base, abi)
		if why != "" || err != nil {
			return nil, why, err
		}
		f.ABI = abiV
	}
	ft := d.Type().(*cc.FunctionType)
	if ft.IsVariadic() {
		return nil, "it is variadic", nil
	}
	if rt := ft.Result(); rt.Typedef() == nil || rt.Typedef().Name() != result {
		return nil, "it does not return " + result, nil
	}
	fc := m.inferred(d, base, m.cfg.Functions[base]) // #define flags types, returned CUDA arrays (consts.go), then the config's
	if err := m.claimFunc(f, isDefault); err != nil {
		return nil, "", err
	}
	if why := m.params(f, fc, ft, pd); why != "" {
		return nil, why, nil
	}
	if err := m.arrays(f, fc, pd); err != nil {
		return nil, "", err
	}
	if err := m.pointers(f, fc); err != nil {
		return nil, "", err
	}
	if c := fc.Check; c != nil {
		f.Check = c.Func
		for _, a := range c.Args {
			f.CheckArgs = append(f.CheckArgs, goParamOf(f, a))
		}
	}
	f.OnSuccess = fc.OnSuccess
	_, f.Quiet = m.cfg.Compilers[base]
	if err := m.lifetimes(f, fc, pd); err != nil {
		return nil, "", err
	}
	// noescape and nocallback are certain only where the caller passes no
	// pointer the driver may keep and no function it may call back during
	// the call (cuOccupancyMaxPotentialBlockSize calls its callback there).
	f.NoEscape = true
	for _, q := range f.Params {
		if q.Role == rPtr || q.Role == rSlice || q.Role == rImage || q.GoType == "unsafe.Pointer" || q.callback {
			f.NoEscape = false
		}
	}
	return f, "", nil
}

// goParamOf is the Go name of f's parameter named c in C; "nil" where f
// has none.
func goParamOf(f *function, c string) string {
	g := "nil"
	for _, q := range f.Params {
		if q.C == c {
			g = q.Go
		}
	}
	return g
}

// claimFunc claims f's Go names (and their context variants); a default
// entry point also gets its own versioned name where that is free.
func (m *builder) claimFunc(f *function, isDefault bool) error {
	sym := f.Symbol
	if err := m.claim(f.GoName, sym, f.Pos); err != nil {
		return err
	}
	if err := m.claim(f.GoName+"Ctx", sym+" (context variant)", f.Pos); err != nil {
		return err
	}
	if !isDefault || !versioned.MatchString(sym) {
		return nil
	}
	// Also the entry point's own versioned name, which a pin declaring
	// it binds alike whichever entry point its base name denotes.
	alias := m.cfg.funcGoName(sym)
	if _, taken := m.goIDs[alias]; taken || alias == f.GoName {
		return nil
	}
	if err := m.claim(alias, sym+" (versioned name)", f.Pos); err != nil {
		return err
	}
	if err := m.claim(alias+"Ctx", sym+" (versioned name, context variant)", f.Pos); err != nil {
		return err
	}
	f.Alias = alias
	return nil
}

// params shapes each parameter of f (shapes.go), giving each a Go name of
// its own; it says why f is not bound where a parameter cannot be.
func (m *builder) params(f *function, fc funcConf, ft *cc.FunctionType, pd *parsedDoc) string {
	used := map[string]bool{}
	for _, prm := range ft.Parameters() {
		if prm.Type().Kind() == cc.Void {
			continue // f(void)
		}
		q, why := m.param(fc, prm, pd)
		if why != "" {
			return fmt.Sprintf("parameter %s: %s", prm.Name(), why)
		}
		for used[q.Go] {
			q.Go += "_"
		}
		used[q.Go] = true
		f.Params = append(f.Params, q)
	}
	return ""
}

// arrays makes f's (pointer, count) pairs: the config's slices, ranked
// arrays, two-call forms and typed parameters, then checks that no
// pair-looking parameter is left unplaced (pairs.go).
func (m *builder) arrays(f *function, fc funcConf, pd *parsedDoc) error {
	// A name this entry point lacks (the config is by base name:
	// cuGraphGetEdges and cuGraphGetEdges_v2) is skipped.
	has := map[string]bool{}
	for _, q := range f.Params {
		has[q.C] = true
	}
	for pname, count := range fc.Slices {
		if !has[pname] {
			continue
		}
		if err := m.slice(f, fc, pname, count); err != nil {
			return err
		}
	}
	if err := m.ranked(f, fc, has); err != nil {
		return err
	}
	if err := m.twoCall(f, fc, has); err != nil {
		return err
	}
	if err := m.typedParams(f, fc); err != nil {
		return err
	}
	return m.checkPairs(f, fc, pd)
}

// slice makes f's parameter pname a slice whose length is the parameter
// count (gen/bindings.json "slices", "sliceElem", "optional").
func (m *builder) slice(f *function, fc funcConf, pname, count string) error {
	base := f.Base
	var sp, cp *param
	for _, q := range f.Params {
		if q.C == pname {
			sp = q
		}
		if q.C == count {
			cp = q
		}
	}
	if sp != nil && sp.typed != "" {
		sp.GoType = sp.typed
	}
	if sp != nil && sp.Role == rPtr && sp.GoType == "unsafe.Pointer" && sp.typed == "" && fc.SliceElem[pname] == "byte" {
		sp.GoType = "*unsafe.Pointer" // becomes []byte below
	}
	if cp != nil && (cp.Role == rPtr || cp.Role == rInOutCount) && (cp.GoType == "*uint32" || cp.GoType == "*uint64" || cp.Role == rInOutCount) {
		// A count pointer: the slice's length in, how many were written out.
		cp.Role, cp.GoType = rInOutCount, strings.TrimPrefix(cp.GoType, "*")
	}
	if sp == nil || cp == nil || sp.Role != rPtr || (cp.Role != rIn && cp.Role != rCount && cp.Role != rInOutCount) || !strings.HasPrefix(sp.GoType, "*") {
		return fmt.Errorf("gen: %s: gen/bindings.json: %s: slices: %s → %s is not a (typed pointer, count) pair (%+v %+v)", f.Pos, base, pname, count, sp, cp)
	}
	sp.Role, sp.GoType, sp.Count = rSlice, "[]"+strings.TrimPrefix(sp.GoType, "*"), count
	if elem, ok := fc.SliceElem[pname]; ok && elem == "byte" {
		// A void* buffer of count bytes.
		if sp.GoType != "[]unsafe.Pointer" || sp.typed != "" {
			return fmt.Errorf("gen: %s: gen/bindings.json: %s: sliceElem: %s is %s; only a void* buffer may become []byte", f.Pos, base, pname, sp.GoType)
		}
		sp.GoType = "[]byte"
	} else if ok {
		// Only void* elements may be retyped, and only to uintptr: the
		// same size, an integer or an address the caller keeps alive.
		if sp.GoType != "[]unsafe.Pointer" || elem != "uintptr" {
			return fmt.Errorf("gen: %s: gen/bindings.json: %s: sliceElem: %s is %s; only a void* slice may become []uintptr", f.Pos, base, pname, sp.GoType)
		}
		sp.GoType = "[]uintptr"
	}
	if cp.Role != rInOutCount {
		cp.Role = rCount
	}
	cp.Slices = addSorted(cp.Slices, sp.Go)
	sp.Optional = slices.Contains(fc.Optional, pname)
	return nil
}

// pointers makes f's pointer parameters what they take: each raw pointer
// documented, an input array of pointers a slice, what the caller's Go
// memory points to pinned for the call, and what the driver keeps an
// integer or a copy in C memory (gen/bindings.json "raw", "keeps").
func (m *builder) pointers(f *function, fc funcConf) error {
	// Every raw pointer says what memory it takes.
	for _, q := range f.Params {
		if isRaw(q) {
			if fc.Raw[q.C] == "" && m.cfg.DocumentRaw {
				return fmt.Errorf("gen: %s: %s: %s stays %s: say under \"raw\" in gen/bindings.json what memory it takes, or type it", f.Pos, f.Symbol, q.C, q.GoType)
			}
			if fc.Raw[q.C] != "" {
				f.RawDocs = append(f.RawDocs, q.Go+": "+fc.Raw[q.C])
			}
		}
	}
	// An input array of pointers with no count (kernelParams, extra): a
	// slice, its length the caller's, its elements pinned for the call.
	for _, q := range f.Params {
		if q.Role == rPtr && q.typed == "*unsafe.Pointer" {
			q.Role, q.GoType = rSlice, "[]unsafe.Pointer"
		}
	}
	// What the caller's Go memory points to is pinned for the call.
	for _, q := range f.Params {
		switch {
		case (q.Role == rPtr || q.Role == rStruct) && strings.HasPrefix(q.GoType, "*"):
			q.PinWords = m.ptrWords(strings.TrimPrefix(q.GoType, "*"))
		case q.Role == rSlice && q.GoType == "[]unsafe.Pointer":
			// Pointers the driver follows during the call only: handed to C
			// as integers, the slice kept alive (cgo would scan them and
			// refuse unpinned ones; pinning each costs microseconds).
			q.CArg, q.Hidden = "uintptr_t *", true
		case q.Role == rSlice:
			elem := strings.TrimPrefix(q.GoType, "[]")
			q.PinWords, q.ElemSize = m.ptrWords(elem), m.goSize(elem)
		}
	}
	// A raw void* the driver keeps is an integer: C memory or a value. A
	// slice or image it keeps is copied into C memory its owner holds.
	for _, q := range f.Params {
		k, ok := fc.Keeps[q.C]
		switch {
		case !ok:
		case k.Copy == "" && q.Role == rPtr && q.GoType == "unsafe.Pointer":
			q.Role, q.GoType, q.CArg, q.CConv = rIn, "uintptr", "uintptr_t", "C.uintptr_t"
		case k.Copy != "":
			if q.Role != rSlice && q.Role != rImage || q.Hidden || len(q.PinWords) > 0 {
				return fmt.Errorf("gen: %s: gen/bindings.json: %s: keeps: %s is copied, but it is no slice of values or image", f.Pos, f.Base, q.C)
			}
			for _, o := range f.Params {
				if o.C == k.Copy {
					q.Keep, q.Owner = o.GoType, o.Go
				}
			}
			if t := m.typeByGo(q.Keep); t == nil || t.Kind != tHandle || k.Free == "" {
				return fmt.Errorf("gen: %s: gen/bindings.json: %s: keeps: %s's owner %s is no handle parameter, or no \"free\" is named", f.Pos, f.Base, q.C, k.Copy)
			}
		}
	}
	return nil
}

var goReserved = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true, "defer": true,
	"else": true, "fallthrough": true, "for": true, "func": true, "go": true, "goto": true, "if": true,
	"import": true, "interface": true, "map": true, "package": true, "range": true, "return": true,
	"select": true, "struct": true, "switch": true, "type": true, "var": true, "error": true, "len": true,
	"string": true, "int": true, "uint": true, "byte": true, "rune": true, "cap": true, "new": true,
	"make": true, "copy": true, "close": true, "ret": true, "fn": true, "err": true, "ctx": true, "buf": true,
	"unsafe": true, "C": true, "p": true,
}

func goParamName(c string) string {
	if c == "" {
		return "arg"
	}
	r := []rune(c)
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

// isRaw reports a parameter the caller passes as unsafe.Pointer or uintptr.
func isRaw(q *param) bool {
	switch q.Role {
	case rIn, rPtr, rSlice:
		switch q.GoType {
		case "unsafe.Pointer", "uintptr", "[]unsafe.Pointer", "[]uintptr":
			return !q.callback
		}
	}
	return false
}

// hasFloat reports whether a struct or union has floating-point members.
func hasFloat(t cc.Type) bool {
	switch x := t.(type) {
	case *cc.StructType:
		for i := 0; i < x.NumFields(); i++ {
			if hasFloat(x.FieldByIndex(i).Type()) {
				return true
			}
		}
	case *cc.UnionType:
		for i := 0; i < x.NumFields(); i++ {
			if hasFloat(x.FieldByIndex(i).Type()) {
				return true
			}
		}
	case *cc.ArrayType:
		return hasFloat(x.Elem())
	}
	k := t.Kind()
	return k == cc.Float || k == cc.Double || k == cc.LongDouble
}

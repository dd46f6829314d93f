package main

// Model stage: parameter shapes and lifetimes, the one place that decides
// what a C parameter becomes in Go and how long the driver uses the memory
// it names.
//
// A parameter is typed by the first shape of the shapes table that takes
// it: the config's shapes first (a device address, page-locked host memory,
// a module image, a void* typed by another parameter, a string buffer, a
// fixed-size array, a by-value type), then what the C type and the header's
// doc make certain. Each shape is a small function.
//
// Every pointer then gets a lifetime (life): read during the call, written
// during the call (with what sizes it), or kept by the driver after the
// call (with what ends it). Kept memory is never Go memory: a kept pointer
// must have a type the collector does not scan (a HostPtr, a uintptr, a
// handle, a callback), or be copied into C memory that its keeper owns
// (cuda/driver/keep.go). The class comes from the shape, the doc rules
// below, and gen/bindings.json ("life", "keeps"); a pointer none of them
// classifies fails generation, naming it.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"modernc.org/cc/v4"
)

// The header's doc phrases the model reads. Every rule that reads a
// \param text uses these.
var (
	// docReturned: an output ("Returned device", "Pointer to ... in which
	// the priority is returned", "Returns the ...").
	docReturned = regexp.MustCompile(`(?i)^(returned|returns|output)\b|\b(is|are) (returned|written|stored)\b|\bin which to (return|store)\b|\bto (return|store)\b|\breturns? the\b|\bthe returned\b|\bfor the output\b|\bobject to create\b`)
	// docNames: text the driver points at ("the returned name", "a string").
	docNames = regexp.MustCompile(`(?i)\b(string|name)\b`)
	// docPlural: an array ("capability details of each operation").
	docPlural = regexp.MustCompile(`(?i)\b(each|arrays|list|all|every)\b|^array\b|\barray (of|containing)\b`)
	// docCounts: a doc that counts another parameter ("Size of \p dptrs").
	docCounts = regexp.MustCompile(`(?i)(size|number|count|length|rank) of`)
	// docInput: a pointer the driver only reads.
	docInput = regexp.MustCompile(`(?i)^(pointer to (the |a )?)?(input|source)\b|\bto (be )?(copy|copied|read) from\b|\bspecif(y|ies|ied|ication)\b|\bdescriptor\b|\bproperties\b|\b(parameters|params|arguments)\b|\bdescription\b`)
)

// docOut reports whether a doc says a non-const pointer parameter is a
// single result: "Returned …" or [out], and not an array.
func docOut(pd *parsedDoc, name string) bool {
	doc := pd.first[name]
	if docPlural.MatchString(doc) || counted(pd, name) {
		return false
	}
	return pd.dir[name] == "out" || docReturned.MatchString(doc)
}

// counted says whether another parameter's doc counts this one ("Size of
// \p dptrs"): then it may be an array.
func counted(pd *parsedDoc, name string) bool {
	named := regexp.MustCompile(`\\p\s+\*?` + regexp.QuoteMeta(name) + `\b`)
	for other, doc := range pd.params {
		if other != name && docCounts.MatchString(doc) && named.MatchString(doc) {
			return true
		}
	}
	return false
}

// cgoName is the cgo spelling of a C scalar type.
var cgoName = map[string]string{
	"int": "C.int", "unsigned int": "C.uint", "long": "C.long", "unsigned long": "C.ulong", "long long": "C.longlong",
	"unsigned long long": "C.ulonglong", "float": "C.float", "double": "C.double", "short": "C.short",
	"unsigned short": "C.ushort", "char": "C.char", "signed char": "C.schar", "unsigned char": "C.uchar", "_Bool": "C._Bool",
	"uintptr_t": "C.uintptr_t",
}

// shapeCtx is what the shapes read of one parameter.
type shapeCtx struct {
	b   *builder
	fc  funcConf
	t   cc.Type
	q   *param
	pd  *parsedDoc
	doc string // its \param text's first line
}

// elem is a pointer parameter's element type (nil for a non-pointer).
func (c *shapeCtx) elem() cc.Type {
	if c.t.Kind() != cc.Ptr {
		return nil
	}
	return c.t.(*cc.PointerType).Elem()
}

func isVoidPtr(t cc.Type) bool {
	return t.Kind() == cc.Ptr && t.(*cc.PointerType).Elem().Kind() == cc.Void
}

func isChar(t cc.Type) bool { return t.Kind() == cc.Char || t.Kind() == cc.SChar }

// returned: a non-const pointer the config or the doc makes a result.
func (c *shapeCtx) returned() bool {
	if slices.Contains(c.fc.Out, c.q.C) {
		return true
	}
	if slices.Contains(c.fc.In, c.q.C) || c.fc.Slices[c.q.C] != "" || c.fc.NotSlices[c.q.C] != "" ||
		c.fc.TwoCall != nil && (slices.Contains(c.fc.TwoCall.Arrays, c.q.C) || c.fc.TwoCall.Count == c.q.C) {
		return false // an array, or a count the config places
	}
	return docOut(c.pd, c.q.C)
}

// set fills the parameter's role, Go type and C types.
func (c *shapeCtx) set(role role, goType, cArg, cCall, cConv string) {
	c.q.Role, c.q.GoType, c.q.CArg, c.q.CCall, c.q.CConv = role, goType, cArg, cCall, cConv
}

// A shape types a parameter: ok when it took it; why when it cannot be
// bound.
type paramShape struct {
	name string
	try  func(c *shapeCtx) (ok bool, why string)
}

// shapes, in the order they are tried.
var shapes = []paramShape{
	{"address", shapeAddress},
	{"host", shapeHost},
	{"image", shapeImage},
	{"typed", shapeTyped},
	{"typedSize", shapeTypedSize},
	{"buffer", shapeBuffer},
	{"sized", shapeSized},
	{"array", shapeArray},
	{"override", shapeOverride},
	{"named", shapeNamed},
	{"scalar", shapeScalar},
	{"strings", shapeStrings},
	{"string", shapeString},
	{"outString", shapeOutString},
	{"pointerArray", shapePointerArray},
	{"void", shapeVoid},
	{"result", shapeResult},
	{"pointer", shapePointer},
}

// param types one parameter, or says why it cannot be bound.
func (m *builder) param(fc funcConf, prm *cc.Parameter, pd *parsedDoc) (*param, string) {
	q := &param{C: prm.Name(), Go: goParamName(prm.Name())}
	if q.C == "" {
		return nil, "it has no name"
	}
	c := &shapeCtx{b: m, fc: fc, t: prm.Type(), q: q, pd: pd, doc: pd.first[q.C]}
	if e := c.elem(); e != nil {
		q.constElem = e.Attributes().IsConst()
	}
	for _, s := range shapes {
		ok, why := s.try(c)
		if why != "" {
			return nil, why
		}
		if ok {
			q.shape = s.name
			return q, ""
		}
	}
	return nil, fmt.Sprintf("unsupported type %v", c.t)
}

// shapeAddress: the config's device address (a void* the driver maps).
func shapeAddress(c *shapeCtx) (bool, string) {
	if !slices.Contains(c.fc.Address, c.q.C) {
		return false, ""
	}
	if e := c.elem(); e != nil && isVoidPtr(e) && !e.Attributes().IsConst() {
		c.set(rOut, "DevicePtr", "void *", "void *", "") // void **: a device address returned
		return true, ""
	}
	if !isVoidPtr(c.t) {
		return false, "the config makes it a device address, but it is no void* or void**"
	}
	c.set(rIn, "DevicePtr", "uintptr_t", "void *", "C.uintptr_t")
	return true, ""
}

// shapeHost: the config's page-locked host memory: a HostPtr in, or a
// void** result.
func shapeHost(c *shapeCtx) (bool, string) {
	if !slices.Contains(c.fc.Host, c.q.C) {
		return false, ""
	}
	switch e := c.elem(); {
	case isVoidPtr(c.t):
		c.set(rIn, "HostPtr", "uintptr_t", "void *", "C.uintptr_t")
	case e != nil && isVoidPtr(e) && !e.Attributes().IsConst():
		c.set(rOut, "HostPtr", "void *", "void *", "")
	default:
		return false, "the config makes it host memory, but it is no void* or void**"
	}
	return true, ""
}

// shapeImage: the config's module image, a []byte checked before the call.
func shapeImage(c *shapeCtx) (bool, string) {
	if !slices.Contains(c.fc.Image, c.q.C) {
		return false, ""
	}
	if e := c.elem(); e == nil || e.Kind() != cc.Void || !e.Attributes().IsConst() {
		return false, "the config makes it a module image, but it is no const void*"
	}
	c.set(rImage, "[]byte", "void *", "void *", "")
	return true, ""
}

// shapeTyped: a void* whose type another parameter's value picks.
func shapeTyped(c *shapeCtx) (bool, string) {
	tc, ok := c.fc.Typed[c.q.C]
	if !ok {
		return false, ""
	}
	if !isVoidPtr(c.t) {
		return false, "the config types it by another parameter, but it is no void*"
	}
	c.set(rTyped, "any", "void *", "void *", "")
	for _, v := range tc.Types {
		if strings.HasSuffix(v, " value") {
			c.q.ByValue, c.q.CArg = true, "uintptr_t"
		}
	}
	return true, ""
}

// shapeTypedSize: the size of a typed parameter, which the wrapper sets.
func shapeTypedSize(c *shapeCtx) (bool, string) {
	for _, tc := range c.fc.Typed {
		if tc.Size != c.q.C {
			continue
		}
		c.set(rTypedSize, "", "unsigned long", "unsigned long", "")
		if c.t.Kind() == cc.Ptr {
			c.q.SizePtr, c.q.CArg, c.q.CCall = true, "void *", "void *"
		} else if ct, _ := scalar(c.t); ct != "unsigned long" {
			return false, "the config makes it a size, but it is no size_t"
		} else {
			c.q.CConv = "C.ulong"
		}
		return true, ""
	}
	return false, ""
}

// shapeSized: an output array whose length another function returns
// (sized.go resolves that function once every function is built).
func shapeSized(c *shapeCtx) (bool, string) {
	sc, ok := c.fc.Sized[c.q.C]
	if !ok {
		return false, ""
	}
	e := c.elem()
	if e == nil || e.Attributes().IsConst() {
		return false, "the config sizes it by " + sc.By + ", but it is no pointer the function writes"
	}
	_, gt := scalar(e)
	if e.Kind() == cc.Void {
		gt = "int8" // void *: bytes
	}
	switch {
	case gt == "":
		return false, "the config sizes it by " + sc.By + ", but its elements are no scalar"
	case sc.Text && gt != "byte" && gt != "int8":
		return false, "the config makes it text, but it is no char array"
	case sc.Text:
		gt = "string"
	case gt == "int8":
		gt = "[]byte"
	default:
		gt = "[]" + gt
	}
	c.set(rSized, gt, "void *", "void *", "")
	c.q.Text = sc.Text
	return true, ""
}

// shapeBuffer: a char buffer whose text is the result, and its length.
func shapeBuffer(c *shapeCtx) (bool, string) {
	b := c.fc.Buffer
	switch {
	case b == nil:
		return false, ""
	case c.q.C == b.Buf:
		c.set(rBuf, "string", "void *", "void *", "")
	case c.q.C == b.Len:
		c.set(rBufLen, "", "int", "int", "C.int")
	default:
		return false, ""
	}
	c.q.Size = b.Size
	return true, ""
}

// shapeArray: a fixed-size array the config states: a result ([N]T), or
// an input (*[N]T) where the config lists the pointer under "in".
func shapeArray(c *shapeCtx) (bool, string) {
	n, ok := c.fc.Arrays[c.q.C]
	e := c.elem()
	switch {
	case !ok:
		return false, ""
	case e == nil:
		return false, "the config's array is not a pointer"
	}
	g, err := c.b.goType(e, nil, "", "")
	if err != nil {
		return false, err.Error()
	}
	arr := fmt.Sprintf("[%d]%s", n, g)
	if slices.Contains(c.fc.In, c.q.C) || e.Attributes().IsConst() {
		c.set(rPtr, "*"+arr, "void *", "void *", "")
	} else {
		c.set(rOutArray, arr, "void *", "void *", "")
	}
	c.q.Size = n
	return true, ""
}

// shapeOverride: a by-value parameter the config gives a Go type.
func shapeOverride(c *shapeCtx) (bool, string) {
	over, ok := c.fc.Types[c.q.C]
	if !ok || c.b.typeByGo(over) == nil && cOfBase[over] == "" && over != "uintptr" {
		return false, "" // a type this version's header does not declare
	}
	ct, _ := scalar(c.t)
	if ct == "" {
		return false, fmt.Sprintf("the config's type %s needs an arithmetic C type, found %v", over, c.t)
	}
	c.set(rIn, over, ct, ct, cgoName[ct])
	return true, ""
}

// cOfBase is the C type of a named scalar's or enum's Go base type.
var cOfBase = map[string]string{"int32": "int", "uint32": "unsigned int", "int64": "long long", "uint64": "unsigned long long",
	"int16": "short", "uint16": "unsigned short", "byte": "char", "int8": "signed char", "uint8": "unsigned char", "float32": "float", "float64": "double"}

// shapeNamed: a named type by value: a handle, a callback, a scalar or
// enum, or a struct (passed as *T).
func shapeNamed(c *shapeCtx) (bool, string) {
	ty := c.b.named(c.t)
	if ty == nil {
		return false, ""
	}
	switch ty.Kind {
	case tHandle:
		c.set(rIn, ty.Go, "uintptr_t", "void *", "C.uintptr_t")
	case tCallback:
		c.set(rIn, ty.Go, "uintptr_t", "void *", "C.uintptr_t")
		c.q.callback = true
	case tScalar, tEnum:
		if ty.Kind == tEnum && ty.Size != 4 && ty.Size != 8 {
			return false, "an enum of unusual size"
		}
		ct := cOfBase[ty.Base]
		c.set(rIn, ty.Go, ct, ct, cgoName[ct])
	default: // a struct or union by value
		if ty.Size <= 16 && hasFloat(c.b.ct[ty]) {
			return false, "a small struct with floating-point members passed by value, whose ABI class the trampoline does not mirror"
		}
		c.set(rStruct, "*"+ty.Go, "const void *", fmt.Sprintf("cg_s%d_%d", ty.Size, ty.Align), "")
	}
	return true, ""
}

// shapeScalar: an arithmetic type by value.
func shapeScalar(c *shapeCtx) (bool, string) {
	if c.t.Kind() == cc.Ptr {
		return false, ""
	}
	ct, gt := scalar(c.t)
	if ct == "" {
		return false, fmt.Sprintf("unsupported type %v", c.t)
	}
	c.set(rIn, gt, ct, ct, cgoName[ct])
	return true, ""
}

// shapeString: const char *, a Go string.
func shapeString(c *shapeCtx) (bool, string) {
	e := c.elem()
	if e == nil || !isChar(e) || !e.Attributes().IsConst() {
		return false, ""
	}
	c.set(rString, "string", "const char *", "const char *", "")
	return true, ""
}

// shapeOutString: const char ** (or char **) the driver points at its own
// text: a string result.
func shapeOutString(c *shapeCtx) (bool, string) {
	e := c.elem()
	if e == nil || e.Kind() != cc.Ptr || e.Attributes().IsConst() || c.b.named(e) != nil {
		return false, ""
	}
	inner := e.(*cc.PointerType).Elem()
	if !isChar(inner) || !inner.Attributes().IsConst() || !(c.returned() || docNames.MatchString(c.doc)) {
		return false, ""
	}
	c.set(rOutString, "string", "void *", "void *", "")
	return true, ""
}

// shapeStrings: const char * const * (or const char ** that the config
// pairs with a count), an array of strings the function reads: a
// []string once paired with its count (the config's slices), passed as C
// strings in C memory made for the call.
func shapeStrings(c *shapeCtx) (bool, string) {
	e := c.elem()
	if e == nil || e.Kind() != cc.Ptr {
		return false, ""
	}
	if ce := e.(*cc.PointerType).Elem(); !isChar(ce) || !ce.Attributes().IsConst() {
		return false, ""
	}
	if c.fc.Slices[c.q.C] == "" {
		if e.Attributes().IsConst() {
			return false, "an array of strings: pair it with its count under \"slices\" in the config"
		}
		return false, "" // const char **: a string result (outString)
	}
	c.set(rPtr, "*string", "void *", "void *", "")
	return true, ""
}

// shapePointerArray: void **: a returned pointer, or an input array of
// pointers (kernelParams), a []unsafe.Pointer where nothing sizes it.
func shapePointerArray(c *shapeCtx) (bool, string) {
	e := c.elem()
	if e == nil || e.Kind() != cc.Ptr || e.Attributes().IsConst() || c.b.named(e) != nil || e.(*cc.PointerType).Elem().Kind() != cc.Void {
		return false, ""
	}
	if c.returned() {
		c.set(rOut, "unsafe.Pointer", "void *", "void *", "")
		return true, ""
	}
	c.set(rPtr, "unsafe.Pointer", "void *", "void *", "")
	c.q.typed = "*unsafe.Pointer"
	return true, ""
}

// shapeVoid: void *, raw.
func shapeVoid(c *shapeCtx) (bool, string) {
	if !isVoidPtr(c.t) {
		return false, ""
	}
	c.set(rPtr, "unsafe.Pointer", "void *", "void *", "")
	return true, ""
}

// shapeResult: a non-const pointer to a scalar, handle, enum or struct
// that the doc or the config says is returned: a single result.
func shapeResult(c *shapeCtx) (bool, string) {
	e := c.elem()
	if e == nil || e.Attributes().IsConst() || isChar(e) || e.Kind() == cc.Array || !c.returned() {
		return false, ""
	}
	g, err := c.b.goType(e, nil, "", "")
	if err != nil || strings.HasPrefix(g, "unsafe.Pointer") && e.Kind() != cc.Ptr {
		return false, ""
	}
	c.set(rOut, g, "void *", "void *", "")
	return true, ""
}

// shapePointer: any other pointer: *T, or unsafe.Pointer where Go cannot
// name T.
func shapePointer(c *shapeCtx) (bool, string) {
	e := c.elem()
	g, err := c.b.goType(e, nil, "", "")
	if err != nil || strings.HasPrefix(g, "unsafe.Pointer") && e.Kind() != cc.Ptr {
		c.set(rPtr, "unsafe.Pointer", "void *", "void *", "")
		return true, ""
	}
	c.set(rPtr, "*"+g, "void *", "void *", "")
	return true, ""
}

// lifeKind is how long the driver uses the memory a pointer names.
type lifeKind int

const (
	lifeRead        lifeKind = iota // read during the call
	lifeWritten                     // written during the call
	lifeReadWritten                 // read and written during the call
	lifeKept                        // used after the call returns: never Go memory
	lifeNotGo                       // C memory, a device address, a handle: never Go memory
)

var lifeNames = [...]string{"read during the call", "written during the call", "read and written during the call", "kept after the call", "never Go memory"}

// life is the lifetime of one pointer: a parameter, or a pointer field
// of what a parameter points to (Path "pCopy.srcHost").
type life struct {
	Path  string
	Kind  lifeKind
	Until string // kept: what ends it
	Size  string // what sizes it
	From  string // where the class comes from: the shape, the doc, the config
}

func (l life) String() string {
	s := l.Path + ": " + lifeNames[l.Kind]
	if l.Until != "" {
		s += " until " + l.Until
	}
	if l.Size != "" {
		s += " (" + l.Size + ")"
	}
	return s
}

// notGo reports Go types the collector does not scan, which hold C memory,
// device addresses, handles or values.
func (m *builder) notGo(goType string) bool {
	switch goType {
	case "HostPtr", "DevicePtr", "uintptr", "[]uintptr":
		return true
	}
	t := m.typeByGo(goType)
	return t != nil && (t.Kind == tHandle || t.Kind == tCallback)
}

func (m *builder) isCallback(goType string) bool {
	t := m.typeByGo(goType)
	return t != nil && t.Kind == tCallback
}

// lifetimes classifies every pointer parameter of f, and every pointer
// field of what one points to, or fails naming what it cannot classify.
func (m *builder) lifetimes(f *function, fc funcConf, pd *parsedDoc) error {
	for _, q := range f.Params {
		l, ok, err := m.paramLife(f, fc, pd, q)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if k, kept := fc.Keeps[q.C]; kept {
			l.Kind, l.Until, l.From = lifeKept, k.Until, "gen/bindings.json: "+fc.Why
			if k.Copy == "" && !m.notGo(q.GoType) {
				return fmt.Errorf("gen: %s: %s: %s is kept by the driver until %s but is %s, which may be Go memory: give it a C memory type or a copy (gen/bindings.json \"keeps\")", f.Pos, f.Symbol, q.C, k.Until, q.GoType)
			}
			if k.Copy != "" {
				l.Size += "; copied into C memory that " + k.Copy + " owns, freed by " + m.cfg.funcGoName(k.Free)
			}
		}
		q.Life = &l
		f.Lives = append(f.Lives, l)
		// The pointer fields of what it points to live as it does, but for
		// those typed as integers (C memory only, nonGoFields).
		if l.Kind == lifeNotGo {
			continue
		}
		elem := strings.TrimPrefix(strings.TrimPrefix(q.GoType, "[]"), "*")
		m.fieldLives(f, fc, q.C, elem, l, 0)
	}
	for path, k := range fc.Keeps {
		if strings.Contains(path, ".") && !slices.ContainsFunc(f.Lives, func(l life) bool { return l.Path == path }) {
			if _, ok := m.fieldAt(f, path); ok {
				return fmt.Errorf("gen: %s: %s: %s is kept until %s, but its type may hold Go memory: list it under nonGoFields", f.Pos, f.Symbol, path, k.Until)
			}
		}
	}
	return nil
}

// fieldAt finds the field a path names ("nodeParams.userData"), if any.
func (m *builder) fieldAt(f *function, path string) (*structField, bool) {
	parts := strings.Split(path, ".")
	var goType string
	for _, q := range f.Params {
		if q.C == parts[0] {
			goType = strings.TrimPrefix(strings.TrimPrefix(q.GoType, "[]"), "*")
		}
	}
	var fd *structField
	for _, p := range parts[1:] {
		t := m.typeByGo(goType)
		if t == nil {
			return nil, false
		}
		if fd = fieldByC(t, p); fd == nil {
			return nil, false
		}
		goType = fd.GoType
	}
	return fd, fd != nil
}

// fieldLives adds the lifetimes of the pointer fields of a value of goType.
func (m *builder) fieldLives(f *function, fc funcConf, path, goType string, parent life, depth int) {
	t := m.typeByGo(strings.TrimLeft(goType, "[]0123456789"))
	if t == nil || depth > 8 || (t.Kind != tStruct && t.Kind != tUnion) {
		return
	}
	for _, fd := range t.Fields {
		if fd.Padding || fd.C == "" && fd.First == "" {
			continue
		}
		p := path + "." + fd.C
		if fd.C == "" {
			p = path
		}
		switch {
		case m.goPointer(fd.GoType):
			l := life{Path: p, Kind: parent.Kind, From: "the field of " + parent.Path}
			if k, ok := fc.Keeps[p]; ok {
				l.Kind, l.Until = lifeKept, k.Until
			}
			f.Lives = append(f.Lives, l)
		case fd.Doc != "" && (fd.GoType == "HostPtr" || fd.GoType == "uintptr") || m.isCallback(fd.GoType):
			l := life{Path: p, Kind: lifeNotGo, From: "its type: " + fd.GoType}
			if k, ok := fc.Keeps[p]; ok {
				l.Kind, l.Until = lifeKept, k.Until
			}
			f.Lives = append(f.Lives, l)
		default:
			m.fieldLives(f, fc, p, fd.GoType, parent, depth+1)
		}
	}
}

// paramLife is a parameter's lifetime from its shape, the doc and the
// config; ok is false for a parameter that names no memory.
func (m *builder) paramLife(f *function, fc funcConf, pd *parsedDoc, q *param) (life, bool, error) {
	l := life{Path: q.C, From: "its shape (" + q.shape + ")"}
	switch q.Role {
	case rCount, rBufLen, rTypedSize, rOutCount:
		return l, false, nil
	case rIn:
		if q.GoType == "HostPtr" || q.GoType == "DevicePtr" || q.GoType == "uintptr" && q.CCall == "void *" || q.callback {
			l.Kind = lifeNotGo
			return l, true, nil
		}
		return l, false, nil // a value
	case rString:
		l.Kind, l.Size = lifeRead, "copied to C memory for the call"
	case rStruct:
		l.Kind, l.Size = lifeRead, "the struct"
	case rOut, rOutString:
		l.Kind, l.Size = lifeWritten, "one "+q.GoType
	case rOutArray:
		l.Kind, l.Size = lifeWritten, q.GoType
	case rBuf:
		l.Kind, l.Size = lifeWritten, fmt.Sprintf("a buffer of %d bytes", q.Size)
	case rOutSlice:
		l.Kind, l.Size = lifeWritten, "len: the count "+q.Count+" the driver gives"
	case rSized:
		l.Kind, l.Size = lifeWritten, "len: what "+fc.Sized[q.C].By+" returns, called first"
	case rImage:
		l.Kind, l.Size = lifeRead, "the image's own size, checked before the call"
	case rTyped:
		l.Kind, l.Size = lifeReadWritten, "the table's type for "+q.By.C
	case rSlice:
		l.Kind = lifeRead
		if q.Count != "" {
			l.Size = "len = " + q.Count
		} else {
			l.Size = "len: the caller's"
		}
		if d := fc.Life[q.C]; d != "" {
			k, err := lifeOf(d)
			if err != nil {
				return l, false, fmt.Errorf("gen: %s: gen/bindings.json: %s: life: %s: %v", f.Pos, f.Base, q.C, err)
			}
			l.Kind, l.From = k, "gen/bindings.json: "+fc.Why
		} else if pd.dir[q.C] == "out" || docReturned.MatchString(pd.first[q.C]) {
			l.Kind, l.From = lifeWritten, "the doc"
		}
	case rPtr:
		k, from, ok := m.ptrLife(fc, pd, q)
		if !ok {
			if _, raw := fc.Raw[q.C]; raw && q.GoType == "unsafe.Pointer" {
				k, from, ok = lifeReadWritten, "gen/bindings.json raw: "+fc.Raw[q.C], true
			}
		}
		if !ok {
			return l, false, fmt.Errorf("gen: %s: %s: cannot tell how long the driver uses %s (%s): its doc says neither [in] nor [out]; say under \"life\" in gen/bindings.json (read, written, read,written) with the reason", f.Pos, f.Symbol, q.C, q.GoType)
		}
		l.Kind, l.From, l.Size = k, from, "one "+strings.TrimPrefix(q.GoType, "*")
		if q.Size > 0 {
			l.Size = strings.TrimPrefix(q.GoType, "*")
		}
	default:
		return l, false, nil
	}
	return l, true, nil
}

// ptrLife reads a *T parameter's direction: the config, const, the doc's
// [in]/[out], its words.
func (m *builder) ptrLife(fc funcConf, pd *parsedDoc, q *param) (lifeKind, string, bool) {
	if d := fc.Life[q.C]; d != "" {
		k, err := lifeOf(d)
		return k, "gen/bindings.json: " + fc.Why, err == nil
	}
	if q.constElem {
		return lifeRead, "const", true
	}
	if slices.Contains(fc.In, q.C) {
		return lifeRead, "gen/bindings.json: " + fc.Why, true
	}
	switch pd.dir[q.C] {
	case "in":
		return lifeRead, "the doc: [in]", true
	case "out":
		return lifeWritten, "the doc: [out]", true
	case "in,out", "in, out":
		return lifeReadWritten, "the doc: [in,out]", true
	}
	doc := pd.first[q.C]
	switch {
	case docReturned.MatchString(doc):
		return lifeWritten, "the doc: " + doc, true
	case docInput.MatchString(doc):
		return lifeRead, "the doc: " + doc, true
	}
	return 0, "", false
}

// lifeOf reads a "life" entry of the config.
func lifeOf(s string) (lifeKind, error) {
	switch s {
	case "read":
		return lifeRead, nil
	case "written":
		return lifeWritten, nil
	case "read,written":
		return lifeReadWritten, nil
	}
	return 0, fmt.Errorf("%q: want read, written or read,written", s)
}

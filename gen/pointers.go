package main

// Model stage: Go pointers inside C layouts. A struct's pointer fields are
// typed, so the garbage collector sees them. A union or an opaque type is
// storage that its members are cast onto: its storage holds an
// unsafe.Pointer at every word where some member has a pointer, so that a
// pointer stored through a member stays visible to the collector. Wrappers
// pin, for the call, what the pointer words of a struct they pass point to:
// cgo refuses Go memory holding unpinned Go pointers.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"modernc.org/cc/v4"
)

// ptrWords returns the offsets of the Go pointer words in a value of a Go
// type the model writes, sorted.
func (m *builder) ptrWords(goType string) []int64 {
	set := map[int64]bool{}
	m.addPtrWords(goType, 0, set, 0)
	var r []int64
	for o := range set {
		r = append(r, o)
	}
	sort.Slice(r, func(i, j int) bool { return r[i] < r[j] })
	return r
}

func (m *builder) addPtrWords(goType string, off int64, set map[int64]bool, depth int) {
	if depth > 16 {
		return
	}
	switch {
	case m.goPointer(goType):
		set[off] = true
		return
	case strings.HasPrefix(goType, "["):
		i := strings.Index(goType, "]")
		n, err := strconv.ParseInt(goType[1:i], 10, 64)
		if err != nil {
			return
		}
		elem := goType[i+1:]
		size := m.goSize(elem)
		if size <= 0 {
			return
		}
		var inner []int64
		sub := map[int64]bool{}
		m.addPtrWords(elem, 0, sub, depth+1)
		for o := range sub {
			inner = append(inner, o)
		}
		for k := int64(0); k < n && len(inner) > 0; k++ {
			for _, o := range inner {
				set[off+k*size+o] = true
			}
		}
		return
	}
	t := m.typeByGo(goType)
	if t == nil {
		return
	}
	switch t.Kind {
	case tStruct, tUnion:
		for _, f := range t.Fields {
			m.addPtrWords(f.GoType, off+f.Offset, set, depth+1)
		}
	case tOpaque:
		cPtrWords(m.ct[t], off, set, depth+1)
	}
}

// cPtrWords finds the pointers of a C type bound as bytes: every pointer
// but a handle's (handles are integers to Go).
func cPtrWords(t cc.Type, off int64, set map[int64]bool, depth int) {
	if depth > 16 || t == nil {
		return
	}
	switch x := t.(type) {
	case *cc.PointerType:
		if e := x.Elem(); e.Kind() == cc.Struct || e.Kind() == cc.Union {
			if len(chain(t)) > 0 {
				return // a handle
			}
		}
		set[off] = true
	case *cc.ArrayType:
		for k := int64(0); k < x.Len(); k++ {
			cPtrWords(x.Elem(), off+k*x.Elem().Size(), set, depth+1)
		}
	case *cc.StructType:
		for i := 0; i < x.NumFields(); i++ {
			if f := x.FieldByIndex(i); !f.IsBitfield() {
				cPtrWords(f.Type(), off+f.Offset(), set, depth+1)
			}
		}
	case *cc.UnionType:
		for i := 0; i < x.NumFields(); i++ {
			cPtrWords(x.FieldByIndex(i).Type(), off, set, depth+1)
		}
	}
}

func (m *builder) typeByGo(goType string) *namedType {
	if t, ok := m.byGo[goType]; ok || len(m.byGo) == len(m.Types) {
		return t
	}
	// Types were added since (the #define flags types): index them all.
	m.byGo = map[string]*namedType{}
	for _, t := range m.Types {
		m.byGo[t.Go] = t
	}
	return m.byGo[goType]
}

// goSize is the size of a Go type the model writes, or -1.
func (m *builder) goSize(goType string) int64 {
	switch goType {
	case "byte", "int8", "uint8", "bool":
		return 1
	case "int16", "uint16":
		return 2
	case "int32", "uint32", "float32":
		return 4
	case "int64", "uint64", "float64", "uintptr", "unsafe.Pointer":
		return 8
	}
	if strings.HasPrefix(goType, "*") {
		return 8
	}
	if strings.HasPrefix(goType, "[") {
		i := strings.Index(goType, "]")
		n, err := strconv.ParseInt(goType[1:i], 10, 64)
		if e := m.goSize(goType[i+1:]); err == nil && e > 0 {
			return n * e
		}
		return -1
	}
	if t := m.typeByGo(goType); t != nil {
		if t.Size > 0 {
			return t.Size
		}
		switch t.Base {
		case "int32", "uint32":
			return 4
		case "int64", "uint64", "uintptr":
			return 8
		}
	}
	return -1
}

// nonGoFields types as integers the pointer fields the collector must not
// scan: those gen/bindings.json lists (nonGoFields: C memory only), and those that share a word of a union with another
// member's integer, which a pointer word would show the collector as a
// pointer. A union member that only pads (reserved1, pad) gets no
// accessor, so nothing is written through it.
func (m *builder) nonGoFields() error {
	for key, kf := range m.cfg.NonGoFields {
		tname, fname, _ := strings.Cut(key, ".")
		ty := m.byName[tname]
		if ty == nil {
			continue // not in this version
		}
		f := fieldByC(ty, fname)
		if f == nil {
			return fmt.Errorf("gen: %s: gen/bindings.json: nonGoFields: %s has no field %s", ty.Pos, tname, fname)
		}
		if !m.goPointer(f.GoType) {
			return fmt.Errorf("gen: %s: gen/bindings.json: nonGoFields: %s.%s is %s, no pointer", ty.Pos, tname, fname, f.GoType)
		}
		f.GoType, f.Doc = kf.Go, "C memory only, never Go memory: "+kf.Why
	}
	for _, u := range m.Types {
		if u.Kind != tUnion {
			continue
		}
		for _, f := range u.Fields {
			f.Padding = isPadding(f) && len(m.ptrWords(f.GoType)) == 0
		}
		ptr, data := map[int64]bool{}, map[int64]bool{}
		for _, f := range u.Fields {
			if !f.Padding {
				m.words(f.GoType, 0, ptr, data, 0)
			}
		}
		for w := range ptr {
			if !data[w] {
				continue
			}
			for _, f := range u.Fields {
				switch {
				case f.Padding:
				case m.goPointer(f.GoType) && w == 0: // a member that is itself a pointer
					f.GoType, f.Doc = "uintptr", hiddenDoc(u.Go)
				default:
					m.hideAt(f.GoType, w, u.Go)
				}
			}
		}
	}
	return nil
}

// isPadding: a member named as padding (reserved, pad).
func isPadding(f *structField) bool {
	n := strings.ToLower(strings.TrimLeft(f.C, "_"))
	return strings.HasPrefix(n, "reserved") || strings.HasPrefix(n, "pad")
}

func fieldByC(t *namedType, c string) *structField {
	for _, f := range t.Fields {
		if f.C == c {
			return f
		}
	}
	return nil
}

// goPointer reports a Go type the collector scans as a pointer.
func (m *builder) goPointer(goType string) bool {
	return goType == "unsafe.Pointer" || strings.HasPrefix(goType, "*")
}

// words marks, in a value of goType at off, the 8-byte words that hold a
// Go pointer (ptr) and those any byte of which holds other data (data).
func (m *builder) words(goType string, off int64, ptr, data map[int64]bool, depth int) {
	if depth > 16 {
		return
	}
	if m.goPointer(goType) {
		ptr[off] = true
		return
	}
	if strings.HasPrefix(goType, "[") {
		i := strings.Index(goType, "]")
		n, _ := strconv.ParseInt(goType[1:i], 10, 64)
		elem := goType[i+1:]
		size := m.goSize(elem)
		for k := int64(0); k < n && size > 0; k++ {
			m.words(elem, off+k*size, ptr, data, depth+1)
		}
		return
	}
	if t := m.typeByGo(goType); t != nil && (t.Kind == tStruct || t.Kind == tUnion) {
		for _, f := range t.Fields {
			if !f.Padding {
				m.words(f.GoType, off+f.Offset, ptr, data, depth+1)
			}
		}
		return
	}
	if t := m.typeByGo(goType); t != nil && t.Kind == tOpaque {
		set := map[int64]bool{}
		cPtrWords(m.ct[t], off, set, depth+1)
		for w := off &^ 7; w < off+t.Size; w += 8 {
			if set[w] {
				ptr[w] = true
			} else {
				data[w] = true
			}
		}
		return
	}
	size := m.goSize(goType)
	for b := off; b < off+max(size, 1); b++ {
		data[b&^7] = true
	}
}

// hideAt retypes as uintptr the pointer field at offset w of a value of
// goType (in place: the field's own type changes wherever it is used).
func (m *builder) hideAt(goType string, w int64, union string) {
	if strings.HasPrefix(goType, "[") {
		i := strings.Index(goType, "]")
		n, _ := strconv.ParseInt(goType[1:i], 10, 64)
		elem := goType[i+1:]
		if size := m.goSize(elem); size > 0 && w >= 0 && w < n*size {
			m.hideAt(elem, w%size, union)
		}
		return
	}
	t := m.typeByGo(goType)
	if t == nil || (t.Kind != tStruct && t.Kind != tUnion) {
		return
	}
	for _, f := range t.Fields {
		if f.Padding || w < f.Offset || w >= f.Offset+max(f.Size, 8) {
			continue
		}
		if m.goPointer(f.GoType) && f.Offset == w {
			f.GoType, f.Doc = "uintptr", hiddenDoc(union)
			continue
		}
		m.hideAt(f.GoType, w-f.Offset, union)
	}
}

// hiddenDoc says why a pointer field is an integer to Go.
func hiddenDoc(union string) string {
	return fmt.Sprintf("An integer to Go: another member of %s holds an integer in this word, so the collector cannot scan it as a pointer. C memory (or a device address) only, never Go memory.", union)
}

// dataWords fills each member's words that hold integers, for the test
// that fills them with values that look like heap addresses.
func (m *builder) dataWords(u *namedType) {
	for _, f := range u.Fields {
		if f.Padding {
			continue
		}
		ptr, data := map[int64]bool{}, map[int64]bool{}
		m.words(f.GoType, 0, ptr, data, 0)
		f.DataWords = nil
		for w := range data {
			if w+8 <= u.Size && !ptr[w] {
				f.DataWords = append(f.DataWords, w)
			}
		}
		sort.Slice(f.DataWords, func(i, j int) bool { return f.DataWords[i] < f.DataWords[j] })
	}
}

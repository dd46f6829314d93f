package main

// Go pointers inside C layouts. A struct's pointer fields are typed, so the
// garbage collector sees them. A union or an opaque type is storage that
// its members are cast onto: its storage holds an unsafe.Pointer at every
// word where some member has a pointer, so that a pointer stored through
// a member stays visible to the collector. Wrappers pin, for the call,
// what the pointer words of a struct they pass point to: cgo refuses Go
// memory holding unpinned Go pointers.

import (
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
	case goType == "unsafe.Pointer" || strings.HasPrefix(goType, "*"):
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
	case tCallback:
		set[off] = true
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

func (m *builder) typeByGo(goType string) *Type {
	if m.byGo == nil {
		m.byGo = map[string]*Type{}
		for _, t := range m.Types {
			m.byGo[t.Go] = t
		}
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

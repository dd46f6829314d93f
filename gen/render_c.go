package main

// Render stage, C: the trampolines, through templates/trampolines.c.tmpl.
// Functions whose C parameter lists are identical share one trampoline,
// named by that list (cg_hh: two handles): it makes the given context
// current (0: leaves the thread's as it is) and calls the resolved entry
// point through its pointer, cast to the header's signature (identical
// parameter lists, identical ABI). Whether the trampoline is noescape and
// nocallback is part of its key: one that may be handed a pointer the
// driver keeps, or a function it calls back during the call, is neither,
// and is named with the suffix _cb. One of a function that may run a
// compiler (config.Compilers) blocks the thread's asynchronous signals for
// the call and is named with the suffix _nosig. No CUDA header is
// included: by-value structs travel as byte arrays of their size and
// alignment (the model refuses small ones with floating-point members,
// whose ABI class differs).

import (
	"fmt"
	"reflect"
	"sort"
)

// cCodes names each C parameter shape (the type the Go side passes, the
// type the entry point takes) in trampoline names.
var cCodes = map[[2]string]string{
	{"int", "int"}:                               "i",
	{"unsigned int", "unsigned int"}:             "u",
	{"unsigned long", "unsigned long"}:           "l",
	{"unsigned long long", "unsigned long long"}: "q",
	{"unsigned short", "unsigned short"}:         "t",
	{"unsigned char", "unsigned char"}:           "c",
	{"float", "float"}:                           "f",
	{"void *", "void *"}:                         "p",
	{"uintptr_t", "void *"}:                      "h",
	{"const char *", "const char *"}:             "s",
	{"uintptr_t *", "void *"}:                    "w",
}

// trampoline is one shared C trampoline.
type trampoline struct {
	Name   string
	Params []cParam
	Safe   bool // noescape and nocallback
	Quiet  bool // asynchronous signals blocked during the call
}

// cParam is one parameter of a trampoline.
type cParam struct {
	CArg   string // the type the Go side passes
	CCall  string // the type the entry point takes
	Struct bool   // a by-value struct, passed by pointer (NULL: the call is refused)
	Cast   bool   // an integer passed as void *
}

// cStruct is the stand-in for a by-value struct: its size and alignment.
type cStruct struct {
	Name        string
	Size, Align int
}

// structOf is the by-value struct a parameter's C type stands for.
func structOf(f *function, q *param) (cStruct, error) {
	s := cStruct{Name: q.CCall}
	if _, err := fmt.Sscanf(q.CCall, "cg_s%d_%d", &s.Size, &s.Align); err != nil {
		return s, fmt.Errorf("gen: %s: no trampoline for the by-value struct %s", f.Symbol, q.CCall)
	}
	return s, nil
}

// trampolineOf returns the shared trampoline that f calls.
func trampolineOf(f *function) (trampoline, error) {
	t := trampoline{Safe: f.NoEscape, Quiet: f.Quiet}
	name := ""
	for _, q := range f.Params {
		p := cParam{CArg: q.CArg, CCall: q.CCall, Struct: q.Role == rStruct, Cast: q.CArg == "uintptr_t" || q.CArg == "uintptr_t *"}
		t.Params = append(t.Params, p)
		if p.Struct {
			s, err := structOf(f, q)
			if err != nil {
				return trampoline{}, err
			}
			name += fmt.Sprintf("b%da%d", s.Size, s.Align)
			continue
		}
		c, ok := cCodes[[2]string{q.CArg, q.CCall}]
		if !ok {
			return trampoline{}, fmt.Errorf("gen: %s: no trampoline code for the C parameter %s passed as %s", f.Symbol, q.CCall, q.CArg)
		}
		name += c
	}
	if len(f.Params) == 0 {
		name = "v"
	}
	t.Name = "cg_" + name
	if !f.NoEscape {
		t.Name += "_cb"
	}
	if f.Quiet {
		t.Name += "_nosig"
	}
	return t, nil
}

// trampolines renders the version's cgo preamble: the by-value struct
// stand-ins and each distinct trampoline once.
func (e *renderer) trampolines(m *model) (string, error) {
	structs := map[string]cStruct{}
	seen := map[string]trampoline{}
	var ts []trampoline
	for _, f := range m.Funcs {
		for _, q := range f.Params {
			if q.Role == rStruct {
				s, err := structOf(f, q)
				if err != nil {
					return "", err
				}
				structs[s.Name] = s
			}
		}
		t, err := trampolineOf(f)
		if err != nil {
			return "", err
		}
		if old, ok := seen[t.Name]; ok {
			if !reflect.DeepEqual(old, t) {
				return "", fmt.Errorf("gen: %s: the trampoline name %s stands for two C signatures", f.Symbol, t.Name)
			}
			continue
		}
		seen[t.Name] = t
		ts = append(ts, t)
	}
	quiet := false
	for _, t := range ts {
		quiet = quiet || t.Quiet
	}
	var ss []cStruct
	for _, s := range structs {
		ss = append(ss, s)
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].Name < ss[j].Name })
	return e.render("trampolines.c.tmpl", map[string]any{
		"Version": m.Version, "CUDAVersion": m.CUDAVersion, "Structs": ss, "Trampolines": ts, "Quiet": quiet, "Pin": m.PinName, "Library": m.Lib != nil,
	})
}

package main

// Stage 4: emitting C. Functions whose C parameter lists are identical
// share one trampoline, named by that list (cg_hh: two handles): it makes
// the given context current (0: leaves the thread's as it is) and calls
// the resolved entry point through its pointer, cast to the header's
// signature (identical parameter lists, identical ABI). Whether the
// trampoline is noescape and nocallback is part of its key: one that may
// be handed a pointer the driver keeps, or a function it calls back during
// the call, is neither, and is named with the suffix _cb. No CUDA header
// is included: by-value structs travel as byte arrays of their size and
// alignment (the model refuses small ones with floating-point members,
// whose ABI class differs).

import (
	"fmt"
	"sort"
	"strings"
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
	Name string
	Def  string // the C definition, without the name
	Safe bool   // noescape and nocallback
}

// trampolineOf returns the shared trampoline that f calls.
func trampolineOf(f *Func) (trampoline, error) {
	params := []string{"uintptr_t ctx", "uintptr_t fn"}
	var types, args, checks []string
	name := ""
	for i, q := range f.Params {
		a := fmt.Sprintf("a%d", i)
		params = append(params, q.CArg+" "+a)
		types = append(types, q.CCall)
		switch {
		case q.Role == rStruct:
			var size, align int
			if _, err := fmt.Sscanf(q.CCall, "cg_s%d_%d", &size, &align); err != nil {
				return trampoline{}, fmt.Errorf("gen: %s: no trampoline for the by-value struct %s", f.Symbol, q.CCall)
			}
			name += fmt.Sprintf("b%da%d", size, align)
			checks = append(checks, fmt.Sprintf("if (!%s) return 1; ", a))
			args = append(args, fmt.Sprintf("*(const %s *)%s", q.CCall, a))
			continue
		case q.CArg == "uintptr_t" || q.CArg == "uintptr_t *":
			args = append(args, "(void *)"+a)
		default:
			args = append(args, a)
		}
		c, ok := cCodes[[2]string{q.CArg, q.CCall}]
		if !ok {
			return trampoline{}, fmt.Errorf("gen: %s: no trampoline code for the C parameter %s passed as %s", f.Symbol, q.CCall, q.CArg)
		}
		name += c
	}
	if len(types) == 0 {
		types, name = []string{"void"}, "v"
	}
	name = "cg_" + name
	if !f.NoEscape {
		name += "_cb"
	}
	def := fmt.Sprintf("(%s) { CG_ENTER(fn, ctx); %sreturn ((int (*)(%s))fn)(%s); }",
		strings.Join(params, ", "), strings.Join(checks, ""), strings.Join(types, ", "), strings.Join(args, ", "))
	return trampoline{Name: name, Def: def, Safe: f.NoEscape}, nil
}

func (e *Emitter) trampolines(m *Model) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "// Trampolines for CUDA %s (CUDA_VERSION %d), shared by the functions\n", m.Version, m.CUDAVersion)
	b.WriteString("// with their C parameter list: i int, u unsigned int, l unsigned long,\n")
	b.WriteString("// q unsigned long long, t unsigned short, c unsigned char, f float,\n")
	b.WriteString("// p void *, h a handle (void *), s const char *, w an array of pointers\n")
	b.WriteString("// passed as integers (void **), bNaM a by-value struct of N bytes aligned\n")
	b.WriteString("// to M; v none. _cb: neither noescape nor nocallback.\n")
	b.WriteString("#include <stdint.h>\n#include <stdlib.h>\n\n")
	b.WriteString("extern int cg_make_current(uintptr_t ctx);\n")
	b.WriteString("// CG_ENTER returns -1 (no call: Go has the error) for an unresolved entry\n")
	b.WriteString("// point, and makes ctx current unless it is 0.\n")
	b.WriteString("#define CG_ENTER(fn, ctx) do { if (!(fn)) return -1; if (ctx) { int r_ = cg_make_current(ctx); if (r_) return r_; } } while (0)\n")
	structs := map[string]string{}
	for _, f := range m.Funcs {
		for _, q := range f.Params {
			if q.Role == rStruct {
				var size, align int
				fmt.Sscanf(q.CCall, "cg_s%d_%d", &size, &align)
				structs[q.CCall] = fmt.Sprintf("typedef struct { _Alignas(%d) unsigned char b[%d]; } %s;", align, size, q.CCall)
			}
		}
	}
	var names []string
	for n := range structs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString(structs[n] + "\n")
	}
	seen := map[string]trampoline{}
	for _, f := range m.Funcs {
		t, err := trampolineOf(f)
		if err != nil {
			return "", err
		}
		if old, ok := seen[t.Name]; ok {
			if old != t {
				return "", fmt.Errorf("gen: %s: the trampoline name %s stands for two C signatures", f.Symbol, t.Name)
			}
			continue
		}
		seen[t.Name] = t
		fmt.Fprintf(&b, "static int %s%s\n", t.Name, t.Def)
		if t.Safe {
			fmt.Fprintf(&b, "#cgo noescape %s\n#cgo nocallback %s\n", t.Name, t.Name)
		}
	}
	return b.String(), nil
}

package main

// Stage 4: emitting C. One trampoline per function: it makes the given
// context current (0: leaves the thread's as it is) and calls the resolved
// entry point through its pointer with the header's signature. No CUDA
// header is included: by-value structs travel as byte arrays of their size
// and alignment (the model refuses small ones with floating-point members,
// whose ABI class differs).

import (
	"fmt"
	"sort"
	"strings"
)

func (e *Emitter) trampolines(m *Model) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// Trampolines for CUDA %s (CUDA_VERSION %d).\n", m.Version, m.CUDAVersion)
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
	for _, f := range m.Funcs {
		params := []string{"uintptr_t ctx", "uintptr_t fn"}
		var types, args, checks []string
		for i, q := range f.Params {
			a := fmt.Sprintf("a%d", i)
			params = append(params, q.CArg+" "+a)
			types = append(types, q.CCall)
			switch {
			case q.Role == rStruct:
				checks = append(checks, fmt.Sprintf("if (!%s) return 1; ", a))
				args = append(args, fmt.Sprintf("*(const %s *)%s", q.CCall, a))
			case q.CArg == "uintptr_t":
				args = append(args, "(void *)"+a)
			default:
				args = append(args, a)
			}
		}
		if len(types) == 0 {
			types = []string{"void"}
		}
		fmt.Fprintf(&b, "static int cg_%s(%s) { CG_ENTER(fn, ctx); %sreturn ((int (*)(%s))fn)(%s); }\n",
			f.GoName, strings.Join(params, ", "), strings.Join(checks, ""), strings.Join(types, ", "), strings.Join(args, ", "))
		if f.NoEscape {
			fmt.Fprintf(&b, "#cgo noescape cg_%s\n#cgo nocallback cg_%s\n", f.GoName, f.GoName)
		}
	}
	return b.String()
}

package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/headers"
	"github.com/cudagen/cudagen/internal/cparams"
)

// TestABIVersionsMatchTypedefs checks every bound function of every pinned
// version against cudaTypedefs.h read by other means than the generator's
// (regular expressions over the text, not cc): the PFN typedef of its name
// at its ABI version has its parameter list (count, and pointer depth of
// each), and where several versions have that list the entry point's own
// number picks (cuX the first, cuX_v2 the second).
func TestABIVersionsMatchTypedefs(t *testing.T) {
	eachBuilder(t, nil, func(t *testing.T, e *headers.Entry, dir string, b *builder) {
		m := b.model
		shapes := pfnShapes(readFile(t, dir, "cudaTypedefs.h"))
		checked := 0
		for _, f := range m.Funcs {
			proto := prototypeAt(t, b.src, f)
			want := shape(proto)
			plain := strings.TrimSuffix(strings.TrimSuffix(f.Symbol, "_ptsz"), "_ptds")
			suffix := strings.TrimPrefix(f.Symbol, plain)
			got, ok := shapes[f.Base+suffix][f.ABI]
			if !ok {
				t.Errorf("%s: resolved at %d, but cudaTypedefs.h has no PFN_%s_v%d%s", f.Symbol, f.ABI, f.Base, f.ABI, suffix)
				continue
			}
			if got != want {
				t.Errorf("%s (%s): declared as (%s), but PFN_%s_v%d%s is (%s)", f.GoName, f.Symbol, want, f.Base, f.ABI, suffix, got)
				continue
			}
			var same []int
			for v, s := range shapes[f.Base+suffix] {
				if s == want {
					same = append(same, v)
				}
			}
			if len(same) > 1 {
				all := sortedKeys(shapes[f.Base+suffix])
				ordinal := 1
				if mm := versionSuffix.FindStringSubmatch(plain); mm != nil {
					ordinal, _ = strconv.Atoi(mm[1])
				}
				if ordinal > len(all) || all[ordinal-1] != f.ABI {
					t.Errorf("%s: versions %v share its parameter list; as entry point %d of %v it is %d, not %d", f.Symbol, same, ordinal, all, all[min(ordinal, len(all))-1], f.ABI)
				}
			}
			checked++
		}
		if checked != len(m.Funcs) || checked < 300 {
			t.Errorf("%d of %d functions checked", checked, len(m.Funcs))
		}
		// The picks that were once wrong.
		must := func(goName string, abi int) {
			t.Helper()
			for _, f := range m.Funcs {
				if f.GoName == goName {
					if f.ABI != abi {
						t.Errorf("%s (%s) at %d, want %d", goName, f.Symbol, f.ABI, abi)
					}
					return
				}
			}
			t.Errorf("%s is not bound", goName)
		}
		if e.CUDAVersion < 13000 {
			must("CtxCreate", 3020)
			must("CtxCreateV3", 11040)
			must("DeviceGetUUID", 9020)
			must("DeviceGetUUIDV2", 11040)
		}
		if e.CUDAVersion >= 12030 && e.CUDAVersion < 13000 {
			for _, n := range []string{"GraphGetEdges", "GraphNodeGetDependencies", "GraphNodeGetDependentNodes", "GraphAddDependencies", "GraphRemoveDependencies"} {
				must(n, 10000)
				must(n+"V2", 12030)
			}
			must("GraphAddNode", 12020)
			must("GraphAddNodeV2", 12030)
		}
	})
}

var (
	pfnShapeRe = regexp.MustCompile(`typedef\s+CUresult\s*\(\s*CUDAAPI\s*\*\s*PFN_(cu\w+?)_v([0-9]+)(_pt[sd][sz])?\s*\)\s*\(([^;]*)\)\s*;`)
	pfnDefRe   = regexp.MustCompile(`(?m)^\s*#\s*define\s+PFN_(cu\w+)\s+PFN_(cu\w+?)_v([0-9]+)\s*$`)
	pfnBareRe  = regexp.MustCompile(`typedef\s+CUresult\s*\(\s*CUDAAPI\s*\*\s*PFN_(cu\w+)\s*\)\s*\(([^;]*)\)\s*;`)
)

// pfnShapes maps name+suffix → ABI version → shape of its parameter list.
func pfnShapes(text []byte) map[string]map[int]string {
	r := map[string]map[int]string{}
	add := func(name string, v int, params string) {
		if r[name] == nil {
			r[name] = map[int]string{}
		}
		r[name][v] = shape(params)
	}
	for _, mm := range pfnShapeRe.FindAllSubmatch(text, -1) {
		v, _ := strconv.Atoi(string(mm[2]))
		add(string(mm[1])+string(mm[3]), v, string(mm[4]))
	}
	// "typedef ... PFN_cuX(...)" with "#define PFN_cuX PFN_cuX_vN".
	defs := map[string]int{}
	for _, mm := range pfnDefRe.FindAllSubmatch(text, -1) {
		if string(mm[1]) == string(mm[2]) {
			defs[string(mm[1])], _ = strconv.Atoi(string(mm[3]))
		}
	}
	for _, mm := range pfnBareRe.FindAllSubmatch(text, -1) {
		if v, ok := defs[string(mm[1])]; ok {
			add(string(mm[1]), v, string(mm[2]))
		}
	}
	return r
}

// shape is a parameter list's arity and each parameter's pointer depth:
// "0,1,0" for (CUcontext *pctx, ...) → "1,0,0".
func shape(params string) string {
	var r []string
	for _, p := range cparams.Split(params) {
		if strings.Contains(p, "(") { // a function pointer
			r = append(r, "fn")
			continue
		}
		r = append(r, strconv.Itoa(strings.Count(p, "*")+strings.Count(p, "[")))
	}
	return strings.Join(r, ",")
}

// prototypeAt is the parameter list of f's prototype, read from the text.
func prototypeAt(t *testing.T, src *source, f *function) string {
	t.Helper()
	parts := strings.Split(f.Pos, ":")
	if len(parts) < 2 {
		t.Fatalf("%s: position %q", f.Symbol, f.Pos)
	}
	line, _ := strconv.Atoi(parts[len(parts)-2])
	lines := src.lines(strings.Join(parts[:len(parts)-2], ":"))
	text := strings.Join(lines[max(line-3, 0):min(line+30, len(lines))], "\n")
	name := regexp.MustCompile(`\b(cu\w+)\s*\(`)
	loc := name.FindStringIndex(text)
	if loc == nil {
		t.Fatalf("%s: no prototype at %s", f.Symbol, f.Pos)
	}
	rest := text[loc[1]:]
	depth := 1
	for k, c := range rest {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return rest[:k]
			}
		}
	}
	t.Fatalf("%s: unterminated prototype at %s", f.Symbol, f.Pos)
	return ""
}

func sortedKeys(m map[int]string) []int {
	var r []int
	for k := range m {
		r = append(r, k)
	}
	for i := 1; i < len(r); i++ {
		for j := i; j > 0 && r[j] < r[j-1]; j-- {
			r[j], r[j-1] = r[j-1], r[j]
		}
	}
	return r
}

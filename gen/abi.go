package main

// Model stage: the ABI version of each entry point. cuGetProcAddress(name,
// version) hands out the entry point of name whose ABI version is the
// newest at or below version; cudaTypedefs.h declares each one's signature
// as PFN_name_vVERSION (and _ptsz/_ptds for the per-thread ones). A
// declared function is resolved at the version whose typedef has exactly
// its parameter list. Where several do (cuDeviceGetUuid and
// cuDeviceGetUuid_v2 share one), the entry point's own number picks: cuX is
// the first ABI version of cuX, cuX_v2 the second, counting those the
// preprocessor skipped (the legacy ones). Nothing else is guessed: no
// match, or a tie the number does not break, fails generation naming the
// function.

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"modernc.org/cc/v4"
)

// abiVersions is every ABI version cudaTypedefs.h's text names for a base
// name, per-thread ones apart, oldest first.
type abiVersions struct{ plain, per []int }

var pfnTextRe = regexp.MustCompile(`\bPFN_(cu\w+?)_v([0-9]+)(_pt[sd][sz])?\b`)

// abiTable reads the ABI versions of every base name from the text of
// cudaTypedefs.h, so that typedefs in blocks the preprocessor skipped
// (the legacy entry points) count too.
func abiTable(typedefText []byte) map[string]*abiVersions {
	t := map[string]*abiVersions{}
	for _, mm := range pfnTextRe.FindAllSubmatch(typedefText, -1) {
		n, _ := strconv.Atoi(string(mm[2]))
		if n < 1000 {
			continue // "#define PFN_cuX_v2 ...": a name, not an ABI version
		}
		base := string(mm[1])
		v := t[base]
		if v == nil {
			v = &abiVersions{}
			t[base] = v
		}
		if len(mm[3]) == 0 {
			v.plain = addSorted(v.plain, n)
		} else {
			v.per = addSorted(v.per, n)
		}
	}
	return t
}

// addSorted inserts v into the sorted s, where s does not have it.
func addSorted[T cmp.Ordered](s []T, v T) []T {
	i, found := slices.BinarySearch(s, v)
	if found {
		return s
	}
	return slices.Insert(s, i, v)
}

// pickABI returns the ABI version a declared entry point is resolved at,
// or why it cannot be bound (no typedef names its base at all).
func (m *builder) pickABI(d *cc.Declarator, sym, base string, vs *abiVersions) (int, string, error) {
	plainSym := strings.TrimSuffix(strings.TrimSuffix(sym, "_ptsz"), "_ptds")
	per := plainSym != sym
	suffix := strings.TrimPrefix(sym, plainSym)
	var all []int
	if vs != nil {
		all = vs.plain
		if per {
			all = vs.per
		}
	}
	if len(all) == 0 {
		return 0, fmt.Sprintf("cudaTypedefs.h declares no ABI version for it (no PFN_%s_vN%s)", base, suffix), nil
	}
	ordinal := 1
	if mm := versionSuffix.FindStringSubmatch(plainSym); mm != nil {
		ordinal, _ = strconv.Atoi(mm[1])
	}
	want := m.canonParams(d.Type().(*cc.FunctionType))
	var cands []int
	for _, n := range all {
		pd := m.src.pfns[fmt.Sprintf("PFN_%s_v%d%s", base, n, suffix)]
		if pd == nil {
			continue // in a block the preprocessor skipped
		}
		pt, ok := pd.Type().(*cc.PointerType)
		if !ok {
			continue
		}
		ft, ok := pt.Elem().(*cc.FunctionType)
		if !ok {
			continue
		}
		if slices.Equal(m.canonParams(ft), want) {
			cands = append(cands, n)
		}
	}
	switch {
	case len(cands) == 1:
		return cands[0], "", nil
	case len(cands) == 0:
		return 0, "", fmt.Errorf("gen: %s: %s(%s): no PFN_%s_vN%s typedef in cudaTypedefs.h has this parameter list (it names ABI versions %s): the two headers disagree, or they are not of one toolkit",
			d.Position(), sym, strings.Join(want, ", "), base, suffix, joinInts(all))
	case ordinal <= len(all) && slices.Contains(cands, all[ordinal-1]):
		return all[ordinal-1], "", nil
	}
	return 0, "", fmt.Errorf("gen: %s: %s: the PFN_%s typedefs of ABI versions %s all have its parameter list, and its name (entry point %d of %s) picks none of them: name the version in gen/bindings.json",
		d.Position(), sym, base, joinInts(cands), ordinal, joinInts(all))
}

// canonParams spells a parameter list as types only, typedefs resolved,
// so that cuda.h's declaration and cudaTypedefs.h's typedef compare.
func (m *builder) canonParams(ft *cc.FunctionType) []string {
	var r []string
	for _, p := range ft.Parameters() {
		if p.Type().Kind() == cc.Void {
			continue
		}
		r = append(r, m.canon(p.Type()))
	}
	if ft.IsVariadic() {
		r = append(r, "...")
	}
	return r
}

func (m *builder) canon(t cc.Type) string {
	switch x := t.(type) {
	case *cc.PointerType:
		e := x.Elem()
		q := ""
		if e.Attributes() != nil && e.Attributes().IsConst() {
			q = "const "
		}
		return q + m.canon(e) + "*"
	case *cc.ArrayType: // a parameter of array type is a pointer
		return m.canon(x.Elem()) + "*"
	case *cc.FunctionType:
		return "fn(" + strings.Join(m.canonParams(x), ", ") + ") " + m.canon(x.Result())
	case *cc.StructType, *cc.UnionType, *cc.EnumType:
		if ty := m.named(t); ty != nil {
			return ty.C
		}
		if tag := tagOf(t); tag != "" {
			return tag
		}
	}
	if ct, _ := scalar(t); ct != "" {
		return ct
	}
	if t.Kind() == cc.Void {
		return "void"
	}
	return t.String()
}

func joinInts(s []int) string {
	var r []string
	for _, n := range s {
		r = append(r, strconv.Itoa(n))
	}
	return strings.Join(r, ", ")
}

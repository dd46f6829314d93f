package main

import (
	"maps"
	"sort"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/headers"
)

// A field has one Go type in every pinned version where its C type is
// the same: a pointer field that a union of one version hides from the
// collector (an integer to Go) is an integer in every version, so that
// code written for one pin compiles on the others.
func TestFieldTypesAgreeAcrossVersions(t *testing.T) {
	type seen struct{ goType, version string }
	byField := map[string][]seen{}
	eachModel(t, func(t *testing.T, e *headers.Entry, m *model) {
		for _, ty := range m.Types {
			if ty.Kind != tStruct && ty.Kind != tUnion {
				continue
			}
			for _, f := range ty.Fields {
				key := ty.C + "." + f.C
				byField[key] = append(byField[key], seen{f.GoType, e.Version})
			}
		}
	})
	var bad []string
	for key, ss := range byField {
		for _, s := range ss[1:] {
			if isPointerOrInt(s.goType) && isPointerOrInt(ss[0].goType) && s.goType != ss[0].goType {
				bad = append(bad, key+": "+ss[0].goType+" in "+ss[0].version+", "+s.goType+" in "+s.version)
			}
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("fields typed differently across versions (list them under nonGoFields in gen/bindings.json):\n%s", strings.Join(bad, "\n"))
	}
}

// isPointerOrInt: a Go pointer type, or an integer standing for one.
func isPointerOrInt(goType string) bool {
	return goType == "unsafe.Pointer" || goType == "uintptr" || goType == "HostPtr" || strings.HasPrefix(goType, "*")
}

// The pair detector finds the (pointer, count) relations the header
// states, by the count's name or the doc's words: with the config's
// placement of each removed, generation fails naming the pointer.
func TestPairDetector(t *testing.T) {
	cases := []struct{ version, fn, key, param string }{
		{"11.8", "cuGraphInstantiate", "slices", "logBuffer"},     // bufferSize
		{"13.0", "cuTensorMapEncodeTiled", "ranked", "globalDim"}, // tensorRank
		{"13.0", "cuTensorMapEncodeIm2col", "ranked", "pixelBoxLowerCorner"},
		{"12.4", "cuDevSmResourceSplitByCount", "slices", "result"}, // nbGroups
		{"13.0", "cuLogsDumpToMemory", "slices", "buffer"},          // size
		{"13.0", "cuGraphAddDependencies", "slices", "from"},        // numDependencies
	}
	_, man, cache := loadAll(t)
	for _, c := range cases {
		t.Run(c.fn, func(t *testing.T) {
			e := man.Find(c.version)
			if e == nil {
				t.Fatalf("CUDA %s is not pinned", c.version)
			}
			dir := headerDir(t, e, cache)
			cfg, _, _ := loadAll(t)
			fc := cfg.Functions[c.fn]
			switch c.key {
			case "slices":
				s := maps.Clone(fc.Slices)
				delete(s, c.param)
				fc.Slices = s
			case "ranked":
				r := maps.Clone(fc.Ranked)
				delete(r, c.param)
				fc.Ranked = r
			}
			cfg.Functions[c.fn] = fc
			_, err := modelHeaders(cfg, e, dir)
			if err == nil || !strings.Contains(err.Error(), c.param+" (beside ") {
				t.Fatalf("%s's %s unplaced: got %v, want generation to fail naming it", c.fn, c.param, err)
			}
		})
	}
}

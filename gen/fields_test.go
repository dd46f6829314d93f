package main

import (
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
	eachModel(t, func(t *testing.T, e *headers.Entry, m *Model) {
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

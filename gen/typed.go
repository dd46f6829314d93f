package main

// Typed void* parameters: where the size of what a void* points to depends
// on another parameter's value (cuPointerGetAttribute's attribute, a
// shareable handle's type), gen/bindings.json gives a Go type per value.
// The parameter becomes an any; the wrapper checks it against the table
// before the call, refusing a mismatch, and passes a zeroed buffer of the
// type's size (so a driver writing a narrower or wider integer or boolean
// than documented writes inside it), a slice's own memory, or the value
// itself.

import (
	"fmt"
	"sort"
	"strings"
)

// typedParams resolves the typed parameters' tables against the header.
func (m *builder) typedParams(f *Func, fc FuncConf) error {
	byC := map[string]*Param{}
	for _, q := range f.Params {
		byC[q.C] = q
	}
	for name, tc := range fc.Typed {
		q := byC[name]
		if q == nil || q.Role != rTyped {
			return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: no void* parameter %s", f.Pos, f.Base, name)
		}
		by := byC[tc.By]
		if by == nil || by.Role != rIn {
			return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s is picked by %s, which is no by-value parameter", f.Pos, f.Base, name, tc.By)
		}
		et := m.typeByGo(by.GoType)
		if et == nil || et.Kind != tEnum {
			return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s (%s) is no enum", f.Pos, f.Base, tc.By, by.GoType)
		}
		q.By = by
		if tc.Size != "" {
			sp := byC[tc.Size]
			if sp == nil || sp.Role != rTypedSize {
				return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: the size parameter %s is no size_t", f.Pos, f.Base, tc.Size)
			}
			q.SizeOf = sp
		}
		var missing []string
		for _, v := range et.Values {
			if v.Sentinel {
				continue
			}
			spec, ok := tc.Types[v.C]
			if !ok {
				missing = append(missing, v.C)
				continue
			}
			e := TypedEntry{C: v.C, Go: v.Go, Value: v.Value}
			switch {
			case spec == "-":
				e.Kind = "refused"
			case spec == "bool":
				e.Kind, e.GoType = "bool", "bool"
			case strings.HasPrefix(spec, "[]"):
				e.Kind, e.GoType = "slice", spec
			case strings.HasSuffix(spec, " value"):
				e.Kind, e.GoType = "byValue", strings.TrimSuffix(spec, " value")
			default:
				e.Kind, e.GoType = "value", spec
			}
			if e.GoType != "" {
				elem := strings.TrimPrefix(e.GoType, "[]")
				if m.goSize(elem) <= 0 {
					return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s: %q is no Go type of these bindings", f.Pos, f.Base, v.C, spec)
				}
				if m.goSize(elem) > 128 && e.Kind == "value" {
					return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s: %s is larger than the wrapper's 128-byte buffer", f.Pos, f.Base, v.C, elem)
				}
			}
			q.Entries = append(q.Entries, e)
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s has no Go type for %s: give each one (see TypedConf), or \"-\" to refuse it",
				f.Pos, f.Base, name, strings.Join(missing, ", "))
		}
	}
	for _, q := range f.Params {
		if q.Role == rTyped && q.By == nil {
			return fmt.Errorf("gen: %s: %s: %s is typed but has no table", f.Pos, f.Base, q.C)
		}
	}
	return nil
}

// typedTable names a typed parameter's table in the generated code.
func typedTable(f *Func, q *Param) string {
	return "typed" + f.GoName + exported(q.Go)
}

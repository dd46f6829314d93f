package main

// Model stage: typed void* parameters. Where the size of what a void*
// points to depends on another parameter's value (cuPointerGetAttribute's
// attribute, a shareable handle's type), gen/bindings.json gives a Go type
// per value. The parameter becomes an any; the wrapper checks it against
// the table before the call, refusing a mismatch, and passes a zeroed
// buffer of the type's size (so a driver writing a narrower or wider
// integer or boolean than documented writes inside it), a slice's own
// memory, or the value itself.
//
// Each such function also has a generic form (PointerGetAttributeOf) whose
// selecting parameter is a key that names the Go type (a
// PointerAttributeOf[T], one variable per enumerator:
// PointerAttributeContextOf is a PointerAttributeOf[Context]), so that a
// value of another Go type does not compile. It calls the function that
// takes an any, which checks the value at run time.

import (
	"fmt"
	"sort"
	"strings"
)

// typedSpec reads a value's entry of a "typed" table: "-" (refused),
// "bool", a slice type, "T value" (passed by value), or a Go type.
func typedSpec(spec string) (kind, goType string) {
	switch {
	case spec == "-":
		return "refused", ""
	case spec == "bool":
		return "bool", "bool"
	case strings.HasPrefix(spec, "[]"):
		return "slice", spec
	case strings.HasSuffix(spec, " value"):
		return "byValue", strings.TrimSuffix(spec, " value")
	}
	return "value", spec
}

// typedParams resolves the typed parameters' tables against the header.
func (m *builder) typedParams(f *function, fc funcConf) error {
	byC := map[string]*param{}
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
		switch tc.Dir {
		case "in", "out":
			q.Dir = tc.Dir
		default:
			return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s: dir is %q: say \"out\" where the driver writes it (a getter) or \"in\" where it reads it (a setter, an import)", f.Pos, f.Base, name, tc.Dir)
		}
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
			e := typedEntry{C: v.C, Go: v.Go, Value: v.Value}
			e.Kind, e.GoType = typedSpec(spec)
			if e.GoType != "" {
				elem := strings.TrimPrefix(e.GoType, "[]")
				if m.goSize(elem) <= 0 {
					return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s: %q is no Go type of these bindings", f.Pos, f.Base, v.C, spec)
				}
				if m.goSize(elem) > 128 && e.Kind == "value" {
					return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s: %s is larger than the wrapper's 128-byte buffer", f.Pos, f.Base, v.C, elem)
				}
			}
			if e.Kind == "byValue" && q.Dir == "out" {
				return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s: %q passes a value the driver cannot write: dir is \"out\"", f.Pos, f.Base, v.C, spec)
			}
			q.Entries = append(q.Entries, e)
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s has no Go type for %s: give each one (see typedConf in gen/config.go), or \"-\" to refuse it",
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
func typedTable(f *function, q *param) string {
	return "typed" + f.GoName + exported(q.Go)
}

// typedKey describes the generated key type of a selecting enum,
// PointerAttributeOf[T]: one variable per enumerator whose Go type the
// generic form takes or returns whole (PointerAttributeContextOf is a
// PointerAttributeOf[Context]). An enumerator whose data is a slice the
// caller sizes, or that is refused, has no key: it is passed to the function
// that takes an any.
type typedKey struct {
	Go    string // "PointerAttributeOf"
	Enum  string // the picker's Go type: "PointerAttribute"
	Vars  []typedVar
	Funcs []string // the typed forms that take it
	// Left are the picker's values without a variable, and why (for the
	// docs): "MemRangeAttributeAccessedBy" → "[]int32, a slice the caller sizes".
	Left []typedVar
}

// typedVar is one variable of a typedKey, or a value left without one.
type typedVar struct {
	Go     string // "PointerAttributeContextOf"
	Const  string // the enumerator's Go constant: "PointerAttributeContext"
	C      string // "CU_POINTER_ATTRIBUTE_CONTEXT"
	Value  int64
	GoType string // "Context"; for a value left without one, why
}

// keyed says whether a table entry gets a variable: a value the typed
// form takes or returns whole.
func keyed(e typedEntry) bool { return e.Kind == "value" || e.Kind == "bool" || e.Kind == "byValue" }

// typedForm is the name of f's typed form, or "" where it has none.
func (f *function) typedForm() string {
	if len(typedParams(f)) == 0 {
		return ""
	}
	return f.GoName + "Of"
}

// typedKeys gives every function with a typed parameter its typed form,
// and makes the keys: one generic type per picker enum, which every table
// that enum picks must agree with (one Go type per value).
func (m *builder) typedKeys() error {
	byEnum := map[string]*typedKey{}
	gave := map[string]string{} // key.C → the function whose table gave it
	for _, f := range m.Funcs {
		ts := typedParams(f)
		if len(ts) == 0 {
			continue
		}
		if len(ts) > 1 {
			return fmt.Errorf("gen: %s: %s: %d typed parameters; a typed form carries one Go type", f.Pos, f.Symbol, len(ts))
		}
		q := ts[0]
		k := byEnum[q.By.GoType]
		if k == nil {
			k = &typedKey{Go: q.By.GoType + "Of", Enum: q.By.GoType}
			if err := m.claim(k.Go, q.By.GoType+" (typed key)", f.Pos); err != nil {
				return err
			}
			byEnum[q.By.GoType] = k
			m.Keys = append(m.Keys, k)
		}
		q.Key = k
		for _, e := range q.Entries {
			v := typedVar{Go: e.Go + "Of", Const: e.Go, C: e.C, Value: e.Value, GoType: e.GoType}
			if !keyed(e) {
				v.Go = ""
				if e.Kind == "slice" {
					v.GoType = e.GoType + ", a slice the caller sizes"
				} else {
					v.GoType = "no data: refused"
				}
			}
			var old *typedVar
			for i := range k.Vars {
				if k.Vars[i].C == e.C {
					old = &k.Vars[i]
				}
			}
			for i := range k.Left {
				if k.Left[i].C == e.C {
					old = &k.Left[i]
				}
			}
			if old != nil {
				if old.Go != v.Go || old.GoType != v.GoType {
					return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: %s is %s here and %s for %s: the typed key %s carries one Go type per value; give both tables the same type",
						f.Pos, f.Base, e.C, typedWhat(v), typedWhat(*old), gave[e.C], k.Go)
				}
				continue
			}
			gave[e.C] = f.Base
			if v.Go == "" {
				k.Left = append(k.Left, v)
				continue
			}
			if err := m.claim(v.Go, e.C+" (typed key)", f.Pos); err != nil {
				return err
			}
			k.Vars = append(k.Vars, v)
		}
		if len(k.Vars) == 0 {
			return fmt.Errorf("gen: %s: gen/bindings.json: %s: typed: no enumerator of %s has a whole Go type for a generic key (slices and refused values are passed through the function that takes an any)", f.Pos, f.Base, q.By.GoType)
		}
		k.Funcs = append(k.Funcs, f.typedForm())
		if err := m.claim(f.typedForm(), f.Symbol+" (typed form)", f.Pos); err != nil {
			return err
		}
		if err := m.claim(f.typedForm()+"Ctx", f.Symbol+" (typed form, context variant)", f.Pos); err != nil {
			return err
		}
	}
	for _, k := range m.Keys {
		sort.SliceStable(k.Vars, func(i, j int) bool { return k.Vars[i].Value < k.Vars[j].Value })
		sort.SliceStable(k.Left, func(i, j int) bool { return k.Left[i].Value < k.Left[j].Value })
	}
	return nil
}

// typedWhat says what a value is in a table, for errors.
func typedWhat(v typedVar) string { return v.GoType }

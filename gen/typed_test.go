package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/headers"
)

// The typed forms of the real headers: one per function with a typed
// parameter, a key variable for every value the table gives a whole Go
// type, the any form's doc listing every value's type, and the shapes of
// the getter, setter and import forms.
func TestTypedForms(t *testing.T) {
	em := realRenderer(t)
	eachModel(t, func(t *testing.T, _ *headers.Entry, m *model) {
		n := 0
		for _, f := range m.Funcs {
			for _, q := range typedParams(f) {
				n++
				if f.typedForm() != f.GoName+"Of" || q.Key == nil || (q.Dir != "in" && q.Dir != "out") {
					t.Errorf("%s: typed form %q, key %v, dir %q", f.GoName, f.typedForm(), q.Key, q.Dir)
					continue
				}
				vars := map[string]string{}
				for _, v := range q.Key.Vars {
					vars[v.Const] = v.GoType
				}
				for _, en := range q.Entries {
					if got, ok := vars[en.Go]; keyed(en) && (!ok || got != en.GoType) {
						t.Errorf("%s: %s: the key gives %q, the table %q", f.GoName, en.C, got, en.GoType)
					} else if !keyed(en) && ok {
						t.Errorf("%s: %s (%s) has a key variable", f.GoName, en.C, en.Kind)
					}
				}
			}
		}
		if n < 12 {
			t.Errorf("%d typed parameters, want at least 12", n)
		}
		src, err := em.pure(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"func PointerGetAttributeOf[T any](attribute PointerAttributeOf[T], ptr DevicePtr) (T, error) {",
			"func PointerGetAttributeOfCtx[T any](ctx Context, attribute PointerAttributeOf[T], ptr DevicePtr) (data T, err error) {",
			"func PointerSetAttributeOf[T any](value T, attribute PointerAttributeOf[T], ptr DevicePtr) error {",
			"func MemImportFromShareableHandleOf[T any](osHandle T, shHandleType MemAllocationHandleTypeOf[T]) (MemGenericAllocationHandle, error) {",
			"typedArg(typedMemImportFromShareableHandleOsHandle, int64(shHandleType.v), osHandle)",
			"type PointerAttributeOf[T any] struct {",
			"PointerAttributeContextOf ",
			"= PointerAttributeOf[Context]{PointerAttributeContext} ",
			"//   - PointerAttributeContext: *Context\n",
			"//   - PointerAttributeIsManaged: *bool\n",
			"//   - MemHandleTypeNone: none: refused before the call\n",
			"//   - MemHandleTypePosixFileDescriptor: int32 (the value itself, not a pointer)\n",
			"//   - MemRangeAttributeAccessedBy: []int32 with room for the data\n",
			"//   - PointerAttributeContextOf: Context\n",
			"// Left to MemRangeGetAttribute: MemRangeAttributeAccessedBy ([]int32, a slice",
		} {
			if !strings.Contains(string(src), want) {
				t.Errorf("the pure file lacks %q", want)
			}
		}
	})
}

// A mini header with a typed parameter: its form and key, and the config
// errors (no direction, two tables that disagree on a value's Go type).
const miniTyped = `typedef unsigned long long CUdeviceptr;
typedef enum CUpointer_attribute_enum {
    CU_POINTER_ATTRIBUTE_CONTEXT = 1,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2
} CUpointer_attribute;
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);
CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attribute, CUdeviceptr ptr);
#endif
`

const miniTypedTypedefs = `typedef CUresult (*PFN_cuPointerGetAttribute_v4000)(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);
typedef CUresult (*PFN_cuPointerSetAttribute_v6000)(const void *value, CUpointer_attribute attribute, CUdeviceptr ptr);
`

func TestTypedMini(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cuda.h"), []byte(strings.Replace(miniCuda, "#endif\n", miniTyped, 1)))
	writeFile(t, filepath.Join(dir, "cudaTypedefs.h"), []byte(miniTypedefs+miniTypedTypedefs))
	types := func(mt string) map[string]string {
		return map[string]string{"CU_POINTER_ATTRIBUTE_CONTEXT": "Context", "CU_POINTER_ATTRIBUTE_MEMORY_TYPE": mt}
	}
	config := func(getDir, mt string) *config {
		cfg := miniConfig()
		cfg.Functions["cuPointerGetAttribute"] = funcConf{Why: "test", Typed: map[string]*typedConf{"data": {By: "attribute", Dir: getDir, Types: types("uint32"), Why: "test"}}}
		cfg.Functions["cuPointerSetAttribute"] = funcConf{Why: "test", Typed: map[string]*typedConf{"value": {By: "attribute", Dir: "in", Types: types(mt), Why: "test"}}}
		return cfg
	}
	m, err := headerModel(config("out", "uint32"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Keys) != 1 || m.Keys[0].Go != "PointerAttributeOf" || len(m.Keys[0].Vars) != 2 || m.Keys[0].Vars[0].Go != "PointerAttributeContextOf" ||
		strings.Join(m.Keys[0].Funcs, ",") != "PointerGetAttributeOf,PointerSetAttributeOf" {
		t.Errorf("keys: %+v", m.Keys)
	}
	if _, err := headerModel(config("", "uint32"), dir); err == nil || !strings.Contains(err.Error(), `dir is ""`) || !strings.Contains(err.Error(), "cuPointerGetAttribute") {
		t.Errorf("no direction: %v", err)
	}
	_, err = headerModel(config("out", "int32"), dir)
	if err == nil || !strings.Contains(err.Error(), "CU_POINTER_ATTRIBUTE_MEMORY_TYPE is int32 here and uint32 for cuPointerGetAttribute") || !strings.Contains(err.Error(), "PointerAttributeOf carries one Go type per value") {
		t.Errorf("two tables that disagree: %v", err)
	}
}

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/headers"
	"modernc.org/cc/v4"
)

// TestGoDoc checks, for every pinned version whose headers are here, what
// go doc shows of the generated pure-Go file: docs not cut, no doxygen
// left, one const block per enum, the #define constants and their types,
// and the results the header's \param[out] docs make certain.
func TestGoDoc(t *testing.T) {
	em := realRenderer(t)
	eachBuilder(t, em.Cfg, func(t *testing.T, e *headers.Entry, _ string, bm *builder) {
		m := bm.model
		src, err := em.pure(m)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "z.go", src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		// No long comment lines, no raw doxygen.
		raw := regexp.MustCompile(`\\(p|ref|note|sa|brief|param|return|e|b|n)\b|::|___MANBRIEF|\\notefnerr`)
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if len(c.Text) > 200 {
					t.Errorf("%s: comment line of %d characters", fset.Position(c.Pos()), len(c.Text))
				}
				if raw.MatchString(c.Text) {
					t.Errorf("%s: raw doxygen: %s", fset.Position(c.Pos()), c.Text)
				}
			}
		}
		funcDoc := map[string]string{}
		sig := map[string]*ast.FuncType{}
		consts := map[string]*ast.GenDecl{}
		constType := map[string]string{}
		constVal := map[string]string{}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					funcDoc[d.Name.Name] = d.Doc.Text()
					sig[d.Name.Name] = d.Type
				}
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, s := range d.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						consts[n.Name] = d
						if vs.Type != nil {
							constType[n.Name] = string(src[vs.Type.Pos()-1 : vs.Type.End()-1])
						}
						if i < len(vs.Values) {
							constVal[n.Name] = string(src[vs.Values[i].Pos()-1 : vs.Values[i].End()-1])
						}
					}
				}
			}
		}
		// Init's doc is whole: brief, a blank line, the body.
		doc := funcDoc["Init"]
		if !strings.HasPrefix(doc, "Init calls cuInit ") || !strings.Contains(doc, "Flags parameter must be 0") || !strings.Contains(doc, "API.\n\nInitializes the driver API") {
			t.Errorf("Init's doc:\n%s", doc)
		}
		// Results: outputs the doc calls Returned, [out] included.
		results := func(name string) string {
			var r []string
			for _, x := range sig[name].Results.List {
				r = append(r, string(src[x.Type.Pos()-1:x.Type.End()-1]))
			}
			return strings.Join(r, ", ")
		}
		for name, want := range map[string]string{"MemAllocAsync": "DevicePtr, error", "ArrayCreate": "Array, error", "MemAlloc": "DevicePtr, error", "Array3DCreate": "Array, error",
			"MemAddressReserve": "DevicePtr, error", "MemPoolGetAccess": "MemAccessFlags, error", "MemPoolImportPointer": "DevicePtr, error", // \param[out]
			"MemExportToShareableHandle": "error", // \param[out] void *shareableHandle: a buffer the caller passes
		} {
			if got := results(name); got != want {
				t.Errorf("%s returns (%s), want (%s)", name, got, want)
			}
		}
		// One const block per enum: PointerAttribute's values are theirs alone.
		blk := consts["PointerAttributeContext"]
		for _, s := range blk.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				if ty := constType[n.Name]; ty != "PointerAttribute" {
					t.Errorf("%s (%s) shares PointerAttribute's const block", n.Name, ty)
				}
			}
		}
		if consts["PointerAttributeContext"] == consts["EventDefault"] {
			t.Error("two enums share a const block")
		}
		// #define constants: value and type.
		want := map[string][2]string{
			"MemhostallocPortable":                        {"0x1", "MemHostAllocFlags"},
			"MemhostallocDevicemap":                       {"0x2", "MemHostAllocFlags"},
			"MemhostallocWritecombined":                   {"0x4", "MemHostAllocFlags"},
			"MemhostregisterPortable":                     {"0x1", "MemHostRegisterFlags"},
			"MemhostregisterIomemory":                     {"0x4", "MemHostRegisterFlags"},
			"StreamLegacy":                                {"0x1", "Stream"},
			"StreamPerThread":                             {"0x2", "Stream"},
			"DeviceCPU":                                   {"-1", "Device"},
			"DeviceInvalid":                               {"-2", "Device"},
			"LaunchParamEnd":                              {"0", "uintptr"},
			"LaunchParamBufferPointer":                    {"1", "uintptr"},
			"LaunchParamBufferSize":                       {"2", "uintptr"},
			"IPCHandleSize":                               {"64", ""},
			"TrsfReadAsInteger":                           {"0x1", "TexRefFlags"},
			"TrsfNormalizedCoordinates":                   {"0x2", "TexRefFlags"},
			"TrsfSrgb":                                    {"0x10", "TexRefFlags"},
			"Array3DLayered":                              {"0x1", ""},
			"Array3DSurfaceLdst":                          {"0x2", ""},
			"ParamTrDefault":                              {"-1", ""},
			"CooperativeLaunchMultiDeviceNoPreLaunchSync": {"0x1", ""},
		}
		if e.CUDAVersion >= 12000 {
			want["TensorMapNumQwords"] = [2]string{"16", ""}
			want["GraphKernelNodePortDefault"] = [2]string{"0", ""}
		}
		for n, w := range want {
			if _, ok := consts[n]; !ok {
				t.Errorf("%s: not bound", n)
				continue
			}
			if constVal[n] != w[0] || constType[n] != w[1] {
				t.Errorf("%s = %s (type %q), want %s (type %q)", n, constVal[n], constType[n], w[0], w[1])
			}
		}
		// Every constant #define of cuda.h is bound.
		for name, mac := range bm.src.ast.Macros {
			if filepath.Base(mac.Position().Filename) != "cuda.h" || mac.IsFnLike || strings.HasPrefix(name, "__") || notConstant[name] != "" {
				continue
			}
			switch mac.Value().(type) {
			case cc.Int64Value, cc.UInt64Value:
			default:
				continue
			}
			if strings.HasPrefix(name, "cu") {
				continue
			}
			if _, ok := consts[em.Cfg.constGoName(name)]; !ok {
				t.Errorf("#define %s is not bound", name)
			}
		}
		// The parameters the docs tie the flags to take their type;
		// one that says "must be set to 0" before naming a flag does not.
		for fn, want := range map[string]string{"MemHostAlloc": "MemHostAllocFlags", "MemHostRegister": "MemHostRegisterFlags",
			"TexRefSetFlags": "TexRefFlags", "TexRefSetArray": "TexRefSetArrayFlags", "SurfRefSetArray": "uint32", "MemHostGetDevicePointer": "uint32"} {
			ps := sig[fn].Params.List
			if got := string(src[ps[len(ps)-1].Type.Pos()-1 : ps[len(ps)-1].Type.End()-1]); got != want {
				t.Errorf("%s's flags: %s, want %s", fn, got, want)
			}
		}
	})
}

func TestParseDoc(t *testing.T) {
	d := parseDoc(` \brief Allocates
 Body with \p Flags and ::cuInit().
 \note A note.
 \param[out] dptr - Returned device pointer
 \param[in,out] x - Both
 \param y - Plain
 \return
 ::CUDA_SUCCESS,
 ::CUDA_ERROR_INVALID_VALUE
 \notefnerr
 \sa ::cuMemFree`)
	if got := d.text(); got != "Allocates\n\nBody with Flags and cuInit().\n\nNote: A note.\n\nParameters:\n\n- dptr: Returned device pointer\n\n- x: Both\n\n- y: Plain" {
		t.Errorf("got %q", got)
	}
	if d.first["dptr"] != "Returned device pointer" || d.first["x"] != "Both" || d.dir["dptr"] != "out" || d.dir["x"] != "in,out" || d.dir["y"] != "" {
		t.Errorf("params %v", d.first)
	}
	if got := docText(`Option type: int\n
 Applies to: compiler only`); got != "Option type: int Applies to: compiler only" {
		t.Errorf("escapes: %q", got)
	}
}

// A #define whose Go name another declaration has fails with both C names.
func TestDefineClash(t *testing.T) {
	h := strings.Replace(miniCuda, "#define CUDA_VERSION 12040", "#define CUDA_VERSION 12040\n#define CU_EVENT_QUERY 0x1", 1)
	_, err := headerModel(miniConfig(), writeMini(t, h))
	if err == nil || !strings.Contains(err.Error(), "Go name clash") || !strings.Contains(err.Error(), "CU_EVENT_QUERY") || !strings.Contains(err.Error(), "cuEventQuery") {
		t.Fatalf("got %v", err)
	}
	// Without the clash the constant is bound, untyped.
	h = strings.Replace(miniCuda, "#define CUDA_VERSION 12040", "#define CUDA_VERSION 12040\n#define CU_IPC_HANDLE_SIZE 64", 1)
	m, err := headerModel(miniConfig(), writeMini(t, h))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Defines) != 1 || m.Defines[0].Defs[0].Go != "IpcHandleSize" || m.Defines[0].Defs[0].Lit != "64" || m.Defines[0].Defs[0].GoType != "" {
		t.Errorf("defines: %+v", m.Defines)
	}
}

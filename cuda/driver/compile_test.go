package driver

import (
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/internal/modtest"
)

// The types Go checks: each program below is a package placed in this
// module through the go command's -overlay (modtest.Build: nothing is
// written into the checkout); the wrong uses must fail to compile, each
// with its message, and the right ones must compile. One go build builds
// them all, with these bindings' build tag.

// compileOK uses every typed form the right way, beside the forms that
// check at run time, which keep compiling.
const compileOK = `package ok

import "github.com/cudagen/cudagen/cuda/driver"

type pair struct{ X, Y float32 }

func attributes(c driver.Context, p driver.DevicePtr, pool driver.MemoryPool, h driver.MemGenericAllocationHandle, dev driver.Device) error {
	var ctx driver.Context
	ctx, err := driver.PointerGetAttributeOf(driver.PointerAttributeContextOf, p)
	var managed bool
	managed, err = driver.PointerGetAttributeOfCtx(c, driver.PointerAttributeIsManagedOf, p)
	err = driver.PointerSetAttributeOf(!managed, driver.PointerAttributeSyncMemopsOf, p)
	err = driver.MemPoolSetAttributeOf(pool, driver.MempoolAttrReleaseThresholdOf, 1<<30)
	var threshold uint64
	threshold, err = driver.MemPoolGetAttributeOf(pool, driver.MempoolAttrReleaseThresholdOf)
	var used uint64
	used, err = driver.DeviceGetGraphMemAttributeOf(dev, driver.GraphMemAttrUsedMemCurrentOf)
	var readMostly int32
	readMostly, err = driver.MemRangeGetAttributeOf(driver.MemRangeAttributeReadMostlyOf, p, 4096)
	var fd int32
	fd, err = driver.MemExportToShareableHandleOf(h, driver.MemHandleTypePosixFileDescriptorOf, 0)
	_, err = driver.MemImportFromShareableHandleOf(fd, driver.MemHandleTypePosixFileDescriptorOf)
	// The any forms, checked at run time, with a key's value or a constant.
	err = driver.PointerGetAttribute(&ctx, driver.PointerAttributeContextOf.PointerAttribute(), p)
	err = driver.PointerGetAttribute(&managed, driver.PointerAttributeIsManaged, p)
	_, _, _, _ = threshold, used, readMostly, driver.PointerAttributeContextOf.String()
	return err
}

func launches(fn driver.Function, s driver.Stream, dA driver.DevicePtr, n uint32) error {
	grid, block := driver.Dim3{X: 1, Y: 1, Z: 1}, driver.Dim3{X: 256, Y: 1, Z: 1}
	err := driver.LaunchArgsOf(fn, grid, block, 0, s, driver.Arg(dA), driver.Arg(n), driver.Arg(1.5), driver.Arg(true), driver.ArgStruct(pair{1, 2}))
	err = driver.LaunchArgsOfCtx(0, fn, grid, block, 0, s, driver.Arg(int32(n)))
	err = driver.LaunchArgs(fn, grid, block, 0, s, dA, n)
	return err
}

func flagsAndResults(s driver.Stream) error {
	ev, err := driver.EventCreate(driver.EventBlockingSync)
	_ = ev
	g, err := driver.StreamEndCapture(s)
	_, err = driver.GraphInstantiateWithFlags(g, driver.GraphInstantiateFlagAutoFreeOnLaunch)
	return err
}
`

// compileBad are the wrong uses: each its own package, and what the
// compiler must say about it.
var compileBad = []struct{ name, code, want string }{
	{"resultType", `func f() (driver.Context, error) { return driver.PointerGetAttributeOf(driver.PointerAttributeIsManagedOf, 0) }`,
		`cannot use .* \(value of type bool\) as driver\.Context value`},
	{"setValue", `func f() error { return driver.PointerSetAttributeOf(1, driver.PointerAttributeSyncMemopsOf, 0) }`,
		`cannot use 1 \(untyped int constant\) as bool value`},
	{"setVariable", `func f(v int32) error { return driver.MemPoolSetAttributeOf(0, driver.MempoolAttrReleaseThresholdOf, v) }`,
		`type int32 of v does not match inferred type uint64 for T`},
	{"setPointer", `func f(c driver.Context) error { return driver.PointerSetAttributeOf(&c, driver.PointerAttributeContextOf, 0) }`,
		`does not match inferred type driver\.PointerAttributeOf\[\*driver\.Context\]`},
	{"importInt", `func f(fd int) error { _, err := driver.MemImportFromShareableHandleOf(fd, driver.MemHandleTypePosixFileDescriptorOf); return err }`,
		`type driver\.MemAllocationHandleTypeOf\[int32\] of driver\.MemHandleTypePosixFileDescriptorOf does not match`},
	{"plainEnum", `func f() error { _, err := driver.PointerGetAttributeOf(driver.PointerAttributeContext, 0); return err }`,
		`type driver\.PointerAttribute of driver\.PointerAttributeContext does not match driver\.PointerAttributeOf\[T\]`},
	{"otherEnumKey", `func f() error { _, err := driver.PointerGetAttributeOf(driver.MempoolAttrReleaseThresholdOf, 0); return err }`,
		`type driver\.MemPoolAttributeOf\[uint64\] of driver\.MempoolAttrReleaseThresholdOf does not match`},
	{"madeKey", `var k = driver.PointerAttributeOf[string]{driver.PointerAttributeContext}`,
		`implicit assignment to unexported field v`},
	{"launchPointer", `func f(fn driver.Function, dA driver.DevicePtr) error { one := driver.Dim3{X: 1, Y: 1, Z: 1}; return driver.LaunchArgsOf(fn, one, one, 0, 0, &dA) }`,
		`cannot use &dA \(value of type \*driver\.DevicePtr\) as driver\.KernelArg value`},
	{"launchBare", `func f(fn driver.Function, dA driver.DevicePtr) error { one := driver.Dim3{X: 1, Y: 1, Z: 1}; return driver.LaunchArgsOf(fn, one, one, 0, 0, dA) }`,
		`cannot use dA \(variable of .*type driver\.DevicePtr\) as driver\.KernelArg value`},
	{"argPointer", `func f(dA driver.DevicePtr) driver.KernelArg { return driver.Arg(&dA) }`,
		`\*driver\.DevicePtr does not satisfy driver\.KernelScalar`},
	{"argSlice", `func f(xs []float32) driver.KernelArg { return driver.Arg(xs) }`,
		`\[\]float32 does not satisfy driver\.KernelScalar`},
	{"argString", `func f() driver.KernelArg { return driver.Arg("text") }`,
		`string does not satisfy driver\.KernelScalar`},
	{"otherFlags", `func f() error { _, err := driver.EventCreate(driver.StreamNonBlocking); return err }`,
		`cannot use driver\.StreamNonBlocking \(constant 1 of uint32 type driver\.StreamFlags\) as driver\.EventFlags value`},
	{"outParameter", `func f(s driver.Stream) error { var g driver.Graph; _, err := driver.StreamEndCapture(s, &g); return err }`,
		`too many arguments in call to driver\.StreamEndCapture`},
}

func TestCompileTimeChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: builds small programs with the go command")
	}
	const dir = "internal/typecheck/"
	files := map[string]string{dir + "ok/ok.go": compileOK}
	for _, c := range compileBad {
		files[dir+"bad/"+c.name+"/x.go"] = "package p\n\nimport \"github.com/cudagen/cudagen/cuda/driver\"\n\n" + c.code + "\n"
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := modtest.Build(t, root, files, BuildTag, "CGO_ENABLED=0")
	if err == nil {
		t.Fatalf("every program compiled:\n%s", out)
	}
	// Each error line starts with its file: internal/typecheck/ok/ok.go:…,
	// internal/typecheck/bad/NAME/x.go:….
	said := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, ".go:"); i > 0 && strings.HasPrefix(l, dir) {
			pkg := path.Dir(strings.TrimPrefix(l[:i], dir))
			said[pkg] = append(said[pkg], l)
		}
	}
	if len(said["ok"]) > 0 {
		t.Errorf("the right uses do not compile:\n%s", strings.Join(said["ok"], "\n"))
	}
	for _, c := range compileBad {
		got := strings.Join(said["bad/"+c.name], "\n")
		switch {
		case got == "":
			t.Errorf("%s compiled: %s", c.name, c.code)
		case !regexp.MustCompile(c.want).MatchString(got):
			t.Errorf("%s: the compiler says\n%s\nwant a match of %s", c.name, got, c.want)
		}
	}
	if t.Failed() {
		t.Logf("go build -tags %s said:\n%s", BuildTag, out)
	}
}

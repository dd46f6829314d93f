package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
)

// The mini header with a call that makes an event, for "threads".
var threadsCuda = strings.Replace(miniCuda, "CUresult cuEventQuery(", "CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags);\nCUresult cuEventQuery(", 1)

func threadsMini(t *testing.T, cuda string) string {
	dir := writeMini(t, cuda)
	writeFile(t, dir+"/cudaTypedefs.h", []byte(miniTypedefs+"typedef CUresult (*PFN_cuEventCreate_v2000)(CUevent *phEvent, unsigned int Flags);\n"))
	return dir
}

// A handle kind in "threads": the call that makes it runs on a new OS
// thread that the handle then owns, the calls that take it on that
// thread, and the config's "end" lets the thread go on success. A kind
// that is no handle, or that no call makes or ends, is refused.
func TestThreads(t *testing.T) {
	cfg := miniConfig()
	cfg.Functions["cuEventCreate"] = funcConf{Why: "test", Out: []string{"phEvent"}}
	cfg.Threads = map[string]threadConf{"CUevent": {Why: "test", End: "cuEventDestroy"}}
	m, err := headerModel(cfg, threadsMini(t, threadsCuda))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"cuEventCreate":  {"th := osthread.Start()", "th.Do(inCtx(ctx, func(ctx C.uintptr_t)", "rt = C.", "osthread.Own(ek, \"driver.Event\", uintptr(phEvent), th)"},
		"cuEventQuery":   {"hk := uintptr(hEvent)", "osthread.On(\"driver.Event\", hk, inCtx(ctx, func(ctx C.uintptr_t)", "done(rt)"},
		"cuEventDestroy": {"th := osthread.On(\"driver.Event\", hk, inCtx(ctx,", "osthread.End(ek, \"driver.Event\", hk, th)"},
	}
	for name, parts := range want {
		f := m.funcNamed(name)
		body, err := wrapperBody(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		code := fmt.Sprintf("%#v", jen.Func().Id("f").Params().Block(body...))
		for _, p := range parts {
			if !strings.Contains(code, p) {
				t.Errorf("%s's wrapper lacks %q:\n%s", name, p, code)
			}
		}
		if strings.Contains(code, "C.uintptr_t(ctx)") {
			t.Errorf("%s's wrapper passes its own context, not the thread's:\n%s", name, code)
		}
		if doc := strings.Join(plainDoc(f), "\n"); !strings.Contains(doc, "OS thread") {
			t.Errorf("%s's doc does not say where it runs:\n%s", name, doc)
		}
	}
	if f := m.funcNamed("cuCtxGetCurrent"); f.Thread != nil {
		t.Errorf("cuCtxGetCurrent takes no event but runs on one's thread")
	}

	for _, c := range []struct {
		name, cuda string
		threads    map[string]threadConf
		want       string
	}{
		{"no handle", threadsCuda, map[string]threadConf{"CUstream": {Why: "test", End: "cuEventDestroy"}}, "CUstream is no handle type"},
		{"never made", miniCuda, map[string]threadConf{"CUevent": {Why: "test", End: "cuEventDestroy"}}, "no bound function makes it"},
		{"never ended", threadsCuda, map[string]threadConf{"CUevent": {Why: "test", End: "cuEventRelease"}}, "cuEventRelease (its \"end\") takes none"},
	} {
		cfg := miniConfig()
		cfg.Functions["cuEventCreate"] = funcConf{Why: "test", Out: []string{"phEvent"}}
		cfg.Threads = c.threads
		if _, err := headerModel(cfg, threadsMini(t, c.cuda)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	// Each kind says why, and names its end.
	dir := t.TempDir()
	writeFile(t, dir+"/b.json", []byte(`{"package": "driver", "output": "x", "threads": {"CUevent": {"end": "cuEventDestroy"}}}`))
	if _, err := loadConfig(dir + "/b.json"); err == nil || !strings.Contains(err.Error(), "threads.CUevent") {
		t.Errorf("a thread kind without why: %v", err)
	}
}

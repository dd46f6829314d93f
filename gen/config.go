package main

// gen/bindings.json, read: the exclusions and overrides every stage from
// model on follows, each with the reason it exists.

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/cudagen/cudagen/headers"
)

// config is gen/bindings.json. Everything cuda.h declares is bound; the
// config lists only exclusions and overrides, each with the reason it
// exists ("why").
type config struct {
	// Package is the Go package name of the generated layer.
	Package string `json:"package"`
	// Output is the directory, relative to the module root, written to.
	Output string `json:"output"`
	// PerThreadDefaultStream binds the _ptsz/_ptds entry points: the header
	// is read with CUDA_API_PER_THREAD_DEFAULT_STREAM defined and functions
	// are resolved with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
	PerThreadDefaultStream bool     `json:"perThreadDefaultStream"`
	Initialisms            []string `json:"initialisms"`
	// DocumentRaw makes generation fail on a parameter left unsafe.Pointer
	// or uintptr that its function's "raw" does not document.
	DocumentRaw bool `json:"documentRaw"`
	// Names gives C types, enumerators, #define constants or functions
	// another Go name; a key ending in "_" (CU_TRSF_) names the flags type
	// of that #define group (consts.go).
	Names map[string]rename `json:"names"`
	// Opaque binds these structs as byte arrays of their size.
	Opaque map[string]string `json:"opaque"`
	// NonGoFields are pointer fields that hold C memory only, typed as
	// integers: those the driver keeps after the call that passes their
	// struct (a graph node's userData, a copy's host side), and those a
	// union of some pinned version overlays with an integer (so that every
	// version types them alike): "CTYPE.field" → the Go type (HostPtr,
	// uintptr) and why. Go memory never goes there.
	NonGoFields map[string]nonGoField `json:"nonGoFields"`
	// Exclude leaves these functions (by base name) unbound.
	Exclude map[string]string `json:"exclude"`
	// Compilers are the functions (by base name) that may run a compiler
	// in the calling thread (the driver's PTX JIT compiler, its linker,
	// NVRTC, nvJitLink), and why: their trampolines block the thread's
	// asynchronous signals for the call (Go's preemption and profiling
	// signals among them): the driver's JIT compiler crashed in Go
	// processes with asynchronous preemption on, and did not with them
	// blocked.
	Compilers map[string]string `json:"compilers,omitempty"`
	// Threads are the handle types (C names) whose calls must all run on
	// one OS thread, from the call that makes a handle to the one that
	// ends it, and why: each such call runs on an OS thread the handle
	// owns (threads.go).
	Threads map[string]threadConf `json:"threads,omitempty"`
	// Functions overrides the shape of a function's parameters, by base name.
	Functions map[string]funcConf `json:"functions"`
	// Libraries are the configs of the other CUDA libraries bound (NVRTC,
	// nvJitLink), file names relative to this one's directory (library.go).
	Libraries []string `json:"libraries,omitempty"`
	// Library makes this the config of a library other than the driver:
	// its header, names and how it is loaded (library.go).
	Library *libraryConf `json:"library,omitempty"`

	initialisms map[string]bool
}

// nonGoField is a pointer field that holds C memory only: its Go type and why.
type nonGoField struct {
	Go  string `json:"go"`
	Why string `json:"why"`
}

// threadConf is a handle type whose calls stay on one OS thread: End is
// the function (by base name) whose success ends the handle.
type threadConf struct {
	Why string `json:"why"`
	End string `json:"end"`
}

// rename is a Go name and why it is not the derived one.
type rename struct {
	Go  string `json:"go"`
	Why string `json:"why"`
}

// funcConf overrides how one function's parameters are bound.
type funcConf struct {
	Why string `json:"why"`
	// Types gives by-value parameters a Go type (an enum of flags for an
	// unsigned int, say), by C parameter name.
	Types map[string]string `json:"types,omitempty"`
	// Out names pointer parameters that are single results.
	Out []string `json:"out,omitempty"`
	// In names pointer parameters that stay pointers though the doc says
	// "Returned".
	In []string `json:"in,omitempty"`
	// Buffer makes a (char *buf, int len) pair into a string result.
	Buffer *bufferConf `json:"buffer,omitempty"`
	// Sized makes output arrays whose length another function of the API
	// returns (nvrtcGetPTX's ptx, by nvrtcGetPTXSize) into results: the
	// wrapper calls that function with the parameters of the same names,
	// allocates what it says, and calls: parameter → how.
	Sized map[string]sizedConf `json:"sized,omitempty"`
	// Slices makes (pointer, count) pairs into slices: pointer → count.
	// Pointers sharing a count must have equal lengths.
	Slices map[string]string `json:"slices,omitempty"`
	// Optional names slices that may be empty (passed as NULL) though
	// others sharing their count are not.
	Optional []string `json:"optional,omitempty"`
	// TwoCall makes output arrays whose capacity and length go through a
	// count pointer into results: the wrapper asks for the count with NULL
	// arrays, allocates, and calls again.
	TwoCall *twoCallConf `json:"twoCall,omitempty"`
	// NotSlices names (pointer, count)-looking parameters that are not
	// such a pair, or cannot be bound as one, and why.
	NotSlices map[string]string `json:"notSlices,omitempty"`
	// SliceElem gives a slice's Go element type where the C one is void*
	// holding integers or pointers (e.g. JIT option values): slice → type.
	SliceElem map[string]string `json:"sliceElem,omitempty"`
	// Arrays makes an output pointer a fixed-size array result: pointer → length.
	Arrays map[string]int `json:"arrays,omitempty"`
	// Raw documents each parameter left unsafe.Pointer or uintptr (host
	// buffers, module images, option values, the raw launch form, a C
	// callback's userData): what memory it may be, for how long.
	Raw map[string]string `json:"raw,omitempty"`
	// Address names void* parameters that hold a device address (a
	// virtual address the driver maps, never host memory): DevicePtr.
	Address []string `json:"address,omitempty"`
	// Host names void* parameters, and void** results, that hold page-locked
	// host memory the driver allocated or registered (C memory, never Go
	// memory, which the driver may use after the call): HostPtr.
	Host []string `json:"host,omitempty"`
	// Image names const void* parameters that are a module image (PTX
	// text, an ELF cubin, a fatbin), whose size the driver reads from the
	// image itself: a []byte the wrapper checks covers it (checkImage).
	Image []string `json:"image,omitempty"`
	// Check names a hand-written check the wrapper runs before the call:
	// func(fn uintptr, ctx Context, sym string, args...) (uintptr, error),
	// args the named parameters (nil where this entry point lacks one).
	Check *checkConf `json:"check,omitempty"`
	// OnSuccess names a hand-written func() the wrapper calls after a
	// successful call (forgetParamCounts after an unload).
	OnSuccess string `json:"onSuccess,omitempty"`
	// Ranked makes pointers into slices that must hold at least as many
	// elements as a by-value parameter says, less a constant: pointer →
	// "tensorRank" or "tensorRank-1".
	Ranked map[string]string `json:"ranked,omitempty"`
	// Life gives the direction of a pointer whose doc does not say it:
	// "read", "written" or "read,written".
	Life map[string]string `json:"life,omitempty"`
	// Keeps names what the driver keeps after the call returns (a
	// parameter, or "param.field"), and until when. A kept pointer must
	// have a type that holds C memory only, or be copied into C memory
	// that a handle owns (copy).
	Keeps map[string]keepConf `json:"keeps,omitempty"`
	// Typed gives a void* whose size depends on another parameter's value
	// (an attribute, a handle type) a Go type per value: the parameter
	// becomes an any, checked against the table before the call.
	Typed map[string]*typedConf `json:"typed,omitempty"`
}

// checkConf is a hand-written check and the parameters it takes.
type checkConf struct {
	Func string   `json:"func"`
	Args []string `json:"args"`
}

// keepConf says until when the driver keeps a pointer.
type keepConf struct {
	// Until is what ends it: "the link is destroyed (LinkDestroy)".
	Until string `json:"until"`
	// Copy: the argument (a slice, an image) is copied into C memory that
	// this parameter or result (a handle) owns; Free is the function whose
	// success frees it.
	Copy string `json:"copy,omitempty"`
	Free string `json:"free,omitempty"`
}

// typedConf is the type table of one void* parameter.
type typedConf struct {
	// By is the enum parameter whose value picks the type.
	By string `json:"by"`
	// Size is a size_t parameter (by value or a pointer) that the wrapper
	// sets to the size of what it passes.
	Size string `json:"size,omitempty"`
	// Types maps each enumerator of By's type to what the parameter is
	// for it: "T" (the caller passes a *T; the driver reads or writes a
	// T), "bool" (a *bool; the driver's boolean, of whatever width, read
	// through a zeroed buffer), "[]T" (the caller's slice, its size passed),
	// "T value" (the value itself in the pointer, as for a file
	// descriptor), or "-" (refused: the value has no data). Every
	// enumerator the header declares must be listed; values a version
	// does not declare are ignored.
	Types map[string]string `json:"types"`
	// Dir says whether the driver writes the value ("out": a getter,
	// whose typed form returns it) or reads it ("in": a setter or an
	// import, whose typed form takes it).
	Dir string `json:"dir"`
	// Why says where the types come from.
	Why string `json:"why"`
}

// twoCallConf is a count pointer and the arrays it sizes.
type twoCallConf struct {
	Count  string   `json:"count"`
	Arrays []string `json:"arrays"`
}

// sizedConf is an output array whose length another function returns.
type sizedConf struct {
	// By is the function that returns the length, in elements: its other
	// parameters are this function's of the same names, and its one result
	// is the length.
	By string `json:"by"`
	// Text makes the result a string: the bytes up to the first NUL.
	Text bool `json:"text,omitempty"`
}

// bufferConf describes a caller-provided string buffer.
type bufferConf struct {
	Buf  string `json:"buf"`
	Len  string `json:"len"`
	Size int    `json:"size"`
}

// loadConfig reads and checks a config file.
func loadConfig(path string) (*config, error) {
	var c config
	if err := headers.ReadJSON(path, &c); err != nil {
		return nil, err
	}
	if c.Package == "" || c.Output == "" {
		return nil, fmt.Errorf("%s: package and output are required", path)
	}
	var missing []string
	for n, r := range c.Names {
		if r.Why == "" || r.Go == "" {
			missing = append(missing, "names."+n)
		}
	}
	for n, w := range c.Opaque {
		if w == "" {
			missing = append(missing, "opaque."+n)
		}
	}
	for n, k := range c.NonGoFields {
		if k.Why == "" || (k.Go != "HostPtr" && k.Go != "uintptr" && k.Go != "DevicePtr") {
			return nil, fmt.Errorf("%s: nonGoFields.%s: give \"go\" (HostPtr, DevicePtr or uintptr) and \"why\"", path, n)
		}
	}
	for n, w := range c.Exclude {
		if w == "" {
			missing = append(missing, "exclude."+n)
		}
	}
	for n, w := range c.Compilers {
		if !strings.HasPrefix(n, c.funcPrefix()) {
			return nil, fmt.Errorf("%s: compiler %q is not a name of this API (%s...)", path, n, c.funcPrefix())
		}
		if w == "" {
			missing = append(missing, "compilers."+n)
		}
	}
	for n, t := range c.Threads {
		if t.Why == "" || !strings.HasPrefix(t.End, c.funcPrefix()) {
			return nil, fmt.Errorf("%s: threads.%s: give \"why\" and \"end\" (the function that ends the handle)", path, n)
		}
	}
	if err := c.Library.check(path); err != nil {
		return nil, err
	}
	for n, f := range c.Functions {
		if !strings.HasPrefix(n, c.funcPrefix()) {
			return nil, fmt.Errorf("%s: function %q is not a name of this API (%s...)", path, n, c.funcPrefix())
		}
		if f.Why == "" {
			missing = append(missing, "functions."+n)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("%s: every override says why it exists; no \"why\" for %s", path, strings.Join(missing, ", "))
	}
	c.initialisms = map[string]bool{}
	for _, s := range c.Initialisms {
		c.initialisms[strings.ToUpper(s)] = true
	}
	return &c, nil
}

// words splits a C name into words: at underscores and at lower→upper
// case changes (cuIpcGetEventHandle → Ipc Get Event Handle).
func words(s string) []string {
	var r []string
	for _, part := range strings.Split(s, "_") {
		rs := []rune(part)
		start := 0
		for i := 1; i < len(rs); i++ {
			if unicode.IsUpper(rs[i]) && !unicode.IsUpper(rs[i-1]) {
				r = append(r, string(rs[start:i]))
				start = i
			}
		}
		if start < len(rs) {
			r = append(r, string(rs[start:]))
		}
	}
	return r
}

// goName joins words in MixedCaps, keeping initialisms upper case.
func (c *config) goName(ws []string) string {
	var b strings.Builder
	for _, w := range ws {
		up := strings.ToUpper(w)
		if c.initialisms[up] {
			b.WriteString(up)
			continue
		}
		// An all-caps word (SNAKE_CASE) is lowered; MixedCaps are kept.
		if w == up {
			lw := []rune(strings.ToLower(w))
			for i := 1; i < len(lw); i++ {
				if unicode.IsDigit(lw[i-1]) {
					lw[i] = unicode.ToUpper(lw[i])
				}
			}
			w = string(lw)
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

// funcGoName: cuEventCreate → EventCreate, cuIpcGetEventHandle →
// IPCGetEventHandle, cuCtxCreate_v3 → CtxCreateV3, nvrtcGetOptiXIR →
// GetOptiXIR. A run of capitals that ends a MixedCaps part of the name is an
// initialism, kept as the header spells it (OptiX IR, as the XIR of
// nvrtcGetOptiXIRSize stays), where goName would lower an all-caps word
// (a SNAKE_CASE word of a constant).
func (c *config) funcGoName(name string) string {
	if r, ok := c.Names[name]; ok {
		return r.Go
	}
	var b strings.Builder
	for _, part := range strings.Split(strings.TrimPrefix(name, c.funcPrefix()), "_") {
		mixed := part != strings.ToUpper(part)
		for _, w := range words(part) {
			if mixed && len(w) > 1 && w == strings.ToUpper(w) && strings.IndexFunc(w, unicode.IsDigit) < 0 {
				b.WriteString(w)
				continue
			}
			b.WriteString(c.goName([]string{w}))
		}
	}
	return b.String()
}

// boundType is the Go name of a C typedef the API binds (ok false: it is a
// plain scalar, not bound): its own, or the Go type a library's config
// gives a C type of another API (NCCL's cudaStream_t: Stream), declared by
// hand in its package (external).
func (c *config) boundType(cName string) (goName string, external, ok bool) {
	if c.Library != nil {
		if g, ok := c.Library.External[cName]; ok {
			return g, true, true
		}
	}
	if !strings.HasPrefix(cName, c.typePrefix()) {
		return "", false, false
	}
	return c.typeGoName(cName), false, true
}

// funcPrefix is what every function name of the API starts with: "cu",
// or the library's prefix.
func (c *config) funcPrefix() string {
	if c.Library != nil {
		return c.Library.Prefix
	}
	return "cu"
}

// typePrefix is what the API's type names start with: "CU", or the
// library's prefix.
func (c *config) typePrefix() string {
	if c.Library != nil {
		return c.Library.Prefix
	}
	return "CU"
}

// typeGoName: CUevent → Event, CUDA_MEMCPY2D → Memcpy2D,
// CUdevice_attribute → DeviceAttribute.
func (c *config) typeGoName(name string) string {
	if c.Library != nil {
		name = strings.TrimSuffix(name, "_t") // ncclComm_t → Comm
	}
	return c.prefixedGoName(name, c.typePrefix())
}

// constGoName: CU_EVENT_DEFAULT → EventDefault, CUDA_ERROR_NOT_READY →
// ErrorNotReady.
func (c *config) constGoName(name string) string {
	if c.Library != nil {
		// A library's #defines may take its prefix in capitals (NCCL_ for
		// ncclSum's nccl).
		p := c.Library.ConstPrefix
		if up := strings.ToUpper(strings.TrimSuffix(p, "_")) + "_"; strings.HasPrefix(name, up) {
			p = up
		}
		return c.prefixedGoName(name, p)
	}
	return c.prefixedGoName(name, "CU_")
}

// prefixedGoName is the config's name for name, or name without its
// CUDA_ prefix (or else prefix) in MixedCaps.
func (c *config) prefixedGoName(name, prefix string) string {
	if r, ok := c.Names[name]; ok {
		return r.Go
	}
	n := strings.TrimPrefix(name, "CUDA_")
	if n == name {
		n = strings.TrimPrefix(name, prefix)
	}
	return c.goName(words(n))
}

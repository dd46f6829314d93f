package cuda

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cudagen/cudagen/cuda/driver"
	"github.com/cudagen/cudagen/cuda/nvrtc"
)

// CompileOptions are how Device.Compile compiles CUDA C++ with NVRTC. The
// zero value compiles to PTX for the device's architecture with NVRTC's
// defaults.
type CompileOptions struct {
	// Name is the program's name in the log ("program.cu" if empty).
	Name string
	// Defines are -D options: NAME=VALUE, or NAME alone for an empty value.
	Defines map[string]string
	// IncludePaths are -I options: directories searched by #include.
	IncludePaths []string
	// Headers are headers in memory: the name #include gives → its text.
	Headers map[string]string
	// Std is the language standard: "c++17" gives -std=c++17.
	Std string
	// Debug adds device debug information (-G); LineInfo line numbers
	// (-lineinfo).
	Debug, LineInfo bool
	// Output is what the program is compiled to: PTX (the default), a CUBIN
	// for the device's own architecture, or LTO-IR for nvJitLink.
	Output CompileOutput
	// Arch overrides the architecture, as NVRTC's --gpu-architecture takes
	// it ("compute_90", "sm_90a"); by default the device's compute
	// capability: compute_XY for PTX and LTO-IR, sm_XY for a CUBIN.
	Arch string
	// Options are further NVRTC options, passed as written after the others.
	Options []string
}

// CompileOutput is what Device.Compile makes.
type CompileOutput int

const (
	// OutputPTX is PTX text for the device's virtual architecture, which
	// the driver compiles for the GPU when the module is loaded.
	OutputPTX CompileOutput = iota
	// OutputCUBIN is a CUBIN for the device's architecture (NVRTC of CUDA
	// 11.1 and later).
	OutputCUBIN
	// OutputLTOIR is LTO-IR (-dlto), which nvJitLink links into a CUBIN.
	OutputLTOIR
)

// Program is what Device.Compile made: the compiled image, NVRTC's log
// (warnings; empty when there are none) and the options it was given.
type Program struct {
	// Image is the compiled program: PTX (with its NUL), a CUBIN or LTO-IR,
	// as Output asked. Device.LoadModule loads PTX and CUBIN.
	Image   []byte
	Output  CompileOutput
	Log     string
	Options []string
}

// Compile compiles CUDA C++ source with NVRTC for the device's
// architecture (its compute capability, read from the driver), with o's
// options (the zero CompileOptions: the defaults). A source that does not
// compile returns an error that holds NVRTC's log and matches
// nvrtc.ErrorCompilation; one with an option NVRTC does not know matches
// nvrtc.ErrorInvalidOption. Without NVRTC (not installed, or a build whose
// toolkit has no pinned nvrtc.h) the error matches nvrtc.ErrNoLibrary and
// says what to do. A closed device is refused before NVRTC is called.
// Kernels called by name from Go are declared extern "C" (or their lowered
// names used).
func (d *Device) Compile(src string, o CompileOptions) (*Program, error) {
	const op = "compile"
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.h.Exit()
	opts, err := o.nvrtcOptions(d)
	if err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = "program.cu"
	}
	hnames := slices.Sorted(maps.Keys(o.Headers))
	htexts := make([]string, len(hnames))
	for i, n := range hnames {
		htexts[i] = o.Headers[n]
	}
	prog, err := nvrtc.CreateProgram(src, name, htexts, hnames)
	if err != nil {
		return nil, nvrtcErr(op, name, "", err)
	}
	defer nvrtc.DestroyProgram(&prog)
	cerr := nvrtc.CompileProgram(prog, opts)
	log, lerr := nvrtc.GetProgramLog(prog)
	if cerr != nil {
		return nil, nvrtcErr(op, name, log, cerr)
	}
	p := &Program{Output: o.Output, Log: log, Options: opts}
	switch o.Output {
	case OutputCUBIN:
		p.Image, err = nvrtc.GetCUBIN(prog)
	case OutputLTOIR:
		p.Image, err = nvrtc.GetLTOIR(prog)
	default:
		p.Image, err = nvrtc.GetPTX(prog)
	}
	if err = errors.Join(err, lerr); err != nil {
		return nil, nvrtcErr(op, name, log, err)
	}
	return p, nil
}

// CompileModule compiles src as Compile does and loads it into the device
// as LoadModule does (PTX or CUBIN output).
func (d *Device) CompileModule(src string, o CompileOptions) (*Module, *Program, error) {
	if o.Output == OutputLTOIR {
		return nil, nil, &Error{Op: "compile module", Detail: "LTO-IR is linked by nvJitLink before it is loaded",
			Fix: "compile to PTX or a CUBIN, or link the LTO-IR with package nvjitlink and load the result", Err: ErrInvalidOptions}
	}
	p, err := d.Compile(src, o)
	if err != nil {
		return nil, nil, err
	}
	m, err := d.LoadModule(p.Image)
	if err != nil {
		return nil, p, err
	}
	return m, p, nil
}

// nvrtcOptions are o as NVRTC's options, the architecture first.
func (o *CompileOptions) nvrtcOptions(d *Device) ([]string, error) {
	if o.Output < OutputPTX || o.Output > OutputLTOIR {
		return nil, &Error{Op: "compile", Detail: fmt.Sprintf("output %d is none of OutputPTX, OutputCUBIN and OutputLTOIR", o.Output),
			Fix: "set CompileOptions.Output to one of them", Err: ErrInvalidOptions}
	}
	arch := o.Arch
	if arch == "" {
		major, err := driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMajor, d.p.dev)
		if err != nil {
			return nil, driverErr("compile: read the device's compute capability", err)
		}
		minor, err := driver.DeviceGetAttribute(driver.DeviceAttributeComputeCapabilityMinor, d.p.dev)
		if err != nil {
			return nil, driverErr("compile: read the device's compute capability", err)
		}
		prefix := "compute_"
		if o.Output == OutputCUBIN {
			prefix = "sm_"
		}
		arch = fmt.Sprintf("%s%d%d", prefix, major, minor)
	}
	opts := []string{"--gpu-architecture=" + arch}
	if o.Output == OutputLTOIR {
		opts = append(opts, "-dlto")
	}
	if o.Std != "" {
		opts = append(opts, "-std="+o.Std)
	}
	if o.Debug {
		opts = append(opts, "-G")
	}
	if o.LineInfo {
		opts = append(opts, "-lineinfo")
	}
	for _, p := range o.IncludePaths {
		opts = append(opts, "-I"+p)
	}
	for _, n := range slices.Sorted(maps.Keys(o.Defines)) {
		if n == "" || strings.ContainsAny(n, "= \t\n") {
			return nil, &Error{Op: "compile", Detail: fmt.Sprintf("the define %q is no macro name", n),
				Fix: "give Defines macro names as keys and their values as values", Err: ErrInvalidOptions}
		}
		if v := o.Defines[n]; v != "" {
			opts = append(opts, "-D"+n+"="+v)
		} else {
			opts = append(opts, "-D"+n)
		}
	}
	return append(opts, o.Options...), nil
}

// nvrtcErr is an NVRTC failure of op on the program name, with its log.
func nvrtcErr(op, name, log string, err error) error {
	var ne *nvrtc.Error
	switch {
	case errors.As(err, &ne) && ne.Result == nvrtc.ErrorCompilation:
		return &Error{Op: op, Detail: name + " does not compile:\n" + strings.TrimRight(log, "\n"), Fix: "fix the source where the log says", Err: err}
	case errors.As(err, &ne):
		detail := strings.TrimPrefix(err.Error(), "cuda: ")
		if log != "" {
			detail += "\n" + strings.TrimRight(log, "\n")
		}
		return &Error{Op: op, Detail: name + ": " + detail, Err: err}
	}
	return &opError{op: op, err: err} // no NVRTC, or no cgo: the error says what to do
}

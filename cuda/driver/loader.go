package driver

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// gpaSymbol11 is cuGetProcAddress's 11.x form, which every driver from 11.3
// exports (12.0 and later alongside the 12.0 form, gpaSymbol).
const gpaSymbol11 = "cuGetProcAddress"

// DefaultLibrary is the driver library opened when CUDAGEN_LIBCUDA is unset.
const DefaultLibrary = "libcuda.so.1"

// library is the opened driver.
type library struct {
	gpa           uintptr // cuGetProcAddress entry point (gpaSymbol, or the 11.x form)
	gpaV2         bool    // gpa is the 12.0 form, with the symbol status
	driverVersion int
}

var (
	loadOnce sync.Once
	lib      *library
	loadErr  error
)

// load opens the driver library once, lazily and thread-safely.
func load() (*library, error) {
	loadOnce.Do(func() {
		if !cgoEnabled {
			loadErr = errNoCgo
			return
		}
		path := os.Getenv("CUDAGEN_LIBCUDA")
		if path == "" {
			path = DefaultLibrary
		}
		if reason := cOpen(path); reason != "" {
			loadErr = &LoadError{Library: path, Reason: reason}
			return
		}
		gpa, v2 := cSym(gpaSymbol), gpaV2
		if gpa == 0 && gpaV2 {
			// A driver before 12.0 has only the 11.x form, which resolves
			// the same entry points without the symbol status.
			gpa, v2 = cSym(gpaSymbol11), false
		}
		dv := cSym("cuDriverGetVersion")
		if gpa == 0 || dv == 0 {
			loadErr = &LoadError{Library: path, Reason: "it does not export " + gpaSymbol11 + " and cuDriverGetVersion, so it is no CUDA driver of 11.3 or later"}
			return
		}
		v, r := cDriverGetVersion(dv)
		if r != 0 {
			loadErr = &LoadError{Library: path, Reason: "cuDriverGetVersion failed: " + r.Error()}
			return
		}
		lib = &library{gpa: gpa, gpaV2: v2, driverVersion: v}
	})
	return lib, loadErr
}

// Load opens the driver library if it is not open yet. It returns an error
// matching ErrNoDriver when there is none.
func Load() error {
	_, err := load()
	return err
}

// DriverVersion is the CUDA version the installed driver supports, as
// cuDriverGetVersion reports it (13000 for 13.0).
func DriverVersion() (int, error) {
	l, err := load()
	if err != nil {
		return 0, err
	}
	return l.driverVersion, nil
}

// proc is one lazily resolved driver entry point.
type proc struct {
	name    string // resolved by this name
	symbol  string // the versioned entry point the header declares
	version int    // at this ABI version
	flags   int    // with these cuGetProcAddress flags

	addrV atomic.Uintptr // resolved
	//lint:ignore U1000 the cgo build's wrappers use it (enter, in cgo.go)
	ready atomic.Uintptr // resolved, and the context functions handed to C
	mu    sync.Mutex
	err   error
}

// addr returns the entry point, resolving it on first use.
func (p *proc) addr() (uintptr, error) {
	if a := p.addrV.Load(); a != 0 {
		return a, nil
	}
	return p.resolve()
}

func (p *proc) resolve() (uintptr, error) {
	l, err := load()
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if a := p.addrV.Load(); a != 0 {
		return a, nil
	}
	if p.err != nil {
		return 0, p.err
	}
	a, err := l.lookup(p.name, p.symbol, p.version, uint64(p.flags))
	if err != nil {
		p.err = err
		return 0, err
	}
	p.addrV.Store(a)
	return a, nil
}

func (l *library) lookup(name, symbol string, version int, flags uint64) (uintptr, error) {
	nse := &NotSupportedError{Func: symbol, Name: name, Need: version, DriverVersion: l.driverVersion, HeaderVersion: HeaderVersion}
	// A driver older than the entry point's ABI version would hand back an
	// older entry point under the same name: refuse instead.
	if l.driverVersion < version {
		return 0, nse
	}
	a, status, r := cGetProcAddress(l.gpa, l.gpaV2, name, version, flags)
	if r != 0 || a == 0 || status != 0 {
		nse.Result, nse.Status = r, status
		return 0, nse
	}
	return a, nil
}

// Lookup resolves a driver entry point by name at an ABI version through
// cuGetProcAddress, with the same checks the bindings use. It returns an
// error matching ErrNoDriver or ErrNotSupported.
func Lookup(name string, version int) (uintptr, error) {
	l, err := load()
	if err != nil {
		return 0, err
	}
	return l.lookup(name, name, version, gpaFlags)
}

// FunctionInfo describes one bound function.
type FunctionInfo struct {
	Go         string // Go name: "EventElapsedTime"
	Name       string // resolved by: "cuEventElapsedTime"
	Symbol     string // the header's entry point: "cuEventElapsedTime_v2"
	ABIVersion int    // passed to cuGetProcAddress: 12080
	Flags      int    // cuGetProcAddress flags
	Params     int    // the C parameters the entry point takes
	proc       *proc
}

// Resolve resolves the function now, returning its entry point.
func (f FunctionInfo) Resolve() (uintptr, error) {
	if f.proc == nil {
		return 0, fmt.Errorf("cuda: resolve %s: this FunctionInfo is not one of Functions; look the function up in driver.Functions", f.Name)
	}
	return f.proc.addr()
}

// The generated Functions table and procs array are parallel.
func init() {
	for i := range Functions {
		f := &Functions[i]
		p := &procs[i]
		p.name, p.symbol, p.version, p.flags = f.Name, f.Symbol, f.ABIVersion, f.Flags
		f.proc = p
	}
}

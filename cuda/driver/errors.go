package driver

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Error returns the result's message: "cuda: CUDA_ERROR_NOT_READY (600): ...".
func (r Result) Error() string {
	n := r.name()
	if n == "" {
		n = "unknown CUresult"
	}
	msg := "cuda: " + n + " (" + strconv.Itoa(int(r)) + ")"
	if d := r.description(); d != "" {
		msg += ": " + d
	}
	return msg
}

// String returns the result's C name, or its number.
func (r Result) String() string {
	if n := r.name(); n != "" {
		return n
	}
	return "CUresult(" + strconv.Itoa(int(r)) + ")"
}

// name is the C name of the result, or "".
func (r Result) name() string { return enumLookup(namesResult, int64(r)).name }

// description is the header's description of the result, lower case.
func (r Result) description() string { return enumLookup(namesResult, int64(r)).desc }

// resultBoxes holds every declared result as an error, parallel to
// namesResult, so that returning one allocates nothing.
var resultBoxes = func() []error {
	b := make([]error, len(namesResult))
	for i, n := range namesResult {
		b[i] = Result(n.v)
	}
	return b
}()

// Results lists every CUresult value the header declares.
var Results = func() []Result {
	r := make([]Result, 0, len(namesResult))
	for _, n := range namesResult {
		if len(r) == 0 || r[len(r)-1] != Result(n.v) {
			r = append(r, Result(n.v))
		}
	}
	return r
}()

// boxed returns the result as an error: nil for success, a pre-boxed value
// for every declared result.
func (r Result) boxed() error {
	if r == 0 {
		return nil
	}
	if i := enumIndex(namesResult, int64(r)); i >= 0 {
		return resultBoxes[i]
	}
	return r
}

// enumName is one row of an enum's table: value, C name, the header's description.
type enumName struct {
	v          int64
	name, desc string
}

// enumIndex finds v in a table sorted by value; among aliases the first
// (non-deprecated) row. It returns -1 if v is not declared.
func enumIndex(t []enumName, v int64) int {
	// The first of equal values: aliases follow the name printed.
	if i, found := slices.BinarySearchFunc(t, v, func(e enumName, v int64) int { return cmp.Compare(e.v, v) }); found {
		return i
	}
	return -1
}

func enumLookup(t []enumName, v int64) enumName {
	if i := enumIndex(t, v); i >= 0 {
		return t[i]
	}
	return enumName{}
}

// enumString is the C name of v, or "Type(v)".
func enumString(v int64, t []enumName, typ string) string {
	if n := enumLookup(t, v).name; n != "" {
		return n
	}
	return typ + "(" + strconv.FormatInt(v, 10) + ")"
}

// Name is the C name of the result ("CUDA_ERROR_NOT_READY"), or "" if the
// pinned header does not declare it.
func (r Result) Name() string { return r.name() }

// Description is the pinned header's description of the result, lower case.
func (r Result) Description() string { return r.description() }

// Err returns nil for Success and the result as an error otherwise, without
// allocating for any value the header declares.
func (r Result) Err() error { return r.boxed() }

// ErrNoDriver is matched (errors.Is) by every error returned because the CUDA
// driver library could not be loaded.
var ErrNoDriver = errors.New("cuda: no CUDA driver")

// ErrNotSupported is matched (errors.Is) by every error returned because the
// installed driver lacks an entry point at the version the bindings need.
var ErrNotSupported = errors.New("cuda: not supported by the installed driver")

// LoadError says why the driver library could not be loaded.
type LoadError struct {
	Library string // what was opened
	Reason  string // the dynamic loader's words
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("cuda: load the CUDA driver: cannot open %s (%s); install the NVIDIA driver, which provides libcuda.so.1, "+
		"or set CUDAGEN_LIBCUDA to its path", e.Library, e.Reason)
}

// Is reports whether target is ErrNoDriver.
func (e *LoadError) Is(target error) bool { return target == ErrNoDriver }

// NotSupportedError says that the installed driver cannot provide a function
// at the ABI version the pinned header declares.
type NotSupportedError struct {
	Func          string // the entry point the header declares, e.g. "cuEventElapsedTime_v2"
	Name          string // the name it is resolved by, e.g. "cuEventElapsedTime"
	Need          int    // the ABI version needed, e.g. 12080
	DriverVersion int    // what cuDriverGetVersion reports, e.g. 12040
	HeaderVersion int    // the CUDA_VERSION of the pinned header
	Result        Result // cuGetProcAddress's result, if it was called
	Status        int    // cuGetProcAddress's symbol status (12.0 form), if any
}

// VersionString turns 12080 into "12.8".
func VersionString(v int) string {
	return strconv.Itoa(v/1000) + "." + strconv.Itoa(v%1000/10)
}

func (e *NotSupportedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cuda: %s is not supported by the installed driver: the bindings (CUDA %s headers) need it at ABI version %s, ",
		e.Func, VersionString(e.HeaderVersion), VersionString(e.Need))
	if e.DriverVersion < e.Need {
		fmt.Fprintf(&b, "and the driver supports CUDA %s", VersionString(e.DriverVersion))
		fmt.Fprintf(&b, "; upgrade the NVIDIA driver to one for CUDA %s or newer", VersionString(e.Need))
	} else {
		// The driver is new enough, yet lacks it: upgrading to the version
		// it already has would not help.
		fmt.Fprintf(&b, "and the driver (CUDA %s) does not provide it (cuGetProcAddress: %v, status %d)", VersionString(e.DriverVersion), e.Result.String(), e.Status)
		b.WriteString("; check that libcuda.so.1 comes from the installed NVIDIA driver (CUDAGEN_LIBCUDA, the loader's path), or reinstall the driver")
	}
	if tag := olderTag(e.DriverVersion, e.HeaderVersion); tag != "" {
		fmt.Fprintf(&b, ", or build with -tags %s (bindings this driver supports)", tag)
	}
	return b.String()
}

// pinnedTags are the build tags of the pinned toolkits (headers/manifest.json),
// oldest first; a test checks them against the manifest.
var pinnedTags = []struct {
	version int
	tag     string
}{{11080, "cuda11.8"}, {12040, "cuda12.4"}, {13000, "cuda13.0"}}

// olderTag is the tag of the newest pinned toolkit older than the bindings'
// that the driver supports, or "".
func olderTag(driverVersion, headerVersion int) string {
	tag := ""
	for _, p := range pinnedTags {
		if p.version <= driverVersion && p.version < headerVersion {
			tag = p.tag
		}
	}
	return tag
}

// Is reports whether target is ErrNotSupported.
func (e *NotSupportedError) Is(target error) bool { return target == ErrNotSupported }

// flagString names the bits of v: the exact name of v if it has one;
// otherwise each named multi-bit value wholly set (never split into bits),
// widest first, then each named single bit, then what is left in hex.
// Masks (CU_..._MASK) are not values and are not printed.
func flagString(v uint64, t []enumName) string {
	if n := enumLookup(t, int64(v)).name; n != "" {
		return n
	}
	if v == 0 {
		return "0"
	}
	var parts []string
	rest := v
	for width := 64; width >= 2; width-- {
		for _, x := range t {
			u := uint64(x.v)
			if bits.OnesCount64(u) == width && rest&u == u && !strings.HasSuffix(x.name, "_MASK") {
				parts = append(parts, x.name)
				rest &^= u
			}
		}
	}
	for bit := uint64(1); bit != 0 && rest != 0; bit <<= 1 {
		if rest&bit == 0 {
			continue
		}
		if n := enumLookup(t, int64(bit)).name; n != "" {
			parts = append(parts, n)
		} else {
			parts = append(parts, "0x"+strconv.FormatUint(bit, 16))
		}
		rest &^= bit
	}
	return strings.Join(parts, "|")
}

// NoCgoError is returned by every call in a program built without cgo.
type NoCgoError struct{}

func (*NoCgoError) Error() string {
	return "cuda: load the CUDA driver: this program was built with cgo disabled (CGO_ENABLED=0), and the driver can only be called through cgo; " +
		"rebuild with CGO_ENABLED=1 and a C compiler (gcc or clang) installed"
}

// Is reports whether target is ErrNoDriver.
func (*NoCgoError) Is(target error) bool { return target == ErrNoDriver }

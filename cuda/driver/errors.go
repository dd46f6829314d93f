package driver

import (
	"errors"
	"fmt"
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
	} else {
		fmt.Fprintf(&b, "and the driver (CUDA %s) does not provide it (cuGetProcAddress: %v, status %d)", VersionString(e.DriverVersion), e.Result.String(), e.Status)
	}
	fmt.Fprintf(&b, "; upgrade the NVIDIA driver to one for CUDA %s or newer", VersionString(e.Need))
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

// flagString joins the C names of the set bits of v.
func flagString(v uint64, name func(uint64) string) string {
	if v == 0 {
		if n := name(0); n != "" {
			return n
		}
		return "0"
	}
	var parts []string
	for bit := uint64(1); bit != 0 && v != 0; bit <<= 1 {
		if v&bit == 0 {
			continue
		}
		if n := name(bit); n != "" {
			parts = append(parts, n)
		} else {
			parts = append(parts, "0x"+strconv.FormatUint(bit, 16))
		}
		v &^= bit
	}
	return strings.Join(parts, "|")
}

package cuda

import (
	"errors"
	"strings"

	"github.com/cudagen/cudagen/cuda/driver"
)

// Sentinels for errors.Is. Errors from the driver match the driver's result
// sentinels (ErrNotReady, ErrInvalidHandle, ... and every driver.Result);
// misuse the package detects itself matches ErrNotRecorded, ErrTimingDisabled,
// ErrClosed, ErrWrongDevice, ErrInvalidOptions, ErrMismatch, ErrInvalidType
// or ErrInvalid.
var (
	// ErrNoDriver: the CUDA driver library could not be loaded.
	ErrNoDriver = driver.ErrNoDriver
	// ErrNotSupported: the installed driver lacks a function the bindings need.
	ErrNotSupported = driver.ErrNotSupported
	// ErrNotReady: the work an event or stream tracks has not completed.
	ErrNotReady error = driver.ErrorNotReady
	// ErrInvalidHandle: the driver did not recognise a handle.
	ErrInvalidHandle error = driver.ErrorInvalidHandle
	// ErrNoDevice: the driver found no CUDA device.
	ErrNoDevice error = driver.ErrorNoDevice
	// ErrInvalidDevice: no device has that ordinal.
	ErrInvalidDevice error = driver.ErrorInvalidDevice

	// ErrNotRecorded: an event used for timing was never recorded.
	ErrNotRecorded = errors.New("cuda: event never recorded")
	// ErrTimingDisabled: an event used for timing was created without Timing.
	ErrTimingDisabled = errors.New("cuda: event timing disabled")
	// ErrClosed: the object (event, stream, module, buffer, graph,
	// executable graph) or its device was closed.
	ErrClosed = errors.New("cuda: use after close")
	// ErrWrongDevice: an event and a stream (or two events timed together,
	// a kernel or an executable graph and the stream launching it, an
	// executable graph and the graph updating it, or a buffer and the
	// stream of its copy or set) belong to different devices,
	// or to different contexts of one device.
	ErrWrongDevice = errors.New("cuda: event and stream on different devices")
	// ErrInvalidOptions: options that cannot go together, unknown flags, a
	// duration out of range.
	ErrInvalidOptions = errors.New("cuda: invalid options")
	// ErrMismatch: sizes that must agree do not: a launch's arguments and
	// the kernel's parameters (their number, sizes or offsets), or a copy's
	// host slice and its Buffer (their lengths).
	ErrMismatch = errors.New("cuda: sizes do not match")
	// ErrInvalidType: a Buffer's element type holds Go pointers, or has no
	// fixed C layout, or has size 0.
	ErrInvalidType = errors.New("cuda: invalid element type")
	// ErrInvalid: a nil or zero-value Device, Stream, Event, Module,
	// Kernel, Buffer, Graph or GraphExec, or a nil argument or Context. The
	// message names what was nil.
	ErrInvalid = errors.New("cuda: invalid argument")
)

// Error is an error of an operation: what was being done, why it failed
// and what to do about it. It unwraps to the cause, so errors.Is matches the
// sentinels above and driver results.
type Error struct {
	Op     string // "record event", "elapsed time"
	Detail string // the cause in words
	Fix    string // what to do
	Err    error  // the cause: a sentinel or a driver.Result
}

// Error is the message: "cuda: " + Op + ": " + Detail, the driver's result
// name where Err is one, and "; " + Fix. A nil *Error, which no function of
// this package returns, prints as "cuda: <nil *cuda.Error>" rather than
// panicking (as an error interface holding one would, in a log line).
func (e *Error) Error() string {
	if e == nil {
		return "cuda: <nil *cuda.Error>"
	}
	msg := "cuda: " + e.Op + ": " + e.Detail
	if e.Err != nil {
		if d, ok := e.Err.(driver.Result); ok {
			msg += " (" + d.String() + ")"
		}
	}
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

// Unwrap returns the cause (nil for a nil *Error).
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Error kinds are built here so that each site says op, cause and fix.

func closedErr(op, what string) error {
	return &Error{Op: op, Detail: "the " + what + " is closed", Fix: "do not use it after Close", Err: ErrClosed}
}

// hostMemErr: no host memory for an object's state word.
func hostMemErr(op string) error {
	return &Error{Op: op, Detail: "no host memory for the object's state word (calloc failed)",
		Fix: "free host memory", Err: driver.ErrorOutOfMemory}
}

func invalidErr(op, what string) error {
	return &Error{Op: op, Detail: "the " + what + " is nil or a zero value",
		Fix: "use one made by this package (cuda.GetDevice, Device.NewStream, Device.NewEvent)", Err: ErrInvalid}
}

// driverErr wraps an error from the driver layer with the operation.
func driverErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return wrapDriverErr(op, err)
}

// wrapDriverErr is driverErr of an error, apart so that driverErr inlines
// (every call's success path).
func wrapDriverErr(op string, err error) error {
	var r driver.Result
	if errors.As(err, &r) {
		return &Error{Op: op, Detail: r.Description(), Fix: fixFor(r), Err: r}
	}
	// ErrNoDriver and ErrNotSupported errors already say cause and fix.
	return &opError{op: op, err: err}
}

// opError prefixes the operation to an error that already says cause and fix.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string {
	return "cuda: " + e.op + ": " + strings.TrimPrefix(e.err.Error(), "cuda: ")
}

func (e *opError) Unwrap() error { return e.err }

// fixes says the next step for each driver result this package can meet;
// fixFor has the fallback. Every message is a step to take.
var fixes = map[driver.Result]string{
	driver.ErrorNotInitialized:             "get a device with cuda.GetDevice first, which initialises the driver",
	driver.ErrorDeinitialized:              "the driver is shutting down (the process is exiting): make no more calls",
	driver.ErrorNoDevice:                   "check that a GPU is visible: run nvidia-smi, and check CUDA_VISIBLE_DEVICES",
	driver.ErrorInvalidDevice:              "use an ordinal below cuda.DeviceCount()",
	driver.ErrorInvalidHandle:              "the handle was destroyed, belongs to a closed device, or (an event given to AdoptEvent) belongs to another context than its Device's, which the driver cannot be asked at adoption; do not use objects after Close or after their device's Close, and adopt each handle on the Device of its context",
	driver.ErrorContextIsDestroyed:         "the device's context was released; get the device again with cuda.GetDevice and create new objects",
	driver.ErrorInvalidContext:             "the device's context was released or never created; get the device again with cuda.GetDevice",
	driver.ErrorNotReady:                   "wait for the work first (Sync or Wait)",
	driver.ErrorOutOfMemory:                "free device memory (close streams and events you no longer use) or use a smaller working set",
	driver.ErrorInvalidValue:               "check the arguments against the function's documentation; this package passes its own arguments, so report it as a bug with the call that failed",
	driver.ErrorIllegalState:               "the call is not allowed in the stream's state: RecordExternal and WaitExternal are only valid during stream capture",
	driver.ErrorNotSupported:               "the device or driver does not support this operation; upgrade the NVIDIA driver or use another device",
	driver.ErrorNotPermitted:               "the operation is not permitted here (for example during stream capture); end the capture first",
	driver.ErrorInvalidPTX:                 "the driver cannot compile the kernel's PTX for this GPU; upgrade the NVIDIA driver",
	driver.ErrorUnsupportedPTXVersion:      "the driver is older than the PTX version needs; upgrade the NVIDIA driver",
	driver.ErrorJITCompilerNotFound:        "the driver's PTX JIT compiler (libnvidia-ptxjitcompiler) is missing; reinstall the NVIDIA driver",
	driver.ErrorJITCompilationDisabled:     "PTX JIT compilation is disabled (CUDA_DISABLE_PTX_JIT); unset it",
	driver.ErrorNoBinaryForGPU:             "the kernel has no code for this GPU; upgrade the NVIDIA driver",
	driver.ErrorInvalidImage:               "the kernel image is invalid for this driver; upgrade the NVIDIA driver",
	driver.ErrorIllegalAddress:             "a kernel faulted and the context is unusable: close every object and the device, and restart the process",
	driver.ErrorLaunchFailed:               "a kernel faulted and the context is unusable: close every object and the device, and restart the process",
	driver.ErrorHardwareStackError:         "a kernel faulted and the context is unusable: close every object and the device, and restart the process",
	driver.ErrorIllegalInstruction:         "a kernel faulted and the context is unusable: close every object and the device, and restart the process",
	driver.ErrorMisalignedAddress:          "a kernel faulted and the context is unusable: close every object and the device, and restart the process",
	driver.ErrorInvalidAddressSpace:        "a kernel faulted and the context is unusable: close every object and the device, and restart the process",
	driver.ErrorInvalidPc:                  "a kernel faulted and the context is unusable: close every object and the device, and restart the process",
	driver.ErrorAssert:                     "a kernel's assertion failed and the context is unusable: close every object and the device, and restart the process",
	driver.ErrorLaunchTimeout:              "a kernel ran past the display watchdog; use a GPU without a display, or shorter kernels",
	driver.ErrorLaunchOutOfResources:       "the launch needs more registers or threads than the GPU has; use a smaller launch",
	driver.ErrorCooperativeLaunchTooLarge:  "a cooperative launch's blocks must all fit on the device at once: launch fewer blocks (at most the kernel's blocks per multiprocessor times the device's multiprocessors)",
	driver.ErrorEccUncorrectable:           "the GPU reported an uncorrectable ECC error: check it with nvidia-smi -q -d ECC, and restart the process",
	driver.ErrorNvlinkUncorrectable:        "the GPU reported an uncorrectable NVLink error: check it with nvidia-smi nvlink -s, and restart the process",
	driver.ErrorDeviceUnavailable:          "the GPU is busy or unavailable (exclusive compute mode, or in use by another process); check nvidia-smi -q -d COMPUTE",
	driver.ErrorSystemDriverMismatch:       "libcuda.so.1 and the kernel module are of different driver versions; reinstall the NVIDIA driver and reboot",
	driver.ErrorCompatNotSupportedOnDevice: "the forward-compatibility driver does not support this GPU; use the driver installed with the kernel module",
	driver.ErrorSystemNotReady:             "the system is not ready (fabric manager not running?); check nvidia-smi and the fabric manager service",
	driver.ErrorStubLibrary:                "the loaded libcuda.so is the toolkit's stub; install the NVIDIA driver, or point CUDAGEN_LIBCUDA at the real libcuda.so.1",
	driver.ErrorOperatingSystem:            "an operating system call failed (shared memory for IPC?); check /dev/shm and the process limits",
	driver.ErrorMapFailed:                  "mapping shared memory failed; for IPC events, check that both processes see the same /dev/shm",
	driver.ErrorPeerAccessUnsupported:      "the two GPUs cannot access each other; order work across them with events (Stream.Wait)",
	driver.ErrorStreamCaptureUnsupported:   "the call is not allowed while a stream is being captured; end the capture first",
	driver.ErrorStreamCaptureInvalidated:   "the stream capture was invalidated by an earlier error; end the capture and start again",
	driver.ErrorStreamCaptureIsolation:     "the event was recorded in another capture; record and wait within one capture",
	driver.ErrorStreamCaptureImplicit:      "the legacy default stream cannot be used during capture; use streams from Device.NewStream",
	driver.ErrorCapturedEvent:              "the event was recorded during capture; query or synchronise it only after the capture ends",
	driver.ErrorStreamCaptureWrongThread:   "the capture was begun in the global or thread-local mode on another thread: end it on that thread, or begin it in the relaxed mode (Stream.BeginCapture does)",
	driver.ErrorTimeout:                    "the driver timed out; retry, and check the GPU with nvidia-smi",
	driver.ErrorNotFound:                   "the driver lacks the named symbol; upgrade the NVIDIA driver",
	driver.ErrorUnknown:                    "the driver gave no cause; check the GPU with nvidia-smi and the kernel log (dmesg), and restart the process",
}

func fixFor(r driver.Result) string {
	if f, ok := fixes[r]; ok {
		return f
	}
	return "look up " + r.String() + " in the CUDA driver API's CUresult reference and check the GPU with nvidia-smi; if it persists, restart the process"
}

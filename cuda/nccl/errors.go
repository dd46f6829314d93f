package nccl

import "strconv"

// enumName is one row of an enum's table: value, C name, the header's
// description.
type enumName struct {
	v          int64
	name, desc string
}

// enumString is the C name of v in t, or "Type(v)".
func enumString(v int64, t []enumName, typ string) string {
	for _, n := range t {
		if n.v == v {
			return n.name
		}
	}
	return typ + "(" + strconv.FormatInt(v, 10) + ")"
}

// String is the result's C name ("ncclInvalidArgument"), or its number.
func (r Result) String() string {
	for _, n := range namesResult {
		if n.v == int64(r) {
			return n.name
		}
	}
	return "ncclResult_t(" + strconv.Itoa(int(r)) + ")"
}

// description is the header's description of the result, if it has one.
func (r Result) description() string {
	for _, n := range namesResult {
		if n.v == int64(r) {
			return n.desc
		}
	}
	return ""
}

// Error makes a Result an error by itself: "cuda: ncclX: NAME (N): cause; fix".
func (r Result) Error() string { return (&Error{Result: r}).Error() }

// Error is a failed NCCL call: the function and its result. errors.Is
// matches it against its Result (errors.Is(err, InvalidArgument)).
type Error struct {
	Func   string // the C function: "ncclAllReduce"; "" where unknown
	Result Result
}

func (e *Error) Error() string {
	op := "nccl"
	if e.Func != "" {
		op = e.Func
	}
	msg := "cuda: " + op + ": " + e.Result.String() + " (" + strconv.Itoa(int(e.Result)) + ")"
	if h, ok := hints[e.Result.String()]; ok {
		msg += ": " + h
	} else if d := e.Result.description(); d != "" {
		msg += ": " + d
	}
	return msg
}

// Is matches the Result.
func (e *Error) Is(target error) bool {
	r, ok := target.(Result)
	return ok && r == e.Result
}

// hints say what each result means and what to do, by C name (the values
// are the same in every pinned header).
var hints = map[string]string{
	"ncclUnhandledCudaError": "a CUDA call inside NCCL failed; check the device, the stream and the buffers (device memory of the communicator's device)",
	"ncclSystemError":        "a system call failed (sockets, shared memory, files); NCCL_DEBUG=WARN says which",
	"ncclInternalError":      "NCCL failed internally; NCCL_DEBUG=WARN says why",
	"ncclInvalidArgument":    "an argument is invalid (a null or foreign buffer, a bad count, type or rank); check the arguments",
	"ncclInvalidUsage":       "the call is not allowed now (a destroyed or aborted communicator, a group not ended, mismatched calls across ranks); check the order of calls",
	"ncclRemoteError":        "a remote rank failed or a network peer went away; abort the communicator (CommAbort) and start again",
	"ncclInProgress":         "a non-blocking operation is still in progress; poll CommGetAsyncError until it is done",
}

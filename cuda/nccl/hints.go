package nccl

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

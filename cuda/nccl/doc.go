// Package nccl binds NCCL, NVIDIA's collective communication library,
// generated from the pinned nccl.h (go run ./gen). NCCL is pinned by its
// own version, not a toolkit's (headers/manifest.json, "libraries"): its
// files build under the tag nccl2.22 and, with no such tag, for the newest
// pinned NCCL; they do not depend on the cudaX.Y tags.
//
// Every function of the header is a Go function of the same name less its
// nccl prefix. Buffers are device addresses (DevicePtr, the driver's: a
// driver.MemAlloc allocation, the cuda package's Buffer.Ptr, or MemAlloc's)
// and streams the driver's (Stream is driver.Stream), so NCCL runs on the
// same streams and memory as the rest of the program; NCCL keeps no Go
// memory after a call. UniqueID has text and binary forms (MarshalText,
// UnmarshalText, MarshalBinary) so that ranks of several processes can
// exchange it through a file, a pipe or an environment variable.
//
// NCCL keeps a group's state per OS thread, and goroutines move between
// threads: make grouped calls inside Group, which keeps the goroutine on
// one thread from GroupStart to GroupEnd, never with GroupStart and
// GroupEnd called apart.
//
// Communicators are created outside groups and blocking: inside a group,
// or non-blocking, NCCL writes the new communicator when the creation
// ends, after the call has returned, so CommInitRank, CommInitRankConfig,
// CommInitAll and CommSplit (written by hand, not generated) refuse a call
// inside a group (ErrInGroup, checked in C on the calling thread) and a
// non-blocking config (ErrNonBlocking), and pass NCCL C memory for the
// communicator. CommInitRank creates the rank on the device whose context
// it is given (Device.Context()), made current in the same C call.
//
// A collective waits for every rank: when one fails or hangs, the others'
// streams never complete. Check CommGetAsyncError while waiting (an
// Event.Wait with a context, in the cuda package), and end the
// communicator with CommAbort when giving up, which returns the ranks'
// pending work; context.AfterFunc ties that to a context (see the
// example). A communicator aborted is gone: neither use nor destroy it
// afterwards. One process per GPU: the launcher kills the other ranks when
// one dies, as NCCL cannot finish a collective without them.
//
// The library is loaded on first use: libnccl.so.2, or the file
// CUDAGEN_LIBNCCL names. Without it or without cgo, every call returns an
// error matching ErrNoLibrary that says what to install; a function the
// loaded NCCL does not export (one older than the pinned header) returns
// one matching ErrNotSupported. Every result is an error (*Error) that
// says the function, the result, what it means and what to do; errors.Is
// matches it against its Result (errors.Is(err, nccl.InvalidUsage)).
package nccl

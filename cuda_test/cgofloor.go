package gputest

// The cost of one cgo crossing to an empty C function: the floor under every
// driver call made from Go, measured beside the driver benchmarks.

/*
static void cudagen_noop(void) {}
#cgo noescape cudagen_noop
#cgo nocallback cudagen_noop
*/
import "C"

func cgoNoop() { C.cudagen_noop() }

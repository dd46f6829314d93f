//go:build !cuda11.8 && !cuda12.4 && cgo

//cudagen:bound cuLogsRegisterCallback

package driver

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import "runtime/cgo"

//export cudagenLogsCallback
func cudagenLogsCallback(h C.uintptr_t, level C.int, message *C.char, length C.size_t) {
	cgo.Handle(h).Value().(*logsCallback).f(LogLevel(level), C.GoStringN(message, C.int(length)))
}

//go:build ((cuda12.4 && !cuda11.8) || (!cuda11.8 && !cuda12.4)) && cgo

//cudagen:bound cuDeviceRegisterAsyncNotification

package driver

/*
#include <stdint.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

//export cudagenAsyncCallback
func cudagenAsyncCallback(info unsafe.Pointer, h, cb C.uintptr_t) {
	cgo.Handle(h).Value().(*asyncCallback).f((*AsyncNotificationInfo)(info), AsyncCallbackHandle(cb))
}

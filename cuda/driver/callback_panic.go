package driver

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// CallbackPanic is a panic of a Go func that the driver called back.
//
// A panic cannot unwind into the driver (its frames would be skipped with
// its locks held), so every trampoline recovers one. The rule per callback
// form:
//
//   - Asynchronous callbacks, which the driver calls on a thread of its
//     own (LaunchHostFuncGo, NewHostFn, GraphAddHostNodeGo,
//     GraphHostNodeSetParamsGo, GraphExecHostNodeSetParamsGo,
//     StreamAddCallbackGo, UserObjectCreateGo's destructor), and the
//     registered callbacks, which a goroutine of the registration calls
//     (DeviceRegisterAsyncNotificationGo, LogsRegisterCallbackGo): the
//     panic is recovered and handed, as a *CallbackPanic, to the handler
//     set with SetCallbackPanicHandler, on the thread or goroutine that
//     called the func. With no handler set (the default), the process
//     crashes there with a message that names the form, the panic's value
//     and its stack, as an unrecovered panic in a goroutine would. When the
//     handler returns, the callback returns to its caller as if the func
//     had returned: the stream's later work runs, a handle due for release
//     is released, and the registration's later messages are delivered.
//   - OccupancyMaxPotentialBlockSizeGo's func, which the driver calls
//     during the call on the caller's thread: the panic is recovered, the
//     driver gets 0 bytes for that block size and every later one without
//     calling the func again, and once the driver has returned the panic
//     continues in the caller's goroutine with a *CallbackPanic, as a panic
//     of a func called directly would.
//
// A call of a func whose handle was released too early (by the release
// func of NewHostFn or GraphExecHostNodeSetParamsGo) is reported the same
// way, with Callback "a released host function" (or stream callback). A Go
// form that is called with a nil func returns an error matching
// ErrorInvalidValue instead, before the driver is called.
type CallbackPanic struct {
	Callback string // the Go form that took the func: "LaunchHostFuncGo", "LogsRegisterCallbackGo", ...
	Value    any    // what the func panicked with
	Stack    []byte // the stack of the goroutine that panicked, at the panic
}

func (p *CallbackPanic) Error() string {
	if rc, ok := p.Value.(error); ok && strings.HasPrefix(p.Callback, "a released ") {
		return rc.Error() + "; without a handler (driver.SetCallbackPanicHandler) the process stops"
	}
	return fmt.Sprintf("cuda: the Go func given to %s panicked: %v; a panic cannot unwind into the CUDA driver, so it was recovered: "+
		"recover inside the func, or handle it with driver.SetCallbackPanicHandler (without a handler the process stops)", p.Callback, p.Value)
}

// Unwrap returns the panic's value if it is an error.
func (p *CallbackPanic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

var panicHandler atomic.Pointer[func(*CallbackPanic)]

// liveCallbacks counts the Go funcs' handles not yet released (callback.go;
// the tests read it).
var liveCallbacks atomic.Int64

// SetCallbackPanicHandler sets the function that gets the panics of the Go
// funcs the driver calls back asynchronously (see CallbackPanic), and
// returns the previous one; nil restores the default, which crashes the
// process with the panic's value and stack. The handler runs on the
// thread or goroutine of the callback that panicked, which for a host
// function or a destructor is the driver's: there it must not call CUDA
// and should return quickly, and a panic of its own crashes the process.
func SetCallbackPanicHandler(h func(*CallbackPanic)) (previous func(*CallbackPanic)) {
	var old *func(*CallbackPanic)
	if h == nil {
		old = panicHandler.Swap(nil)
	} else {
		old = panicHandler.Swap(&h)
	}
	if old == nil {
		return nil
	}
	return *old
}

package driver

import (
	"fmt"
	"reflect"
	"unsafe"
)

// A typed parameter is a void* whose size depends on another parameter's
// value (cuPointerGetAttribute's attribute, a shareable handle's type):
// the generated tables give its Go type per value, and the wrapper checks
// the caller's argument against them before the call.

type typedKind uint8

const (
	typedValue   typedKind = iota // a *T: the driver reads or writes a T
	typedBool                     // a *bool: the driver's boolean, of whatever width
	typedSlice                    // a []T: its memory and size
	typedByValue                  // a T passed in the pointer itself (a file descriptor)
	typedRefused                  // the value has no data
)

// typedEntry is one row of a typed parameter's table.
type typedEntry struct {
	v    int64
	t    reflect.Type // T, or []T for a slice
	kind typedKind
}

// typedBuf is the zeroed buffer a typed value travels in: a driver that
// writes a wider integer or boolean than documented writes inside it. It
// holds no Go pointers, so cgo accepts it.
type typedBuf [16]uint64

// typedScratch is what a typed call copies back after the call.
type typedScratch struct {
	buf  *typedBuf
	dst  unsafe.Pointer
	t    reflect.Type
	kind typedKind
}

// in checks x against the table for the value v of the parameter by, and
// returns what to pass: a pointer and the size it points to, and the
// pointer or the value itself as an integer. A mismatch is an error that
// names the function, the parameter, the value and both types; err, if
// not nil, is returned as it is.
//
//lint:ignore U1000 the cgo build's wrappers use it
func (s *typedScratch) in(buf *typedBuf, entry uintptr, err error, fn, param string, by fmt.Stringer, v int64, tab []typedEntry, x any) (_ uintptr, p unsafe.Pointer, n uintptr, u uintptr, _ error) {
	p, n, u, err = s.check(buf, err, fn, param, by, v, tab, x)
	if err != nil {
		entry = 0 // no call
	}
	return entry, p, n, u, err
}

func (s *typedScratch) check(buf *typedBuf, err error, fn, param string, by fmt.Stringer, v int64, tab []typedEntry, x any) (p unsafe.Pointer, n uintptr, u uintptr, _ error) {
	if err != nil {
		return nil, 0, 0, err
	}
	var e *typedEntry
	for i := range tab {
		if tab[i].v == v {
			e = &tab[i]
			break
		}
	}
	switch {
	case e == nil:
		return nil, 0, 0, fmt.Errorf("cuda: %s: %s has no Go type for %v in these bindings (CUDA %s headers), so it is not passed: use a value the headers declare, or bindings of a newer toolkit", fn, param, by, Toolkit)
	case e.kind == typedRefused:
		return nil, 0, 0, fmt.Errorf("cuda: %s: %v has no %s to pass: use another value", fn, by, param)
	}
	want := e.t
	switch e.kind {
	case typedValue, typedBool:
		want = reflect.PointerTo(e.t)
	}
	xt := reflect.TypeOf(x)
	if xt != want {
		got := "nil"
		if xt != nil {
			got = xt.String()
		}
		return nil, 0, 0, fmt.Errorf("cuda: %s: %s for %v must be a %s (%d bytes), got %s: pass a %s", fn, param, by, want, e.t.Size(), got, want)
	}
	xv := reflect.ValueOf(x)
	switch e.kind {
	case typedByValue:
		switch xv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return nil, 0, uintptr(xv.Int()), nil
		default:
			return nil, 0, uintptr(xv.Uint()), nil
		}
	case typedSlice:
		if xv.Len() == 0 {
			return nil, 0, 0, fmt.Errorf("cuda: %s: %s for %v is an empty %s: pass a slice with room for the data", fn, param, by, want)
		}
		p = xv.UnsafePointer()
		return p, uintptr(xv.Len()) * e.t.Elem().Size(), uintptr(p), nil
	}
	if xv.IsNil() {
		return nil, 0, 0, fmt.Errorf("cuda: %s: %s for %v is a nil %s: pass the address of a %s", fn, param, by, want, e.t)
	}
	s.buf, s.dst, s.t, s.kind = buf, xv.UnsafePointer(), e.t, e.kind
	p = unsafe.Pointer(&buf[0])
	if e.kind == typedBool {
		if *(*bool)(s.dst) {
			buf[0] = 1
		}
		return p, 1, uintptr(p), nil
	}
	n = e.t.Size()
	copy(unsafe.Slice((*byte)(p), n), unsafe.Slice((*byte)(s.dst), n))
	return p, n, uintptr(p), nil
}

// out copies what the driver wrote back to the caller's variable, after a
// call that was made (err nil) and succeeded (r 0).
//
//lint:ignore U1000 the cgo build's wrappers use it
func (s *typedScratch) out(err error, r int) {
	switch {
	case err != nil || r != 0 || s.dst == nil:
	case s.kind == typedBool:
		*(*bool)(s.dst) = s.buf[0] != 0
	default: // through reflect, so that a pointer is written with the collector's barrier
		reflect.NewAt(s.t, s.dst).Elem().Set(reflect.NewAt(s.t, unsafe.Pointer(&s.buf[0])).Elem())
	}
}

// typedArg is what a typed form passes for x, a T, to its function's any
// parameter, given the picker's value v: x itself where the table passes
// the value in the pointer (a file descriptor), else a pointer to a copy.
// Each branch allocates at most what the any form's caller would (boxing
// x, or taking the address of a T).
func typedArg[T any](tab []typedEntry, v int64, x T) any {
	for i := range tab {
		if tab[i].v == v && tab[i].kind == typedByValue {
			return x
		}
	}
	p := new(T)
	*p = x
	return p
}

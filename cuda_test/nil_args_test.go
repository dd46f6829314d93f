//go:build cgo

package gputest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cudagen/cudagen/cuda"
	"github.com/cudagen/cudagen/cuda/driver"
)

// TestLayerNilArguments: the nil rule of cuda/doc.go, for every method,
// found by reflection so that a method added later is checked too. Every
// method of a nil and of a zero-value *Device, *Stream, *Event, *Graph, *GraphExec, *PreparedLaunch and *Buffer (of
// float32), and every method of a usable one given a nil argument (a nil
// pointer, func or Context, a nil driver handle, the zero
// IPCEventHandle), returns an error matching ErrInvalid (for WaitChan,
// delivers one) naming what was nil, and never panics; the methods without
// an error return zero values.
// AdoptContext(0) too. A driver.Stream of 0 is not nil: it is the NULL
// (legacy default) stream, and AdoptStream takes it.
func TestLayerNilArguments(t *testing.T) {
	dev := gpu(t)
	s := must[*cuda.Stream](t)(dev.NewStream())
	defer s.Close()
	e := must[*cuda.Event](t)(dev.NewEvent(cuda.EventOptions{Timing: true}))
	defer e.Close()
	_, k := computeSetup(t, dev)
	buf := must[*cuda.Buffer[float32]](t)(cuda.Alloc[float32](dev, 1))
	defer buf.Close()
	g := must[*cuda.Graph](t)(s.Capture(func(s *cuda.Stream) error {
		return s.Launch(k, cuda.LaunchConfig{}, buf.Arg(), driver.Arg(uint32(1)))
	}))
	defer g.Close()
	x := must[*cuda.GraphExec](t)(g.Instantiate())
	defer x.Close()
	pl := must[*cuda.PreparedLaunch](t)(k.Prepare(cuda.LaunchConfig{}, buf.Arg(), driver.Arg(uint32(1))))

	errType := reflect.TypeFor[error]()
	// nilable is whether the zero value of a parameter of type p is a nil
	// argument.
	nilable := func(p reflect.Type) bool {
		switch p.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func, reflect.Map:
			return true
		}
		return p == reflect.TypeFor[driver.Event]() || p == reflect.TypeFor[driver.Context]() || p == reflect.TypeFor[cuda.IPCEventHandle]()
	}
	// check calls m with args and checks its results.
	check := func(what string, m reflect.Value, args []reflect.Value) {
		t.Helper()
		var out []reflect.Value
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", what, r)
				}
			}()
			if m.Type().IsVariadic() {
				out = m.CallSlice(append(args[:len(args)-1], reflect.Zero(m.Type().In(m.Type().NumIn()-1))))
			} else {
				out = m.Call(args)
			}
		}()
		if len(out) == 0 {
			return
		}
		last := out[len(out)-1]
		var err error
		switch {
		case last.Type() == errType:
			err, _ = last.Interface().(error)
		case last.Type() == reflect.TypeFor[<-chan error]():
			err = <-last.Interface().(<-chan error)
		default:
			return // an accessor: a zero value, checked by not panicking
		}
		if !errors.Is(err, cuda.ErrInvalid) {
			t.Errorf("%s: got %v, want an error matching ErrInvalid", what, err)
			return
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "cuda: ") || !strings.Contains(msg, "nil") && !strings.Contains(msg, "zero") {
			t.Errorf("%s: message %q does not say what was nil", what, msg)
		}
	}
	zeros := func(m reflect.Value) []reflect.Value {
		args := make([]reflect.Value, m.Type().NumIn())
		for i := range args {
			args[i] = reflect.Zero(m.Type().In(i))
		}
		return args
	}
	usable := map[reflect.Type]reflect.Value{
		reflect.TypeFor[*cuda.Device]():          reflect.ValueOf(dev),
		reflect.TypeFor[*cuda.Stream]():          reflect.ValueOf(s),
		reflect.TypeFor[*cuda.Event]():           reflect.ValueOf(e),
		reflect.TypeFor[*cuda.Graph]():           reflect.ValueOf(g),
		reflect.TypeFor[*cuda.GraphExec]():       reflect.ValueOf(x),
		reflect.TypeFor[*cuda.PreparedLaunch]():  reflect.ValueOf(pl),
		reflect.TypeFor[*cuda.Buffer[float32]](): reflect.ValueOf(buf),
	}
	// Valid arguments, for the parameters not under test.
	valid := map[reflect.Type]reflect.Value{
		reflect.TypeFor[*cuda.Stream]():          reflect.ValueOf(s),
		reflect.TypeFor[*cuda.Event]():           reflect.ValueOf(e),
		reflect.TypeFor[context.Context]():       reflect.ValueOf(context.Background()),
		reflect.TypeFor[*cuda.Buffer[float32]](): reflect.ValueOf(buf),
	}
	checked := 0
	for typ, recv := range usable {
		name := typ.Elem().Name()
		for i := range typ.NumMethod() {
			mt := typ.Method(i) // Close has no parameter: called only on nil and zero receivers
			// A nil and a zero-value receiver, with zero arguments.
			for _, r := range []struct {
				what string
				v    reflect.Value
			}{{"nil " + name, reflect.Zero(typ)}, {"zero " + name, reflect.New(typ.Elem())}} {
				m := r.v.MethodByName(mt.Name)
				check(r.what+"."+mt.Name, m, zeros(m))
				checked++
			}
			// A usable receiver, each nilable parameter nil in turn.
			m := recv.MethodByName(mt.Name)
			for p := range m.Type().NumIn() {
				pt := m.Type().In(p)
				if m.Type().IsVariadic() && p == m.Type().NumIn()-1 || !nilable(pt) {
					continue
				}
				args := zeros(m)
				for q := range args {
					if v, ok := valid[m.Type().In(q)]; ok && q != p {
						args[q] = v
					}
				}
				check(name+"."+mt.Name+" with a nil "+pt.String(), m, args)
				checked++
			}
		}
	}
	_, err := cuda.AdoptContext(0)
	check("AdoptContext(0)", reflect.ValueOf(func() error { return err }), nil)
	// The nil driver handles also match the driver's own result.
	if _, err := dev.AdoptEvent(0, cuda.EventOptions{}); !errors.Is(err, cuda.ErrInvalidHandle) {
		t.Errorf("AdoptEvent(0): %v, want an error matching ErrInvalidHandle too", err)
	}
	if !errors.Is(err, driver.ErrorInvalidContext) {
		t.Errorf("AdoptContext(0): %v, want an error matching driver.ErrorInvalidContext too", err)
	}
	t.Logf("%d calls with a nil or zero receiver or argument", checked)
}

package cuda

import (
	"runtime"

	"github.com/cudagen/cudagen/cuda/internal/lifetime"
)

// object is what a wrapper of a driver object of one context (Graph,
// GraphExec, Module, SharedPool, Buffer) holds besides the driver handle:
// its context and Device, its lifetime handle (nil in a zero wrapper),
// whether it is adopted, and its garbage-collection backstop. The wrappers
// embed it; their accessors and Close read it through objectOf, which
// gives the zero object for a nil wrapper.
type object struct {
	p       *ctxState
	dev     *Device
	r       *handle
	foreign bool // adopted (AdoptGraph, AdoptModule, AdoptBuffer ...): Close releases the wrapper only
	cleanup runtime.Cleanup
}

// wrapper is a pointer to a type that embeds object.
type wrapper[T any] interface {
	*T
	base() *object
}

// objectOf is x's object: the zero object for a nil x.
func objectOf[T any, P wrapper[T]](x P) object {
	if x == nil {
		return object{}
	}
	return *x.base()
}

// wrap makes x, a new wrapper, the one of d's context around the lifetime
// handle r (adopted where foreign), with its backstop, and returns it.
func wrap[T any, P wrapper[T]](x P, d *Device, r *handle, foreign bool) P {
	o := x.base()
	o.p, o.dev, o.r, o.foreign = d.p, d, r, foreign
	o.cleanup = backstop((*T)(x), r)
	return x
}

// describe is the String of a wrapper of o, of the driver handle h: what
// it wraps and where, or that it is invalid (a nil or zero wrapper).
func (o object) describe(what string, h uintptr) string {
	if o.r == nil {
		return "cuda " + what + " <invalid>"
	}
	return describe(what, h, o.p, o.foreign)
}

// close is the Close of a wrapper of o: it closes the lifetime handle,
// whose object the flusher destroys (an adopted one's wrapper is released
// only), and stops the backstop. It never blocks and is idempotent. A nil
// or zero wrapper is an error matching ErrInvalid, naming op and what.
func (o object) close(op, what string) error {
	if o.r == nil {
		return invalidErr(op, what)
	}
	if o.r.Close(false) {
		o.cleanup.Stop()
	}
	return nil
}

// register makes the lifetime handle of h, a driver object of kind just
// made (or, of lifetime.KindAdopted, adopted) in d's context, and lists it
// among the context's open objects (an adopted one among d's): the last
// Device's Close (d's, for an adopted one) closes it. Where it cannot, no
// host memory for the handle or the context closed meanwhile (which names
// d in that error), it calls destroy and returns the error; the call in
// flight that keeps the context (on d, or on an object of its context)
// lets destroy call the driver.
func (d *Device) register(op, which string, h uintptr, kind lifetime.Kind, destroy func()) (*handle, error) {
	list := &d.p.life.Open
	if kind == lifetime.KindAdopted {
		list = &d.adopted
	}
	r := lifetime.NewHandle(&d.p.life, h, kind, list)
	if r == nil {
		destroy()
		return nil, hostMemErr(op)
	}
	if !d.p.add(r, d) {
		destroy()
		return nil, closedErr(op, which)
	}
	return r, nil
}

// nilOr is get(x), or the zero value for a nil x: the rule of the
// accessors, which a nil receiver answers with zero values.
func nilOr[X, F any](x *X, get func(*X) F) F {
	if x == nil {
		var zero F
		return zero
	}
	return get(x)
}

// orClose returns x, made by a call that returned err, once first(x) has
// succeeded; where first fails, it closes x and returns first's error.
func orClose[X interface{ Close() error }](x X, err error, first func(X) error) (X, error) {
	var none X
	if err != nil {
		return none, err
	}
	if err := first(x); err != nil {
		x.Close()
		return none, err
	}
	return x, nil
}

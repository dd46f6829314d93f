package gputest

// The C side of the in-process harness (inproc_test.go): the same driver
// calls as bench/cbench, made through entry points resolved by the loader
// (cuGetProcAddress at the pinned ABI versions), either looped inside one
// cgo call (the C loop: what C pays) or one per cgo call with no context
// check (the raw cgo path: what a binding that locks its thread pays).

/*
#include <stdint.h>

enum { IP_NOOP, IP_RECORD, IP_QUERY, IP_RECORD_QUERY, IP_ELAPSED, IP_SYNC, IP_CREATE_DESTROY, IP_RECORD_SYNC, IP_GET_CURRENT };

static struct {
	uintptr_t record, query, sync, elapsed, create, destroy, set, get;
	uintptr_t ctx, stream, ev, ta, tb;
} ip;

static void ip_setup(uintptr_t record, uintptr_t query, uintptr_t sync, uintptr_t elapsed,
		uintptr_t create, uintptr_t destroy, uintptr_t set, uintptr_t get,
		uintptr_t ctx, uintptr_t stream, uintptr_t ev, uintptr_t ta, uintptr_t tb) {
	ip.record = record; ip.query = query; ip.sync = sync; ip.elapsed = elapsed;
	ip.create = create; ip.destroy = destroy; ip.set = set; ip.get = get;
	ip.ctx = ctx; ip.stream = stream; ip.ev = ev; ip.ta = ta; ip.tb = tb;
}

typedef int (*ip_fn1)(void *);
typedef int (*ip_fn2)(void *, void *);

// ip_body is one operation, exactly as bench/cbench does it (events without
// timing, CU_EVENT_DISABLE_TIMING = 2 for create); NOT_READY (600) is not an
// error. ev is the event recorded (ip.ev, or ip.ta for the timing variant).
static inline int ip_body(int op, uintptr_t ev) {
	int r = 0;
	switch (op) {
	case IP_NOOP:
		break;
	case IP_RECORD:
		r = ((ip_fn2)ip.record)((void *)ev, (void *)ip.stream);
		break;
	case IP_QUERY:
		r = ((ip_fn1)ip.query)((void *)ev);
		break;
	case IP_RECORD_QUERY:
		r = ((ip_fn2)ip.record)((void *)ev, (void *)ip.stream);
		if (r == 0) r = ((ip_fn1)ip.query)((void *)ev);
		break;
	case IP_ELAPSED: {
		float ms;
		r = ((int (*)(float *, void *, void *))ip.elapsed)(&ms, (void *)ip.ta, (void *)ip.tb);
		break;
	}
	case IP_SYNC:
		r = ((ip_fn1)ip.sync)((void *)ev);
		break;
	case IP_CREATE_DESTROY: {
		void *e = 0;
		r = ((int (*)(void **, unsigned))ip.create)(&e, 2);
		if (r == 0) r = ((ip_fn1)ip.destroy)(e);
		break;
	}
	case IP_RECORD_SYNC:
		r = ((ip_fn2)ip.record)((void *)ev, (void *)ip.stream);
		if (r == 0) r = ((ip_fn1)ip.sync)((void *)ev);
		break;
	case IP_GET_CURRENT: {
		void *cur;
		r = ((int (*)(void **))ip.get)(&cur);
		break;
	}
	}
	return r == 600 ? 0 : r;
}

// ip_loop: n operations in one cgo call, the context made current once.
static int ip_loop(int op, uintptr_t ev, long n) {
	int r = ((ip_fn1)ip.set)((void *)ip.ctx);
	for (long i = 0; r == 0 && i < n; i++) {
		r = ip_body(op, ev);
	}
	return r;
}

// ip_once: one operation per cgo call, no context check (the calling
// thread is locked and has the context current).
static int ip_once(int op, uintptr_t ev) { return ip_body(op, ev); }

// Another context, for the fast-path test: cuCtxCreate at ABI 3020
// (CUcontext *, unsigned flags, CUdevice) and cuCtxDestroy at 4000.
typedef struct { int r; uintptr_t ctx; } ip_ctx_ret;
static ip_ctx_ret ip_ctx_create(uintptr_t fn, int dev) {
	ip_ctx_ret ret = {0, 0};
	void *c = 0;
	ret.r = ((int (*)(void **, unsigned, int))fn)(&c, 0, dev);
	ret.ctx = (uintptr_t)c;
	return ret;
}
static int ip_ctx_destroy(uintptr_t fn, uintptr_t ctx) { return ((ip_fn1)fn)((void *)ctx); }

*/
import "C"

// The operations of the C side, in ip_body's numbering.
const (
	ipNoop = iota
	ipRecord
	ipQuery
	ipRecordQuery
	ipElapsed
	ipSync
	ipCreateDestroy
	ipRecordSync
	ipGetCurrent
)

// ipFns are the entry points the C side calls.
type ipFns struct{ record, query, sync, elapsed, create, destroy, set, get uintptr }

func ipSetup(f ipFns, ctx, stream, ev, ta, tb uintptr) {
	C.ip_setup(C.uintptr_t(f.record), C.uintptr_t(f.query), C.uintptr_t(f.sync), C.uintptr_t(f.elapsed),
		C.uintptr_t(f.create), C.uintptr_t(f.destroy), C.uintptr_t(f.set), C.uintptr_t(f.get),
		C.uintptr_t(ctx), C.uintptr_t(stream), C.uintptr_t(ev), C.uintptr_t(ta), C.uintptr_t(tb))
}

// ipLoop runs op n times inside one cgo call; it returns the first driver error code.
func ipLoop(op int, ev uintptr, n int) int {
	return int(C.ip_loop(C.int(op), C.uintptr_t(ev), C.long(n)))
}

// ipOnce runs op once, in its own cgo call.
func ipOnce(op int, ev uintptr) int { return int(C.ip_once(C.int(op), C.uintptr_t(ev))) }

// ipCtxCreate calls cuCtxCreate (resolved at ABI 3020) through fn: a new
// context on dev, made current on the calling thread.
func ipCtxCreate(fn uintptr, dev int32) (uintptr, int) {
	r := C.ip_ctx_create(C.uintptr_t(fn), C.int(dev))
	return uintptr(r.ctx), int(r.r)
}

// ipCtxDestroy calls cuCtxDestroy (resolved at ABI 4000) through fn.
func ipCtxDestroy(fn, ctx uintptr) int {
	return int(C.ip_ctx_destroy(C.uintptr_t(fn), C.uintptr_t(ctx)))
}

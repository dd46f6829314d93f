//go:build cgo

package driver

/*
#include <stdint.h>
#include <time.h>

extern int cg_make_current(uintptr_t ctx);

typedef struct { int r; long long sleep_ns; } cg_poll_ret;

static long long cg_now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

// cg_poll_event polls cuEventQuery with ctx current (0: as it is): back to back for spin_ns,
// then sleeping between polls, the sleep doubling from sleep_ns up to
// max_sleep_ns, until the event completes, an error, or budget_ns has passed
// (then it returns CUDA_ERROR_NOT_READY and the sleep to resume with).
static cg_poll_ret cg_poll_event(uintptr_t ctx, uintptr_t query, uintptr_t ev, long long spin_ns,
		long long budget_ns, long long sleep_ns, long long max_sleep_ns) {
	cg_poll_ret ret = {0, sleep_ns};
	int r;
	if (ctx) { // 0: the thread's current context is left as it is
		r = cg_make_current(ctx);
		if (r != 0) {
			ret.r = r;
			return ret;
		}
	}
	// The first polls read no clock: work about to finish is caught at the
	// cost of the queries alone.
	int untimed = spin_ns > 0 ? 32 : 1;
	for (int i = 0; i < untimed; i++) {
		r = ((int (*)(void *))query)((void *)ev);
		if (r != 600) {
			ret.r = r;
			return ret;
		}
	}
	long long t0 = cg_now_ns();
	for (;;) {
		long long el = cg_now_ns() - t0;
		if (el >= budget_ns) {
			ret.r = 600;
			return ret;
		}
		if (el >= spin_ns) {
			struct timespec ts = {0, ret.sleep_ns};
			nanosleep(&ts, NULL);
			if (ret.sleep_ns < max_sleep_ns) {
				ret.sleep_ns *= 2;
				if (ret.sleep_ns > max_sleep_ns) {
					ret.sleep_ns = max_sleep_ns;
				}
			}
		}
		r = ((int (*)(void *))query)((void *)ev);
		if (r != 600) {
			ret.r = r;
			return ret;
		}
	}
}
#cgo noescape cg_poll_event
#cgo nocallback cg_poll_event
*/
import "C"

import "time"

// pollQuery is cuEventQuery's entry point.
var pollQuery = procNamed("cuEventQuery")

// PollEventCtx waits for an event with ctx current (ctx 0: the thread's
// current context as it is, like the other *Ctx functions), in one cgo
// call: it polls cuEventQuery back to back for spin, then sleeps between
// polls (sleep, doubling up to maxSleep) until the event completes or budget
// has passed. It returns nil when the event is complete, ErrorNotReady when
// budget ran out, and the sleep to resume with.
func PollEventCtx(ctx Context, ev Event, spin, budget, sleep, maxSleep time.Duration) (time.Duration, error) {
	fn, err := pollQuery.enter()
	if err != nil {
		return sleep, err
	}
	if sleep <= 0 {
		sleep = time.Microsecond
	}
	ret := C.cg_poll_event(C.uintptr_t(ctx), C.uintptr_t(fn), C.uintptr_t(ev), C.longlong(spin),
		C.longlong(budget), C.longlong(sleep), C.longlong(maxSleep))
	return time.Duration(ret.sleep_ns), Result(ret.r).boxed()
}

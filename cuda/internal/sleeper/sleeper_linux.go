//go:build cgo && linux

package sleeper

/*
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

// The pool. Every shared field is under mu, but a job's state word, which
// the poller and Go's cancellation change with atomics.
//
// A job's state is its submission's sequence number (30 bits) over two
// bits: ACTIVE (waiting), BUSY (the poller is querying it), CANCELLED (Go
// gave it up: the poller drops it), DONE (answered). The poller holds a
// polled job with the state it was submitted with, and touches it only
// through a compare-and-swap from that value: a job cancelled, or reused
// for another submission, is dropped, never queried.
enum { ST_DONE = 0, ST_ACTIVE = 1, ST_BUSY = 2, ST_CANCELLED = 3 };
enum { NOT_READY = 600 };

typedef struct {
	uint32_t state;
	int32_t id;  // Go's index of the job
	int32_t res; // the driver's answer
	int32_t pad;
	uintptr_t ev, ctx;
	long long start; // when it was submitted (ns, CLOCK_MONOTONIC)
} sl_job;

typedef struct { int32_t id, res; } sl_done;
typedef struct { sl_job *j; uint32_t want; } sl_ref;

typedef int (*sl_fn)(void *);
static sl_fn f_sync, f_query, f_setcur;
static int efd = -1;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t blk_cond, poll_cond;
enum { MAX_BLOCKERS = 16 }; // MaxBlockers
static int blk_threads, blk_reserved;    // threads >= reserved, always
static sl_job *blk_q[MAX_BLOCKERS];            // blocked jobs not yet taken
static int blk_n;
static sl_ref *poll_q;                   // polled jobs not yet taken by the poller
static int poll_n, poll_cap, poll_running;
static sl_ref *act;                      // the poller's jobs (its own)
static int act_n, act_cap;
static sl_done *done_q;                  // answers for Go's dispatcher
static int done_n, done_cap, signalled;
static int outstanding;                  // jobs whose answer may still be queued: done_q's room
static long long n_blocks, n_polls;
static long long idle_ns = 10000000000LL; // a thread idle this long exits

static long long sl_now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sl_deadline(struct timespec *ts, long long ns) {
	long long t = sl_now() + ns;
	ts->tv_sec = t / 1000000000LL;
	ts->tv_nsec = t % 1000000000LL;
}

// sl_call calls f(ev); on an error but NOT_READY, once more with the
// context made current on this thread (as the package's calls without a
// current context do).
static int sl_call(sl_fn f, sl_job *j) {
	int r = f((void *)j->ev);
	if (r != 0 && r != NOT_READY && j->ctx != 0 && f_setcur((void *)j->ctx) == 0) {
		r = f((void *)j->ev);
	}
	return r;
}

static void sl_wake(void) {
	uint64_t one = 1;
	while (write(efd, &one, 8) < 0 && errno == EINTR) {
	}
}

// sl_post queues an answer for Go (room was made at submission), under mu;
// it reports whether the eventfd must be written (outside mu).
static int sl_post(sl_job *j, int r) {
	j->res = r;
	done_q[done_n].id = j->id;
	done_q[done_n].res = r;
	done_n++;
	if (signalled) return 0;
	signalled = 1;
	return 1;
}

// sl_room makes room for one more answer, under mu.
static int sl_room(void) {
	if (outstanding + 1 <= done_cap) return 1;
	int cap = done_cap ? 2 * done_cap : 64;
	sl_done *q = realloc(done_q, (size_t)cap * sizeof *q);
	if (q == NULL) return 0;
	done_q = q;
	done_cap = cap;
	return 1;
}

static int sl_start_thread(void *(*fn)(void *)) {
	pthread_attr_t a;
	pthread_t th;
	if (pthread_attr_init(&a) != 0) return 0;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 1 << 20); // the driver's call, no more
	// With every signal blocked, as runtime/cgo starts its threads: the
	// process's signals go to Go's threads, never to these.
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int ok = pthread_create(&th, &a, fn, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	return ok;
}

// A blocking thread: takes a job, sleeps in cuEventSynchronize, posts the
// answer. It exits after idling 10 s, if no reservation needs it.
static void *sl_blk_main(void *arg) {
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (blk_n == 0) {
			struct timespec dl;
			sl_deadline(&dl, idle_ns);
			int r = pthread_cond_timedwait(&blk_cond, &mu, &dl);
			if (r == ETIMEDOUT && blk_n == 0 && blk_threads > blk_reserved) {
				blk_threads--;
				pthread_mutex_unlock(&mu);
				return NULL;
			}
		}
		sl_job *j = blk_q[--blk_n];
		pthread_mutex_unlock(&mu);
		int r = sl_call(f_sync, j);
		pthread_mutex_lock(&mu);
		blk_reserved--; // before the answer: the waiter's next Reserve finds this thread
		int w = sl_post(j, r);
		if (w) {
			pthread_mutex_unlock(&mu);
			sl_wake();
			pthread_mutex_lock(&mu);
		}
	}
}

// The poller's table of the events queried this round (open addressing,
// by event handle; an entry counts only if its round is this one).
typedef struct { uintptr_t ev; long long sweep; int res; } sl_seen;
static sl_seen *seen;
static int seen_cap;
static long long sweep;

// seen_fit makes the table at least twice n (a power of two); 0 if it
// cannot (then nothing is shared).
static int seen_fit(int n) {
	if (2 * n <= seen_cap) return 1;
	int cap = seen_cap ? seen_cap : 64;
	while (cap < 2 * n) cap *= 2;
	sl_seen *t = calloc((size_t)cap, sizeof *t);
	if (t == NULL) return 0;
	free(seen);
	seen = t;
	seen_cap = cap;
	return 1;
}

// seen_at is ev's entry this round: its own, or a free one (an older
// round's) to fill.
static sl_seen *seen_at(uintptr_t ev) {
	unsigned long long h = (unsigned long long)ev * 0x9e3779b97f4a7c15ULL;
	for (int i = (int)(h >> 40) & (seen_cap - 1);; i = (i + 1) & (seen_cap - 1)) {
		if (seen[i].sweep != sweep || seen[i].ev == ev) return &seen[i];
	}
}

// The poller: queries every polled job, posts the answers, sleeps a
// sixteenth of the youngest job's age (20 µs to 1 ms) or until a job comes.
// It exits after idling 10 s.
static void *sl_poll_main(void *arg) {
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		if (poll_n > 0) {
			if (act_n + poll_n > act_cap) {
				int cap = act_cap ? act_cap : 64;
				while (cap < act_n + poll_n) cap *= 2;
				sl_ref *a = realloc(act, (size_t)cap * sizeof *a);
				if (a != NULL) {
					act = a;
					act_cap = cap;
				}
			}
			int k = poll_n < act_cap - act_n ? poll_n : act_cap - act_n;
			memcpy(act + act_n, poll_q, (size_t)k * sizeof *act);
			memmove(poll_q, poll_q + k, (size_t)(poll_n - k) * sizeof *poll_q);
			act_n += k;
			poll_n -= k;
		}
		if (act_n == 0) {
			struct timespec dl;
			sl_deadline(&dl, idle_ns);
			int r = pthread_cond_timedwait(&poll_cond, &mu, &dl);
			if (r == ETIMEDOUT && poll_n == 0) {
				poll_running = 0;
				pthread_mutex_unlock(&mu);
				return NULL;
			}
			continue;
		}
		pthread_mutex_unlock(&mu);
		long long now = sl_now(), youngest = LLONG_MAX;
		int k = 0, dropped = 0, wake = 0;
		sweep++;
		int share = seen_fit(act_n); // without the table, every job is queried
		for (int i = 0; i < act_n; i++) {
			sl_job *j = act[i].j;
			uint32_t want = act[i].want, seq = want & ~3u;
			if (!__atomic_compare_exchange_n(&j->state, &want, seq | ST_BUSY, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
				dropped++; // cancelled, or reused
				continue;
			}
			// Many jobs may wait for one event: it is queried once a round.
			int r;
			sl_seen *e = share ? seen_at(j->ev) : NULL;
			if (e != NULL && e->sweep == sweep) {
				r = e->res;
			} else {
				r = sl_call(f_query, j);
				if (e != NULL) {
					e->ev = j->ev;
					e->sweep = sweep;
					e->res = r;
				}
			}
			if (r == NOT_READY) {
				__atomic_store_n(&j->state, seq | ST_ACTIVE, __ATOMIC_SEQ_CST);
				act[k++] = act[i];
				if (now - j->start < youngest) youngest = now - j->start;
				continue;
			}
			pthread_mutex_lock(&mu);
			__atomic_store_n(&j->state, seq | ST_DONE, __ATOMIC_SEQ_CST);
			wake |= sl_post(j, r);
			pthread_mutex_unlock(&mu);
		}
		act_n = k;
		if (wake) sl_wake();
		pthread_mutex_lock(&mu);
		outstanding -= dropped;
		if (act_n == 0 || poll_n > 0) continue;
		long long sleep = youngest / 16;
		if (sleep < 20000) sleep = 20000;
		if (sleep > 1000000) sleep = 1000000;
		struct timespec dl;
		sl_deadline(&dl, sleep);
		pthread_cond_timedwait(&poll_cond, &mu, &dl);
	}
}

// sl_setup gives the pool its entry points and makes its eventfd; the
// eventfd, or -1.
static int sl_setup(uintptr_t sync, uintptr_t query, uintptr_t setcur) {
	f_sync = (sl_fn)sync;
	f_query = (sl_fn)query;
	f_setcur = (sl_fn)setcur;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&blk_cond, &ca);
	pthread_cond_init(&poll_cond, &ca);
	pthread_condattr_destroy(&ca);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return efd;
}

static sl_job *sl_new_job(int32_t id) {
	sl_job *j = calloc(1, sizeof *j);
	if (j != NULL) j->id = id;
	return j;
}

// sl_reserve reserves a blocking thread for one sl_block (starting one if
// need be); 0 if MaxBlockers are reserved or no thread can start.
static int sl_reserve(void) {
	pthread_mutex_lock(&mu);
	if (blk_reserved >= MAX_BLOCKERS) {
		pthread_mutex_unlock(&mu);
		return 0;
	}
	blk_reserved++;
	if (blk_threads < blk_reserved) {
		if (!sl_start_thread(sl_blk_main)) {
			blk_reserved--;
			pthread_mutex_unlock(&mu);
			return 0;
		}
		blk_threads++;
	}
	pthread_mutex_unlock(&mu);
	return 1;
}

static void sl_unreserve(void) {
	pthread_mutex_lock(&mu);
	blk_reserved--;
	pthread_mutex_unlock(&mu);
}

// sl_block hands a reserved thread the job; -1 (the reservation given
// back) if there is no room for its answer.
static int sl_block(sl_job *j) {
	pthread_mutex_lock(&mu);
	if (!sl_room()) {
		blk_reserved--;
		pthread_mutex_unlock(&mu);
		return -1;
	}
	outstanding++;
	n_blocks++;
	j->start = sl_now();
	blk_q[blk_n++] = j;
	pthread_cond_signal(&blk_cond);
	pthread_mutex_unlock(&mu);
	return 0;
}

// sl_poll hands the poller the job, whose state Go set ACTIVE; -1 if
// there is no room or no poller thread.
static int sl_poll(sl_job *j) {
	pthread_mutex_lock(&mu);
	if (!sl_room()) goto fail;
	if (poll_n == poll_cap) {
		int cap = poll_cap ? 2 * poll_cap : 64;
		sl_ref *q = realloc(poll_q, (size_t)cap * sizeof *q);
		if (q == NULL) goto fail;
		poll_q = q;
		poll_cap = cap;
	}
	if (!poll_running) {
		if (!sl_start_thread(sl_poll_main)) goto fail;
		poll_running = 1;
	}
	j->start = sl_now();
	poll_q[poll_n].j = j;
	poll_q[poll_n].want = __atomic_load_n(&j->state, __ATOMIC_SEQ_CST);
	poll_n++;
	outstanding++;
	n_polls++;
	pthread_cond_signal(&poll_cond);
	pthread_mutex_unlock(&mu);
	return 0;
fail:
	pthread_mutex_unlock(&mu);
	return -1;
}

// sl_drain moves up to n answers to out; how many.
static int sl_drain(sl_done *out, int n) {
	pthread_mutex_lock(&mu);
	int k = n < done_n ? n : done_n;
	memcpy(out, done_q, (size_t)k * sizeof *out);
	memmove(done_q, done_q + k, (size_t)(done_n - k) * sizeof *done_q);
	done_n -= k;
	outstanding -= k;
	if (done_n == 0) signalled = 0;
	pthread_mutex_unlock(&mu);
	return k;
}

static void sl_kick(void) { sl_wake(); }

typedef struct { int blockers, reserved, poller; long long blocks, polls; } sl_stats_t;
static sl_stats_t sl_stats(void) {
	pthread_mutex_lock(&mu);
	sl_stats_t s = {blk_threads, blk_reserved, poll_running, n_blocks, n_polls};
	pthread_mutex_unlock(&mu);
	return s;
}

// For the tests: a "driver" whose events are numbers: event n completes
// n ms after the test's clock started (sl_test_t0), answering 0 (sync
// sleeps until then; query answers NOT_READY), and event 5000 answers at
// once CUDA_ERROR_INVALID_CONTEXT (201) unless context 42 was made current
// on the thread since its last answer.
static long long sl_test_t0;
static _Thread_local uintptr_t sl_test_cur;
static int sl_test_refused(void) {
	int r = sl_test_cur == 42 ? 0 : 201;
	sl_test_cur = 0;
	return r;
}
static int sl_test_sync(void *ev) {
	if ((uintptr_t)ev == 5000) return sl_test_refused();
	long long due = sl_test_t0 + (long long)(uintptr_t)ev * 1000000LL;
	for (long long n = sl_now(); n < due; n = sl_now()) {
		struct timespec ts = {0, due - n > 1000000 ? 1000000 : due - n};
		nanosleep(&ts, NULL);
	}
	return 0;
}
static int sl_test_query(void *ev) {
	if ((uintptr_t)ev == 5000) return sl_test_refused();
	return sl_now() < sl_test_t0 + (long long)(uintptr_t)ev * 1000000LL ? NOT_READY : 0;
}
static int sl_test_setcur(void *ctx) { sl_test_cur = (uintptr_t)ctx; return 0; }
static uintptr_t sl_test_sync_fn(void) { return (uintptr_t)sl_test_sync; }
static uintptr_t sl_test_query_fn(void) { return (uintptr_t)sl_test_query; }
static uintptr_t sl_test_setcur_fn(void) { return (uintptr_t)sl_test_setcur; }
static void sl_test_clock(void) { sl_test_t0 = sl_now(); }
static void sl_test_idle(long long ns) {
	pthread_mutex_lock(&mu);
	idle_ns = ns;
	pthread_cond_broadcast(&blk_cond);
	pthread_cond_broadcast(&poll_cond);
	pthread_mutex_unlock(&mu);
}
*/
import "C"

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// MaxBlockers is how many Block jobs may run at once in the process, by
// default: past it, Reserve fails and the caller polls.
const MaxBlockers = 16

// The C side's bound is the same (a compile-time check: either difference
// negative fails to convert).
const _ = uint(MaxBlockers-C.MAX_BLOCKERS) + uint(C.MAX_BLOCKERS-MaxBlockers)

const (
	stDone      = 0
	stActive    = 1
	stBusy      = 2
	stCancelled = 3
	seqMask     = 1<<30 - 1
)

// A Block job's answer goes to its waiter, or, once the waiter gave up, to
// Abandoned.
const (
	jobWaiting uint32 = iota
	jobGaveUp
	jobAnswered
)

// Job is one wait, reused: Get, then Block or Poll, then Wait, then Put
// (or, for a Block job given up, Abandoned puts it back).
type Job struct {
	c     *C.sl_job
	ch    chan int32 // the answer, buffered: one send per submission
	seq   uint32
	block bool
	gave  atomic.Uint32 // Block jobs: jobWaiting, jobGaveUp, jobAnswered
	// Owner is the caller's, set once and kept across reuse (this package
	// never reads it).
	Owner any
}

// Abandoned receives the answer of a Block job whose Wait gave up, on the
// dispatcher's goroutine; it must Put the job back. The caller sets it
// before any Block. It must not block for long nor panic.
var Abandoned func(j *Job, res int32)

var pool struct {
	once    sync.Once
	ok      bool
	efd     *os.File
	mu      sync.Mutex
	jobs    []*Job // by id
	free    []*Job
	owed    int  // submissions whose answer is owed to the dispatcher
	running bool // a dispatcher runs
}

// Setup gives the pool the driver's entry points: cuEventSynchronize,
// cuEventQuery and cuCtxSetCurrent. The first call counts; it reports
// whether jobs can run.
func Setup(sync, query, setCurrent uintptr) bool {
	pool.once.Do(func() {
		if sync == 0 || query == 0 || setCurrent == 0 {
			return
		}
		fd := C.sl_setup(C.uintptr_t(sync), C.uintptr_t(query), C.uintptr_t(setCurrent))
		if fd < 0 {
			return
		}
		f := os.NewFile(uintptr(fd), "cuda-waiters")
		// In the netpoller (a non-blocking descriptor): the dispatcher's
		// read parks the goroutine, not a thread.
		if err := f.SetReadDeadline(time.Time{}); err != nil {
			f.Close()
			return
		}
		pool.efd, pool.ok = f, true
	})
	return pool.ok
}

// Get returns an idle job; nil if jobs cannot run here (Setup failed) or
// there is no memory.
func Get() *Job {
	if !pool.ok {
		return nil
	}
	pool.mu.Lock()
	if n := len(pool.free); n > 0 {
		j := pool.free[n-1]
		pool.free = pool.free[:n-1]
		pool.mu.Unlock()
		return j
	}
	id := len(pool.jobs)
	c := C.sl_new_job(C.int32_t(id))
	if c == nil {
		pool.mu.Unlock()
		return nil
	}
	j := &Job{c: c, ch: make(chan int32, 1)}
	pool.jobs = append(pool.jobs, j)
	pool.mu.Unlock()
	return j
}

// Put gives back a job whose answer was taken (or that was cancelled, or
// never submitted). Its C memory is kept: the poller may hold it a while
// (it never touches it again), and the next submission is another.
func (j *Job) Put() {
	pool.mu.Lock()
	pool.free = append(pool.free, j)
	pool.mu.Unlock()
}

// Reserve reserves a blocking thread for one Block; false if MaxBlockers
// are reserved (or no thread could start). Unreserve gives it back
// unused.
func Reserve() bool { return pool.ok && C.sl_reserve() != 0 }

// Unreserve gives back a reservation that no Block used.
func Unreserve() { C.sl_unreserve() }

// Block has the reserved thread call cuEventSynchronize(ev) (again with ctx
// made current should the driver refuse without): Wait takes the answer.
// False if it could not (then the reservation is given back and no job
// runs).
func (j *Job) Block(ctx, ev uintptr) bool { return j.submit(true, ctx, ev) }

// Poll has the poller query ev until it is complete or the driver fails:
// Wait takes the answer. False if it could not (no thread or no memory).
func (j *Job) Poll(ctx, ev uintptr) bool { return j.submit(false, ctx, ev) }

// submit hands j, on ev and ctx, to the reserved thread (block) or the
// poller; false if it could not (the answer is then not owed).
func (j *Job) submit(block bool, ctx, ev uintptr) bool {
	j.seq = (j.seq + 1) & seqMask
	j.block = block
	j.gave.Store(jobWaiting)
	j.c.ev, j.c.ctx = C.uintptr_t(ev), C.uintptr_t(ctx)
	j.state().Store(j.seq<<2 | stActive)
	pool.mu.Lock()
	pool.owed++
	start := !pool.running
	pool.running = true
	pool.mu.Unlock()
	if start {
		go dispatch()
	}
	var rc C.int
	if block {
		rc = C.sl_block(j.c)
	} else {
		rc = C.sl_poll(j.c)
	}
	if rc != 0 {
		unowe()
		return false
	}
	return true
}

func (j *Job) state() *atomic.Uint32 { return (*atomic.Uint32)(unsafe.Pointer(&j.c.state)) }

// unowe takes back an answer no longer owed; the last one ends the
// dispatcher (kicked out of its read).
func unowe() {
	pool.mu.Lock()
	pool.owed--
	kick := pool.owed == 0 && pool.running
	pool.mu.Unlock()
	if kick {
		C.sl_kick()
	}
}

// Wait waits for the job's answer (the CUresult) or for done (nil: never).
// On done it gives the job up and reports false: a Poll job is cancelled
// at once (the poller never touches its event again; the caller Puts it
// back); a Block job's thread goes on, and its answer goes to Abandoned.
// An answer that came first is taken instead, even with done closed.
func (j *Job) Wait(done <-chan struct{}) (int32, bool) {
	if done == nil {
		return <-j.ch, true
	}
	select {
	case r := <-j.ch:
		return r, true
	case <-done:
	}
	if j.block {
		if j.gave.CompareAndSwap(jobWaiting, jobGaveUp) {
			return -1, false
		}
		return <-j.ch, true // answered meanwhile
	}
	st, active, busy := j.state(), j.seq<<2|stActive, j.seq<<2|stBusy
	for {
		if st.CompareAndSwap(active, j.seq<<2|stCancelled) {
			unowe()
			return -1, false
		}
		if st.Load() != busy {
			return <-j.ch, true // answered: the answer is on its way
		}
		runtime.Gosched() // the poller is querying it: one driver call
	}
}

// drainBuf is the dispatcher's (one runs at a time).
var (
	drainBuf [128]C.sl_done
	readBuf  [8]byte
)

// dispatch hands the C threads' answers to the jobs' waiters, while any is
// owed, then returns.
func dispatch() {
	for {
		n := int(C.sl_drain(&drainBuf[0], C.int(len(drainBuf))))
		if n > 0 {
			deliver(n)
		}
		if n == len(drainBuf) {
			continue
		}
		pool.mu.Lock()
		if pool.owed == 0 {
			pool.running = false
			pool.mu.Unlock()
			return
		}
		pool.mu.Unlock()
		if _, err := pool.efd.Read(readBuf[:]); err != nil {
			time.Sleep(time.Millisecond) // no such error is known; never spin
		}
	}
}

// deliver hands n drained answers over.
func deliver(n int) {
	var jobs [len(drainBuf)]*Job
	pool.mu.Lock()
	for i := range n {
		jobs[i] = pool.jobs[drainBuf[i].id]
	}
	pool.owed -= n
	pool.mu.Unlock()
	for i := range n {
		j, res := jobs[i], int32(drainBuf[i].res)
		if j.block && !j.gave.CompareAndSwap(jobWaiting, jobAnswered) {
			Abandoned(j, res)
			continue
		}
		j.ch <- res
	}
}

// Stats are the pool's counts, for tests and diagnostics.
type Stats struct {
	Blockers int   // blocking threads alive
	Reserved int   // of them, reserved or running a job
	Poller   bool  // the poller thread is alive
	Blocks   int64 // Block jobs submitted, ever
	Polls    int64 // Poll jobs submitted, ever
}

// ReadStats returns the pool's counts.
func ReadStats() Stats {
	s := C.sl_stats()
	return Stats{Blockers: int(s.blockers), Reserved: int(s.reserved), Poller: s.poller != 0, Blocks: int64(s.blocks), Polls: int64(s.polls)}
}

// testFns are the tests' driver: sync, query and setCurrent (see the C
// comment); testClock starts its clock.
func testFns() (uintptr, uintptr, uintptr) {
	return uintptr(C.sl_test_sync_fn()), uintptr(C.sl_test_query_fn()), uintptr(C.sl_test_setcur_fn())
}

func testClock() { C.sl_test_clock() }

// testIdle sets how long a thread idles before it exits (10s by default).
func testIdle(d time.Duration) { C.sl_test_idle(C.longlong(d)) }

//go:build cgo && linux

package lifetime

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/syscall.h>

#define HZ_CLOSING ((uint64_t)1 << 33)
#define HZ_RECORDED ((uint64_t)1 << 36)
#define HZ_REFUSED (-2)
#define HZ_NOSLOT (-3)
#define HZ_LATE (1 << 20)
#define HZ_NFN 16

// The hot path's parts are inlined into each call, whatever the compiler's
// estimate of their size: a call of hz_hold of its own cost each record a
// call, a return and the registers' moves.
#define HZ_INLINE inline __attribute__((always_inline))
// Which way the hot path's branches go, for the code's layout: the mode is
// asymmetric (membarrier) where the kernel has it, and closing, late marks
// and first records are rare.
#define HZ_LIKELY(x) __builtin_expect(!!(x), 1)
#define HZ_UNLIKELY(x) __builtin_expect(!!(x), 0)

// membarrier(2) commands, declared here: no kernel header needed.
#define HZ_MB_QUERY 0
#define HZ_MB_PRIVATE_EXPEDITED (1 << 3)
#define HZ_MB_REGISTER_PRIVATE_EXPEDITED (1 << 4)

// The hot path touches as few cache lines as it can: a real driver call
// evicts the caller's lines, and each one touched again costs a miss
// (docs/performance.md). So a call reads the thread's
// slots, the mode and the package's busiest entry points from one line of
// static TLS, and the object's state word.
#define HZ_NHOT 5 // the Ops below this have their entry point in hz_rec

// One thread's hazard slots, the mode, its late mark and a copy of the
// first HZ_NHOT entry points: one cache line of static TLS, read by its
// calls; hz_held, hz_late, hz_setfn and hz_release reach it under hz_mu.
typedef struct hz_rec {
	_Atomic(uintptr_t) slot[2];
	unsigned char sym;    // 1: sequentially consistent fences; 0: asymmetric (membarrier)
	unsigned char listed; // 1 listed
	_Atomic(int) late;    // set by a flush that found a slot holding a retired word (hz_late)
	_Atomic(uintptr_t) fn[HZ_NHOT];
} __attribute__((aligned(64))) hz_rec;
_Static_assert(sizeof(hz_rec) == 64, "a thread's hazard record is one cache line");

// A thread's place in hz_list (under hz_mu), from its first call to its
// exit, apart from the line its calls read.
typedef struct hz_node {
	hz_rec *rec;
	struct hz_node *prev, *next;
} hz_node;

static _Thread_local hz_rec hz_tls;
static _Thread_local hz_node hz_tnode;
static pthread_mutex_t hz_mu = PTHREAD_MUTEX_INITIALIZER;
static hz_node *hz_list;
static pthread_key_t hz_key;
static int hz_keyok;   // hz_key made: set once, before the first call
static int hz_sym = 1; // set once, before the first call

// The entry points of the hot calls (the Op constants); 0 turns a call off.
// Set under hz_mu, which also copies the first HZ_NHOT into every listed
// thread's record (a thread copies them when it joins).
static struct { _Atomic(uintptr_t) fn[HZ_NFN]; } __attribute__((aligned(64))) hz_fns;

static void hz_setfn(int op, uintptr_t fn) {
	if (!hz_keyok || op < 0 || op >= HZ_NFN) { // only once set up
		return;
	}
	pthread_mutex_lock(&hz_mu);
	atomic_store_explicit(&hz_fns.fn[op], fn, memory_order_relaxed);
	if (op < HZ_NHOT) {
		for (hz_node *n = hz_list; n != NULL; n = n->next) {
			atomic_store_explicit(&n->rec->fn[op], fn, memory_order_relaxed);
		}
	}
	pthread_mutex_unlock(&hz_mu);
}

// hz_release unlists an exiting thread's record, before its TLS goes.
static void hz_release(void *p) {
	hz_node *n = p;
	pthread_mutex_lock(&hz_mu);
	if (n->prev != NULL) {
		n->prev->next = n->next;
	} else if (hz_list == n) {
		hz_list = n->next;
	}
	if (n->next != NULL) {
		n->next->prev = n->prev;
	}
	n->prev = n->next = NULL;
	atomic_store(&n->rec->late, 0);
	atomic_store(&n->rec->slot[0], 0);
	atomic_store(&n->rec->slot[1], 0);
	n->rec->listed = 0;
	pthread_mutex_unlock(&hz_mu);
}

// hz_join lists the calling thread's record; NULL if it cannot.
static hz_rec *hz_join(void) {
	hz_rec *z = &hz_tls;
	hz_node *n = &hz_tnode;
	if (!hz_keyok || pthread_setspecific(hz_key, n) != 0) {
		return NULL;
	}
	z->sym = hz_sym;
	n->rec = z;
	pthread_mutex_lock(&hz_mu);
	for (int i = 0; i < HZ_NHOT; i++) {
		atomic_store_explicit(&z->fn[i], atomic_load_explicit(&hz_fns.fn[i], memory_order_relaxed), memory_order_relaxed);
	}
	n->prev = NULL;
	n->next = hz_list;
	if (hz_list != NULL) {
		hz_list->prev = n;
	}
	hz_list = n;
	z->listed = 1;
	pthread_mutex_unlock(&hz_mu);
	return z;
}

// hz_fn is op's entry point, as thread z sees it (0: off).
static HZ_INLINE uintptr_t hz_fn(hz_rec *z, int op) {
	op &= HZ_NFN - 1;
	return atomic_load_explicit(op < HZ_NHOT ? &z->fn[op] : &hz_fns.fn[op], memory_order_relaxed);
}

static HZ_INLINE hz_rec *hz_get(void) {
	hz_rec *z = &hz_tls;
	return HZ_LIKELY(z->listed > 0) ? z : hz_join();
}

// hz_set writes a slot, hz_load reads a state word. With asymmetric fences
// (sym 0) the order between them is the compiler's only: membarrier in
// hz_barrier supplies the hardware's. Otherwise both are sequentially
// consistent, which orders a slot's store before the word's load.
static HZ_INLINE void hz_set(int sym, _Atomic(uintptr_t) *s, uintptr_t v) {
	if (HZ_UNLIKELY(sym)) {
		atomic_store_explicit(s, v, memory_order_seq_cst);
	} else {
		atomic_store_explicit(s, v, memory_order_release);
	}
	atomic_signal_fence(memory_order_seq_cst);
}

static HZ_INLINE uint64_t hz_load(int sym, uintptr_t w) {
	atomic_signal_fence(memory_order_seq_cst);
	if (HZ_UNLIKELY(sym)) {
		return atomic_load_explicit((_Atomic(uint64_t) *)w, memory_order_seq_cst);
	}
	return atomic_load_explicit((_Atomic(uint64_t) *)w, memory_order_relaxed);
}

// hz_hold holds w1 and w2 (0: none) in the thread's slots, or refuses. A
// record (rec) marks w1 recorded while holding it, before the driver call
// and whatever the driver answers: the flush that retires the event asks
// the driver whether it is complete before its handle is reused (internal/lifetime).
static HZ_INLINE int hz_hold(hz_rec *z, uintptr_t w1, uintptr_t w2, int rec) {
	int sym = z->sym;
	hz_set(sym, &z->slot[0], w1);
	if (HZ_LIKELY(w2)) {
		hz_set(sym, &z->slot[1], w2);
	}
	uint64_t s1 = hz_load(sym, w1);
	if (HZ_UNLIKELY((s1 | (w2 ? hz_load(sym, w2) : 0)) & HZ_CLOSING)) {
		hz_set(sym, &z->slot[0], 0);
		if (w2) {
			hz_set(sym, &z->slot[1], 0);
		}
		// The caller flushes (Split): a flush's mark of this slot, if any,
		// is answered.
		atomic_store_explicit(&z->late, 0, memory_order_relaxed);
		return HZ_REFUSED;
	}
	if (rec && HZ_UNLIKELY(!(s1 & HZ_RECORDED))) {
		atomic_fetch_or((_Atomic(uint64_t) *)w1, HZ_RECORDED);
	}
	return 0;
}

// hz_drop clears the slots after the driver call, and adds HZ_LATE to its
// result if a flush found them holding a retired word (hz_late): the
// caller then flushes. It reads the thread's own line only, not the
// objects' words, which the driver call is likely to have evicted.
static HZ_INLINE int hz_drop(hz_rec *z, uintptr_t w2, int r) {
	int sym = z->sym;
	hz_set(sym, &z->slot[0], 0);
	if (HZ_LIKELY(w2)) {
		hz_set(sym, &z->slot[1], 0);
	}
	atomic_signal_fence(memory_order_seq_cst);
	if (HZ_UNLIKELY(atomic_load_explicit(&z->late, sym ? memory_order_seq_cst : memory_order_relaxed))) {
		atomic_store_explicit(&z->late, 0, memory_order_relaxed);
		r |= HZ_LATE;
	}
	return r;
}

// hz_call1: fn(a), holding w.
static HZ_INLINE int hz_call1(int op, uintptr_t w, uintptr_t a) {
	hz_rec *z = hz_get();
	uintptr_t fn = HZ_LIKELY(z != NULL) ? hz_fn(z, op) : 0;
	if (HZ_UNLIKELY(fn == 0)) {
		return HZ_NOSLOT;
	}
	if (HZ_UNLIKELY(hz_hold(z, w, 0, 0) != 0)) {
		return HZ_REFUSED;
	}
	int r = ((int (*)(void *))fn)((void *)a);
	return hz_drop(z, 0, r);
}

// hz_call2: fn(a, b), fn(a, b, u) if withu, holding w1 and w2; a record
// (rec) marks w1 recorded (hz_hold).
static HZ_INLINE int hz_call2(int op, uintptr_t w1, uintptr_t w2, uintptr_t a, uintptr_t b, unsigned int u, int withu, int rec) {
	hz_rec *z = hz_get();
	uintptr_t fn = HZ_LIKELY(z != NULL) ? hz_fn(z, op) : 0;
	if (HZ_UNLIKELY(fn == 0)) {
		return HZ_NOSLOT;
	}
	if (HZ_UNLIKELY(hz_hold(z, w1, w2, rec) != 0)) {
		return HZ_REFUSED;
	}
	int r = withu ? ((int (*)(void *, void *, unsigned int))fn)((void *)a, (void *)b, u)
		: ((int (*)(void *, void *))fn)((void *)a, (void *)b);
	return hz_drop(z, w2, r);
}

// The hottest calls, each with its op and mode fixed, so that the compiler
// folds them: fewer arguments through cgo, no branch on them. HZ_OP_* are
// the Op constants (checked at compile time below).
#define HZ_OP_RECORD 0
#define HZ_OP_QUERY 2
#define HZ_OP_SYNC 3
static int hz_record(uintptr_t we, uintptr_t ws, uintptr_t e, uintptr_t s) {
	return hz_call2(HZ_OP_RECORD, we, ws, e, s, 0, 0, 1);
}
static int hz_query(uintptr_t w, uintptr_t e) { return hz_call1(HZ_OP_QUERY, w, e); }
static int hz_sync(uintptr_t w, uintptr_t e) { return hz_call1(HZ_OP_SYNC, w, e); }

// A kernel launch (cuLaunchKernel's signature).
#define HZ_OP_LAUNCH 8
typedef int (*hz_launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);

// hz_launch_with: fn(f, grid, block, shmem, s, params, extra), holding the
// stream's word ws and the kernel's module's wm.
static HZ_INLINE int hz_launch_with(uintptr_t ws, uintptr_t wm, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t s, void **params, void **extra) {
	hz_rec *z = hz_get();
	uintptr_t fn = HZ_LIKELY(z != NULL) ? hz_fn(z, HZ_OP_LAUNCH) : 0;
	if (HZ_UNLIKELY(fn == 0)) {
		return HZ_NOSLOT;
	}
	if (HZ_UNLIKELY(hz_hold(z, ws, wm, 0) != 0)) {
		return HZ_REFUSED;
	}
	int r = ((hz_launch_fn)fn)((void *)f, gx, gy, gz, bx, by, bz, shmem, (void *)s, params, extra);
	return hz_drop(z, wm, r);
}

// hz_launch: the launch with params, an array of pointers in C memory.
static int hz_launch(uintptr_t ws, uintptr_t wm, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t s, uintptr_t params) {
	return hz_launch_with(ws, wm, f, gx, gy, gz, bx, by, bz, shmem, s, (void **)params, NULL);
}

// hz_launch_packed: the launch of the kernel's parameter buffer buf, size
// bytes laid out as the kernel's parameters (Go memory, read during the
// call only), passed whole through extra (CU_LAUNCH_PARAM_BUFFER_POINTER,
// CU_LAUNCH_PARAM_BUFFER_SIZE, CU_LAUNCH_PARAM_END): the driver copies it
// during the call, with no pointer per parameter to build or follow.
static int hz_launch_packed(uintptr_t ws, uintptr_t wm, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t s, const uint8_t *buf, size_t size) {
	void *extra[] = {(void *)1, (void *)buf, (void *)2, &size, (void *)0};
	return hz_launch_with(ws, wm, f, gx, gy, gz, bx, by, bz, shmem, s, NULL, extra);
}
// noescape (nothing is kept) keeps buf on the caller's stack; cgo honours
// it only with nocallback (the driver never calls back into Go).
#cgo noescape hz_launch_packed
#cgo nocallback hz_launch_packed

typedef struct { int r; float ms; } hz_ms;

// hz_elapsed: fn(&ms, a, b), holding w1 and w2.
static hz_ms hz_elapsed(int op, uintptr_t w1, uintptr_t w2, uintptr_t a, uintptr_t b) {
	hz_ms out = {0, 0};
	hz_rec *z = hz_get();
	uintptr_t fn = HZ_LIKELY(z != NULL) ? hz_fn(z, op) : 0;
	if (HZ_UNLIKELY(fn == 0)) {
		out.r = HZ_NOSLOT;
		return out;
	}
	if (HZ_UNLIKELY(hz_hold(z, w1, w2, 0) != 0)) {
		out.r = HZ_REFUSED;
		return out;
	}
	float ms = 0;
	int r = ((int (*)(float *, void *, void *))fn)(&ms, (void *)a, (void *)b);
	out.r = hz_drop(z, w2, r);
	out.ms = ms;
	return out;
}

// hz_late marks late every listed thread whose slots hold one of the n
// words (a flush's retired words that its scan found held). The flush then runs a barrier and scans again: a
// slot still holding a word then belongs to a call that has yet to clear
// it, and that call reads the mark after clearing (hz_drop), so it
// flushes; a word no longer held is free. A mark may also reach a call
// that has just cleared its slot and read no mark: the thread's next call
// then reports Late for nothing, and its caller flushes once too many.
static void hz_late(const uintptr_t *w, int n) {
	pthread_mutex_lock(&hz_mu);
	for (hz_node *t = hz_list; t != NULL; t = t->next) {
		for (int i = 0; i < 2; i++) {
			uintptr_t v = atomic_load(&t->rec->slot[i]);
			int hit = 0;
			for (int j = 0; v != 0 && j < n && !hit; j++) {
				hit = w[j] == v;
			}
			if (hit) {
				atomic_store(&t->rec->late, 1);
				break;
			}
		}
	}
	pthread_mutex_unlock(&hz_mu);
}

// hz_held writes up to n held words to out and returns how many are held.
static int hz_held(uintptr_t *out, int n) {
	int k = 0;
	pthread_mutex_lock(&hz_mu);
	for (hz_node *t = hz_list; t != NULL; t = t->next) {
		for (int i = 0; i < 2; i++) {
			uintptr_t v = atomic_load(&t->rec->slot[i]);
			if (v != 0) {
				if (k < n) {
					out[k] = v;
				}
				k++;
			}
		}
	}
	pthread_mutex_unlock(&hz_mu);
	return k;
}

static _Atomic(long) hz_nbarrier; // membarriers issued, for the tests
static long hz_barriers(void) { return atomic_load(&hz_nbarrier); }

// hz_barrier runs a full barrier on every thread of the process (asymmetric
// mode); 0 on success.
//
// Only a listed thread can hold a slot, and a thread listed after this
// check takes hz_mu first, so its calls see every closing bit stored before
// the check: with no other thread listed, there is nothing to order.
static int hz_barrier(void) {
#if defined(SYS_membarrier)
	if (!hz_sym) {
		int others = 0;
		pthread_mutex_lock(&hz_mu);
		for (hz_node *n = hz_list; n != NULL; n = n->next) {
			if (n != &hz_tnode) {
				others = 1;
				break;
			}
		}
		pthread_mutex_unlock(&hz_mu);
		if (!others) {
			return 0;
		}
		atomic_fetch_add_explicit(&hz_nbarrier, 1, memory_order_relaxed);
		return (int)syscall(SYS_membarrier, HZ_MB_PRIVATE_EXPEDITED, 0, 0);
	}
#endif
	return 0;
}

// hz_init sets up once, before any call: 2 asymmetric, 1 fences, -1 off.
static int hz_init(int fences) {
	if (pthread_key_create(&hz_key, hz_release) != 0) {
		return -1;
	}
	hz_keyok = 1;
#if defined(SYS_membarrier)
	if (!fences) {
		long q = syscall(SYS_membarrier, HZ_MB_QUERY, 0, 0);
		if (q > 0 && (q & HZ_MB_PRIVATE_EXPEDITED) &&
				syscall(SYS_membarrier, HZ_MB_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
			hz_sym = 0;
		}
	}
#endif
	return hz_sym ? 1 : 2;
}

// hz_words allocates n zeroed words on cache lines of their own: a line
// shared with the driver's allocations, written by its threads, would cost
// each call a miss. (The words of one set share lines: padding each to a
// line made creating an event ~30 ns dearer on the fake driver.)
static void *hz_words(size_t n) {
	void *p;
	size_t size = (n * 8 + 63) & ~(size_t)63;
	if (posix_memalign(&p, 64, size) != 0) {
		return NULL;
	}
	memset(p, 0, size);
	return p;
}

// hz_test_fn is a driver call for the package's tests, given three Words:
// it counts itself in the first, and while the second is set it spins (the
// third says it is spinning).
static int hz_test_fn(void *p) {
	_Atomic(int64_t) *a = p;
	atomic_fetch_add(&a[0], 1);
	atomic_store(&a[2], 1);
	while (atomic_load(&a[1]) != 0) {
	}
	atomic_store(&a[2], 0);
	return 0;
}
static uintptr_t hz_test_fn_addr(void) { return (uintptr_t)hz_test_fn; }

// hz_test_launch is a launch for the package's tests, given three Words as
// its function: it counts itself in the first, stores its first
// parameter's 8 bytes in the second and gx + by + shmem in the third. Its
// first parameter is params[0], or where params is NULL the 8 bytes at
// offset 8 of extra's buffer, whose size must be 16 (else it answers
// 1, CUDA_ERROR_INVALID_VALUE, uncounted).
static int hz_test_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shmem, void *s, void **params, void **extra) {
	(void)gy, (void)gz, (void)bx, (void)bz, (void)s;
	_Atomic(int64_t) *a = f;
	const void *first = params != NULL ? params[0] : NULL;
	if (params == NULL) {
		if (extra == NULL || extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)0 || *(size_t *)extra[3] != 16) return 1;
		first = (const uint8_t *)extra[1] + 8;
	}
	atomic_fetch_add(&a[0], 1);
	int64_t v;
	memcpy(&v, first, sizeof v);
	atomic_store(&a[1], v);
	atomic_store(&a[2], (int64_t)gx + by + shmem);
	return 0;
}
static uintptr_t hz_test_launch_addr(void) { return (uintptr_t)hz_test_launch; }

// hz_direct1: op's fn(a), no slot (the benchmarks' baseline).
static int hz_direct1(int op, uintptr_t a) {
	uintptr_t fn = atomic_load_explicit(&hz_fns.fn[op & (HZ_NFN - 1)], memory_order_relaxed);
	return fn ? ((int (*)(void *))fn)((void *)a) : HZ_NOSLOT;
}
static int hz_noop_fn(void *p) { (void)p; return 0; }
static uintptr_t hz_noop_fn_addr(void) { return (uintptr_t)hz_noop_fn; }

// hz_listed counts the threads listed, for the tests.
static int hz_listed(void) {
	int n = 0;
	pthread_mutex_lock(&hz_mu);
	for (hz_node *z = hz_list; z != NULL; z = z->next) {
		n++;
	}
	pthread_mutex_unlock(&hz_mu);
	return n;
}

// No nocallback on the calls that take no Go pointer: it costs two runtime
// calls per crossing (cgoNoCallback), and noescape alone changes nothing
// for them.
#cgo noescape hz_held
#cgo nocallback hz_held
#cgo noescape hz_late
#cgo nocallback hz_late
*/
import "C"

import (
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

var setupOnce sync.Once

// Setup sets hazard calls up once; false if they are off (then every call
// returns NoSlot). CUDAGEN_HAZARD=fence chooses fences over membarrier.
func Setup() bool {
	setupOnce.Do(func() {
		fences := 0
		if os.Getenv("CUDAGEN_HAZARD") == "fence" {
			fences = 1
		}
		switch C.hz_init(C.int(fences)) {
		case 2:
			mode.Store(2)
		case 1:
			mode.Store(1)
		}
	})
	return mode.Load() != 0
}

// SetFn sets the entry point of hot call op (an Op constant); 0 turns it
// off. Calls that start after it returns use it.
func SetFn(op int, fn uintptr) { C.hz_setfn(C.int(op), C.uintptr_t(fn)) }

// Call1 calls op's fn(a) holding w.
func Call1(op int, w, a uintptr) int32 {
	return int32(C.hz_call1(C.int(op), C.uintptr_t(w), C.uintptr_t(a)))
}

// The C side's op numbers of hz_record, hz_query and hz_sync are these.
var (
	_ = [1]int{}[OpRecord-C.HZ_OP_RECORD]
	_ = [1]int{}[OpQuery-C.HZ_OP_QUERY]
	_ = [1]int{}[OpSync-C.HZ_OP_SYNC]
)

// RecordEvent calls cuEventRecord(e, s) holding the event's word we and
// the stream's ws, marking we Recorded while it holds it, before the driver
// call; through a C function with the op fixed: the hot path of
// Event.Record.
func RecordEvent(we, ws, e, s uintptr) int32 {
	return int32(C.hz_record(C.uintptr_t(we), C.uintptr_t(ws), C.uintptr_t(e), C.uintptr_t(s)))
}

// Query is Call1(OpQuery, w, e) through a C function with the op fixed.
func Query(w, e uintptr) int32 { return int32(C.hz_query(C.uintptr_t(w), C.uintptr_t(e))) }

// Sync is Call1(OpSync, w, e) through a C function with the op fixed.
func Sync(w, e uintptr) int32 { return int32(C.hz_sync(C.uintptr_t(w), C.uintptr_t(e))) }

// Call2U calls op's fn(a, b, u) holding w1 and w2.
func Call2U(op int, w1, w2, a, b uintptr, u uint32) int32 {
	return int32(C.hz_call2(C.int(op), C.uintptr_t(w1), C.uintptr_t(w2), C.uintptr_t(a), C.uintptr_t(b), C.uint(u), 1, 0))
}

// RecordU is RecordEvent for op's fn(e, s, u) (cuEventRecordWithFlags).
func RecordU(op int, we, ws, e, s uintptr, u uint32) int32 {
	return int32(C.hz_call2(C.int(op), C.uintptr_t(we), C.uintptr_t(ws), C.uintptr_t(e), C.uintptr_t(s), C.uint(u), 1, 1))
}

// Elapsed calls op's fn(&ms, a, b) (cuEventElapsedTime) holding w1 and w2.
func Elapsed(op int, w1, w2, a, b uintptr) (float32, int32) {
	r := C.hz_elapsed(C.int(op), C.uintptr_t(w1), C.uintptr_t(w2), C.uintptr_t(a), C.uintptr_t(b))
	return float32(r.ms), int32(r.r)
}

// The C side's op number of the launches is OpLaunch.
var _ = [1]int{}[OpLaunch-C.HZ_OP_LAUNCH]

// Launch calls cuLaunchKernel (OpLaunch's entry point) with the kernel f,
// the grid's and block's dimensions, shared bytes of dynamic shared memory,
// the stream s and params (C memory: an array of pointers to the values),
// holding the stream's word ws and the kernel's module's wm.
func Launch(ws, wm, f uintptr, grid, block [3]uint32, shared uint32, s uintptr, params unsafe.Pointer) int32 {
	return int32(C.hz_launch(C.uintptr_t(ws), C.uintptr_t(wm), C.uintptr_t(f), C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.uint(shared), C.uintptr_t(s), C.uintptr_t(uintptr(params))))
}

// LaunchPacked is Launch of the kernel's parameter buffer: size bytes at
// buf, laid out as the kernel's parameters (Go memory without pointers,
// read during the call only: the driver copies them), passed whole through
// the launch's extra array.
func LaunchPacked(ws, wm, f uintptr, grid, block [3]uint32, shared uint32, s uintptr, buf *byte, size int) int32 {
	return int32(C.hz_launch_packed(C.uintptr_t(ws), C.uintptr_t(wm), C.uintptr_t(f), C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.uint(shared), C.uintptr_t(s),
		(*C.uint8_t)(unsafe.Pointer(buf)), C.size_t(size)))
}

// Barrier orders this thread's earlier stores (closing bits, late marks)
// before every other thread's later loads, and their earlier slot stores
// before this thread's later scan. It issues no membarrier while no other
// thread is listed (none can hold a slot, and one listed later sees those
// stores through the list's mutex). False if the kernel refused: then
// nothing held may be assumed free.
func Barrier() bool { return C.hz_barrier() == 0 }

// MarkLate marks every thread whose slots hold one of ws: its call will
// report Late when it returns, and its caller flush (see hz_late). Run a
// Barrier and Held after it: a word of ws still held then is flushed by its
// call; one no longer held is free.
func MarkLate(ws []uintptr) {
	if len(ws) > 0 {
		C.hz_late((*C.uintptr_t)(unsafe.Pointer(&ws[0])), C.int(len(ws)))
	}
}

// Held returns the words held in any thread's slots now, in buf's memory
// where it has room.
func Held(buf []uintptr) []uintptr {
	if cap(buf) == 0 {
		buf = make([]uintptr, 0, 64)
	}
	for {
		all := buf[:cap(buf)]
		k := int(C.hz_held((*C.uintptr_t)(unsafe.Pointer(&all[0])), C.int(len(all))))
		if k <= len(all) {
			return all[:k]
		}
		buf = make([]uintptr, 0, 2*k)
	}
}

// Words allocates n zeroed state words in C memory, so that the C side may
// read them; nil if out of memory. Free them with FreeWords once nothing
// can reach them. Freed words are kept for reuse (up to keepMax sets per
// size): the race detector never learns that C memory is freed, so it
// would keep state for every new address; reuse keeps addresses few.
func Words(n int) []Word {
	spare.Lock()
	l := spare.sets[n]
	if k := len(l); k > 0 {
		ws := l[k-1]
		l[k-1] = nil
		spare.sets[n] = l[:k-1]
		spare.Unlock()
		clear(ws) // the set is ours alone: no call holds a word of it
		return ws
	}
	spare.Unlock()
	p := C.hz_words(C.size_t(n))
	if p == nil {
		return nil
	}
	return unsafe.Slice((*Word)(p), n)
}

const keepMax = 4096

var spare struct {
	sync.Mutex
	sets map[int][][]Word
}

// FreeWords takes back words from Words.
func FreeWords(ws []Word) {
	if len(ws) == 0 {
		return
	}
	spare.Lock()
	if spare.sets == nil {
		spare.sets = map[int][][]Word{}
	}
	if l := spare.sets[len(ws)]; len(l) < keepMax {
		spare.sets[len(ws)] = append(l, ws)
		spare.Unlock()
		return
	}
	spare.Unlock()
	C.free(unsafe.Pointer(&ws[0]))
}

// SpinFn is a driver call for tests, taking three Words: it counts itself
// in the first and spins while the second is set, the third saying it
// spins.
func SpinFn() uintptr { return uintptr(C.hz_test_fn_addr()) }

// LaunchFn is a launch for tests, given three Words as its function: it
// counts itself in the first, stores its first parameter's 8 bytes in the
// second and grid x + block y + shared in the third.
func LaunchFn() uintptr { return uintptr(C.hz_test_launch_addr()) }

// Direct1 calls op's fn(a) without a slot, and NoopFn is a driver call
// that does nothing: the benchmarks' baselines.
func Direct1(op int, a uintptr) int32 { return int32(C.hz_direct1(C.int(op), C.uintptr_t(a))) }
func NoopFn() uintptr                 { return uintptr(C.hz_noop_fn_addr()) }

// barriers is how many membarriers Barrier has issued (for the tests).
func barriers() int64 { return int64(C.hz_barriers()) }

// listed is how many threads have their slots listed (for the tests).
func listed() int { return int(C.hz_listed()) }

// Addr is the address of a word, as the calls take it.
func Addr(w *atomic.Int64) uintptr { return uintptr(unsafe.Pointer(w)) }

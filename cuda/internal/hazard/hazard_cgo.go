//go:build cgo

package hazard

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#if defined(__linux__)
#include <unistd.h>
#include <sys/syscall.h>
#endif

#define HZ_CLOSING ((uint64_t)1 << 33)
#define HZ_NOREUSE ((uint64_t)1 << 35)
#define HZ_CLEAN ((uint64_t)1 << 36)
#define HZ_TICK ((uint64_t)1 << 37)
#define HZ_REFUSED (-2)
#define HZ_NOSLOT (-3)
#define HZ_LATE (1 << 20)

// membarrier(2) commands, declared here: no kernel header needed.
#define HZ_MB_QUERY 0
#define HZ_MB_PRIVATE_EXPEDITED (1 << 3)
#define HZ_MB_REGISTER_PRIVATE_EXPEDITED (1 << 4)

// One thread's hazard slots, a cache line of its own.
typedef struct hz_rec {
	_Atomic(uintptr_t) slot[2];
	_Atomic(int) used;
	struct hz_rec *next; // set before the record is published, never after
} __attribute__((aligned(64))) hz_rec;

static hz_rec *_Atomic hz_head;
static _Thread_local hz_rec *hz_self;
static pthread_key_t hz_key;
static int hz_sym = 1; // set once, before the first call

// hz_release frees an exiting thread's record for another thread.
static void hz_release(void *p) {
	hz_rec *z = p;
	atomic_store(&z->slot[0], 0);
	atomic_store(&z->slot[1], 0);
	hz_self = NULL;
	atomic_store(&z->used, 0);
}

static hz_rec *hz_claim(void) {
	hz_rec *z;
	for (z = atomic_load(&hz_head); z != NULL; z = z->next) {
		int f = 0;
		if (atomic_load_explicit(&z->used, memory_order_relaxed) == 0 &&
				atomic_compare_exchange_strong(&z->used, &f, 1)) {
			goto found;
		}
	}
	if (posix_memalign((void **)&z, 64, sizeof *z) != 0) {
		return NULL;
	}
	memset(z, 0, sizeof *z);
	atomic_store(&z->used, 1);
	z->next = atomic_load(&hz_head);
	while (!atomic_compare_exchange_weak(&hz_head, &z->next, z)) {
	}
found:
	if (pthread_setspecific(hz_key, z) != 0) {
		atomic_store(&z->used, 0);
		return NULL;
	}
	hz_self = z;
	return z;
}

static inline hz_rec *hz_get(void) {
	hz_rec *z = hz_self;
	return z != NULL ? z : hz_claim();
}

// hz_set writes a slot, hz_load reads a state word. With asymmetric fences
// (hz_sym 0) the order between them is the compiler's only: membarrier in
// hz_barrier supplies the hardware's. Otherwise both are sequentially
// consistent, which orders a slot's store before the word's load.
static inline void hz_set(_Atomic(uintptr_t) *s, uintptr_t v) {
	if (hz_sym) {
		atomic_store_explicit(s, v, memory_order_seq_cst);
	} else {
		atomic_store_explicit(s, v, memory_order_release);
	}
	atomic_signal_fence(memory_order_seq_cst);
}

static inline uint64_t hz_load(uintptr_t w) {
	atomic_signal_fence(memory_order_seq_cst);
	if (hz_sym) {
		return atomic_load_explicit((_Atomic(uint64_t) *)w, memory_order_seq_cst);
	}
	return atomic_load_explicit((_Atomic(uint64_t) *)w, memory_order_relaxed);
}

// hz_hold holds w1 and w2 (0: none) in the thread's slots, or refuses.
static inline int hz_hold(hz_rec *z, uintptr_t w1, uintptr_t w2) {
	hz_set(&z->slot[0], w1);
	if (w2) {
		hz_set(&z->slot[1], w2);
	}
	if ((hz_load(w1) | (w2 ? hz_load(w2) : 0)) & HZ_CLOSING) {
		hz_set(&z->slot[0], 0);
		if (w2) {
			hz_set(&z->slot[1], 0);
		}
		return HZ_REFUSED;
	}
	return 0;
}

static inline int hz_drop(hz_rec *z, uintptr_t w1, uintptr_t w2, int r) {
	hz_set(&z->slot[0], 0);
	if (w2) {
		hz_set(&z->slot[1], 0);
	}
	if ((hz_load(w1) | (w2 ? hz_load(w2) : 0)) & HZ_CLOSING) {
		r |= HZ_LATE;
	}
	return r;
}

// hz_call1: fn(a), holding w.
static int hz_call1(uintptr_t fn, uintptr_t w, uintptr_t a) {
	hz_rec *z = hz_get();
	if (z == NULL) {
		return HZ_NOSLOT;
	}
	if (hz_hold(z, w, 0) != 0) {
		return HZ_REFUSED;
	}
	int r = ((int (*)(void *))fn)((void *)a);
	return hz_drop(z, w, 0, r);
}

// hz_call2: fn(a, b), or fn(a, b, u) if withu, holding w1 and w2.
static int hz_call2(uintptr_t fn, uintptr_t w1, uintptr_t w2, uintptr_t a, uintptr_t b, unsigned int u, int withu) {
	hz_rec *z = hz_get();
	if (z == NULL) {
		return HZ_NOSLOT;
	}
	if (hz_hold(z, w1, w2) != 0) {
		return HZ_REFUSED;
	}
	int r = withu ? ((int (*)(void *, void *, unsigned int))fn)((void *)a, (void *)b, u)
		: ((int (*)(void *, void *))fn)((void *)a, (void *)b);
	return hz_drop(z, w1, w2, r);
}

// hz_record: fn(e, s) or fn(e, s, u), holding the event's word we and the
// stream's ws; then, still holding them, one record counted on we and its
// clean bit cleared (whatever the driver answered: never reused on a
// guess). Past 2^26 records the event is marked never to be reused.
static int hz_record(uintptr_t fn, uintptr_t we, uintptr_t ws, uintptr_t e, uintptr_t s, unsigned int u, int withu) {
	hz_rec *z = hz_get();
	if (z == NULL) {
		return HZ_NOSLOT;
	}
	if (hz_hold(z, we, ws) != 0) {
		return HZ_REFUSED;
	}
	int r = withu ? ((int (*)(void *, void *, unsigned int))fn)((void *)e, (void *)s, u)
		: ((int (*)(void *, void *))fn)((void *)e, (void *)s);
	_Atomic(uint64_t) *st = (_Atomic(uint64_t) *)we;
	uint64_t o = atomic_load_explicit(st, memory_order_relaxed), n;
	do {
		n = (o + HZ_TICK) & ~HZ_CLEAN;
		if (n >> 63) {
			n |= HZ_NOREUSE;
		}
	} while (!atomic_compare_exchange_weak(st, &o, n));
	return hz_drop(z, we, ws, r);
}

typedef struct { int r; float ms; } hz_ms;

// hz_elapsed: fn(&ms, a, b), holding w1 and w2.
static hz_ms hz_elapsed(uintptr_t fn, uintptr_t w1, uintptr_t w2, uintptr_t a, uintptr_t b) {
	hz_ms out = {0, 0};
	hz_rec *z = hz_get();
	if (z == NULL) {
		out.r = HZ_NOSLOT;
		return out;
	}
	if (hz_hold(z, w1, w2) != 0) {
		out.r = HZ_REFUSED;
		return out;
	}
	float ms = 0;
	int r = ((int (*)(float *, void *, void *))fn)(&ms, (void *)a, (void *)b);
	out.r = hz_drop(z, w1, w2, r);
	out.ms = ms;
	return out;
}

// hz_held writes up to n held words to out and returns how many are held.
static int hz_held(uintptr_t *out, int n) {
	int k = 0;
	for (hz_rec *z = atomic_load(&hz_head); z != NULL; z = z->next) {
		for (int i = 0; i < 2; i++) {
			uintptr_t v = atomic_load(&z->slot[i]);
			if (v != 0) {
				if (k < n) {
					out[k] = v;
				}
				k++;
			}
		}
	}
	return k;
}

// hz_barrier runs a full barrier on every thread of the process (asymmetric
// mode); 0 on success.
static int hz_barrier(void) {
#if defined(__linux__) && defined(SYS_membarrier)
	if (!hz_sym) {
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
#if defined(__linux__) && defined(SYS_membarrier)
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

#cgo noescape hz_call1
#cgo nocallback hz_call1
#cgo noescape hz_call2
#cgo nocallback hz_call2
#cgo noescape hz_record
#cgo nocallback hz_record
#cgo noescape hz_elapsed
#cgo nocallback hz_elapsed
#cgo noescape hz_held
#cgo nocallback hz_held
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
		setup.Store(true)
	})
	return mode.Load() != 0
}

// Call1 calls fn(a) holding w.
func Call1(fn, w, a uintptr) int32 {
	return int32(C.hz_call1(C.uintptr_t(fn), C.uintptr_t(w), C.uintptr_t(a)))
}

// Call2 calls fn(a, b) holding w1 and w2.
func Call2(fn, w1, w2, a, b uintptr) int32 {
	return int32(C.hz_call2(C.uintptr_t(fn), C.uintptr_t(w1), C.uintptr_t(w2), C.uintptr_t(a), C.uintptr_t(b), 0, 0))
}

// Call2U calls fn(a, b, u) holding w1 and w2.
func Call2U(fn, w1, w2, a, b uintptr, u uint32) int32 {
	return int32(C.hz_call2(C.uintptr_t(fn), C.uintptr_t(w1), C.uintptr_t(w2), C.uintptr_t(a), C.uintptr_t(b), C.uint(u), 1))
}

// Record calls fn(e, s) holding the event's word we and the stream's ws,
// then counts one record on we and clears its clean bit, still holding it.
func Record(fn, we, ws, e, s uintptr) int32 {
	return int32(C.hz_record(C.uintptr_t(fn), C.uintptr_t(we), C.uintptr_t(ws), C.uintptr_t(e), C.uintptr_t(s), 0, 0))
}

// RecordU is Record for fn(e, s, u) (cuEventRecordWithFlags).
func RecordU(fn, we, ws, e, s uintptr, u uint32) int32 {
	return int32(C.hz_record(C.uintptr_t(fn), C.uintptr_t(we), C.uintptr_t(ws), C.uintptr_t(e), C.uintptr_t(s), C.uint(u), 1))
}

// Elapsed calls fn(&ms, a, b) (cuEventElapsedTime) holding w1 and w2.
func Elapsed(fn, w1, w2, a, b uintptr) (float32, int32) {
	r := C.hz_elapsed(C.uintptr_t(fn), C.uintptr_t(w1), C.uintptr_t(w2), C.uintptr_t(a), C.uintptr_t(b))
	return float32(r.ms), int32(r.r)
}

// Barrier orders this thread's earlier stores (closing bits) before every
// other thread's later loads, and their earlier slot stores before this
// thread's later scan. False if the kernel refused: then nothing held may
// be assumed free.
func Barrier() bool { return C.hz_barrier() == 0 }

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

// Addr is the address of a word, as the calls take it.
func Addr(w *atomic.Int64) uintptr { return uintptr(unsafe.Pointer(w)) }

//go:build cgo && linux

package sleeper

/*
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

// One sleeper: its thread reads a job from jobfd (blocking), calls
// sync(ev), and writes donefd (non-blocking, read by Go's netpoller). A job
// with ev 0 ends the thread, which then frees the sleeper: Go touches it no
// more after that job. Go writes ev and ctx before the job's write and
// reads res after the done's read: the eventfd's read and write order them.
// Should a read or write fail (they do not, short of a bad descriptor), the
// thread stops without freeing anything, and Go, whose Sync then fails or
// never answers, stops using the sleeper (Sync returns -1) and leaks it.
typedef struct {
	int jobfd, donefd;
	uintptr_t sync, setcur; // cuEventSynchronize, cuCtxSetCurrent
	uintptr_t ev, ctx;
	int res;
} sl_t;

static int sl_wr(int fd) {
	uint64_t one = 1;
	for (;;) {
		ssize_t n = write(fd, &one, 8);
		if (n == 8) return 0;
		if (n < 0 && errno == EINTR) continue;
		return -1;
	}
}

static int sl_rd(int fd) {
	uint64_t v;
	for (;;) {
		ssize_t n = read(fd, &v, 8);
		if (n == 8) return 0;
		if (n < 0 && errno == EINTR) continue;
		return -1;
	}
}

static void *sl_main(void *p) {
	sl_t *s = p;
	for (;;) {
		if (sl_rd(s->jobfd) != 0) {
			return NULL; // Go's Sync fails: the sleeper is abandoned
		}
		if (s->ev == 0) {
			break;
		}
		int r = ((int (*)(void *))s->sync)((void *)s->ev);
		// As the package's calls without a current context: on an error
		// (not CUDA_ERROR_NOT_READY, 600), once more with the context
		// current on this thread.
		if (r != 0 && r != 600 && s->ctx != 0 &&
				((int (*)(void *))s->setcur)((void *)s->ctx) == 0) {
			r = ((int (*)(void *))s->sync)((void *)s->ev);
		}
		s->res = r;
		if (sl_wr(s->donefd) != 0) {
			return NULL; // as above
		}
	}
	close(s->jobfd);
	free(s);
	return NULL;
}

// sl_new starts a sleeper; NULL if it cannot. Its donefd is Go's to close.
static sl_t *sl_new(uintptr_t sync, uintptr_t setcur) {
	sl_t *s = calloc(1, sizeof *s);
	if (s == NULL) return NULL;
	s->sync = sync;
	s->setcur = setcur;
	s->jobfd = eventfd(0, EFD_CLOEXEC);
	s->donefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_attr_t a;
	pthread_t th;
	int ok = s->jobfd >= 0 && s->donefd >= 0 && pthread_attr_init(&a) == 0;
	if (ok) {
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, 1 << 20); // the driver's call, no more
		// With every signal blocked, as runtime/cgo starts its threads: the
		// process's signals go to Go's threads, never to this one.
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		ok = pthread_create(&th, &a, sl_main, s) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&a);
	}
	if (!ok) {
		if (s->jobfd >= 0) close(s->jobfd);
		if (s->donefd >= 0) close(s->donefd);
		free(s);
		return NULL;
	}
	return s;
}

// sl_start hands the thread a job: sync(ev), ctx for the retry; ev 0 ends
// the thread.
static int sl_start(sl_t *s, uintptr_t ev, uintptr_t ctx) {
	s->ev = ev;
	s->ctx = ctx;
	return sl_wr(s->jobfd);
}

static int sl_res(sl_t *s) { return s->res; }
static int sl_donefd(sl_t *s) { return s->donefd; }

// For the tests: a "driver" whose sync sleeps 1 ms (200 ms for event 9)
// and answers CUDA_ERROR_INVALID_CONTEXT (201) for event 5 unless a
// context is current on its thread, and 0 otherwise.
static _Thread_local uintptr_t sl_test_cur;
static int sl_test_sync(void *ev) {
	usleep((uintptr_t)ev == 9 ? 200000 : 1000);
	return (uintptr_t)ev == 5 && sl_test_cur == 0 ? 201 : 0;
}
static int sl_test_setcur(void *ctx) { sl_test_cur = (uintptr_t)ctx; return 0; }
static uintptr_t sl_test_sync_fn(void) { return (uintptr_t)sl_test_sync; }
static uintptr_t sl_test_setcur_fn(void) { return (uintptr_t)sl_test_setcur; }

*/
import "C"

import (
	"errors"
	"os"
	"time"
)

// Sleeper is a thread that sleeps in the driver for Go. One job at a time.
type Sleeper struct {
	s    *C.sl_t
	done *os.File // the eventfd the thread writes after each job, in the netpoller
	buf  [8]byte
}

// New starts a sleeper calling sync (cuEventSynchronize's entry point) and,
// to retry with the context current, setCurrent (cuCtxSetCurrent's).
func New(sync, setCurrent uintptr) (*Sleeper, error) {
	if sync == 0 || setCurrent == 0 {
		return nil, ErrUnavailable
	}
	s := C.sl_new(C.uintptr_t(sync), C.uintptr_t(setCurrent))
	if s == nil {
		return nil, ErrUnavailable
	}
	done := os.NewFile(uintptr(C.sl_donefd(s)), "cuda-sleeper")
	// Kick needs read deadlines, which only a file in the netpoller has.
	if err := done.SetReadDeadline(time.Time{}); err != nil {
		C.sl_start(s, 0, 0) // the thread ends and frees its side
		done.Close()
		return nil, ErrUnavailable
	}
	return &Sleeper{s: s, done: done}, nil
}

// Sync has the thread call cuEventSynchronize(ev) (with ctx made current
// on it if the driver refuses without) and waits, in the netpoller, for
// its answer: the CUresult, or -1 if the thread could not be reached. After
// -1 the sleeper must not be used again, nor closed: its thread may still
// be in the driver.
func (s *Sleeper) Sync(ctx, ev uintptr) int32 {
	if !s.Start(ctx, ev) {
		return -1
	}
	r, err := s.Await()
	if err != nil {
		return -1
	}
	return r
}

// Start hands the thread the job of Sync, without waiting for it: Await
// takes its answer. False if the thread could not be reached (then no job
// runs, and the sleeper must not be used again, nor closed).
func (s *Sleeper) Start(ctx, ev uintptr) bool {
	return ev != 0 && C.sl_start(s.s, C.uintptr_t(ev), C.uintptr_t(ctx)) == 0
}

// Await waits, in the netpoller, for the answer of the job Start began:
// the CUresult. ErrKicked if Kick ended the wait first, or had before it
// began: the job still runs, and after Unkick the next Await takes its
// answer. Any other error: the thread could not be reached, and the
// sleeper must not be used again, nor closed (its thread may still be in
// the driver).
func (s *Sleeper) Await() (int32, error) {
	n, err := s.done.Read(s.buf[:])
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return -1, ErrKicked
		}
		return -1, err
	}
	if n != 8 {
		return -1, errShortRead
	}
	return int32(C.sl_res(s.s)), nil
}

var errShortRead = errors.New("cuda: short read of a sleeper's eventfd")

// Kick ends the Await in progress, and every later one until Unkick, with
// ErrKicked. Any goroutine may call it.
func (s *Sleeper) Kick() { _ = s.done.SetReadDeadline(kicked) }

// Unkick undoes Kick.
func (s *Sleeper) Unkick() { _ = s.done.SetReadDeadline(time.Time{}) }

// kicked is a deadline long past.
var kicked = time.Unix(1, 0)

// testFns are the tests' sync and setCurrent.
func testFns() (uintptr, uintptr) {
	return uintptr(C.sl_test_sync_fn()), uintptr(C.sl_test_setcur_fn())
}

// Close ends the thread. Call it only with no Sync in progress, and never
// after a Sync returned -1.
func (s *Sleeper) Close() {
	C.sl_start(s.s, 0, 0) // the thread frees its side
	s.done.Close()
}

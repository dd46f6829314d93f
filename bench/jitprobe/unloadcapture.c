// unloadcapture: whether the driver survives a module's unload on one
// thread while another thread begins and ends GLOBAL-mode stream captures,
// from C alone (the cuda package unloads closed modules on a goroutine of
// its own; a GLOBAL capture forbids such calls on every thread). Thread A
// loads and unloads the module; thread B captures; each counts its calls'
// results. With SIGNALS 1, a third thread sends the loading thread SIGURG
// every 100 µs, handled with SA_RESTART, as Go preempts a goroutine; with
// 2 the thread blocks it during the loads (as the cuda package does), so
// that it lands in the unloads only; with 3 during the unloads only.
// CAPTURE 0 leaves out the capturing thread; 2 makes its captures
// RELAXED ones (the cuda package's mode) instead of GLOBAL.
//   unloadcapture K.PTX ROUNDS SIGNALS CAPTURE
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdatomic.h>
#include <string.h>
#include "image.h"
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorName(r_, &s); printf("%s -> %s\n", #x, s); exit(1); } } while (0)

static CUcontext ctx;
static const char *img;
static int rounds;
static atomic_int done;
static int results[2][1000]; // [thread][CUresult], counts

static void count(int t, CUresult r) { results[t][r < 1000 ? r : 999]++; }

static int signals;

// mask blocks SIGURG on this thread where block, else unblocks it.
static void mask(int block) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGURG);
	pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

static void *unloader(void *arg) {
	(void)arg;
	CK(cuCtxSetCurrent(ctx));
	for (int i = 0; i < rounds; i++) {
		CUmodule m;
		mask(signals == 2);
		CUresult r = cuModuleLoadData(&m, img);
		mask(0);
		count(0, r);
		if (r == CUDA_SUCCESS) {
			mask(signals == 3);
			while ((r = cuModuleUnload(m)) != CUDA_SUCCESS) {
				count(0, r); // refused during a capture: again
			}
			mask(0);
			count(0, r);
		}
	}
	atomic_store(&done, 1);
	return NULL;
}

static pthread_t unloading;

static void on_signal(int sig) { (void)sig; }

static void *signaller(void *arg) {
	(void)arg;
	struct timespec t = {0, 100000};
	while (!atomic_load(&done)) {
		pthread_kill(unloading, SIGURG);
		nanosleep(&t, NULL);
	}
	return NULL;
}

static void *capturer(void *arg) {
	CUstreamCaptureMode mode = *(int *)arg == 2 ? CU_STREAM_CAPTURE_MODE_RELAXED : CU_STREAM_CAPTURE_MODE_GLOBAL;
	CK(cuCtxSetCurrent(ctx));
	CUstream s;
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	while (!atomic_load(&done)) {
		count(1, cuStreamBeginCapture(s, mode));
		CUgraph g = NULL;
		CUresult r = cuStreamEndCapture(s, &g);
		count(1, r);
		if (g) cuGraphDestroy(g);
	}
	cuStreamDestroy(s);
	return NULL;
}

static void report(int t, const char *what) {
	printf("%s:", what);
	for (int r = 0; r < 1000; r++) {
		if (results[t][r]) {
			const char *s = "?";
			cuGetErrorName((CUresult)r, &s);
			printf(" %s %d", s, results[t][r]);
		}
	}
	printf("\n");
}

int main(int argc, char **argv) {
	if (argc != 5) {
		fprintf(stderr, "usage: unloadcapture K.PTX ROUNDS SIGNALS CAPTURE\n");
		return 2;
	}
	long n;
	img = read_image(argv[1], &n);
	rounds = atoi(argv[2]);
	if (img == NULL || rounds <= 0) {
		fprintf(stderr, "unloadcapture: cannot read %s, or no rounds\n", argv[1]);
		return 2;
	}
	CUdevice dev;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGURG, &sa, NULL);
	pthread_t b, c;
	signals = atoi(argv[3]);
	int capture = atoi(argv[4]);
	if (capture) pthread_create(&b, NULL, capturer, &capture);
	pthread_create(&unloading, NULL, unloader, NULL);
	if (signals) pthread_create(&c, NULL, signaller, NULL);
	pthread_join(unloading, NULL);
	if (capture) pthread_join(b, NULL);
	if (signals) pthread_join(c, NULL);
	report(0, "loads and unloads");
	report(1, "captures begun and ended");
	printf("PASS: no crash over %d loads and unloads (signals %d, capture %d)\n", rounds, signals, capture);
	return 0;
}

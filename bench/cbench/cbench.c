// cbench: the C baseline for cudagen's per-operation benchmarks. It calls the
// CUDA driver directly (linked with -lcuda, built on the GPU machine against
// the toolkit's cuda.h) and prints, for each operation, the median ns per
// call over RUNS loops of N calls, in the same order as cuda_test's
// benchmarks, and the median cycles per call (clock.h).
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "clock.h"

#define MAXRUNS 64
static int RUNS = 5;
static long N = 200000;
static CUstream s;
static CUevent a, b, ta, tb;

#define BENCH(name, body) do { \
	double v[MAXRUNS], c[MAXRUNS], g[MAXRUNS]; \
	for (int run = 0; run < RUNS; run++) { \
		double g0 = clock_ghz(); \
		double t0 = now(); \
		for (long i = 0; i < N; i++) { body; } \
		v[run] = (now() - t0) / N; \
		g[run] = (g0 + clock_ghz()) / 2; \
		c[run] = v[run] * g[run]; \
		CHECK(cuStreamSynchronize(s)); \
	} \
	qsort(v, RUNS, sizeof v[0], cmp); \
	qsort(c, RUNS, sizeof c[0], cmp); \
	qsort(g, RUNS, sizeof g[0], cmp); \
	printf("%-14s %8.1f ns/op (median of %d loops of %ld)", name, v[RUNS / 2], RUNS, N); \
	if (g[0] > 0) printf(" %8.1f cyc/op at %.2f GHz", c[RUNS / 2], g[RUNS / 2]); \
	printf("\n"); \
} while (0)

int main(int argc, char **argv) {
	if (argc > 1) N = atol(argv[1]);
	if (argc > 2) RUNS = atoi(argv[2]);
	if (RUNS < 1 || RUNS > MAXRUNS) RUNS = 5;
	float ms;
	primary();
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&a, CU_EVENT_DISABLE_TIMING));
	CHECK(cuEventCreate(&b, CU_EVENT_DISABLE_TIMING));
	CHECK(cuEventCreate(&ta, CU_EVENT_DEFAULT));
	CHECK(cuEventCreate(&tb, CU_EVENT_DEFAULT));
	CHECK(cuEventRecord(a, s));
	CHECK(cuEventRecord(ta, s));
	CHECK(cuEventRecord(tb, s));
	CHECK(cuEventSynchronize(tb));

	BENCH("Record", CHECK(cuEventRecord(a, s)));
	BENCH("Query", CHECK(cuEventQuery(a)));
	BENCH("RecordQuery", CHECK(cuEventRecord(a, s)); CHECK(cuEventQuery(a)));
	BENCH("Elapsed", CHECK(cuEventElapsedTime(&ms, ta, tb)));
	BENCH("SyncDone", CHECK(cuEventSynchronize(a)));
	BENCH("CreateDestroy", CUevent e; CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING)); CHECK(cuEventDestroy(e)));
	BENCH("RecordSync", CHECK(cuEventRecord(a, s)); CHECK(cuEventSynchronize(a)));
	// What making the context current costs: the check the Go layer makes.
	CUcontext cur;
	BENCH("CtxGetCurrent", CHECK(cuCtxGetCurrent(&cur)));
	BENCH("GetCur+Query", CHECK(cuCtxGetCurrent(&cur)); CHECK(cuEventQuery(a)));
	return 0;
}

// streams: an experiment on the driver's per-process fast and slow states
// (docs/performance.md). One process, K non-blocking streams with an event each;
// record and query are timed on each stream in turn, in short interleaved
// blocks, and the median ns per call is printed per stream. If the state
// belonged to the process, every stream would show the same figure; if it
// belongs to the channel a stream is given, the streams differ.
//
//	streams [K [BLOCKS [N]]]
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "clock.h"

#define MAXK 64
#define MAXB 512

int main(int argc, char **argv) {
	int k = argc > 1 ? atoi(argv[1]) : 8;
	int blocks = argc > 2 ? atoi(argv[2]) : 101;
	long n = argc > 3 ? atol(argv[3]) : 2000;
	if (k < 1 || k > MAXK || blocks < 1 || blocks > MAXB || n < 1) {
		fprintf(stderr, "usage: streams [K<=%d [BLOCKS<=%d [N]]]\n", MAXK, MAXB);
		return 2;
	}
	primary();
	static CUstream s[MAXK];
	static CUevent e[MAXK];
	static double rec[MAXK][MAXB], qry[MAXK][MAXB];
	for (int i = 0; i < k; i++) {
		CHECK(cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING));
		CHECK(cuEventCreate(&e[i], CU_EVENT_DISABLE_TIMING));
		CHECK(cuEventRecord(e[i], s[i]));
	}
	CHECK(cuCtxSynchronize());
	for (int b = 0; b < blocks; b++) {
		for (int j = 0; j < k; j++) {
			int i = (j + b) % k; // rotate the order, so no stream always goes first
			double t0 = now();
			for (long x = 0; x < n; x++) {
				CHECK(cuEventRecord(e[i], s[i]));
			}
			double t1 = now();
			for (long x = 0; x < n; x++) {
				CHECK(cuEventQuery(e[i]));
			}
			double t2 = now();
			rec[i][b] = (t1 - t0) / n;
			qry[i][b] = (t2 - t1) / n;
			CHECK(cuStreamSynchronize(s[i]));
		}
	}
	for (int i = 0; i < k; i++) {
		qsort(rec[i], blocks, sizeof rec[i][0], cmp);
		qsort(qry[i], blocks, sizeof qry[i][0], cmp);
		printf("stream %2d  record %7.1f  query %7.1f  (p25..p75 record %.1f..%.1f)\n", i,
			rec[i][blocks / 2], qry[i][blocks / 2], rec[i][blocks / 4], rec[i][3 * blocks / 4]);
	}
	return 0;
}

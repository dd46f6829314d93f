// Device-to-device copy from device 0 to device 1 through the CUDA runtime:
// the C baseline for the Go side's BenchmarkPeerCopy.
//   nvcc -O2 -o /tmp/peercopy bench/multigpu/peercopy.cu
//   /tmp/peercopy [-r ROUNDS] [BYTES ...]   # ROUNDS 20, BYTES 1 GiB (suffix K, M or G: KiB, MiB, GiB)
// Per size: 3 warm-up copies, then ROUNDS timed copies, each one
// cudaMemcpyPeerAsync on a stream of device 1 between two events, then
// cudaStreamSynchronize. One line per round:
//   peercopy c bytes=<N> round=<i> GBps=<float>   (GB = 1e9 bytes)
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "peercopy: %s:%d: %s: %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_), (int)e_); \
	exit(1); } } while (0)

static void usage(void) {
	fprintf(stderr, "usage: peercopy [-r ROUNDS] [BYTES ...]\n");
	exit(2);
}

// parseSize reads a byte count with an optional K, M or G (powers of 1024).
static size_t parseSize(const char *s) {
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s) usage();
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	}
	if (*end != '\0' || v == 0) usage();
	return (size_t)v;
}

// enablePeer lets device dev reach peer's memory; already enabled is fine.
static void enablePeer(int dev, int peer) {
	CHECK(cudaSetDevice(dev));
	cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
	if (e == cudaErrorPeerAccessAlreadyEnabled) {
		cudaGetLastError();
		return;
	}
	CHECK(e);
}

static void run(size_t bytes, int rounds, cudaStream_t stream) {
	void *src, *dst;
	CHECK(cudaSetDevice(0));
	CHECK(cudaMalloc(&src, bytes));
	CHECK(cudaMemset(src, 0x5a, bytes));
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaSetDevice(1));
	CHECK(cudaMalloc(&dst, bytes));
	CHECK(cudaMemset(dst, 0, bytes));
	CHECK(cudaDeviceSynchronize());

	cudaEvent_t start, stop;
	CHECK(cudaEventCreate(&start));
	CHECK(cudaEventCreate(&stop));
	for (int i = 0; i < 3; i++)
		CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, stream));
	CHECK(cudaStreamSynchronize(stream));

	// The copy arrived: its first and last bytes.
	unsigned char first, last;
	CHECK(cudaMemcpy(&first, dst, 1, cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(&last, (char *)dst + bytes - 1, 1, cudaMemcpyDeviceToHost));
	if (first != 0x5a || last != 0x5a) {
		fprintf(stderr, "peercopy: bytes=%zu: copy has 0x%02x ... 0x%02x, want 0x5a\n", bytes, first, last);
		exit(1);
	}

	for (int i = 0; i < rounds; i++) {
		float ms;
		CHECK(cudaEventRecord(start, stream));
		CHECK(cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, stream));
		CHECK(cudaEventRecord(stop, stream));
		CHECK(cudaStreamSynchronize(stream));
		CHECK(cudaEventElapsedTime(&ms, start, stop));
		printf("peercopy c bytes=%zu round=%d GBps=%.3f\n", bytes, i, (double)bytes / (ms * 1e-3) / 1e9);
		fflush(stdout);
	}
	CHECK(cudaEventDestroy(start));
	CHECK(cudaEventDestroy(stop));
	CHECK(cudaFree(dst));
	CHECK(cudaSetDevice(0));
	CHECK(cudaFree(src));
}

int main(int argc, char **argv) {
	int rounds = 20;
	size_t sizes[64];
	int nsizes = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-r") == 0) {
			if (++i == argc) usage();
			rounds = atoi(argv[i]);
			if (rounds <= 0) usage();
		} else {
			if (nsizes == (int)(sizeof sizes / sizeof sizes[0])) usage();
			sizes[nsizes++] = parseSize(argv[i]);
		}
	}
	if (nsizes == 0) sizes[nsizes++] = (size_t)1 << 30;

	int n;
	CHECK(cudaGetDeviceCount(&n));
	if (n < 2) {
		fprintf(stderr, "peercopy: %d device(s), need 2\n", n);
		return 1;
	}
	int can01, can10;
	CHECK(cudaDeviceCanAccessPeer(&can01, 0, 1));
	CHECK(cudaDeviceCanAccessPeer(&can10, 1, 0));
	printf("peer access: 0->1 %s, 1->0 %s\n", can01 ? "yes" : "no", can10 ? "yes" : "no");
	if (can01) enablePeer(0, 1);
	if (can10) enablePeer(1, 0);

	cudaStream_t stream;
	CHECK(cudaSetDevice(1));
	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	for (int i = 0; i < nsizes; i++)
		run(sizes[i], rounds, stream);
	CHECK(cudaSetDevice(1));
	CHECK(cudaStreamDestroy(stream));
	return 0;
}

// fakelaunch: a libcuda.so.1 with no GPU behind it for bench/peers/launch,
// so that the program can be run where it is built (bench/peers/launch/
// fake.sh): it checks that every variant runs, and its figures are the Go
// side's own cost, the driver costing nothing. Not the driver: the GPU
// machine runs the program against its own.
//
// Over the fake driver of the tests (cuda_test/testdata/fakecuda.c, loaded
// from FAKELAUNCH_FAKE), it exports by name what gorgonia.org/cu and
// gocnn/gocu call (they link -lcuda), and hands out through cuGetProcAddress
// (what cudagen calls) the same functions, with a module of any PTX text
// whose kernels cudagen_empty4 and cudagen_empty16 take 4 and 16 8-byte
// arguments, which cuFuncGetParamInfo tells (so that the cuda package's
// Stream.Launch takes its hot path, as on a GPU): a launch reads each
// argument through kernelParams, or from the one buffer extra passes
// (CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE), and checks
// the stream with the fake's cuStreamQuery. Every other entry point the
// peers link (bench/peers/launch/fake/fake.sh generates them) returns
// CUDA_ERROR_UNKNOWN.
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { OK = 0, INVALID_VALUE = 1, NOT_INITIALIZED = 3, NOT_FOUND = 500, NOT_READY = 600 };

static void *fake;

// fake_sym is the fake's exported symbol name (the fake is loaded first).
static void *fake_sym(const char *name) {
	if (!fake) {
		const char *path = getenv("FAKELAUNCH_FAKE");
		fake = dlopen(path ? path : "libfakecuda.so", RTLD_NOW | RTLD_LOCAL);
		if (!fake) {
			fprintf(stderr, "fakelaunch: %s\n", dlerror());
			abort();
		}
	}
	return dlsym(fake, name);
}

// fwd is the fake's entry point name, from its cuGetProcAddress.
static void *fwd(const char *name) {
	CUresult (*get)(const char *, void **, int, unsigned long long) = (CUresult(*)(const char *, void **, int, unsigned long long))fake_sym("cuGetProcAddress");
	void *fn = NULL;
	if (!get || get(name, &fn, 13000, 0) != OK || !fn) {
		fprintf(stderr, "fakelaunch: the fake has no %s\n", name);
		abort();
	}
	return fn;
}

#define FWD(name, params, args) \
	CUresult name params { \
		static CUresult(*f) params; \
		if (!f) f = (CUresult(*) params)fwd(#name); \
		return f args; \
	}
FWD(cuInit, (unsigned flags), (flags))
// The fake exports cuDriverGetVersion, and its table's reference to it
// would resolve to this library's (loaded first): take the fake's own.
CUresult cuDriverGetVersion(int *v) {
	static CUresult (*f)(int *);
	if (!f) f = (CUresult(*)(int *))fake_sym("cuDriverGetVersion");
	return f(v);
}
FWD(cuDeviceGet, (int *d, int ordinal), (d, ordinal))
FWD(cuDeviceGetCount, (int *n), (n))
FWD(cuDevicePrimaryCtxRetain, (void **ctx, int dev), (ctx, dev))
FWD(cuCtxSetCurrent, (void *ctx), (ctx))
FWD(cuCtxGetCurrent, (void **ctx), (ctx))
FWD(cuStreamCreate, (void **s, unsigned flags), (s, flags))
FWD(cuStreamSynchronize, (void *s), (s))
FWD(cuStreamQuery, (void *s), (s))

// The module: any PTX text; its two kernels.
static int module_tag;
static int kernel_args[2] = {4, 16};

static CUresult fl_module_load_data(void **m, const void *img) {
	if (!m || !img) return INVALID_VALUE;
	*m = &module_tag;
	return OK;
}
static CUresult fl_module_unload(void *m) { return m == &module_tag ? OK : INVALID_VALUE; }
static CUresult fl_module_get_function(void **f, void *m, const char *name) {
	if (m != &module_tag || !f || !name) return INVALID_VALUE;
	if (strcmp(name, "cudagen_empty4") == 0) *f = &kernel_args[0];
	else if (strcmp(name, "cudagen_empty16") == 0) *f = &kernel_args[1];
	else return NOT_FOUND;
	return OK;
}
static volatile uint64_t sink;
static CUresult fl_launch_kernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shmem, void *s, void **params, void **extra) {
	(void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem;
	if ((f != &kernel_args[0] && f != &kernel_args[1]) || (!params) == (!extra)) return INVALID_VALUE;
	int n = *(int *)f;
	uint64_t x = 0;
	if (extra) {
		const unsigned char *buf = NULL;
		size_t size = 0;
		for (int i = 0; extra[i]; i += 2) {
			if (extra[i] == (void *)1) buf = extra[i + 1];
			else if (extra[i] == (void *)2 && extra[i + 1]) size = *(const size_t *)extra[i + 1];
			else return INVALID_VALUE;
		}
		if (!buf || size < (size_t)n * 8) return INVALID_VALUE;
		for (int i = 0; i < n; i++) {
			uint64_t v;
			memcpy(&v, buf + 8 * i, 8);
			x += v;
		}
	} else {
		for (int i = 0; i < n; i++) {
			if (!params[i]) return INVALID_VALUE;
			x += *(const uint64_t *)params[i];
		}
	}
	sink = x;
	CUresult r = cuStreamQuery(s);
	return r == NOT_READY ? OK : r;
}
CUresult cuModuleLoadData(void **m, const void *img) { return fl_module_load_data(m, img); }
CUresult cuModuleUnload(void *m) { return fl_module_unload(m); }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { return fl_module_get_function(f, m, name); }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shmem, void *s, void **params, void **extra) {
	return fl_launch_kernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

// fl_func_get_param_info tells a kernel's parameters: 8 bytes each, in a
// row.
static CUresult fl_func_get_param_info(void *f, size_t i, size_t *off, size_t *size) {
	if ((f != &kernel_args[0] && f != &kernel_args[1]) || !off || !size || i >= (size_t)*(int *)f) return INVALID_VALUE;
	*off = 8 * i;
	*size = 8;
	return OK;
}

// mine is this library's own entry point of that name, or NULL.
static void *mine(const char *name) {
	if (strcmp(name, "cuModuleLoadData") == 0) return (void *)fl_module_load_data;
	if (strcmp(name, "cuModuleUnload") == 0) return (void *)fl_module_unload;
	if (strcmp(name, "cuModuleGetFunction") == 0) return (void *)fl_module_get_function;
	if (strcmp(name, "cuLaunchKernel") == 0) return (void *)fl_launch_kernel;
	if (strcmp(name, "cuFuncGetParamInfo") == 0) return (void *)fl_func_get_param_info;
	return NULL;
}

CUresult cuGetProcAddress_v2(const char *name, void **fn, int version, unsigned long long flags, int *status) {
	if ((*fn = mine(name)) != NULL) {
		if (status) *status = 0;
		return OK;
	}
	CUresult (*get)(const char *, void **, int, unsigned long long, int *) = (CUresult(*)(const char *, void **, int, unsigned long long, int *))fake_sym("cuGetProcAddress_v2");
	return get(name, fn, version, flags, status);
}
CUresult cuGetProcAddress(const char *name, void **fn, int version, unsigned long long flags) {
	return cuGetProcAddress_v2(name, fn, version, flags, NULL);
}

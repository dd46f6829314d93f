// A fake libnvJitLink for the package's tests: it behaves as nvJitLink.h
// documents, exporting the versioned entry points of CUDA 12.4 and 13.0
// (__nvJitLinkCreate_12_4, ...) and linking nothing. Create needs
// -arch=sm_NN; inputs are copied (nothing of the caller's is kept after a
// call); Complete fails with NVJITLINK_ERROR_PTX_COMPILE and an error log
// when an input contains "#bad", else the CUBIN names the inputs in order
// (and -ptx makes PTX instead). The info log functions are not exported:
// the package must say the loaded library does not support them. A call on
// a link from a thread other than the one that created it fails with
// NVJITLINK_ERROR_INTERNAL: the real library crashed then.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef struct link {
	char arch[32];
	int ptx, ninputs, done;
	char *inputs;   // names, each followed by ';'
	char *errlog;
	char *out;
	size_t outSize;
	int bad;
	pthread_t thread; // Create's
} link;

// MOVED is true of a call on l from another thread than its Create's.
#define MOVED(l) ((l) && !pthread_equal((l)->thread, pthread_self()))

int __nvJitLinkCreate_12_4(link **h, unsigned n, const char **opts) {
	if (!h || (n > 0 && !opts)) return 3;
	link *l = calloc(1, sizeof *l);
	for (unsigned i = 0; i < n; i++) {
		if (strncmp(opts[i], "-arch=", 6) == 0) snprintf(l->arch, sizeof l->arch, "%s", opts[i] + 6);
		else if (strcmp(opts[i], "-ptx") == 0) l->ptx = 1;
		else if (strcmp(opts[i], "-lto") != 0) { free(l); return 1; }
	}
	if (!l->arch[0]) { free(l); return 2; }
	l->inputs = strdup("");
	l->thread = pthread_self();
	*h = l;
	return 0;
}

int __nvJitLinkDestroy_12_4(link **h) {
	if (!h || !*h) return 3;
	if (MOVED(*h)) return 6;
	link *l = *h;
	free(l->inputs); free(l->errlog); free(l->out); free(l);
	*h = NULL;
	return 0;
}

static int add(link *l, const char *data, size_t size, const char *name) {
	size_t n = strlen(l->inputs) + (name ? strlen(name) : 7) + 2;
	char *s = malloc(n);
	snprintf(s, n, "%s%s;", l->inputs, name ? name : "(none)");
	free(l->inputs);
	l->inputs = s;
	for (size_t i = 0; i + 4 <= size; i++)
		if (memcmp(data + i, "#bad", 4) == 0) l->bad = 1;
	l->ninputs++;
	return 0;
}

int __nvJitLinkAddData_12_4(link *l, int type, const void *data, size_t size, const char *name) {
	if (MOVED(l)) return 6;
	if (!l || !data || size == 0 || type < 1 || (type > 6 && type != 10)) return 3;
	return add(l, data, size, name);
}

int __nvJitLinkAddFile_12_4(link *l, int type, const char *file) {
	if (MOVED(l)) return 6;
	if (!l || !file) return 3;
	FILE *f = fopen(file, "rb");
	if (!f) return 3;
	char buf[4096];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	return add(l, buf, n, file);
}

int __nvJitLinkComplete_12_4(link *l) {
	if (MOVED(l)) return 6;
	if (!l || l->ninputs == 0) return 3;
	free(l->errlog); free(l->out);
	l->errlog = NULL; l->out = NULL; l->outSize = 0;
	if (l->bad) {
		char buf[256];
		snprintf(buf, sizeof buf, "error   : fake PTX compile failure in %s\n", l->inputs);
		l->errlog = strdup(buf);
		return 4;
	}
	size_t n = strlen(l->inputs) + 64;
	l->out = malloc(n);
	snprintf(l->out, n, "%s %s %s", l->ptx ? "FAKEPTX" : "FAKECUBIN", l->arch, l->inputs);
	l->outSize = strlen(l->out) + (l->ptx ? 1 : 0); // PTX ends with its NUL, a CUBIN has none
	l->done = 1;
	return 0;
}

static int outOf(link *l, int ptx, size_t *size) {
	if (MOVED(l)) return 6;
	if (!l || !size || !l->done || l->ptx != ptx) return 3;
	*size = l->outSize;
	return 0;
}
int __nvJitLinkGetLinkedCubinSize_12_4(link *l, size_t *size) { return outOf(l, 0, size); }
int __nvJitLinkGetLinkedPtxSize_12_4(link *l, size_t *size) { return outOf(l, 1, size); }
int __nvJitLinkGetLinkedCubin_12_4(link *l, void *out) {
	size_t n;
	if (!out || outOf(l, 0, &n)) return 3;
	memcpy(out, l->out, n);
	return 0;
}
int __nvJitLinkGetLinkedPtx_12_4(link *l, char *out) {
	size_t n;
	if (!out || outOf(l, 1, &n)) return 3;
	memcpy(out, l->out, n);
	return 0;
}
int __nvJitLinkGetErrorLogSize_12_4(link *l, size_t *size) {
	if (MOVED(l)) return 6;
	if (!l || !size) return 3;
	*size = l->errlog ? strlen(l->errlog) + 1 : 0;
	return 0;
}
int __nvJitLinkGetErrorLog_12_4(link *l, char *out) {
	if (MOVED(l)) return 6;
	if (!l || !out) return 3;
	if (l->errlog) strcpy(out, l->errlog);
	return 0;
}
int nvJitLinkVersion(unsigned *major, unsigned *minor) {
	if (!major || !minor) return 3;
	*major = 12; *minor = 4;
	return 0;
}
// CUDA 13.0's entry points are the same functions (the 13.0 library exports
// __nvJitLinkCreate_13_0, ...): one fake stands for either version.
#define SAME(name, sig) int name##_13_0 sig __attribute__((alias(#name "_12_4")));
SAME(__nvJitLinkCreate, (link **h, unsigned n, const char **opts))
SAME(__nvJitLinkDestroy, (link **h))
SAME(__nvJitLinkAddData, (link *l, int type, const void *data, size_t size, const char *name))
SAME(__nvJitLinkAddFile, (link *l, int type, const char *file))
SAME(__nvJitLinkComplete, (link *l))
SAME(__nvJitLinkGetLinkedCubinSize, (link *l, size_t *size))
SAME(__nvJitLinkGetLinkedPtxSize, (link *l, size_t *size))
SAME(__nvJitLinkGetLinkedCubin, (link *l, void *out))
SAME(__nvJitLinkGetLinkedPtx, (link *l, char *out))
SAME(__nvJitLinkGetErrorLogSize, (link *l, size_t *size))
SAME(__nvJitLinkGetErrorLog, (link *l, char *out))

// A fake libnvrtc for the package's tests: it behaves as nvrtc.h documents
// (programs, options, logs, sized outputs, name expressions), compiling
// nothing. A source containing "#error" fails with NVRTC_ERROR_COMPILATION
// and a log naming the line; otherwise the PTX is a text naming the
// program and its options, with an entry point (a ".entry" with its
// ".param"s, as the fake driver reads them) for each __global__ function
// of the source, and its trailing NUL. Every
// string the caller passes is copied: nothing is kept after a call.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef struct prog {
	char *src, *name, *log, *ptx;
	size_t ptxSize, logSize;
	int compiled, nexpr;
	char *expr[16];
	long magic;
} prog;

#define MAGIC 0x6e767274
static int live;

int fakenvrtc_live(void) { return live; }

int nvrtcVersion(int *major, int *minor) {
	if (!major || !minor) return 3;
	*major = 12; *minor = 4;
	return 0;
}

int nvrtcGetNumSupportedArchs(int *n) { if (!n) return 3; *n = 3; return 0; }

int nvrtcGetSupportedArchs(int *a) {
	if (!a) return 3;
	a[0] = 75; a[1] = 80; a[2] = 90;
	return 0;
}

static char *dup(const char *s) { return s ? strdup(s) : NULL; }

int nvrtcCreateProgram(prog **out, const char *src, const char *name, int nh, const char *const *headers, const char *const *names) {
	if (!out || !src || nh < 0 || (nh > 0 && (!headers || !names))) return 3;
	prog *p = calloc(1, sizeof *p);
	p->magic = MAGIC;
	size_t n = strlen(src) + 1;
	for (int i = 0; i < nh; i++) n += strlen(headers[i]) + strlen(names[i]) + 16;
	p->src = malloc(n);
	strcpy(p->src, src);
	for (int i = 0; i < nh; i++) { strcat(p->src, "\n// header "); strcat(p->src, names[i]); strcat(p->src, ": "); strcat(p->src, headers[i]); }
	p->name = dup(name ? name : "default_program");
	live++;
	*out = p;
	return 0;
}

static int valid(prog *p) { return p && p->magic == MAGIC; }

static void entries(const char *src, char *out);

int nvrtcDestroyProgram(prog **pp) {
	if (!pp || !valid(*pp)) return 4;
	prog *p = *pp;
	p->magic = 0;
	free(p->src); free(p->name); free(p->log); free(p->ptx);
	for (int i = 0; i < p->nexpr; i++) free(p->expr[i]);
	free(p);
	live--;
	*pp = NULL;
	return 0;
}

int nvrtcCompileProgram(prog *p, int n, const char *const *opts) {
	if (!valid(p)) return 4;
	if (n < 0 || (n > 0 && !opts)) return 3;
	for (int i = 0; i < n; i++)
		if (strncmp(opts[i], "-", 1) != 0) return 5;
	free(p->log); free(p->ptx);
	char *err = strstr(p->src, "#error");
	if (err) {
		int line = 1;
		for (char *c = p->src; c < err; c++) line += *c == '\n';
		char buf[256];
		snprintf(buf, sizeof buf, "%s(%d): error: #error directive\n1 error detected in the compilation of \"%s\".\n", p->name, line, p->name);
		p->log = strdup(buf);
		p->logSize = strlen(buf) + 1;
		p->ptx = NULL; p->ptxSize = 0; p->compiled = 0;
		return 6;
	}
	size_t sz = 4 * strlen(p->src) + 256;
	for (int i = 0; i < n; i++) sz += strlen(opts[i]) + 1;
	p->ptx = malloc(sz);
	snprintf(p->ptx, sz, "//\n// fake PTX of %s\n// options:", p->name);
	for (int i = 0; i < n; i++) { strcat(p->ptx, " "); strcat(p->ptx, opts[i]); }
	strcat(p->ptx, "\n.version 8.4\n.target sm_90\n.address_size 64\n");
	entries(p->src, p->ptx + strlen(p->ptx));
	p->ptxSize = strlen(p->ptx) + 1;
	p->log = strdup("");
	p->logSize = 1;
	p->compiled = 1;
	return 0;
}

// entries writes a PTX entry point for each "__global__ void NAME(...)" of
// src at out: a parameter with a '*' is .u64, a double .f64, a float .f32,
// a long long or size_t .u64, any other .u32.
static void entries(const char *src, char *out) {
	for (const char *g = strstr(src, "__global__"); g != NULL; g = strstr(g + 10, "__global__")) {
		const char *v = strstr(g, "void");
		const char *open = v ? strchr(v, '(') : NULL;
		const char *close = open ? strchr(open, ')') : NULL;
		if (!close) return;
		const char *name = v + 4;
		while (*name == ' ') name++;
		out += sprintf(out, ".visible .entry %.*s(", (int)(open - name), name);
		int k = 0;
		for (const char *q = open + 1; q < close;) {
			const char *comma = memchr(q, ',', (size_t)(close - q));
			const char *stop = comma ? comma : close;
			int blank = 1;
			for (const char *c = q; c < stop; c++) blank = blank && (*c == ' ' || *c == '\n' || *c == '\t');
			if (!blank) {
				const char *t = ".u32";
				if (memchr(q, '*', (size_t)(stop - q))) t = ".u64";
				else if (strstr(q, "double") && strstr(q, "double") < stop) t = ".f64";
				else if (strstr(q, "float") && strstr(q, "float") < stop) t = ".f32";
				else if ((strstr(q, "long long") && strstr(q, "long long") < stop) || (strstr(q, "size_t") && strstr(q, "size_t") < stop)) t = ".u64";
				out += sprintf(out, "%s\n\t.param %s p%d", k ? "," : "", t, k);
				k++;
			}
			q = stop + 1;
		}
		out += sprintf(out, "\n)\n{\n\tret;\n}\n");
	}
}

int nvrtcGetPTXSize(prog *p, size_t *n) { if (!valid(p)) return 4; if (!n) return 3; *n = p->ptxSize; return 0; }
int nvrtcGetPTX(prog *p, char *out) { if (!valid(p)) return 4; if (!out) return 3; if (p->ptx) memcpy(out, p->ptx, p->ptxSize); return 0; }
int nvrtcGetProgramLogSize(prog *p, size_t *n) { if (!valid(p)) return 4; if (!n) return 3; *n = p->log ? p->logSize : 1; return 0; }
int nvrtcGetProgramLog(prog *p, char *out) { if (!valid(p)) return 4; if (!out) return 3; if (p->log) memcpy(out, p->log, p->logSize); else out[0] = 0; return 0; }

int nvrtcAddNameExpression(prog *p, const char *const e) {
	if (!valid(p)) return 4;
	if (!e) return 3;
	if (p->compiled) return 8;
	if (p->nexpr == 16) return 1;
	p->expr[p->nexpr++] = strdup(e);
	return 0;
}

int nvrtcGetLoweredName(prog *p, const char *const e, const char **lowered) {
	if (!valid(p)) return 4;
	if (!e || !lowered) return 3;
	if (!p->compiled) return 9;
	for (int i = 0; i < p->nexpr; i++)
		if (strcmp(p->expr[i], e) == 0) { *lowered = "_Z6loweredv"; return 0; }
	return 10;
}

const char *nvrtcGetErrorString(int r) { return r == 0 ? "NVRTC_SUCCESS" : "NVRTC_ERROR"; }
// nvrtcGetCUBIN, nvrtcGetLTOIR and the others are not exported: the
// package must say the loaded library does not support them.

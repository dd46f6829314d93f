// A fake libnccl for the package's tests: it behaves as nccl.h says NCCL
// does, in one process, with host memory standing for device memory
// (ncclMemAlloc is malloc). Communicators made together (ncclCommInitAll,
// or ncclCommInitRank with one unique ID) form a clique; a collective runs
// when the last rank of the clique has called it, in or out of a group,
// and then every rank's buffers hold the result. Streams are taken and
// not used. ncclCommRegister and ncclGroupSimulateEnd are not exported:
// the package must say the loaded library does not support them.
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ok = 0, invalidArgument = 4, invalidUsage = 5 };

typedef struct clique clique;
typedef struct comm {
	long magic;
	clique *c;
	int rank, device, destroyed;
} comm;

typedef struct call {
	int kind, dt, op, root, peer;
	const void *send;
	void *recv;
	size_t count;
	int set;
} call;

struct clique {
	int nranks, joined;
	char id[128];
	comm *ranks[8];
	call q[8][64];    // each rank's collectives, in the order it called them
	int posted[8], done; // how many each rank posted; how many ran
	int asyncError;
	call sends[8][8]; // sends[from][to]
	call recvs[8][8]; // recvs[to][from]
};

#define MAGIC 0x6e63636cL
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static clique *cliques[64];
static int ncliques, idCounter;

int ncclGetVersion(int *v) { if (!v) return invalidArgument; *v = 22203; return ok; }

int ncclGetUniqueId(char *id) {
	if (!id) return invalidArgument;
	pthread_mutex_lock(&mu);
	int n = ++idCounter;
	pthread_mutex_unlock(&mu);
	memset(id, 0, 128);
	for (int i = 0; i < 128; i++) id[i] = (char)(i * 7 + n);
	memcpy(id, "fakenccl", 8);
	id[8] = (char)n;
	return ok;
}

int ncclMemAlloc(void **p, size_t size) {
	if (!p || size == 0) return invalidArgument;
	*p = calloc(1, size);
	return *p ? ok : 1;
}
int ncclMemFree(void *p) { if (!p) return invalidArgument; free(p); return ok; }

static comm *newComm(clique *c, int rank, int device) {
	comm *m = calloc(1, sizeof *m);
	m->magic = MAGIC; m->c = c; m->rank = rank; m->device = device;
	c->ranks[rank] = m;
	return m;
}

int ncclCommInitAll(comm **comms, int n, const int *devs) {
	if (!comms || n < 1 || n > 8) return invalidArgument;
	clique *c = calloc(1, sizeof *c);
	c->nranks = c->joined = n;
	for (int i = 0; i < n; i++) comms[i] = newComm(c, i, devs ? devs[i] : i);
	return ok;
}

static int initRank(comm **out, int n, const char id[128], int rank) {
	if (!out || n < 1 || n > 8 || rank < 0 || rank >= n) return invalidArgument;
	pthread_mutex_lock(&mu);
	clique *c = NULL;
	for (int i = 0; i < ncliques; i++)
		if (memcmp(cliques[i]->id, id, 128) == 0) c = cliques[i];
	if (!c) {
		if (ncliques == 64) { pthread_mutex_unlock(&mu); return 1; }
		c = calloc(1, sizeof *c);
		c->nranks = n;
		memcpy(c->id, id, 128);
		cliques[ncliques++] = c;
	}
	int bad = c->nranks != n || c->ranks[rank];
	if (!bad) { *out = newComm(c, rank, rank); c->joined++; }
	pthread_mutex_unlock(&mu);
	return bad ? invalidArgument : ok;
}

typedef struct { char internal[128]; } uniqueId;
int ncclCommInitRank(comm **out, int n, uniqueId id, int rank) { return initRank(out, n, id.internal, rank); }

static int valid(comm *m) { return m && m->magic == MAGIC && !m->destroyed; }

int ncclCommCount(comm *m, int *n) { if (!valid(m) || !n) return invalidArgument; *n = m->c->nranks; return ok; }
int ncclCommCuDevice(comm *m, int *d) { if (!valid(m) || !d) return invalidArgument; *d = m->device; return ok; }
int ncclCommUserRank(comm *m, int *r) { if (!valid(m) || !r) return invalidArgument; *r = m->rank; return ok; }
int ncclCommGetAsyncError(comm *m, int *e) { if (!valid(m) || !e) return invalidArgument; *e = m->c->asyncError; return ok; }
int ncclCommFinalize(comm *m) { return valid(m) ? ok : invalidArgument; }
int ncclCommDestroy(comm *m) { if (!valid(m)) return invalidArgument; m->destroyed = 1; return ok; }
int ncclCommAbort(comm *m) { if (!valid(m)) return invalidArgument; m->destroyed = 1; return ok; }

static size_t width(int dt) {
	switch (dt) { case 2: case 3: case 7: return 4; case 4: case 5: case 8: return 8; case 0: case 1: return 1; }
	return 0;
}

static double get(const void *p, int dt, size_t i) {
	switch (dt) {
	case 2: return ((const int32_t *)p)[i];
	case 4: return (double)((const int64_t *)p)[i];
	case 7: return ((const float *)p)[i];
	case 8: return ((const double *)p)[i];
	}
	return 0;
}
static void put(void *p, int dt, size_t i, double v) {
	switch (dt) {
	case 2: ((int32_t *)p)[i] = (int32_t)v; break;
	case 4: ((int64_t *)p)[i] = (int64_t)v; break;
	case 7: ((float *)p)[i] = (float)v; break;
	case 8: ((double *)p)[i] = v; break;
	}
}
static double reduce(double a, double b, int op) {
	switch (op) { case 0: return a + b; case 1: return a * b; case 2: return a > b ? a : b; case 3: return a < b ? a : b; }
	return a + b;
}

enum { kAllReduce = 1, kBroadcast, kAllGather, kReduceScatter, kReduce };

// run performs collective number k, which every rank of c has called.
static void run(clique *c, int k) {
	int n = c->nranks;
	call p[8] = {{0}};
	for (int r = 0; r < n; r++) p[r] = c->q[r][k % 64];
	for (int r = 1; r < n; r++)
		if (p[r].kind != p[0].kind || p[r].count != p[0].count || p[r].dt != p[0].dt || p[r].root != p[0].root) {
			c->asyncError = invalidUsage; // ranks must call the same collectives in the same order
			return;
		}
	int dt = p[0].dt;
	size_t cnt = p[0].count;
	switch (p[0].kind) {
	case kAllReduce: case kReduce: {
		double *acc = calloc(cnt, sizeof *acc);
		for (size_t i = 0; i < cnt; i++) {
			acc[i] = get(p[0].send, dt, i);
			for (int r = 1; r < n; r++) acc[i] = reduce(acc[i], get(p[r].send, dt, i), p[0].op);
			if (p[0].op == 4) acc[i] /= n;
		}
		for (int r = 0; r < n; r++)
			if (p[0].kind == kAllReduce || r == p[0].root)
				for (size_t i = 0; i < cnt; i++) put(p[r].recv, dt, i, acc[i]);
		free(acc);
		break;
	}
	case kBroadcast:
		for (int r = 0; r < n; r++)
			if (r != p[0].root) memmove(p[r].recv, p[p[0].root].send, cnt * width(dt));
		if (p[p[0].root].recv != p[p[0].root].send) memmove(p[p[0].root].recv, p[p[0].root].send, cnt * width(dt));
		break;
	case kAllGather:
		for (int r = 0; r < n; r++)
			for (int s = 0; s < n; s++) memcpy((char *)p[r].recv + s * cnt * width(dt), p[s].send, cnt * width(dt));
		break;
	case kReduceScatter:
		for (int r = 0; r < n; r++)
			for (size_t i = 0; i < cnt; i++) {
				double a = get(p[0].send, dt, r * cnt + i);
				for (int s = 1; s < n; s++) a = reduce(a, get(p[s].send, dt, r * cnt + i), p[0].op);
				put(p[r].recv, dt, i, a);
			}
		break;
	}
}

static int collective(comm *m, int kind, const void *send, void *recv, size_t count, int dt, int op, int root) {
	if (!valid(m)) return m && m->magic == MAGIC ? invalidUsage : invalidArgument;
	if (!send || !recv || width(dt) == 0 || op < 0 || op > 4) return invalidArgument;
	clique *c = m->c;
	if (root < 0 || root >= c->nranks) return invalidArgument;
	pthread_mutex_lock(&mu);
	if (c->posted[m->rank] - c->done >= 64) { pthread_mutex_unlock(&mu); return invalidUsage; }
	c->q[m->rank][c->posted[m->rank]++ % 64] = (call){kind, dt, op, root, 0, send, recv, count, 1};
	for (;;) { // run every collective all ranks have posted, in order
		int all = c->joined == c->nranks;
		for (int r = 0; r < c->nranks && all; r++) all = c->posted[r] > c->done;
		if (!all) break;
		run(c, c->done++);
	}
	pthread_mutex_unlock(&mu);
	return ok;
}

int ncclAllReduce(const void *s, void *r, size_t n, int dt, int op, comm *m, void *st) { return collective(m, kAllReduce, s, r, n, dt, op, 0); }
int ncclReduce(const void *s, void *r, size_t n, int dt, int op, int root, comm *m, void *st) { return collective(m, kReduce, s, r, n, dt, op, root); }
int ncclBroadcast(const void *s, void *r, size_t n, int dt, int root, comm *m, void *st) { return collective(m, kBroadcast, s, r, n, dt, 0, root); }
int ncclBcast(void *b, size_t n, int dt, int root, comm *m, void *st) { return collective(m, kBroadcast, b, b, n, dt, 0, root); }
int ncclAllGather(const void *s, void *r, size_t n, int dt, comm *m, void *st) { return collective(m, kAllGather, s, r, n, dt, 0, 0); }
int ncclReduceScatter(const void *s, void *r, size_t n, int dt, int op, comm *m, void *st) { return collective(m, kReduceScatter, s, r, n, dt, op, 0); }

static int p2p(comm *m, int send, void *buf, size_t n, int dt, int peer) {
	if (!valid(m)) return invalidArgument;
	if (!buf || width(dt) == 0 || peer < 0 || peer >= m->c->nranks || peer == m->rank) return invalidArgument;
	clique *c = m->c;
	pthread_mutex_lock(&mu);
	call *mine = send ? &c->sends[m->rank][peer] : &c->recvs[m->rank][peer];
	call *other = send ? &c->recvs[peer][m->rank] : &c->sends[peer][m->rank];
	*mine = (call){0, dt, 0, 0, peer, buf, buf, n, 1};
	if (other->set) {
		call *s = send ? mine : other, *r = send ? other : mine;
		memcpy(r->recv, s->send, (s->count < r->count ? s->count : r->count) * width(dt));
		mine->set = other->set = 0;
	}
	pthread_mutex_unlock(&mu);
	return ok;
}
int ncclSend(const void *s, size_t n, int dt, int peer, comm *m, void *st) { return p2p(m, 1, (void *)s, n, dt, peer); }
int ncclRecv(void *r, size_t n, int dt, int peer, comm *m, void *st) { return p2p(m, 0, r, n, dt, peer); }

static __thread int groupDepth;
int ncclGroupStart(void) { groupDepth++; return ok; }
int ncclGroupEnd(void) { if (groupDepth == 0) return invalidUsage; groupDepth--; return ok; }

// A host scalar (ncclScalarHostImmediate) is read during the call, as
// NCCL documents: its 8 first bytes' worth (by dt's size) land in
// fakenccl_last_scalar; a device scalar is not read.
unsigned long long fakenccl_last_scalar;
static size_t dtSize(int dt) { return dt <= 1 ? 1 : dt <= 3 ? 4 : dt <= 5 ? 8 : dt == 6 || dt == 9 ? 2 : dt == 7 ? 4 : 8; }
int ncclRedOpCreatePreMulSum(int *op, void *scalar, int dt, int residence, comm *m) {
	if (!op || !scalar || !valid(m) || (residence != 0 && residence != 1) || dt < 0 || dt > 9) return invalidArgument;
	if (residence == 1) {
		fakenccl_last_scalar = 0;
		memcpy(&fakenccl_last_scalar, scalar, dtSize(dt));
	}
	*op = 5;
	return ok;
}
int ncclRedOpDestroy(int op, comm *m) { return valid(m) && op >= 5 ? ok : invalidArgument; }
int ncclCommSplit(comm *m, int color, int key, comm **out, void *config) { return invalidUsage; }
int ncclCommInitRankConfig(comm **out, int n, uniqueId id, int rank, void *config) { return initRank(out, n, id.internal, rank); }
int ncclCommDeregister(comm *m, void *h) { return invalidArgument; }

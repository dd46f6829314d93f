// A queue of messages from C callbacks the driver may make on any thread,
// inside any driver call (callback.go): the C side only copies a message
// in; a goroutine takes them out, in order, and calls the Go func.
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct cg_msg {
	struct cg_msg *next;
	int a;       // a level, a type
	uintptr_t h; // a handle
	size_t n;    // the bytes of data
	char data[];
} cg_msg;

typedef struct cg_queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	cg_msg *head, *tail;
	int closed;
} cg_queue;

static cg_queue *cg_queue_new(void) {
	cg_queue *q = calloc(1, sizeof *q);
	if (q) {
		pthread_mutex_init(&q->mu, NULL);
		pthread_cond_init(&q->cv, NULL);
	}
	return q;
}

// cg_queue_put copies n bytes of data in; a closed queue drops it.
static void cg_queue_put(cg_queue *q, int a, uintptr_t h, const void *data, size_t n) {
	cg_msg *m = malloc(sizeof *m + n);
	if (!m) return;
	m->next = NULL, m->a = a, m->h = h, m->n = n;
	if (n) memcpy(m->data, data, n);
	pthread_mutex_lock(&q->mu);
	if (q->closed) {
		pthread_mutex_unlock(&q->mu);
		free(m);
		return;
	}
	if (q->tail) q->tail->next = m; else q->head = m;
	q->tail = m;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

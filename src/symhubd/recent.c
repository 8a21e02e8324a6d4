/*
 * recent: see recent.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "recent.h"

static struct {
	pthread_mutex_t		mu;
	struct recent_event	ev[RECENT_N][RECENT_MAX];
	size_t			next[RECENT_N];	/* slot of the next event */
	size_t			n[RECENT_N];
} r = { .mu = PTHREAD_MUTEX_INITIALIZER };

void
recent_add(enum recent_kind k, const char *id, const char *what,
    const char *detail)
{
	struct recent_event e;

	memset(&e, 0, sizeof(e));
	e.t = clock_wall_s();
	snprintf(e.id, sizeof(e.id), "%s", id != NULL ? id : "");
	snprintf(e.what, sizeof(e.what), "%s", what != NULL ? what : "");
	snprintf(e.detail, sizeof(e.detail), "%s", detail != NULL ? detail :
	    "");
	pthread_mutex_lock(&r.mu);
	r.ev[k][r.next[k]] = e;
	r.next[k] = (r.next[k] + 1) % RECENT_MAX;
	if (r.n[k] < RECENT_MAX)
		r.n[k]++;
	pthread_mutex_unlock(&r.mu);
}

size_t
recent_get(enum recent_kind k, struct recent_event *out, size_t max)
{
	size_t i, n;

	pthread_mutex_lock(&r.mu);
	n = r.n[k] < max ? r.n[k] : max;
	for (i = 0; i < n; i++)
		out[i] = r.ev[k][(r.next[k] + RECENT_MAX - 1 - i) % RECENT_MAX];
	pthread_mutex_unlock(&r.mu);
	return n;
}

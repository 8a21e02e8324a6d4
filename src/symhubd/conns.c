/*
 * conns: the open connections, so that none holds a place without
 * sending a request: a request head must arrive whole within
 * --head-timeout (1 s while three quarters of --connections are taken),
 * and at the --connections budget the connection that has waited longest
 * for a head makes room for a newcomer.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "route.h"

/*
 * One open connection.  A request head must arrive whole within
 * --head-timeout of the connection's start or of the previous answer;
 * libmicrohttpd's own timeout is an idle one, which a client sending a
 * byte a second never meets.
 */
struct cctx {
	struct cctx		*next, *prev;	/* older, newer */
	int			 fd;
	int			 cut;		/* shut down by guard() */
	/* Set by the connection's thread, read by guard(): atomics, so a
	 * request takes no lock for them. */
	int			 in_head;	/* waiting for a request head */
	int64_t			 since;		/* ... since then, ms */
};

/*
 * --connections are taken and one more arrives: shut down the connection
 * that has waited longest for a request head (idle or trickling), so that
 * a newcomer is served at once.  Under h->cmu; linear in the connections,
 * only at the budget.
 */
static void
make_room(struct http *h)
{
	struct cctx	*cc;

	/* From the oldest connection on: the first that waits for a head
	 * (usually the very first: busy ones are rarely old and waiting). */
	for (cc = h->oldest; cc != NULL; cc = cc->prev)
		if (!cc->cut && __atomic_load_n(&cc->in_head, __ATOMIC_ACQUIRE))
			break;
	if (cc == NULL)
		return;
	(void)shutdown(cc->fd, SHUT_RDWR);
	cc->cut = 1;
	h->head_timeouts++;
}

void
conns_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
    enum MHD_ConnectionNotificationCode code)
{
	struct http			*h = cls;
	struct cctx			*cc = *socket_context;
	const union MHD_ConnectionInfo	*ci;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(conn,
		    MHD_CONNECTION_INFO_CONNECTION_FD);
		if (ci == NULL || (cc = calloc(1, sizeof(*cc))) == NULL)
			return;
		cc->fd = ci->connect_fd;
		cc->in_head = 1;
		cc->since = clock_coarse_ms();
		pthread_mutex_lock(&h->cmu);
		/* The budget is ours: libmicrohttpd's own limit (twice
		 * it) is never met, so no newcomer is turned away. */
		if (h->cfg->connections > 0 &&
		    h->nconns >= h->cfg->connections)
			make_room(h);
		/* conns is the newest; ->next goes older, ->prev newer. */
		cc->prev = NULL;
		if ((cc->next = h->conns) != NULL)
			cc->next->prev = cc;
		else
			h->oldest = cc;
		h->conns = cc;
		h->nconns++;
		pthread_mutex_unlock(&h->cmu);
		*socket_context = cc;
	} else if (cc != NULL) {	/* closed: before its fd is */
		pthread_mutex_lock(&h->cmu);
		if (cc->prev != NULL)
			cc->prev->next = cc->next;
		else
			h->conns = cc->next;
		if (cc->next != NULL)
			cc->next->prev = cc->prev;
		else
			h->oldest = cc->prev;
		h->nconns--;
		pthread_mutex_unlock(&h->cmu);
		free(cc);
		*socket_context = NULL;
	}
}

void
conns_head(struct MHD_Connection *conn, int done)
{
	const union MHD_ConnectionInfo	*ci;
	struct cctx			*cc;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci == NULL || (cc = ci->socket_context) == NULL)
		return;
	__atomic_store_n(&cc->since, clock_coarse_ms(), __ATOMIC_RELAXED);
	__atomic_store_n(&cc->in_head, !done, __ATOMIC_RELEASE);
}

/*
 * Once a second, shut down connections whose request head is late: after
 * --head-timeout, or after 1 s while three quarters of --connections are
 * taken, so that idle and trickling connections cannot crowd out new
 * clients.  shutdown(2), not close(2): the fd stays libmicrohttpd's,
 * which sees the end and cleans up.
 */
static void *
guard(void *arg)
{
	struct http	*h = arg;
	struct timespec	 until;
	struct cctx	*cc;
	int64_t		 now, limit;

	pthread_mutex_lock(&h->cmu);
	while (!h->stopping) {
		until = clock_deadline(1000);
		pthread_cond_timedwait(&h->ccv, &h->cmu, &until);
		if (h->stopping)
			break;
		limit = (int64_t)h->cfg->head_timeout * 1000;
		if (h->cfg->connections > 0 &&
		    h->nconns >= h->cfg->connections * 3 / 4)
			limit = limit < 1000 ? limit : 1000;
		if (limit <= 0)
			continue;
		now = clock_coarse_ms();
		for (cc = h->conns; cc != NULL; cc = cc->next) {
			if (!__atomic_load_n(&cc->in_head, __ATOMIC_ACQUIRE) ||
			    cc->cut || now - __atomic_load_n(&cc->since,
			    __ATOMIC_RELAXED) < limit)
				continue;
			(void)shutdown(cc->fd, SHUT_RDWR);
			cc->cut = 1;
			h->head_timeouts++;
		}
	}
	pthread_mutex_unlock(&h->cmu);
	return NULL;
}

int
conns_start(struct http *h)
{
	pthread_mutex_init(&h->cmu, NULL);
	pthread_cond_init(&h->ccv, NULL);
	if (pthread_create(&h->guard, NULL, guard, h) == 0)
		h->guard_started = 1;
	return 0;
}

void
conns_stop(struct http *h)
{
	pthread_mutex_lock(&h->cmu);
	h->stopping = 1;
	pthread_cond_signal(&h->ccv);
	pthread_mutex_unlock(&h->cmu);
	if (h->guard_started)
		pthread_join(h->guard, NULL);
}

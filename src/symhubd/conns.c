/*
 * conns: the open connections, so that none holds a place without
 * making progress.  A request head must arrive whole within
 * --head-timeout; a body must keep up --body-min-rate on average after an
 * allowance of --body-timeout, and never pause longer than --body-timeout
 * (both allowances drop to 1 s while three quarters of --connections are
 * taken).  At the --connections budget the connection furthest behind
 * (a head waited for longest, or a body furthest below the rate) makes
 * room for a newcomer; one answered, or whose body keeps the rate, never
 * does.
 */
#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "route.h"

/*
 * One open connection.  libmicrohttpd's own timeout is an idle one, which
 * a client sending a byte a second never meets; so each connection says
 * by when it should have made its progress (due), and guard() and
 * make_room() measure it against the clock.
 */
struct cctx {
	struct cctx		*next, *prev;	/* older, newer */
	int			 fd;
	int			 cut;		/* shut down: under h->cmu */
	int64_t			 born;		/* ms; never changes */
	uint64_t		 rate;		/* --body-min-rate */
	/* The connection's thread alone writes these. */
	int64_t			 since;		/* phase began, ms */
	uint64_t		 got;		/* body bytes so far */
	/*
	 * Written by the connection's thread, read by guard() and
	 * make_room(): atomics, so that a request takes no lock.  The
	 * phase is stored last (release) and loaded first (acquire), so a
	 * reader sees a due and a last at least as new as its phase: a
	 * connection can look less late than it is, never later.
	 */
	int			 phase;		/* enum conns_phase */
	int64_t			 due;		/* head: since; body: since +
						 * got / rate */
	int64_t			 last;		/* body bytes last came, ms */
};

static int
phase_of(const struct cctx *cc)
{
	return __atomic_load_n(&cc->phase, __ATOMIC_ACQUIRE);
}

/* How far behind cc is, in ms (<= 0: on time); 0 when it is being
 * answered, which nothing cuts. */
static int
behind(const struct cctx *cc, int64_t now, int64_t *late)
{
	if (phase_of(cc) == CONNS_ANSWER)
		return 0;
	*late = now - __atomic_load_n(&cc->due, __ATOMIC_RELAXED);
	return 1;
}

static void
cut(struct http *h, struct cctx *cc)
{
	(void)shutdown(cc->fd, SHUT_RDWR);
	cc->cut = 1;
	if (phase_of(cc) == CONNS_BODY)
		h->body_timeouts++;
	else
		h->head_timeouts++;
}

/*
 * A connection is not cut to make room before it is this far behind
 * (ms): one just accepted has not had its chance yet, and a flood of
 * reconnects would otherwise cut every newcomer (a legitimate one too)
 * before its thread got to read its head.
 */
#define GRACE_MS	250

/*
 * --connections are taken and one more arrives: shut down the connection
 * furthest behind, so that a newcomer is served at once.  Any connection
 * waiting for a head is a candidate (an idle keep-alive one too), and a
 * body only while it is below --body-min-rate: an upload that keeps the
 * rate is never cut, however long it takes.  None within GRACE_MS: then
 * the newcomer is let in above the budget, libmicrohttpd's limit (twice
 * it) being the backstop, and guard() catches up within a second.
 * Under h->cmu; from the oldest on, and no further than the connections
 * younger than the lateness found (none can be later than it is old).
 */
static void
make_room(struct http *h)
{
	struct cctx	*cc, *worst = NULL;
	int64_t		 now = clock_coarse_ms(), late, most = GRACE_MS - 1;

	for (cc = h->oldest; cc != NULL; cc = cc->prev) {
		if (now - cc->born <= most)
			break;
		if (cc->cut || !behind(cc, now, &late))
			continue;
		if (late > most) {
			worst = cc;
			most = late;
		}
	}
	if (worst != NULL)
		cut(h, worst);
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
		cc->born = cc->since = cc->due = cc->last = clock_coarse_ms();
		cc->rate = h->cfg->body_min_rate;
		cc->phase = CONNS_HEAD;
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
		if (++h->nconns > h->npeak)
			h->npeak = h->nconns;
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

static struct cctx *
cctx_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo	*ci;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci != NULL ? ci->socket_context : NULL;
}

/* A body's due: when got bytes are owed at the minimum rate. */
static int64_t
body_due(const struct cctx *cc)
{
	if (cc->rate == 0)
		return INT64_MAX / 2;	/* never behind */
	return cc->since + (int64_t)(cc->got / cc->rate * 1000 +
	    cc->got % cc->rate * 1000 / cc->rate);
}

void
conns_phase(struct MHD_Connection *conn, enum conns_phase phase)
{
	struct cctx	*cc;

	if ((cc = cctx_of(conn)) == NULL)
		return;
	cc->since = clock_coarse_ms();
	cc->got = 0;
	__atomic_store_n(&cc->due, cc->since, __ATOMIC_RELAXED);
	__atomic_store_n(&cc->last, cc->since, __ATOMIC_RELAXED);
	__atomic_store_n(&cc->phase, (int)phase, __ATOMIC_RELEASE);
}

void
conns_body(struct MHD_Connection *conn, size_t n)
{
	struct cctx	*cc;

	if ((cc = cctx_of(conn)) == NULL || phase_of(cc) != CONNS_BODY)
		return;
	cc->got += n;
	__atomic_store_n(&cc->due, body_due(cc), __ATOMIC_RELAXED);
	__atomic_store_n(&cc->last, clock_coarse_ms(), __ATOMIC_RELAXED);
}

/*
 * A flood of connections leaves glibc holding what their pools and
 * requests freed (libmicrohttpd mallocs 32 KiB a connection, in its
 * threads' arenas, which return little by themselves): 4,000 connections
 * kept 19 MB more each time they came, without end.  Once the count has
 * fallen to a quarter of a peak of TRIM_PEAK or more, hand it back; at
 * most every TRIM_EVERY_MS, as a trim walks every arena.  Under h->cmu,
 * which it drops while it trims.
 */
#define TRIM_PEAK	256
#define TRIM_EVERY_MS	10000

static void
trim(struct http *h, int64_t now)
{
	if (h->npeak < TRIM_PEAK || h->nconns > h->npeak / 4 ||
	    now - h->trimmed < TRIM_EVERY_MS)
		return;
	h->npeak = h->nconns;
	h->trimmed = now;
	h->trims++;
#ifdef HAVE_MALLOC_TRIM
	pthread_mutex_unlock(&h->cmu);
	(void)malloc_trim(0);
	pthread_mutex_lock(&h->cmu);
#endif
}

/*
 * Once a second, shut down connections that are late: a head after
 * --head-timeout; a body --body-timeout behind --body-min-rate, or
 * silent for --body-timeout; both allowances 1 s while three quarters of
 * --connections are taken (but not a body's pause: one that keeps the
 * rate may stall briefly on a normal link).  shutdown(2), not close(2):
 * the fd stays libmicrohttpd's, which sees the end and cleans up.
 */
static void *
guard(void *arg)
{
	struct http	*h = arg;
	struct timespec	 until;
	struct cctx	*cc;
	int64_t		 now, head, body, pause, late;
	int		 phase;

	pthread_mutex_lock(&h->cmu);
	while (!h->stopping) {
		until = clock_deadline(1000);
		pthread_cond_timedwait(&h->ccv, &h->cmu, &until);
		if (h->stopping)
			break;
		head = (int64_t)h->cfg->head_timeout * 1000;
		body = pause = (int64_t)h->cfg->body_timeout * 1000;
		if (h->cfg->connections > 0 &&
		    h->nconns >= h->cfg->connections * 3 / 4) {
			head = head < 1000 ? head : 1000;
			body = body < 1000 ? body : 1000;
		}
		now = clock_coarse_ms();
		for (cc = h->conns; cc != NULL; cc = cc->next) {
			if (cc->cut || (phase = phase_of(cc)) == CONNS_ANSWER)
				continue;
			late = now - __atomic_load_n(&cc->due,
			    __ATOMIC_RELAXED);
			if (phase == CONNS_HEAD ? head > 0 && late >= head :
			    body > 0 && (late >= body || now -
			    __atomic_load_n(&cc->last, __ATOMIC_RELAXED) >=
			    pause))
				cut(h, cc);
		}
		trim(h, now);
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

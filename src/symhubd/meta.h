/*
 * meta: answers /metadata queries (doc/protocol.md, "/metadata"): which
 * executables and debuginfo files this hub indexed in place (scanned
 * files, package members) match a file name, a glob or a build-id, and
 * what every upstream answers to the same query, merged into one JSON
 * answer.
 *
 * A query runs on one of a few worker threads, off the HTTP threads: the
 * upstreams are asked first, in parallel, then the index is walked
 * (at most --metadata-maxtime), then the upstreams' answers are awaited
 * (at most --metadata-upstream-timeout).  "complete" is false when the
 * walk ran out of time, or an upstream did not answer, answered with
 * anything but its own complete answer, or could not be asked (breaker
 * open).  An upstream's complete answer, and its 404 (no /metadata: an
 * elfutils older than 0.192), are kept --metadata-ttl seconds.  No HTTP
 * status is chosen here.
 */
#ifndef SYMHUB_META_H
#define SYMHUB_META_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cache/cache.h"
#include "common/webapi.h"
#include "config.h"
#include "fetch.h"

struct meta;		/* opaque */

struct meta_query {
	struct webapi_meta	 q;
	/* The client's request, for the federation headers (fetch.h):
	 * user_agent, forwarded_for, peer, via. */
	struct fetch_req	 fed;
	int			 ask_upstreams;	/* 0: this hub's answer only */
};

/*
 * Called once per query, on a worker thread: rc 0 with the answer (json,
 * malloc'd, now the callee's, len bytes), or -ECANCELED (stopping) or
 * -ENOMEM with json NULL.
 */
typedef void (*meta_done_fn)(void *ctx, int rc, char *json, size_t len);

/*
 * Start the workers.  f: the upstreams (NULL: none, offline).
 * @return 0 or -errno.
 */
int	meta_create(struct cache *c, struct fetch *f, const struct config *cfg,
	    struct meta **out);

/*
 * Queue a query.  Copies what it needs from q.  done runs exactly once,
 * later, on a worker thread; never before this returns.
 * @return 0; -EBUSY when META_QUEUE_MAX queries wait already;
 *         -ECANCELED after meta_stop(); -ENOMEM (done never called).
 */
int	meta_query(struct meta *m, const struct meta_query *q,
	    meta_done_fn done, void *ctx);

/* Queries waiting or running at most. */
#define META_QUEUE_MAX	32

/* Stop the workers: a query under way ends early, and it and every one
 * waiting get -ECANCELED.  Idempotent; accepts NULL. */
void	meta_stop(struct meta *m);

/* meta_stop(), then free.  Accepts NULL. */
void	meta_free(struct meta *m);

/* Append the metrics (queries, upstream answers, kept answers used). */
void	meta_metrics(struct meta *m, FILE *fp);

#endif

/*
 * batch: the modules of one multi-module request (POST /symbolize, POST
 * /symbolicate/v5) made ready together: each module's GSYM opened, or
 * converted, or its debuginfo fetched from the upstreams and then
 * converted, all at once, until every module is settled or the request's
 * deadline passes.  What is not ready by then is reported as such; its
 * fetch or conversion goes on, for the next request.
 *
 * The caller (the HTTP front) steps the batch on its own thread and,
 * while something is in flight, waits for the wake callback, which runs
 * on a fetch, derive or timer thread.  No HTTP here.
 */
#ifndef SYMHUB_BATCH_H
#define SYMHUB_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "common/elfinfo.h"
#include "derive.h"
#include "fetch.h"
#include "scan.h"

struct batches;		/* opaque: the engine, one a server */
struct batch;		/* opaque: one request's modules */

/* Where a module stands; every one but BATCH_PENDING is final. */
enum batch_status {
	BATCH_PENDING,		/* not settled yet */
	BATCH_READY,		/* its GSYM is open (gf) */
	BATCH_NO_DEBUGINFO,	/* neither here nor upstream */
	BATCH_UNKNOWN_FILEID,	/* a FileID no upload mapped */
	BATCH_UPSTREAM_FAILED,	/* upstreams said nothing definite */
	BATCH_TIMEOUT,		/* not ready by the deadline */
	BATCH_NOTHING,		/* its files have no DWARF nor symbols */
	BATCH_CONVERSION_FAILED,	/* not ELF, or corrupt DWARF */
	BATCH_ERROR		/* internal: out of memory, shutting down */
};

/* The name of a status in answers: "symbolized", "no_debuginfo", ... */
const char	*batch_status_name(enum batch_status st);

/* What a module's program headers are wanted for. */
#define BATCH_LOADS_MAP		1	/* map file offsets: the executable's */
#define BATCH_LOADS_BASE	2	/* the first segment's address, the base
					 * of Breakpad's relative addresses:
					 * any of its files' */

/* One module, as the caller describes it and the batch settles it. */
struct batch_module {
	/* In: the id (a build-id, or a FileID when by_fileid). */
	unsigned char		 id[CACHE_ID_MAX];
	size_t			 idlen;
	int			 by_fileid;
	int			 by_prefix;	/* id is a build-id's first
						 * bytes (a Breakpad id) */
	int			 want_loads;	/* BATCH_LOADS_*, or 0 */
	/* Not the client's to read (another tenant's private upload):
	 * settled BATCH_NO_DEBUGINFO at once, nothing looked at. */
	int			 hidden;
	/* Out, once batch_step() returned 0. */
	enum batch_status	 status;
	const char		*how;		/* BATCH_READY: "stored",
						 * "converted", "fetched,
						 * converted" */
	const char		*why;		/* others: a static text */
	struct derive_gsym	*gf;		/* BATCH_READY; the batch's */
	struct elfinfo_load	 loads[ELFINFO_LOADS_MAX];
	size_t			 nloads;	/* want_loads: 0 when none */
	/* The build-id (a FileID mapped; idlen 0 when unknown). */
	unsigned char		 bid[CACHE_ID_MAX];
	size_t			 bidlen;
};

/* Called when the caller should step the batch again, on another thread
 * (never within a batch_*() call), at most once per batch_wait(). */
typedef void (*batch_wake_fn)(void *ctx);

/*
 * The engine: a timer thread for the deadlines.  f NULL: nothing is
 * fetched; dv NULL: nothing converts (every module BATCH_ERROR).
 * @return 0 or -errno.
 */
int	batches_create(struct cache *c, struct scan *s, struct derive *dv,
	    struct fetch *f, struct batches **out);

/* Wake every waiting batch (deadline passed), stop the timer, free.
 * Call it once no connection can step a batch.  Accepts NULL. */
void	batches_free(struct batches *e);

/*
 * A batch for n modules (their in-fields set; mods is the caller's and
 * must outlive the batch), settled by deadline_us (clock_us()).
 * @param fr    the federation headers for upstream fetches (key and
 *              want_bytes unused), copied; NULL: nothing is fetched
 *              (the hop limit is reached).
 * @param reader the name of the token the client showed (NULL, "":
 *              none), copied: a module whose build-id, once known (a
 *              Breakpad prefix, a FileID mapped), is another tenant's
 *              private upload is settled BATCH_NO_DEBUGINFO
 *              (records_may_read()).
 * @return 0 or -ENOMEM.
 */
int	batch_create(struct batches *e, struct batch_module *mods, size_t n,
	    int64_t deadline_us, const struct fetch_req *fr,
	    const char *reader, batch_wake_fn wake, void *ctx,
	    struct batch **out);

/*
 * Settle what can be settled now and start the fetches and conversions
 * that the rest need.
 * @return 0 when every module is settled (the deadline passed for those
 *         that were not); 1 when something is in flight: call
 *         batch_wait(), then batch_step() again once woken.
 */
int	batch_step(struct batch *b);

/*
 * Wait for the next event (something done in flight, or the deadline).
 * @return 1: wake will be called; 0: it happened already, step again now.
 */
int	batch_wait(struct batch *b);

/* Let go of the batch: the open GSYMs are released, wake is never called
 * again, work in flight finishes for the store.  Accepts NULL. */
void	batch_free(struct batch *b);

/* Prometheus lines: batches and modules by status. */
void	batches_metrics(struct batches *e, FILE *fp);

/* For the status page: multi-module requests, those whose deadline
 * passed first, and their modules (all of them, and those ready). */
void	batches_stats(struct batches *e, uint64_t *requests,
	    uint64_t *expired, uint64_t *modules, uint64_t *ready);

#endif

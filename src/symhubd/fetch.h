/*
 * fetch: asks upstream debuginfod servers for what the store lacks.
 *
 * One thread drives a libcurl multi handle.  A request for a key joins the
 * fetch already under way for that key, or starts one that asks every
 * eligible upstream in parallel; the first 200 wins and the others are
 * cancelled (and asked again should the winner fail).  The body streams
 * into a cache blob; a debuginfo or executable must carry the requested
 * build-id before it is committed; one whose head carries it streams to
 * the waiters that want it meanwhile, its tail held back until it is
 * verified (struct fetch_stream).  When every upstream said 404 a
 * negative entry is stored.  Each waiter's callback then runs, on the
 * fetch thread, with the outcome.
 *
 * Upstream health: after a run of transport failures or timeouts an
 * upstream's breaker opens and it is skipped for a cool-down, then one
 * probe is let through (breaker.h).
 *
 * The engine knows an upstream only through its kind's row (upstream.h):
 * a debuginfod server, the bucket; a new kind is a new row there.
 */
#ifndef SYMHUB_FETCH_H
#define SYMHUB_FETCH_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <curl/curl.h>

#include "cache/cache.h"
#include "config.h"

struct fetch;
struct bucket;

enum fetch_result {
	FETCH_OK,		/* committed: look the key up again */
	FETCH_NOTFOUND,		/* every upstream asked said 404 */
	FETCH_TRANSIENT,	/* nothing definite: timeouts, resets, 5xx,
				 * open breakers, a full disk */
	FETCH_TOOBIG,		/* larger than the client's maximum */
	FETCH_UNSUPPORTED	/* a section: the upstreams that have the
				 * file cannot cut sections (503) */
};

struct fetch_req {
	struct cache_key	 key;
	const char		*idhex;		/* the id as the client sent it */
	const char		*raw_extra;	/* client's spelling, or NULL */
	/* The client's request as received: what the federation needs. */
	const char		*user_agent;	/* forwarded, or NULL */
	const char		*forwarded_for;	/* X-Forwarded-For, or NULL */
	const char		*peer;		/* the client's address */
	const char		*via;		/* X-Symhub-Via, or NULL */
	uint64_t		 maxsize;	/* 0: none */
	/* Hand this waiter the bytes as soon as they are verified, before
	 * they are stored (see struct fetch_served). */
	int			 want_bytes;
	/* ... and as they arrive, before the whole file is verified (see
	 * struct fetch_stream): with want_bytes, for a plain GET. */
	int			 want_stream;
	/* The store has a copy already (one without DWARF): ask anyway, and
	 * replace it only with a copy that ranks strictly higher. */
	int			 upgrade;
};

/*
 * With FETCH_OK, for a waiter that wanted the bytes: the file just
 * fetched and verified, which the store is about to index (the fsyncs of
 * that take ~1 ms that the client need not wait for).
 */
struct fetch_stream;
struct fetch_served {
	int				 fd;	/* the waiter's own: close it;
						 * -1 with stream */
	/* Or, for a waiter that wanted a stream: the file as it arrives,
	 * a reference of the waiter's own (fetch_stream_release()). */
	struct fetch_stream		*stream;
	const struct cache_record	*rec;	/* as it will be stored; size
						 * set; valid during the call */
};

/*
 * A file still arriving from an upstream, handed to the waiters that
 * want a stream once its head (ELF header, program headers, build-id
 * note) carries the requested build-id: they send the bytes on as they
 * come, up to where the tail begins (the section headers, and at least
 * the last 64 KiB), which is let out only once the whole file is
 * verified as it would be without a stream (build-id, kind, size, the
 * upstream's own checks).  Should that fail, or the upstream cut or
 * stall, the stream fails and its readers never see the tail: a client
 * never holds a whole file that is wrong.  rec's size is the announced
 * one (X-DEBUGINFOD-SIZE, else Content-Length); its quality is not
 * known yet (0).  The last reference frees it, on any thread.
 */

/* A reader of a stream: its own, valid until fetch_stream_release().
 * suspend(ctx) runs under the stream's lock, before the read that parks
 * returns; resume(ctx) once after each suspend, on the fetch thread. */
struct fetch_reader {
	void			 (*suspend)(void *ctx);
	void			 (*resume)(void *ctx);
	void			 *ctx;
	struct fetch_reader	 *next;		/* the stream's */
	int			  parked;
};

/*
 * Copy at most max bytes from pos of what may be sent now into buf.
 * @return bytes copied (> 0); 0 when nothing may be sent yet: rd is
 *         parked (suspend() was called, resume() will be), or, with rd
 *         NULL, nothing happened (read again with rd to wait); -ENODATA
 *         at the end; -EIO when the stream failed: cut the client off.
 */
ssize_t	fetch_stream_read(struct fetch_stream *s, uint64_t pos, void *buf,
	    size_t max, struct fetch_reader *rd);

/* Does s come from another hub in zstd, its coded bytes kept?  Then
 * fetch_stream_read_coded() reads them as they came (a zstd frame whose
 * end, and the bytes that decode into the tail, come once the file is
 * verified), for a client that accepts zstd. */
int	fetch_stream_coded(const struct fetch_stream *s);
ssize_t	fetch_stream_read_coded(struct fetch_stream *s, uint64_t pos,
	    void *buf, size_t max, struct fetch_reader *rd);

/*
 * The stream zstd-coded at level, for a client that accepts zstd, by one
 * coder shared by all its readers that want it (the first call makes it;
 * later ones join it): whichever reader runs out of coded bytes codes
 * the next ones for all, spooled beside the file, and each reads them
 * from its own offset at its own pace, a late one from the start.  Only
 * what the stream lets out is coded: the tail once the file is verified,
 * and the frame ends only then; a stream that fails fails every coded
 * reader before its end.  Once the frame is whole and the file stored,
 * the coded bytes are kept as the store's zstd copy (encode_adopt()).
 * @return 0, -EIO (the stream failed), -ENOMEM: send it as it is.
 */
int	fetch_stream_zstd(struct fetch_stream *s, int level);
/* As fetch_stream_read(), of the coded bytes (pos counts them). */
ssize_t	fetch_stream_read_zstd(struct fetch_stream *s, uint64_t pos,
	    void *buf, size_t max, struct fetch_reader *rd);

/* Let go of a reference (rd, the reader's, or NULL: never read). */
void	fetch_stream_release(struct fetch_stream *s, struct fetch_reader *rd);

/* Called once per waiter, on the fetch thread.  upstream names the one
 * that served (FETCH_OK) or NULL; served is NULL, or the bytes (see
 * above); both are valid during the call only. */
typedef void (*fetch_done_fn)(void *ctx, enum fetch_result result,
    const char *upstream, const struct fetch_served *served);

/*
 * Build the engine from cfg's upstreams and the bucket b (bucket.h; NULL:
 * none), which is asked first and alone: the upstreams only when it has
 * nothing or cannot answer (then a 404 of theirs is not definite).  What
 * an upstream sends is written back to the bucket.  No upstream and no
 * bucket: *out is NULL and 0 is returned, nothing to fetch from.  Starts
 * the fetch thread.
 * @return 0 or -errno (-EINVAL for a bad upstream spec, diagnosed with
 *         log_warnx).
 */
int	fetch_create(struct cache *c, const struct config *cfg,
	    struct bucket *b, struct fetch **out);

/* Called on the store thread for each debuginfo fetched and stored, with
 * its key; set before the first request.  NULL: none. */
typedef void (*fetch_new_fn)(void *ctx, const struct cache_key *key);
void	fetch_on_debuginfo(struct fetch *f, fetch_new_fn fn, void *ctx);

/* Stop the thread; every waiter, and every later request, gets
 * FETCH_TRANSIENT.  Call it before the HTTP front stops, so no connection
 * stays suspended.  Idempotent; accepts NULL. */
void	fetch_stop(struct fetch *f);

/* fetch_stop(), then free.  Accepts NULL. */
void	fetch_free(struct fetch *f);

/*
 * Ask for req->key.  Copies what it needs from req.  done(ctx, ...) runs
 * exactly once, later, on the fetch thread; never before this returns.
 * @return 0, or -errno (then done is never called).
 */
int	fetch_request(struct fetch *f, const struct fetch_req *req,
	    fetch_done_fn done, void *ctx);

/*
 * Federation.  Upstreams are asked with the client's User-Agent and this
 * hub's id appended to it as "symhub-via/ID", with the client's address
 * appended to X-Forwarded-For and the id to X-Symhub-Via.  elfutils'
 * debuginfod passes User-Agent and X-Forwarded-For on when it federates,
 * and drops the rest.
 */

/* May a miss of a client whose X-Forwarded-For is forwarded_for (NULL:
 * none) be asked upstream?  0 once the chain has --forwarded-ttl-limit
 * hops: past it, a miss is a miss, as in elfutils. */
int	fetch_may_ask(const struct fetch *f, const char *forwarded_for);

/* Is this hub in via (X-Symhub-Via) or user_agent (either NULL: none),
 * so that the request went round the federation back to it, directly or
 * through a server that does not know X-Symhub-Via? */
int	fetch_loop(const struct fetch *f, const char *via,
	    const char *user_agent);

/* Could an upstream have a better copy of what the store has (rec, for
 * key): a debuginfo without DWARF?  No I/O; fetch_upgrade_due() also says
 * whether it is time to ask. */
int	fetch_upgrade_possible(const struct cache_key *key,
	    const struct cache_record *rec);

/*
 * Should the upstreams be asked for a better copy of what the store has
 * (rec, for key)?  1 for a debuginfo without DWARF (an upload with only
 * a symbol table, which must not hide a better copy an upstream has), at
 * most once per negative-ttl (marked in the store now); then ask with
 * fetch_req.upgrade set.
 */
int	fetch_upgrade_due(struct fetch *f, const struct cache_key *key,
	    const struct cache_record *rec);

/* The first negative-ttl value, in seconds: also how long a copy checked
 * against the upstreams for a better one stays checked. */
int64_t	fetch_negative_ttl(const struct fetch *f);

/*
 * A side query (/metadata) to upstream i: a libcurl handle for GET
 * URL/path (path with its query, escaped) set up as the fetches' are
 * (the upstream's header-file, TLS settings and timeouts) with the
 * federation headers of the client's request req (user_agent,
 * forwarded_for, peer, via; the rest unused), for the caller to drive on
 * its own multi handle, on any thread.  The breaker is looked at, not
 * fed: a side query says nothing of an upstream's health.
 * @param kinds  bits (1 << cache_kind): an upstream whose kinds= has none
 *               of them is not asked.
 * @return 0 with *easy and *hdrs, the caller's (curl_easy_cleanup(), then
 *         curl_slist_free_all()); -ENOENT past the last upstream; -EPERM
 *         for kinds it does not serve; -EAGAIN while its breaker is open;
 *         -ENOMEM.
 */
int	fetch_side_handle(struct fetch *f, size_t i, const char *path,
	    unsigned kinds, const struct fetch_req *req, CURL **easy,
	    struct curl_slist **hdrs);

/* Append this engine's metrics (per upstream: outcomes, latency,
 * bytes, breaker) in Prometheus text. */
void	fetch_metrics(struct fetch *f, FILE *fp);

/* One upstream as the status page shows it. */
struct fetch_upstream {
	const char	*name, *url;	/* valid while f is */
	int		 breaker;	/* 0 closed, 1 open, 2 half-open */
	uint64_t	 hits, notfound;
	uint64_t	 failures;	/* time-outs, transport and HTTP errors,
					 * wrong build-ids, too big */
	uint64_t	 bytes;
	double		 first_byte_ms;	/* mean; 0: no answer yet */
};

/* How many upstreams f asks. */
size_t	fetch_upstreams(const struct fetch *f);

/* Upstream i's state and counts.  @return 0, or -ENOENT past the last. */
int	fetch_upstream(struct fetch *f, size_t i, struct fetch_upstream *out);

#endif

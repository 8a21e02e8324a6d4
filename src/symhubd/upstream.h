/*
 * upstream: the kinds of upstream the fetch engine asks, as rows of
 * callbacks (as nginx's upstream modules and curl's protocol handlers
 * are).  The engine (fetch.c) keeps jobs, coalescing, tiers, the curl
 * multi handle and the store; the breaker and the counts are breaker.h's;
 * what differs from one kind of upstream to another is its row:
 *
 *   upstream_debuginfod	a debuginfod server over HTTP(S) (--upstream),
 *				asked with the federation headers
 *   upstream_bucket		the S3 tier (--s3, bucket.h): asked first
 *				and alone, its objects checked against the
 *				SHA-256 they carry, what the others send
 *				written back to it
 *
 * One attempt of a job, on the fetch thread:
 *   holds()	may this upstream have the key at all (beside kinds=)?
 *   setup()	a libcurl handle for the GET, with what the kind sends
 *		(Accept-Encoding when ask->accept says so); the engine then
 *		adds its own options (callbacks, sizes, speed limit) and
 *		drives it
 *   header()	each line of the answer's headers, after the engine's
 *		(status line, Content-Encoding, Last-Modified)
 *   verify()	the body is whole and the engine's checks passed (no
 *		encoding, X-DEBUGINFOD-SIZE, an ELF of the build-id): the
 *		kind's own, with the bytes in blob
 *   origin()	what the record will name as where it came from
 * and once a record is stored, for every upstream but the one that sent
 * it:
 *   write_back()	keep a copy of what another upstream sent
 * and for an upstream that other replicas change behind the engine's
 * back (the bucket's events):
 *   mark()	taken when a job starts;
 *   changed()	after a record or a miss is stored: was the key changed
 *		since mark?  Then what was stored is dropped.
 * A side query (/metadata) is side(), where the kind answers them.
 * Every callback but setup() may be NULL: the engine then does without
 * (as said at each below).
 *
 * Adding a kind (a file:// tree, another symhub, Tecken): one row, in a
 * file of its own (upstream_KIND.c, in libsymhubd's sources), declared
 * below and listed in upstream.c's kinds[] with the URL schemes that
 * pick it for --upstream; its init() parses the spec (the one parser,
 * config_parse_upstream(), takes http:// and https:// today: a new
 * scheme is added there too).  The engine, its jobs, tiers, breakers
 * and metrics need no change: tests/test_layers.sh checks that fetch.c
 * calls no kind's own functions.
 */
#ifndef SYMHUB_UPSTREAM_H
#define SYMHUB_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "cache/cache.h"
#include "config.h"

struct breaker;

/* One upstream the engine asks (fetch.c holds an array of them). */
struct upstream {
	struct upstream_spec		 spec;	/* config.h */
	const struct upstream_kind	*kind;
	void				*ctx;	/* the kind's (init) */
	int				 tier;	/* the kind's */
	struct breaker			*br;	/* breaker.h; the engine's */
};

/* What one attempt asks for: the job's, valid during the call. */
struct upstream_ask {
	const struct cache_key	*key;
	const char		*idhex;		/* as the client spelled it */
	const char		*raw_extra;	/* client's spelling, or NULL */
	/* Federation (fetch.h), made ready by the engine. */
	const char		*ua;		/* User-Agent, our mark last */
	const char		*xff;		/* X-Forwarded-For to send */
	const char		*via;		/* X-Symhub-Via received, or
						 * NULL */
	const char		*hub;		/* this hub's id */
	uint64_t		 maxsize;	/* the client's; 0: none */
	unsigned		 accept;	/* WEBAPI_ENC_* the engine can
						 * decode (upzstd.h); 0: identity
						 * only */
};

/* What an answer's headers said, as the engine and header() read them;
 * a new response (after a redirect) starts it afresh.  Strings are
 * malloc'd, freed by upstream_reply_clear(). */
struct upstream_reply {
	char		*xfile, *xarchive, *ximasig;	/* X-DEBUGINFOD-* */
	char		*origin;	/* where the sender had it, or NULL */
	char		*sha256;	/* the bytes' digest it says, or NULL */
	int64_t		 lastmod;	/* Last-Modified; 0: none */
	int64_t		 xsize;		/* X-DEBUGINFOD-SIZE; -1 none, -2
					 * garbage */
	int		 encoded;	/* a Content-Encoding */
	int		 zstd;		/* ... and it is zstd alone */
	int		 level;		/* X-Symhub-Level, the coded copy's;
					 * 0: not said */
};

struct upstream_kind {
	const char	*name;
	/* URL prefixes that pick this kind for --upstream; NULL: none (the
	 * bucket is --s3's). */
	const char	*const *schemes;
	/* 0: asked first and alone, the others only when it has nothing;
	 * 1: asked all at once. */
	int		 tier;
	/*
	 * Fill u->spec (config_parse_upstream() for --upstream's arg) and
	 * u->ctx (arg and ctx are the caller's: the spec string, or the
	 * bucket).  On failure, the reason is logged and u is left for
	 * fini().  NULL: none to make.
	 * @return 0 or -errno.
	 */
	int		(*init)(struct upstream *u, const struct config *cfg,
			    const char *arg, void *ctx);
	/* Free what init() made (u->ctx); not u->spec.  Accepts a
	 * half-built u.  NULL: nothing. */
	void		(*fini)(struct upstream *u);
	/* 1 when u may have key; NULL: any key of its kinds=. */
	int		(*holds)(const struct upstream *u,
			    const struct cache_key *key);
	/* A handle for the GET of ask->key.  On failure *easy and *hdrs
	 * may be set: the caller frees both in every case.
	 * @return 0 or -errno. */
	int		(*setup)(const struct upstream *u,
			    const struct upstream_ask *ask, CURL **easy,
			    struct curl_slist **hdrs);
	/* One header line (len bytes, not terminated, CRLF included)
	 * into r.  @return 1 when it was the kind's, else 0.  NULL: the
	 * engine's headers only. */
	int		(*header)(struct upstream_reply *r, const char *line,
			    size_t len);
	/* The kind's check of a complete body (blob, being written).
	 * Counts what it drops (breaker_count).  NULL: none.
	 * @return 0 or -EBADMSG (not stored, not served). */
	int		(*verify)(struct upstream *u,
			    const struct upstream_ask *ask,
			    const struct upstream_reply *r,
			    struct cache_blob *blob);
	/* The record's origin, valid as r is.  NULL: u's name. */
	const char	*(*origin)(const struct upstream *u,
			    const struct upstream_reply *r);
	/* Key's record, from another upstream, is stored: keep a copy,
	 * later, without blocking; repair: u's copy failed its check in
	 * this job.  NULL: keeps none. */
	void		(*write_back)(struct upstream *u,
			    const struct cache_key *key, int repair);
	/* See above; any thread.  NULL: u never changes behind us. */
	uint64_t	(*mark)(struct upstream *u);
	int		(*changed)(struct upstream *u,
			    const struct cache_key *key, uint64_t mark);
	/* A side query: GET url (u's URL and the path) with what every
	 * request to u carries, as setup().  NULL: u answers none. */
	int		(*side)(const struct upstream *u, const char *url,
			    const struct upstream_ask *ask, CURL **easy,
			    struct curl_slist **hdrs);
};

/* The rows. */
extern const struct upstream_kind upstream_debuginfod;	/* upstream_http.c */
extern const struct upstream_kind upstream_bucket;	/* upstream_bucket.c */

/* The kind whose scheme url starts with; NULL: none. */
const struct upstream_kind *upstream_kind_of(const char *url);

/*
 * Make u of kind (init, then its tier).  On failure u is left for
 * upstream_close().  @return 0 or -errno.
 */
int	upstream_open(struct upstream *u, const struct upstream_kind *kind,
	    const struct config *cfg, const char *arg, void *ctx);

/* Free what upstream_open() made.  Accepts a zeroed or half-built u. */
void	upstream_close(struct upstream *u);

/*
 * The value of header line (n bytes) when it is "name: value" (name in
 * any case), trimmed; malloc'd, the caller's.  NULL: another header, or
 * no memory.
 */
char	*upstream_header_value(const char *line, size_t n, const char *name);

/* Forget what r holds (a new response, or the attempt's end). */
void	upstream_reply_clear(struct upstream_reply *r);

/* Read the headers every kind's answer may carry into r (the status
 * line starts a new response).  @return 1 when line was one of them. */
int	upstream_reply_header(struct upstream_reply *r, const char *line,
	    size_t len);

#endif

/*
 * route: what the HTTP front's files share, and nothing outside them sees
 * (http.h is the daemon's view of the front).
 *
 * A request's life, in phases (struct req.phase):
 *
 *   HEAD      the first call: the URL parsed once into r->w and its
 *             row of the route table found (r->rt, route_table.c), the
 *             head checked against it (reply.c refuses it whole when it
 *             must), a PUT or DELETE checked for its token before any
 *             body is read.
 *   BODY      a body arrives: an upload streams to the store, a
 *             /symbolize body is buffered within --post-buffer-max.
 *   DISPATCH  the row's handler runs: artifact, section, gsym and
 *             symbolize, batch, metadata, metrics, status.  It answers,
 *             or asks and waits (route_wait(), route_ask.c):
 *   FETCH     suspended until the upstreams answer (fetch.h), then
 *             DISPATCH again with r->ask.fetches and r->ask.result set;
 *   CONVERT   suspended until a GSYM conversion ends (derive.h), then
 *             DISPATCH again with r->gsym.converted and r->gsym.rc set;
 *   BUCKET    suspended until an upload or a delete is done in the
 *             bucket (bucket.h), then route_upload_bucket();
 *   BATCH     suspended until one of a batch's fetches or conversions
 *             ends, or its deadline passes (batch.h), then DISPATCH.
 *   ANSWERED  a response is queued (or the connection reset); a body
 *             still arriving is discarded.
 *
 * Every answer goes through reply.c, whose one table maps what happened
 * (enum reply) to the status, the metrics result and the headers.
 */
#ifndef SYMHUB_ROUTE_H
#define SYMHUB_ROUTE_H

#include <pthread.h>
#include <stdint.h>

#include <microhttpd.h>

#include "base/buf.h"
#include "cache/cache.h"
#include "common/auth.h"
#include "common/webapi.h"
#include "config.h"
#include "fetch.h"
#include "derive.h"
#include "batch.h"
#include "bucket.h"
#include "encode.h"
#include "hot.h"
#include "meta.h"
#include "metrics.h"
#include "rate.h"
#include "scan.h"

struct cctx;
struct breq;

struct http {
	struct MHD_Daemon	*d;
	const struct config	*cfg;
	struct cache		*c;
	struct scan		*s;
	struct fetch		*f;
	/* NULL: uploads refused.  Swapped whole when the tokens file is
	 * read again (SIGHUP, http_set_auth()), under authlk. */
	struct auth		*auth;
	pthread_rwlock_t	 authlk;
	struct rate		*rate_tok;	/* --rate-per-token, or NULL */
	struct rate		*rate_addr;	/* --rate-per-address, or NULL */
	/* Refused at the head (access_metrics()): no token, an unknown
	 * or malformed one, one without the scope; over a rate. */
	uint64_t		 auth_missing, auth_bad, auth_scope;
	uint64_t		 limited_tok, limited_addr;
	struct derive		*dv;		/* NULL: no GSYM (tests) */
	struct meta		*meta;		/* /metadata */
	struct encode		*enc;		/* NULL: nothing compressed */
	struct hot		*hot;		/* NULL: nothing kept */
	struct bucket		*bucket;	/* NULL: no S3 tier */
	struct batches		*batches;	/* POST /symbolize */
	uint16_t		 port;
	/* Bytes of POST bodies held by all connections (--post-buffer-max),
	 * and a gauge for /metrics. */
	uint64_t		 buffered;
	/* Open connections, for their deadlines (conns.c). */
	pthread_mutex_t		 cmu;
	pthread_cond_t		 ccv;
	struct cctx		*conns, *oldest;	/* newest first */
	unsigned		 nconns;
	uint64_t		 head_timeouts;	/* connections cut: a head */
	uint64_t		 body_timeouts;	/* ... a body */
	unsigned		 npeak;		/* most since the last trim */
	int64_t			 trimmed;	/* ms, the last trim */
	uint64_t		 trims;		/* after floods (conns.c) */
	int			 stopping;
	pthread_t		 guard;
	int			 guard_started;
	int64_t			 started;	/* wall seconds, for / */
};

enum phase {
	PHASE_HEAD,
	PHASE_BODY,
	PHASE_DISPATCH,
	PHASE_FETCH,
	PHASE_CONVERT,
	PHASE_METADATA,
	PHASE_ENCODE,
	PHASE_BATCH,
	PHASE_BUCKET,
	PHASE_ANSWERED
};

struct req;

/* ---- route_table.c: the routes, one row each ---- */

/* The methods of a route. */
#define ROUTE_GET	0x1u	/* GET and HEAD */
#define ROUTE_POST	0x2u	/* POST, with a body of at most body_max */
#define ROUTE_PUT	0x4u	/* PUT and DELETE, with a token: uploads
				 * (route_upload.c), not offered in Allow */

/* Who may read a route (struct route.access): checked once, at the head
 * (http.c).  A row that says nothing needs a read token under
 * --read-auth: a new route is closed until it says otherwise. */
#define ROUTE_READ	0	/* --read-auth: a token with read */
#define ROUTE_MONITOR	1	/* --metrics-auth: a token with read */

/*
 * One route: what the head is checked against (http.c), what a 405
 * offers in Allow (reply.c), and who answers.  A new route is a row
 * here and a file with its handler.
 */
struct route {
	enum webapi_route	 route;
	int			 kind;		/* of an artifact (enum
						 * cache_kind); 0 for others */
	int			 symbolize;	/* .../symbolize */
	unsigned		 methods;	/* ROUTE_* */
	/* The most bytes of a POST body (ROUTE_POST), or NULL. */
	size_t			(*body_max)(const struct config *cfg);
	enum metrics_type	 type;		/* set before handler runs */
	enum MHD_Result		(*handler)(struct http *h, struct req *r);
	/* A GET of a POST route: what the 405 says (NULL: "method not
	 * allowed"). */
	const char		*post_hint;
	int			 access;	/* ROUTE_READ, ROUTE_MONITOR */
};

/* The row of a parsed URL, or NULL when there is none. */
const struct route *route_find(const struct webapi_req *w);

/* The Allow header of a 405 to a request for rt (NULL: a GET one). */
const char	*route_allow(const struct route *rt);

/* One request, from its head to the access log line. */
struct req {
	enum phase		 phase;
	struct MHD_Connection	*conn;
	int64_t			 t0;		/* clock_us() at the head */
	/* The URL, parsed once: parse_rc 0 and w, or webapi's -errno and
	 * why.  w.raw_extra points into url.  rt: w's row, or NULL. */
	int			 parse_rc;
	struct webapi_req	 w;
	const char		*why;
	const struct route	*rt;
	/* The answer, for the access log and the metrics. */
	int			 status;	/* 0: none yet */
	uint64_t		 bytes;
	enum metrics_type	 type;
	enum metrics_result	 result;
	const char		*how;
	int			 reset;		/* answered with a TCP reset */
	char			 how_buf[80];	/* "upstream NAME" */
	/*
	 * What the routes keep across their suspensions, zero at the head,
	 * each in a struct of its own, as nginx modules keep theirs: ask is
	 * route_ask.c's, for the routes under /buildid and /fileid (reply.c
	 * reads its round count); each other is one route file's.  http.c
	 * reads them for the access log and the status page, and frees
	 * what they hold.
	 */
	struct {			/* route_ask.c: upstreams asked */
		int			 fetches;	/* rounds so far */
		enum cache_kind		 asked;		/* in the last round */
		enum fetch_result	 result;	/* of the last round */
		/* Bytes a fetch handed over before storing them
		 * (fetch.h): -1, or served by route_key(). */
		int			 sfd;
		struct cache_record	 srec;	/* its strings in srec.mem */
		/* ... or the bytes as they arrive (fetch.h): NULL, or
		 * served by route_key() (then srec describes it). */
		struct fetch_stream	*stream;
	} ask;
	struct {			/* route_artifact.c */
		int			 encoded;	/* a copy was made */
	} art;
	struct {			/* route_gsym.c: a conversion */
		int			 converted;	/* it ended */
		int			 rc;		/* with this */
	} gsym;
	struct {			/* route_metadata.c: the answer */
		int			 done;
		int			 rc;
		char			*json;	/* malloc'd; NULL once sent */
		size_t			 len;
	} meta;
	struct breq		*batch;		/* route_batch.c */
	struct preq		*pprof;		/* route_pprof.c */
	struct oreq		*otlp;		/* route_otlp.c */
	unsigned		 retry_after;	/* s, of a 429 */
	struct {			/* the token shown (http.c) */
		char			 name[64];	/* "": none */
		unsigned		 scopes;	/* AUTH_* */
	} tok;
	struct {			/* route_upload.c */
		struct upload		*up;	/* a PUT being received */
		int			 private;	/* kept from the bucket */
		const char		*who;	/* its token's name */
		/* Waiting for the bucket: the upload's result and
		 * message, and the bucket's. */
		int			 res;	/* enum upload_result */
		char			*msg;	/* malloc'd */
		int			 bucket_rc;
	} upl;
	/* A body (PUT: an upload, r->upl.up; POST: /symbolize addresses). */
	int			 post;
	struct buf		 body;		/* NUL after its bytes */
	int			 body_pooled;	/* its bytes arena_big_alloc()'s,
						 * body.cap of them */
	int			 too_long;	/* body over the limit */
	int			 busy;		/* over --post-buffer-max */
	int			 in_body;	/* conns.c counts a body */
	size_t			 held;		/* of h->buffered, ours */
	const char		*cors;		/* --cors, or NULL */
	char			 method[8];
	int			 http11;	/* HTTP/1.1: chunks can say
						 * an answer is whole */
	char			 url[];		/* as received */
};

/* ---- reply.c: every answer ---- */

/* What happened, each with one status, metrics result and header set. */
enum reply {
	REPLY_OK,		/* 200, text or JSON */
	REPLY_NO_CONTENT,	/* 204, a CORS preflight (--cors) */
	REPLY_ARTIFACT,		/* 200, a file: X-DEBUGINFOD-*, cacheable */
	REPLY_PARTIAL,		/* 206, a Range of a file */
	REPLY_NOT_MODIFIED,	/* 304, If-None-Match or -Modified-Since */
	REPLY_SECTION,		/* 200, a section extracted now */
	REPLY_CREATED,		/* 201, an upload stored */
	REPLY_FOUND,		/* 302, --home-redirect */
	REPLY_BAD_REQUEST,	/* 400 */
	REPLY_UNAUTHORIZED,	/* 401, no or an unknown token */
	REPLY_FORBIDDEN,	/* 403 */
	REPLY_NOT_FOUND,	/* 404, nothing known */
	REPLY_NEGATIVE,		/* 404 from a negative entry */
	REPLY_NO_PAGE,		/* 404, no such route */
	REPLY_METHOD,		/* 405, with Allow */
	REPLY_TOO_BIG,		/* 406, over X-DEBUGINFOD-MAXSIZE */
	REPLY_CONFLICT,		/* 409, an upload worse than the stored */
	REPLY_TOO_LARGE,	/* 413, a body over its limit */
	REPLY_RANGE,		/* 416, a Range past the end */
	REPLY_UNPROCESSABLE,	/* 422, a file that cannot be used */
	REPLY_INTERNAL,		/* 500 */
	REPLY_NOT_IMPLEMENTED,	/* 501 */
	REPLY_BUSY,		/* 503 with Retry-After: try again */
	REPLY_UNAVAILABLE,	/* 503, no Retry-After: /metadata without
				 * key and value, as elfutils answers */
	REPLY_TRANSIENT,	/* 503 with Retry-After: nothing definite
				 * upstream (reply_transient()) */
	REPLY_NO_SPACE,		/* 507, the store refused the write */
	REPLY_RATE,		/* 429 with Retry-After: over a rate */
	REPLY_N
};

/* A short text answer: msg in one line (how: for the access log). */
enum MHD_Result	reply_text(struct req *r, enum reply what, const char *msg,
		    const char *how);

/* reply_text() of a message made from fmt (cut at 511 bytes). */
enum MHD_Result	reply_textf(struct req *r, enum reply what, const char *how,
		    const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));

/* Answer a response already made (NULL: MHD_NO); bytes for the log. */
enum MHD_Result	reply_response(struct req *r, enum reply what,
		    struct MHD_Response *resp, uint64_t bytes,
		    const char *how);

/* A response that takes buf (malloc'd, len bytes), of content type
 * ctype; NULL on failure, buf then freed. */
struct MHD_Response *reply_buffer(void *buf, size_t len, const char *ctype);

/* The X-DEBUGINFOD-* and caching headers of an artifact. */
void		reply_artifact_headers(struct MHD_Response *resp,
		    const struct cache_record *rec);

/* Serve erec's bytes, rec's compressed copy in coding (WEBAPI_ENC_*),
 * from fd (consumed in every case), or 304, 404 empty, 406. */
enum MHD_Result	reply_coded(struct http *h, struct req *r,
		    const struct cache_key *key,
		    const struct cache_record *rec,
		    const struct cache_record *erec, int fd, unsigned coding);

/* Serve rec's bytes b kept in memory (hot.h; the reference is consumed),
 * or 404 empty / 406. */
enum MHD_Result	reply_hot(struct http *h, struct req *r,
		    const struct cache_key *key,
		    const struct cache_record *rec, struct hot_bytes *b);

/* Serve rec from a file still arriving (fetch.h; the reference is
 * consumed in every case), or 404 empty / 406; coded as it comes when
 * coding (route_coding()) is zstd and r a GET over HTTP/1.1.  Should the
 * stream fail, the connection is reset before the last bytes (coded: the
 * last chunk and the frame's end). */
enum MHD_Result	reply_stream(struct http *h, struct req *r,
		    const struct cache_key *key,
		    const struct cache_record *rec, struct fetch_stream *s,
		    unsigned coding);

/* Serve rec from fd (consumed in every case), or 404 empty / 406; a
 * small file whole is kept in memory for the next (hot.h). */
enum MHD_Result	reply_fd(struct http *h, struct req *r,
		    const struct cache_key *key,
		    const struct cache_record *rec, int fd);

/*
 * The checks of every 200: an empty artifact is 404 (libdebuginfod takes
 * an empty 200 for "not found" anyway), one over the client's
 * X-DEBUGINFOD-MAXSIZE 406.  @return 1 when answered (*ret set).
 */
int		reply_refused(struct req *r, uint64_t size,
		    enum MHD_Result *ret);

/* Nothing definite: reset the connection (see reply.c). */
enum MHD_Result	reply_reset(struct req *r);

/*
 * A miss nothing definite could be said of (upstreams timed out, reset,
 * answered 5xx, breakers open; shutting down), answered so that the
 * client neither caches it as "not found" nor stops asking its other
 * servers (doc/protocol.md, "Transient answers, per client"): a request
 * with neither User-Agent nor X-Forwarded-For (LLVM's debuginfod client,
 * which gives up on its whole DEBUGINFOD_URLS at a reset but asks the
 * next server after a 503) gets 503 with Retry-After; every other one a
 * reset (reply_reset()), which libdebuginfod retries and never caches,
 * and which elfutils' debuginfod turns into a 503 it does not cache.
 */
enum MHD_Result	reply_transient(struct req *r);

/* The client's X-DEBUGINFOD-MAXSIZE, or UINT64_MAX. */
uint64_t	req_maxsize(const struct req *r);

/*
 * Check r's Authorization header for scope against the tokens of the
 * moment (read again on SIGHUP), and keep the token's name and scopes
 * in r->tok.  @return auth_check()'s.
 */
int		req_token(struct http *h, struct req *r, unsigned scope);

/* The counters of check_access() (http.c), for /metrics. */
void		access_metrics(struct http *h, FILE *fp);

/* A request header's value, or NULL. */
const char	*req_header(const struct req *r, const char *name);

/* The client's address as text; buf keeps its contents if unknown. */
void		req_peer(const struct req *r, char *buf, size_t len);

/* ---- route_ask.c: asking others, and waiting for them ---- */

/* Starts what will call route_resume(r) once done, on any thread.
 * @return 0, or -errno when nothing was started. */
typedef int	(*route_start_fn)(struct http *h, struct req *r, void *arg);

/*
 * Suspend r in phase p and start(h, r, arg): MHD calls the handler again
 * once it resumes.  Suspended first, for start's callback may run before
 * start returns.  @return start's result: 0, r waits; -errno, r is
 * resumed at once (in phase p) and the caller answers or goes on.
 */
int		route_wait(struct http *h, struct req *r, enum phase p,
		    route_start_fn start, void *arg);

/* What started by route_wait() is done: MHD calls the handler again. */
void		route_resume(struct req *r);

/* Has r come round the federation back to this hub (fetch_loop())? */
int		route_loop(struct http *h, const struct req *r);

/*
 * The federation headers of r's client into fr; peer (len bytes) takes
 * its address and must outlive fr.  @return 1 when a miss of r's may be
 * asked upstream: the hub has upstreams, the chain is under
 * --forwarded-ttl-limit hops, and r did not come round back here.
 */
int		route_federation(struct http *h, const struct req *r,
		    struct fetch_req *fr, char *peer, size_t len);

/*
 * What every route under /buildid and /fileid does first: a FileID is
 * mapped to its build-id (r->w names that from then on), a request come
 * round the federation refused, the bytes an upstream just handed over
 * (route_ask_upstream() with want_bytes) served.
 * @return 1 when answered (*ret set), else 0 with key set from r->w.
 */
int		route_key(struct http *h, struct req *r, struct cache_key *key,
		    enum MHD_Result *ret);

/*
 * A FileID's build-id, from the map that uploads fill (doc/protocol.md,
 * "Keys"): r->w names the build-id from then on.  @return 1, or 0 when
 * the FileID is unknown.
 */
int		route_map_fileid(struct http *h, struct req *r);

/*
 * Ask upstreams for key and suspend until they answer (phase FETCH).
 * @return 1 when suspended, 0 when there is nothing to ask.
 */
int		route_ask_upstream(struct http *h, struct req *r,
		    const struct cache_key *key, const char *raw_extra,
		    int want_bytes, int upgrade);

/*
 * May r read what key's build-id has?  Not when its debuginfo or its
 * executable is a private upload of a tenant other than r's token's
 * (records_may_read()).
 */
int		route_may_read(struct http *h, const struct req *r,
		    const unsigned char *id, size_t idlen);

/* The coding (WEBAPI_ENC_*) to send rec, key's, in: one r accepts and
 * the hub offers (zstd first), for a debuginfo or executable of
 * --compress-min or more asked whole; 0: as it is (route_artifact.c). */
unsigned	route_coding(struct http *h, const struct req *r,
		    const struct cache_key *key,
		    const struct cache_record *rec);

/* The answer once upstreams had their say and the store has nothing. */
enum MHD_Result	route_after_fetch(struct req *r);

/* ---- the routes: each answers, or suspends and returns MHD_YES ---- */

/* route_artifact.c: /buildid/ID/KIND and /fileid/ID/KIND of a file. */
enum MHD_Result	route_artifact(struct http *h, struct req *r);

/*
 * route_srcdw.c: .../source/PATH the store does not hold under PATH (or
 * holds a negative entry for), from the line tables of the build-id's
 * debuginfo.  Called by route_artifact() before it asks the upstreams.
 * @return 1 when answered (*ret set), 0 to go on.
 */
int		route_source_dwarf(struct http *h, struct req *r,
		    const struct cache_key *key, enum MHD_Result *ret);

/* route_section.c: .../section/NAME. */
enum MHD_Result	route_section(struct http *h, struct req *r);

/* route_gsym.c: .../gsym and POST .../symbolize. */
enum MHD_Result	route_gsym(struct http *h, struct req *r);

/* route_upload.c: PUT and DELETE, checked from the head (phase HEAD);
 * the body's end (phase BODY). */
enum MHD_Result	route_upload_begin(struct http *h, struct req *r);
enum MHD_Result	route_upload_finish(struct http *h, struct req *r);
/* ... and with --s3, once the bucket has done its part (phase BUCKET). */
enum MHD_Result	route_upload_bucket(struct http *h, struct req *r);

/* route_metadata.c: /metadata?key=KEY&value=VALUE. */
enum MHD_Result	route_metadata(struct http *h, struct req *r);

/* route_batch.c: POST /symbolize.  route_batch_free() lets go of what
 * a request left (at its end; idempotent). */
enum MHD_Result	route_batch(struct http *h, struct req *r);
void		route_batch_free(struct req *r);

/* route_pprof.c: POST /symbolize/pprof.  route_pprof_free() as
 * route_batch_free(). */
enum MHD_Result	route_pprof(struct http *h, struct req *r);
void		route_pprof_free(struct req *r);

/* route_otlp.c: POST /symbolize/otlp.  route_otlp_free() as
 * route_batch_free(). */
enum MHD_Result	route_otlp(struct http *h, struct req *r);
void		route_otlp_free(struct req *r);

/*
 * route_stream.c: answer 200 with the JSON that step writes to j, a piece
 * at a time as the client takes it, until it sets *done; then j and ctx
 * (free_ctx) are freed.  j, ctx and free_ctx are the stream's from the
 * call on, in every case.  An answer past --symbolize-max-answer is cut.
 * step returns 0 or -ENOMEM (the answer is then cut).
 */
struct symjson;
typedef int	(*route_stream_step_fn)(void *ctx, struct symjson *j,
		    int *done);
enum MHD_Result	route_stream(struct http *h, struct req *r,
		    struct symjson *j, route_stream_step_fn step,
		    void (*free_ctx)(void *), void *ctx, const char *how);

/* Would an answer of at least least bytes fit --symbolize-max-answer? */
int		route_answer_fits(const struct http *h, uint64_t least);

/* Most bytes of a POST body: about 40 an address, 256 a module. */
size_t		route_body_max(const struct config *cfg);

/*
 * A request waiting on a batch of modules (batch.h): POST /symbolize,
 * /symbolize/pprof and /symbolize/otlp.  route_batch_start() creates *b
 * for mods[0..n) (which must outlive it), due ms milliseconds after the
 * request came, with r's federation headers; 0 or -ENOMEM.
 * route_batch_turn() steps it: 1 when it is done (answer now), 0 when r
 * was suspended until it moves on (return MHD_YES).
 */
int		route_batch_start(struct http *h, struct req *r,
		    struct batch_module *mods, size_t n, int64_t ms,
		    struct batch **b);
int		route_batch_turn(struct http *h, struct req *r,
		    struct batch *b);

/* ?deadline=MS, at most --symbolize-deadline (its value without one);
 * -1 with *why set when it is not a number. */
int64_t		route_deadline_ms(const struct http *h, const struct req *r,
		    const char **why);

/* A profile's module mod, its batch modules mods[first[mod]] up to
 * mods[first[mod + 1]] (a build-id and a FileID reading): the first
 * ready one with its loads, or NULL. */
const struct batch_module *route_profile_module(
		    const struct batch_module *mods, const size_t *first,
		    size_t mod);
/* pprof_lookup_fn's work: off, a file offset of module mod's executable,
 * looked up in its GSYM; -ENODEV when the module is not ready. */
int		route_profile_lookup(const struct batch_module *mods,
		    const size_t *first, size_t mod, uint64_t off,
		    struct gsym_result *res);
/* The answer to a profile pprof_read() or otlp_read() refused with rc
 * and why (-EBUSY: 503, try again); how names the route in the log. */
enum MHD_Result	route_profile_refused(struct http *h, struct req *r, int rc,
		    const char *why, const char *how);

/* route_profiler.c: POST /source/v1 and /asm/v1, the Firefox Profiler's
 * source and assembly views; their bodies are at most route_api_body_max()
 * bytes. */
enum MHD_Result	route_source_v1(struct http *h, struct req *r);
enum MHD_Result	route_asm_v1(struct http *h, struct req *r);
size_t		route_api_body_max(const struct config *cfg);

/* route_status.c: / and /metrics. */
enum MHD_Result	route_root(struct http *h, struct req *r);
enum MHD_Result	route_metrics(struct http *h, struct req *r);
enum MHD_Result	route_status_page(struct http *h, struct req *r);

/* ---- conns.c: the connections and their deadlines ---- */

/* What a connection waits for, as its deadlines see it. */
enum conns_phase {
	CONNS_HEAD,	/* a request head: --head-timeout */
	CONNS_BODY,	/* a body: --body-timeout, --body-min-rate */
	CONNS_ANSWER	/* the hub's answer: never cut */
};

void		conns_notify(void *cls, struct MHD_Connection *conn,
		    void **socket_context,
		    enum MHD_ConnectionNotificationCode code);
/* The connection's request moved on: its phase's clock starts now. */
void		conns_phase(struct MHD_Connection *conn, enum conns_phase p);
/* n more body bytes arrived (counted only in CONNS_BODY). */
void		conns_body(struct MHD_Connection *conn, size_t n);
int		conns_start(struct http *h);
void		conns_stop(struct http *h);

#endif

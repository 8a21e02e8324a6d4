/*
 * http: the libmicrohttpd front (epoll, a thread pool, sendfile).  This
 * file drives a request through its phases (route.h), by its row of the
 * route table (route_table.c), and writes its access log line; the
 * routes (route_*.c) answer through reply.c, the one place that chooses
 * status codes (symhubd(8), "WEB API"); conns.c keeps connections from
 * holding places without sending requests.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "arena.h"
#include "base/clock.h"
#include "common/kind.h"
#include "http.h"
#include "log.h"
#include "recent.h"
#include "route.h"
#include "upload.h"

/* What uri_seen() returns when it cannot make a request. */
static char no_memory;

static const char *
toe_name(enum MHD_RequestTerminationCode toe)
{
	switch (toe) {
	case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED:
		return "timed out";
	case MHD_REQUEST_TERMINATED_CLIENT_ABORT:
		return "the client closed the connection";
	case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN:
		return "shutting down";
	case MHD_REQUEST_TERMINATED_READ_ERROR:
		return "read error or reset";
	default:
		return "error";
	}
}

struct heads {
	const char	*cl;		/* the first Content-Length */
	int		 cl_differ;	/* another one says otherwise */
};

static enum MHD_Result
count_heads(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct heads *hd = cls;

	(void)kind;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) != 0)
		return MHD_YES;
	if (hd->cl == NULL)
		hd->cl = value;
	else if (strcmp(hd->cl, value) != 0)
		hd->cl_differ = 1;
	return MHD_YES;
}

/* The most bytes of r's body: its route's, or, for a URL that names
 * none, what a /symbolize body may have (it is answered 400 at its end). */
static size_t
body_max(const struct http *h, const struct req *r)
{
	if (r->rt != NULL && r->rt->body_max != NULL)
		return r->rt->body_max(h->cfg);
	return route_body_max(h->cfg);
}

/*
 * Phase HEAD: refuse from the request head alone, before any body is
 * read: a %00 in the URL, Content-Length headers that disagree, a
 * transfer coding other than chunked, a POST to a route that takes none
 * (its row, route_table.c) or a body larger than its route's.
 * @return MHD_YES with r->status 0 to go on.
 */
static enum MHD_Result
check_head(struct http *h, struct req *r, int nul)
{
	struct heads		 hd = { NULL, 0 };
	const char		*te;
	unsigned long long	 len;
	char			*end;

	if (nul)
		return reply_text(r, REPLY_BAD_REQUEST,
		    "a NUL byte (%00) in the URL", "-");
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, count_heads, &hd);
	if (hd.cl_differ)
		return reply_text(r, REPLY_BAD_REQUEST,
		    "Content-Length headers that disagree", "-");
	te = req_header(r, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (te != NULL && strcasecmp(te, "chunked") != 0 &&
	    strcasecmp(te, "identity") != 0)
		return reply_text(r, REPLY_NOT_IMPLEMENTED,
		    "only the chunked transfer coding is supported", "-");
	if (!r->post)
		return MHD_YES;
	if ((r->rt == NULL || !(r->rt->methods & ROUTE_POST)) &&
	    r->parse_rc != -EINVAL)
		return reply_text(r, REPLY_METHOD, "method not allowed", "-");
	if (hd.cl != NULL) {
		errno = 0;
		len = strtoull(hd.cl, &end, 10);
		if (errno != 0 || end == hd.cl || len > body_max(h, r))
			return reply_text(r, REPLY_TOO_LARGE, "request body "
			    "too large: see --symbolize-max-addresses", "-");
	}
	return MHD_YES;
}

void
http_set_auth(struct http *h, struct auth *a)
{
	struct auth *old;

	if (a == NULL)
		return;
	pthread_rwlock_wrlock(&h->authlk);
	old = h->auth;
	h->auth = a;
	pthread_rwlock_unlock(&h->authlk);
	auth_free(old);
}

/*
 * The address a rate is kept for: the peer's, or behind a TLS proxy
 * (--behind-tls), the X-Real-IP it sets (etc/nginx-tls.conf).  Not
 * X-Forwarded-For, which names the hops of a federation (fetch.h) and
 * changes what a transient miss is answered (reply_transient()).
 */
static void
client_addr(const struct http *h, const struct req *r, char *buf,
    size_t len)
{
	const char *real;

	if (h->cfg->behind_tls &&
	    (real = req_header(r, "X-Real-IP")) != NULL && *real != '\0') {
		snprintf(buf, len, "%s", real);
		return;
	}
	req_peer(r, buf, len);
}

/* Over a rate: 429 and Retry-After, counted. */
static enum MHD_Result
limited(struct http *h, struct req *r, unsigned wait, uint64_t *count,
    const char *what)
{
	char peer[NI_MAXHOST] = "-";

	__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
	r->retry_after = wait;
	client_addr(h, r, peer, sizeof(peer));
	log_limited("over the rate", peer, "%s %s from %s: over the rate "
	    "of its %s", r->method, r->url, peer, what);
	return reply_textf(r, REPLY_RATE, "limited", "too many requests "
	    "from this %s: try again in %u s", what, wait);
}

/*
 * Phase HEAD, after check_head(): the rate of the client's address, the
 * token its route needs (the row's access, route_table.c: --read-auth,
 * --metrics-auth), and the rate of that token.  A token shown where none
 * is needed is checked all the same (it may read private uploads).
 * Uploads and deletions check their own scope (route_upload.c).
 * @return MHD_YES with r->status 0 to go on.
 */
static enum MHD_Result
check_access(struct http *h, struct req *r)
{
	const struct config	*cfg = h->cfg;
	const char		*hdr;
	char			 peer[NI_MAXHOST] = "-";
	unsigned		 wait;
	int			 need, rc, upl, monitor;

	/* Monitoring (/metrics, /status) is not held to the rates: a
	 * scraper polls from one address, and is no reader. */
	monitor = r->rt != NULL && r->rt->access == ROUTE_MONITOR;
	if (h->rate_addr != NULL && !monitor) {
		client_addr(h, r, peer, sizeof(peer));
		if ((wait = rate_take(h->rate_addr, peer, strlen(peer),
		    clock_ms())) != 0)
			return limited(h, r, wait, &h->limited_addr,
			    "address");
	}
	upl = strcmp(r->method, MHD_HTTP_METHOD_PUT) == 0 ||
	    strcmp(r->method, MHD_HTTP_METHOD_DELETE) == 0;
	if (upl || (r->cors != NULL &&
	    strcmp(r->method, MHD_HTTP_METHOD_OPTIONS) == 0))
		return MHD_YES;
	need = r->rt != NULL && (r->rt->access == ROUTE_MONITOR ?
	    cfg->metrics_auth : cfg->read_auth);
	hdr = req_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!need && (hdr == NULL || h->auth == NULL))
		return MHD_YES;
	/* Shown where none is needed: any valid token names its tenant. */
	rc = req_token(h, r, need ? AUTH_READ : 0);
	/* symhub upload asks first (HEAD) whether the hub holds a file as
	 * good as its own: a token that may upload may ask that much. */
	if (rc == -EPERM && (r->tok.scopes & AUTH_UPLOAD) &&
	    strcmp(r->method, MHD_HTTP_METHOD_HEAD) == 0 && r->rt != NULL &&
	    r->rt->route == WEBAPI_ARTIFACT)
		rc = 0;
	if (rc < 0) {
		/* The address, never the token; refused as often as a
		 * client likes, hence log_limited(). */
		__atomic_add_fetch(hdr == NULL ? &h->auth_missing :
		    rc == -EPERM ? &h->auth_scope : &h->auth_bad, 1,
		    __ATOMIC_RELAXED);
		req_peer(r, peer, sizeof(peer));
		log_limited("refused for its token", peer,
		    "%s %s refused for %s: %s", r->method, r->url, peer,
		    hdr == NULL ? "no token" : rc == -EPERM ?
		    "token lacks the read scope" :
		    "malformed or unknown token");
		r->type = r->rt != NULL ? r->rt->type : METRICS_T_OTHER;
		return reply_text(r, rc == -EPERM ? REPLY_FORBIDDEN :
		    REPLY_UNAUTHORIZED, rc == -EPERM ? "this token may not "
		    "read" : "a token with the read scope is needed (Bearer, "
		    "or the password of Basic credentials)", "refused");
	}
	if (h->rate_tok != NULL && !monitor && (wait = rate_take(h->rate_tok,
	    r->tok.name, strlen(r->tok.name), clock_ms())) != 0)
		return limited(h, r, wait, &h->limited_tok, "token");
	return MHD_YES;
}

void
access_metrics(struct http *h, FILE *fp)
{
	fprintf(fp, "# HELP symhub_auth_refused_total requests refused for "
	    "their token, by cause\n"
	    "# TYPE symhub_auth_refused_total counter\n"
	    "symhub_auth_refused_total{cause=\"missing\"} %" PRIu64 "\n"
	    "symhub_auth_refused_total{cause=\"invalid\"} %" PRIu64 "\n"
	    "symhub_auth_refused_total{cause=\"scope\"} %" PRIu64 "\n"
	    "# HELP symhub_rate_limited_total requests answered 429, by "
	    "what was over its rate\n"
	    "# TYPE symhub_rate_limited_total counter\n"
	    "symhub_rate_limited_total{by=\"token\"} %" PRIu64 "\n"
	    "symhub_rate_limited_total{by=\"address\"} %" PRIu64 "\n"
	    "# HELP symhub_rate_evictions_total addresses forgotten for "
	    "newer ones (--rate-addresses)\n"
	    "# TYPE symhub_rate_evictions_total counter\n"
	    "symhub_rate_evictions_total %" PRIu64 "\n",
	    __atomic_load_n(&h->auth_missing, __ATOMIC_RELAXED),
	    __atomic_load_n(&h->auth_bad, __ATOMIC_RELAXED),
	    __atomic_load_n(&h->auth_scope, __ATOMIC_RELAXED),
	    __atomic_load_n(&h->limited_tok, __ATOMIC_RELAXED),
	    __atomic_load_n(&h->limited_addr, __ATOMIC_RELAXED),
	    h->rate_addr != NULL ? rate_evictions(h->rate_addr) : 0);
}

/* Take n more bytes of the POST body budget for r.  @return 0 if over. */
static int
hold(struct http *h, struct req *r, size_t n)
{
	uint64_t now = __atomic_add_fetch(&h->buffered, n, __ATOMIC_RELAXED);

	if (h->cfg->post_buffer_max && now > h->cfg->post_buffer_max) {
		__atomic_sub_fetch(&h->buffered, n, __ATOMIC_RELAXED);
		return 0;
	}
	r->held += n;
	return 1;
}

/* The bytes r's Content-Length announces, at most max (check_head()
 * refused more), or 0: the body's buffer is that large at once, rather
 * than copied as it doubles (a profile of 26 MB: 50 MB copied). */
static size_t
announced(struct req *r, size_t max)
{
	const char		*cl;
	char			*end;
	unsigned long long	 len;

	if ((cl = req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH)) == NULL)
		return 0;
	errno = 0;
	len = strtoull(cl, &end, 10);
	return errno != 0 || end == cl || len > max ? 0 : (size_t)len;
}

static int
take_body(struct http *h, struct req *r, const char *data, size_t n)
{
	size_t max = body_max(h, r), all;

	if (r->too_long || r->busy)
		return 0;
	if (r->body.len + n > max)
		r->too_long = 1;
	else if (!hold(h, r, n))
		r->busy = 1;
	else if (r->body.cap == 0 && (all = announced(r, max)) > n) {
		/* A buffer of the profiles' pool (arena.h): a body of some
		 * MB in fresh pages costs more in faults than its copy. */
		if ((r->body.p = arena_big_alloc(all + 1)) == NULL)
			return -ENOMEM;
		r->body.cap = all + 1;
		r->body_pooled = 1;
		buf_add(&r->body, data, n);
		r->body.p[r->body.len] = '\0';
	} else if (r->body_pooled && n >= r->body.cap - r->body.len)
		r->too_long = 1;	/* past its Content-Length */
	else if (buf_reserve(&r->body, n + 1) != 0)
		return -ENOMEM;
	else {
		buf_add(&r->body, data, n);
		r->body.p[r->body.len] = '\0';
	}
	return 0;
}

/* Does the head announce a body (any method: one a GET should not have
 * takes a place as long as any other)? */
static int
expects_body(struct req *r)
{
	const char	*te, *cl;

	te = req_header(r, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (te != NULL && strcasecmp(te, "identity") != 0)
		return 1;
	cl = req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
	return cl != NULL && cl[strspn(cl, "0")] != '\0';
}

/* Phase HEAD: a new request.  nul: the one uri_seen() made for a URL with
 * %00 in it, holding the URL as received; else NULL. */
static enum MHD_Result
begin(struct http *h, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, struct req *nul,
    void **con_cls)
{
	struct req	*r = nul;
	enum MHD_Result	 ret;

	if (r == NULL) {
		if ((r = calloc(1, sizeof(*r) + strlen(url) + 1)) == NULL)
			return MHD_NO;
		memcpy(r->url, url, strlen(url) + 1);
	}
	r->phase = PHASE_HEAD;
	r->conn = conn;
	r->t0 = clock_us();
	r->ask.sfd = -1;
	snprintf(r->method, sizeof(r->method), "%s", method);
	r->http11 = version != NULL &&
	    strcmp(version, MHD_HTTP_VERSION_1_1) == 0;
	r->type = METRICS_T_OTHER;
	r->how = "-";
	r->post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	r->cors = h->cfg->cors;
	r->parse_rc = webapi_parse(r->url, &r->w, &r->why);
	r->rt = r->parse_rc == 0 ? route_find(&r->w) : NULL;
	*con_cls = r;
	/* Until the body is in, conns.c holds it to --body-min-rate. */
	r->in_body = expects_body(r);
	conns_phase(conn, r->in_body ? CONNS_BODY : CONNS_ANSWER);
	if ((ret = check_head(h, r, nul != NULL)) != MHD_YES || r->status != 0)
		return ret;
	if ((ret = check_access(h, r)) != MHD_YES || r->status != 0)
		return ret;
	if (strcmp(method, MHD_HTTP_METHOD_PUT) == 0 ||
	    strcmp(method, MHD_HTTP_METHOD_DELETE) == 0)
		return route_upload_begin(h, r);
	/* Answer on the next call: libmicrohttpd closes a connection whose
	 * response was queued on the first one, and keep-alive is worth 2x
	 * on small hits. */
	r->phase = r->post ? PHASE_BODY : PHASE_DISPATCH;
	return MHD_YES;
}

/* Phase DISPATCH: the method fits the route (its row, route_table.c),
 * and the row's handler answers. */
static enum MHD_Result
dispatch(struct http *h, struct req *r)
{
	const struct route *rt = r->rt;

	r->phase = PHASE_DISPATCH;
	if (r->busy) {
		r->type = METRICS_T_BUILDID;
		return reply_text(r, REPLY_BUSY, "too many request bodies "
		    "held at once; try again", "busy");
	}
	if (r->cors != NULL &&
	    strcmp(r->method, MHD_HTTP_METHOD_OPTIONS) == 0)
		return reply_response(r, REPLY_NO_CONTENT,
		    MHD_create_response_from_buffer(0, NULL,
		    MHD_RESPMEM_PERSISTENT), 0, "preflight");
	if (strcmp(r->method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(r->method, MHD_HTTP_METHOD_HEAD) != 0 && !r->post)
		return reply_text(r, REPLY_METHOD, "method not allowed", "-");
	if (rt != NULL && !(rt->methods & (r->post ? ROUTE_POST : ROUTE_GET)))
		return reply_text(r, REPLY_METHOD, r->post ||
		    rt->post_hint == NULL ? "method not allowed" :
		    rt->post_hint, "-");
	if (r->parse_rc == -ENOENT || (r->parse_rc == 0 && rt == NULL))
		return reply_text(r, REPLY_NO_PAGE, "no such page", "-");
	if (r->parse_rc < 0) {
		r->type = METRICS_T_BUILDID;
		return reply_text(r, r->parse_rc == -EINVAL ?
		    REPLY_BAD_REQUEST : REPLY_INTERNAL,
		    r->why ? r->why : "bad request", "-");
	}
	r->type = rt->type;
	return rt->handler(h, r);
}

/* libmicrohttpd's access handler: called for the head, for each piece of
 * a body, once more at its end, and again after each resume. */
static enum MHD_Result
handle(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_size, void **con_cls)
{
	struct http	*h = cls;
	struct req	*r = *con_cls;
	size_t		 n = *upload_size;

	if (r == (void *)&no_memory)
		return MHD_NO;
	if (r == NULL || r->conn == NULL)
		return begin(h, conn, url, method, version, r, con_cls);
	*upload_size = 0;
	if (n != 0)
		conns_body(conn, n);
	else if (r->in_body) {	/* the body is whole */
		r->in_body = 0;
		conns_phase(conn, CONNS_ANSWER);
	}
	switch (r->phase) {
	case PHASE_BODY:
		if (r->upl.up != NULL) {
			if (n == 0)
				return route_upload_finish(h, r);
			/* A failure is remembered and answered at the end. */
			upload_write(r->upl.up, upload_data, n);
			return MHD_YES;
		}
		if (n != 0)
			return take_body(h, r, upload_data, n) < 0 ? MHD_NO :
			    MHD_YES;
		return dispatch(h, r);
	case PHASE_BUCKET:
		return route_upload_bucket(h, r);
	case PHASE_DISPATCH:
	case PHASE_FETCH:
	case PHASE_CONVERT:
	case PHASE_METADATA:
	case PHASE_ENCODE:
	case PHASE_BATCH:
		/* A body a GET should not have: let MHD discard it. */
		if (n != 0)
			return MHD_YES;
		return dispatch(h, r);
	case PHASE_HEAD:
	case PHASE_ANSWERED:
	default:
		return MHD_YES;	/* a body we do not want: discarded */
	}
}

/* The status page's recent events (recent.h), from a finished request. */
static void
remember(const struct req *r)
{
	const char	*kind;
	char		 d[96];

	if (r->parse_rc != 0 || r->type != METRICS_T_BUILDID ||
	    (r->status == 0 && !r->reset))
		return;
	kind = kind_name(r->w.kind);
	if (strcmp(r->method, "PUT") == 0 && r->upl.up == NULL &&
	    (r->status == 200 || r->status == 201)) {
		recent_add(RECENT_UPLOAD, r->w.idhex, kind, r->status == 201 ?
		    "stored" : "replaced, or the same bytes");
	} else if (r->gsym.converted) {
		/* derive.c lists every conversion, this one included. */
	} else if (r->reset || r->result == METRICS_R_NOTFOUND ||
	    r->result == METRICS_R_NEGATIVE ||
	    r->result == METRICS_R_TRANSIENT) {
		snprintf(d, sizeof(d), "%s: %.80s", r->reset ? "reset" :
		    r->status == 503 ? "503" : "404",
		    r->ask.fetches ? r->how_buf : r->how != NULL ? r->how : "");
		recent_add(RECENT_MISS, r->w.idhex, kind, d);
	}
}

static void
completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct req			*r = *con_cls;
	char				 peer[NI_MAXHOST] = "-";
	uint64_t			 usec;

	*con_cls = NULL;
	conns_phase(conn, CONNS_HEAD);	/* keep-alive: the next head */
	if (r == (void *)&no_memory)
		return;
	if (r == NULL || r->conn == NULL) {
		free(r);	/* uri_seen()'s, the head refused by MHD */
		return;
	}
	if (r->upl.up != NULL || (r->status == 0 && !r->reset)) {
		/* No answer: the client went away, or its body never came
		 * whole (a deadline, a reset).  A client can do that at
		 * will, hence log_limited(). */
		req_peer(r, peer, sizeof(peer));
		log_limited("ended before it was answered", peer,
		    "%s %s from %s: ended before it was answered (%s%s)",
		    r->method, r->url, peer, r->upl.up != NULL ? "upload body "
		    "incomplete, nothing stored; " : "", toe_name(toe));
	}
	remember(r);
	upload_abort(r->upl.up);	/* a client that went away mid-upload */
	if (r->held > 0)
		__atomic_sub_fetch(&((struct http *)cls)->buffered, r->held,
		    __ATOMIC_RELAXED);
	route_batch_free(r);
	route_pprof_free(r);
	route_otlp_free(r);
	if (r->body_pooled)
		arena_big_free(r->body.p, r->body.cap);
	else
		buf_free(&r->body);
	free(r->meta.json);
	free(r->upl.msg);
	webapi_req_free(&r->w);
	if (r->ask.sfd >= 0)
		close(r->ask.sfd);
	fetch_stream_release(r->ask.stream, NULL);
	cache_record_release(&r->ask.srec);
	usec = (uint64_t)(clock_us() - r->t0);
	req_peer(r, peer, sizeof(peer));
	if (r->reset) {
		metrics_response(0, r->type, r->result, 0, usec);
		log_access("%s %s %s RST 0 %s %" PRIu64 ".%03" PRIu64 "ms",
		    peer, r->method, r->url, r->ask.fetches ? r->how_buf :
		    "reset", usec / 1000, usec % 1000);
	} else if (r->status != 0) {
		metrics_response(r->status, r->type, r->result,
		    toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? r->bytes : 0,
		    usec);
		log_access("%s %s %s %d %" PRIu64 " %s %" PRIu64 ".%03" PRIu64
		    "ms%s", peer, r->method, r->url, r->status, r->bytes,
		    r->how, usec / 1000, usec % 1000,
		    toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" :
		    " (aborted)");
	}
	free(r);
}

/*
 * The raw URI, before libmicrohttpd decodes it: what it returns is the
 * request's first *con_cls.  A %00 would decode into a NUL that cuts
 * the path short, for the route and for the access log: such a request
 * is made here, holding the URI as received (conn still NULL), and
 * refused by begin().  completed() frees it when MHD refuses the head
 * before begin() runs.
 */
static void *
uri_seen(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct req	*r;
	const char	*p;
	size_t		 n;

	(void)cls;
	(void)conn;
	for (p = uri; (p = strchr(p, '%')) != NULL; p++)
		if (p[1] == '0' && p[2] == '0')
			break;
	if (p == NULL)
		return NULL;
	n = strlen(uri);
	if ((r = calloc(1, sizeof(*r) + n + 1)) == NULL)
		return &no_memory;	/* handle() closes the connection */
	memcpy(r->url, uri, n + 1);
	return r;
}

/* libmicrohttpd's warnings: a malformed request makes one or two, so
 * they are limited by their format (MHD does not say the peer). */
static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];

	(void)cls;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = '\0';
	/* Our deliberate resets (reply_reset()) are not news. */
	if (strstr(buf, "Application reported internal error") != NULL)
		return;
	log_limited(fmt, NULL, "http: %s", buf);
}

/*
 * Split "ADDR:PORT" or "[ADDR6]:PORT" into host (empty: every address)
 * and port.  @return 0, or -EINVAL with the cause in why.
 */
static int
split_listen(const char *spec, char *host, size_t hostlen, char *port,
    size_t portlen, char *why, size_t whylen)
{
	const char	*p, *h = spec;
	size_t		 n;
	char		*end;
	unsigned long	 v;

	if (spec[0] == '[') {
		if ((p = strchr(spec, ']')) == NULL || (p[1] != ':' &&
		    p[1] != '\0')) {
			snprintf(why, whylen, "an IPv6 address is written "
			    "[ADDR6]:PORT");
			return -EINVAL;
		}
		h = spec + 1;
		n = (size_t)(p - h);
		p = p[1] == ':' ? p + 1 : NULL;
	} else {
		p = strrchr(spec, ':');
		n = p != NULL ? (size_t)(p - spec) : strlen(spec);
	}
	if (p == NULL || p[1] == '\0') {
		snprintf(why, whylen, "no port (write ADDR:PORT, or "
		    "[ADDR6]:PORT for IPv6)");
		return -EINVAL;
	}
	p++;
	errno = 0;
	v = strtoul(p, &end, 10);
	if (*p < '0' || *p > '9' || *end != '\0' || errno != 0 || v > 65535) {
		snprintf(why, whylen, "the port '%s' is not a number from 0 "
		    "to 65535", p);
		return -EINVAL;
	}
	if (n >= hostlen) {
		snprintf(why, whylen, "the address is too long");
		return -EINVAL;
	}
	memcpy(host, h, n);
	host[n] = '\0';
	snprintf(port, portlen, "%lu", v);
	return 0;
}

/* What a failed bind() or listen() means to whoever set --listen. */
static void
bind_cause(int err, const char *port, char *why, size_t whylen)
{
	switch (err) {
	case EADDRNOTAVAIL:
		snprintf(why, whylen, "the address is not on this machine");
		break;
	case EADDRINUSE:
		snprintf(why, whylen, "the port is in use (by another "
		    "server, or another symhubd)");
		break;
	case EACCES:
		if (strtoul(port, NULL, 10) < 1024) {
			snprintf(why, whylen, "ports below 1024 need root or "
			    "CAP_NET_BIND_SERVICE");
			break;
		}
		/* FALLTHROUGH */
	default:
		snprintf(why, whylen, "%s", strerror(err));
		break;
	}
}

int
http_bind(const char *spec, int *fdp, char *why, size_t whylen)
{
	struct addrinfo	 hints, *res = NULL;
	char		 host[256], port[8];
	int		 fd = -1, one = 1, rc;

	*fdp = -1;
	if ((rc = split_listen(spec, host, sizeof(host), port, sizeof(port),
	    why, whylen)) < 0)
		return rc;
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(*host ? host : NULL, port, &hints, &res)) != 0) {
		snprintf(why, whylen, "cannot resolve '%s': %s", host,
		    gai_strerror(rc));
		return -EINVAL;
	}
	if ((fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) < 0) {
		rc = -errno;
		snprintf(why, whylen, "%s", strerror(errno));
		goto out;
	}
	/* As libmicrohttpd does for the sockets it opens: a restart
	 * binds at once, and an IPv6 address takes no IPv4 traffic. */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (res->ai_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) != 0) {
		rc = -errno;
		bind_cause(errno, port, why, whylen);
		goto out;
	}
	*fdp = fd;
	fd = -1;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return rc;
}

static unsigned int
mhd_limit(const struct config *cfg)
{
	struct rlimit	rl;
	uint64_t	limit = 2 * cfg->connections + 64, fds;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY) {
		fds = rl.rlim_cur - rl.rlim_cur / 4;	/* the rest: store */
		if (limit > fds)
			limit = fds;
	}
	return limit > UINT_MAX ? UINT_MAX : (unsigned int)limit;
}

int
http_start(const struct config *cfg, const struct http_parts *p,
    int fd, struct http **out, char *why, size_t whylen)
{
	struct sockaddr_storage		 ss;
	struct http			*h;
	socklen_t			 sslen = sizeof(ss);
	unsigned int			 flags, threads;
	long				 ncpu;
	char				 port[8];

	*out = NULL;
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0 ||
	    listen(fd, 1024) != 0) {
		int err = errno;

		snprintf(port, sizeof(port), "%u", (unsigned)ntohs(
		    ss.ss_family == AF_INET6 ?
		    ((struct sockaddr_in6 *)&ss)->sin6_port :
		    ((struct sockaddr_in *)&ss)->sin_port));
		bind_cause(err, port, why, whylen);
		close(fd);
		return -err;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		close(fd);
		return -ENOMEM;
	}
	h->port = ntohs(ss.ss_family == AF_INET6 ?
	    ((struct sockaddr_in6 *)&ss)->sin6_port :
	    ((struct sockaddr_in *)&ss)->sin_port);
	h->cfg = cfg;
	h->c = p->c;
	h->s = p->s;
	h->f = p->f;
	h->auth = p->auth;
	h->dv = p->dv;
	h->meta = p->meta;
	h->enc = p->enc;
	h->hot = p->hot;
	h->bucket = p->bucket;
	h->started = clock_wall_s();
	pthread_rwlock_init(&h->authlk, NULL);
	if ((cfg->rate_token && rate_new(64 * 1024, cfg->rate_token,
	    cfg->rate_burst, &h->rate_tok) != 0) ||
	    (cfg->rate_address && rate_new(cfg->rate_addresses,
	    cfg->rate_address, cfg->rate_burst, &h->rate_addr) != 0) ||
	    batches_create(h->c, h->s, h->dv, h->f, &h->batches) != 0) {
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		close(fd);
		rate_free(h->rate_tok);
		rate_free(h->rate_addr);
		pthread_rwlock_destroy(&h->authlk);
		free(h);
		return -ENOMEM;
	}
	conns_start(h);
	threads = (unsigned int)cfg->threads;
	if (threads == 0) {
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		threads = ncpu > 0 ? 2 * (unsigned int)ncpu : 4;
	}
	flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
	    MHD_ALLOW_SUSPEND_RESUME;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* The socket is ours, bound and listening: a bind error was
	 * reported with its own errno, and MHD has nothing to bind. */
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
	    MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_THREAD_POOL_SIZE, threads,
	    /* Split among MHD's threads, unevenly: twice the budget that
	     * conns_notify() keeps, so that no thread's share turns a
	     * newcomer away (within the fds: symhubd raised the limit). */
	    MHD_OPTION_CONNECTION_LIMIT, mhd_limit(cfg),
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->timeout,
	    /* No MHD_OPTION_CONNECTION_MEMORY_LIMIT: libmicrohttpd zeroes
	     * the connection's pool (32 KiB by default) for every request,
	     * so a larger one costs GETs dearly (256 KiB: 25-40 %), and
	     * uploads arrive in chunks of about half of it. */
	    MHD_OPTION_NOTIFY_COMPLETED, completed, h,
	    MHD_OPTION_URI_LOG_CALLBACK, uri_seen, h,
	    MHD_OPTION_NOTIFY_CONNECTION, conns_notify, h,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned int)cfg->conns_per_address,
	    MHD_OPTION_END);
	if (h->d == NULL) {
		/* MHD logged why (threads, epoll, memory). */
		snprintf(why, whylen, "the HTTP server did not start");
		close(fd);
		conns_stop(h);
		batches_free(h->batches);
		pthread_mutex_destroy(&h->cmu);
		pthread_cond_destroy(&h->ccv);
		rate_free(h->rate_tok);
		rate_free(h->rate_addr);
		pthread_rwlock_destroy(&h->authlk);
		free(h);
		return -EIO;
	}
	/* fd now owned by MHD, closed by MHD_stop_daemon(). */
	metrics_set_ready(1);
	*out = h;
	return 0;
}

uint16_t
http_port(const struct http *h)
{
	return h->port;
}

void
http_stop(struct http *h)
{
	if (h == NULL)
		return;
	metrics_set_ready(0);
	conns_stop(h);
	MHD_stop_daemon(h->d);
	batches_free(h->batches);
	pthread_mutex_destroy(&h->cmu);
	pthread_cond_destroy(&h->ccv);
	rate_free(h->rate_tok);
	rate_free(h->rate_addr);
	pthread_rwlock_destroy(&h->authlk);
	auth_free(h->auth);
	free(h);
}

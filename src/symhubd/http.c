/*
 * http: request handling on libmicrohttpd (epoll, thread pool, sendfile).
 *
 * Status codes (the whole mapping lives here):
 *   200  the artifact, with its X-DEBUGINFOD-* headers
 *   400  malformed id, path or artifact type (webapi says why)
 *   404  no such artifact, or no such page, or the hop limit reached
 *   405  a method other than GET and HEAD (POST for /symbolize)
 *   413  a /symbolize body over the limit
 *   406  larger than the client's X-DEBUGINFOD-MAXSIZE
 *   500  the store failed, or a conversion to GSYM did
 * An empty artifact is answered 404: libdebuginfod takes an empty 200 as
 * "not found" anyway, and caches it as such.
 *
 * A miss that upstreams may fill suspends the connection until the fetch
 * engine has an answer.  When it has none that is definite (timeouts,
 * resets, 5xx, open breakers), the connection is reset (TCP RST): of
 * everything a server can answer, libdebuginfod 0.188 retries only
 * refused, reset and timed-out connections, while it caches every HTTP
 * error, and even a connection closed without an answer, as "not found"
 * for 10 minutes.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <strings.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/hex.h"
#include "common/auth.h"
#include "common/elfinfo.h"
#include "common/webapi.h"
#include "fetch.h"
#include "gsymsvc.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "symjson.h"
#include "upload.h"

struct http {
	struct MHD_Daemon	*d;
	const struct config	*cfg;
	struct cache		*c;
	struct scan		*s;
	struct fetch		*f;
	struct auth		*auth;		/* NULL: uploads refused */
	struct gsymsvc		*gs;		/* NULL: no GSYM */
	uint16_t		 port;
	/* Bytes of POST bodies held by all connections (--post-buffer-max),
	 * and a gauge for /metrics. */
	uint64_t		 buffered;
	/* Open connections, for the head deadline (see guard()). */
	pthread_mutex_t		 cmu;
	pthread_cond_t		 ccv;
	struct cctx		*conns, *oldest;	/* newest first */
	unsigned		 nconns;
	uint64_t		 head_timeouts;	/* connections cut */
	int			 stopping;
	pthread_t		 guard;
	int			 guard_started;
};

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

static void	head_state(struct http *, struct MHD_Connection *, int);

/* What uri_seen() hands handle() for a URL with %00 in it: libmicrohttpd
 * decodes it into a NUL that would cut the path short. */
static char nul_in_url;

/* Per-request state, for the access log and the metrics. */
struct req {
	int64_t			 t0;		/* clock_us() at the head */
	int			 status;
	uint64_t		 bytes;
	enum metrics_type	 type;
	enum metrics_result	 result;
	const char		*how;
	struct MHD_Connection	*conn;
	int			 fetches;	/* upstream rounds so far */
	enum cache_kind		 asked;		/* in the last round */
	enum fetch_result	 fetch_result;	/* of the last round */
	char			 how_buf[80];	/* "upstream NAME" */
	int			 reset;		/* answered with a TCP reset */
	/* Bytes a fetch handed over before storing them (see fetch.h). */
	int			 sfd;
	struct cache_record	 srec;		/* its strings in srec.mem */
	struct upload		*up;		/* a PUT being received */
	const char		*who;		/* its token's name */
	int			 post;		/* a POST: its body, NUL after */
	struct buf		 body;
	int			 too_long;	/* body over the limit */
	int			 busy;		/* over --post-buffer-max */
	size_t			 held;		/* of h->buffered, ours */
	int			 converted;	/* a conversion ran for us */
	int			 convert_rc;	/* its outcome */
	char			 method[8];
	char			 url[];		/* as received, for the log */
};

static enum MHD_Result
queue(struct MHD_Connection *conn, struct req *r, int status,
    struct MHD_Response *resp, uint64_t bytes, enum metrics_result result,
    const char *how)
{
	enum MHD_Result ret;

	if (resp == NULL)
		return MHD_NO;
	r->status = status;
	r->bytes = bytes;
	r->result = result;
	r->how = how;
	ret = MHD_queue_response(conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A short text answer; errors say what was wrong, in one line. */
static enum MHD_Result
text(struct MHD_Connection *conn, struct req *r, int status,
    const char *msg, enum metrics_result result, const char *how)
{
	struct MHD_Response	*resp;
	char			 buf[512];
	int			 n;

	n = snprintf(buf, sizeof(buf), "%s\n", msg);
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	resp = MHD_create_response_from_buffer((size_t)n, buf,
	    MHD_RESPMEM_MUST_COPY);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "text/plain");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
		    strstr(r->url, "/symbolize") ? "POST" : "GET, HEAD");
	return queue(conn, r, status, resp, (uint64_t)n, result, how);
}

/* A response that takes buf (malloc'd, len bytes); on failure buf is
 * freed and NULL returned (queue() answers MHD_NO to that). */
static struct MHD_Response *
owned_buffer(void *buf, size_t len)
{
	struct MHD_Response	*resp;

	resp = MHD_create_response_from_buffer(len, buf,
	    MHD_RESPMEM_MUST_FREE);
	if (resp == NULL)
		free(buf);
	/* buf now owned by MHD */
	return resp;
}

static void
add_headers(struct MHD_Response *resp, const struct cache_record *rec)
{
	char		buf[64];
	struct tm	tm;
	time_t		t;

	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "application/octet-stream");
	snprintf(buf, sizeof(buf), "%" PRIu64, rec->size);
	MHD_add_response_header(resp, "X-DEBUGINFOD-SIZE", buf);
	if (rec->xfile != NULL)
		MHD_add_response_header(resp, "X-DEBUGINFOD-FILE", rec->xfile);
	if (rec->xarchive != NULL)
		MHD_add_response_header(resp, "X-DEBUGINFOD-ARCHIVE",
		    rec->xarchive);
	if (rec->ximasig != NULL)
		MHD_add_response_header(resp, "X-DEBUGINFOD-IMASIGNATURE",
		    rec->ximasig);
	if (rec->quality != 0) {
		elfinfo_quality_str(rec->quality, buf, sizeof(buf));
		MHD_add_response_header(resp, "X-Symhub-Quality", buf);
	}
	t = (time_t)(rec->last_modified > 0 ? rec->last_modified :
	    rec->stored > 0 ? rec->stored : clock_wall_s());
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_LAST_MODIFIED, buf);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "public");
}

/* The client's X-DEBUGINFOD-MAXSIZE, or UINT64_MAX. */
static uint64_t
maxsize(struct MHD_Connection *conn)
{
	const char		*v;
	char			*end;
	unsigned long long	 n;

	v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "X-DEBUGINFOD-MAXSIZE");
	if (v == NULL)
		return UINT64_MAX;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || end == v || *v == '-')
		return UINT64_MAX;
	return n;
}

/* Checks shared by every 200: empty means absent, and MAXSIZE. */
static int
refuse(struct MHD_Connection *conn, struct req *r, uint64_t size,
    enum MHD_Result *ret)
{
	uint64_t max = maxsize(conn);

	if (size == 0) {
		*ret = text(conn, r, MHD_HTTP_NOT_FOUND, "empty artifact",
		    METRICS_R_NOTFOUND, "empty");
		return 1;
	}
	if (size > max) {
		*ret = text(conn, r, MHD_HTTP_NOT_ACCEPTABLE,
		    "artifact larger than X-DEBUGINFOD-MAXSIZE",
		    METRICS_R_ERROR, "too-big");
		return 1;
	}
	return 0;
}

/* The client's address as text; buf keeps its contents if unknown. */
static void
peer_addr(struct MHD_Connection *conn, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && ci->client_addr != NULL)
		getnameinfo(ci->client_addr,
		    ci->client_addr->sa_family == AF_INET6 ?
		    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
		    buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST);
}

/* Keep what the fetch engine handed over: the fd, and a copy of rec. */
static void
keep_served(struct req *r, const struct fetch_served *s)
{
	const char	*src[4] = { s->rec->origin, s->rec->xfile,
			    s->rec->xarchive, s->rec->ximasig };
	const char	**dst[4];
	char		*m;
	size_t		 n = 0, i, l;

	r->srec = *s->rec;
	dst[0] = &r->srec.origin;
	dst[1] = &r->srec.xfile;
	dst[2] = &r->srec.xarchive;
	dst[3] = &r->srec.ximasig;
	for (i = 0; i < 4; i++)
		n += src[i] ? strlen(src[i]) + 1 : 0;
	if ((m = malloc(n ? n : 1)) == NULL) {
		close(s->fd);	/* served from the store instead */
		memset(&r->srec, 0, sizeof(r->srec));
		return;
	}
	r->srec.mem = m;
	for (i = 0; i < 4; i++) {
		*dst[i] = NULL;
		if (src[i] == NULL)
			continue;
		l = strlen(src[i]) + 1;
		memcpy(m, src[i], l);
		*dst[i] = m;
		m += l;
	}
	r->sfd = s->fd;		/* fd now owned by r */
}

static void
fetched(void *ctx, enum fetch_result res, const char *from,
    const struct fetch_served *served)
{
	struct req *r = ctx;

	static const char *const why[] = {
		[FETCH_OK] = "upstream", [FETCH_NOTFOUND] = "upstream 404",
		[FETCH_TRANSIENT] = "upstreams: nothing definite",
		[FETCH_TOOBIG] = "upstream: too big",
		[FETCH_UNSUPPORTED] = "upstream: no sections",
	};

	r->fetch_result = res;
	if (served != NULL)
		keep_served(r, served);
	if (from != NULL)
		snprintf(r->how_buf, sizeof(r->how_buf), "upstream %s", from);
	else
		snprintf(r->how_buf, sizeof(r->how_buf), "%s", why[res]);
	/* Runs on the fetch thread; MHD calls handle() again. */
	MHD_resume_connection(r->conn);
}

/*
 * Ask upstreams for key and suspend the connection until they answer.
 * @return 1 when suspended, 0 when there is nothing to ask.
 */
static int
ask_upstream(struct http *h, struct MHD_Connection *conn, struct req *r,
    const struct cache_key *key, const char *idhex, const char *raw_extra,
    int want_bytes, int upgrade)
{
	struct fetch_req		 fr;
	const char			*xff, *p;
	uint64_t			 hops = 0;
	char				 peer[NI_MAXHOST] = "unknown";
	char				 chain[2048];
	uint64_t			 max;
	int				 rc;

	if (h->f == NULL)
		return 0;
	/* Federation chains end here, as in elfutils: each hub appends one
	 * address, and past the limit a miss is a miss. */
	xff = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "X-Forwarded-For");
	if (xff != NULL && *xff != '\0')
		for (p = xff, hops = 1; *p; p++)
			hops += *p == ',';
	if (h->cfg->fwd_hops > 0 && hops >= h->cfg->fwd_hops)
		return 0;
	peer_addr(conn, peer, sizeof(peer));
	if (xff != NULL && *xff != '\0')
		snprintf(chain, sizeof(chain), "%s, %s", xff, peer);
	else
		snprintf(chain, sizeof(chain), "%s", peer);
	max = maxsize(conn);
	memset(&fr, 0, sizeof(fr));
	fr.key = *key;
	fr.idhex = idhex;
	fr.raw_extra = raw_extra;
	fr.user_agent = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_USER_AGENT);
	fr.forwarded_for = chain;
	fr.via = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "X-Symhub-Via");
	fr.maxsize = max == UINT64_MAX ? 0 : max;
	fr.want_bytes = want_bytes;
	fr.upgrade = upgrade;
	r->conn = conn;
	r->fetches++;
	r->asked = key->kind;
	MHD_suspend_connection(conn);
	if ((rc = fetch_request(h->f, &fr, fetched, r)) < 0) {
		log_warnx("cannot ask upstreams: %s", strerror(-rc));
		r->fetch_result = FETCH_TRANSIENT;
		MHD_resume_connection(conn);
	}
	return 1;
}

/*
 * Nothing definite: reset the connection so that libdebuginfod asks again
 * next time instead of caching a miss (see the top of this file).
 */
static enum MHD_Result
transient(struct MHD_Connection *conn, struct req *r)
{
	const union MHD_ConnectionInfo	*ci;
	struct linger			 lg = { 1, 0 };

	struct sockaddr			 unspec = { .sa_family = AF_UNSPEC };

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci != NULL) {
		/* libmicrohttpd shuts the socket down before closing it, which
		 * sends a FIN even with SO_LINGER 0; dissolving the association
		 * first makes the kernel send the RST. */
		setsockopt(ci->connect_fd, SOL_SOCKET, SO_LINGER, &lg,
		    sizeof(lg));
		connect(ci->connect_fd, &unspec, sizeof(unspec));
	}
	r->status = 0;
	r->result = METRICS_R_TRANSIENT;
	r->how = "reset";
	r->reset = 1;
	return MHD_NO;
}

/* The answer after the upstreams had their say and the store has no
 * record still. */
static enum MHD_Result
after_fetch(struct MHD_Connection *conn, struct req *r)
{
	switch (r->fetch_result) {
	case FETCH_NOTFOUND:
		return text(conn, r, MHD_HTTP_NOT_FOUND, "not found",
		    METRICS_R_NOTFOUND, "upstream 404");
	case FETCH_TOOBIG:
		return text(conn, r, MHD_HTTP_NOT_ACCEPTABLE,
		    "artifact larger than the size limit",
		    METRICS_R_ERROR, "too-big");
	default:
		return transient(conn, r);
	}
}

/* Serve rec from fd; fd is consumed in every case. */
static enum MHD_Result
send_fd(struct http *h, struct MHD_Connection *conn, struct req *r,
    const struct cache_key *key, const struct cache_record *rec, int fd)
{
	struct MHD_Response	*resp;
	enum MHD_Result		 ret;

	if (refuse(conn, r, rec->size, &ret)) {
		close(fd);
		return ret;
	}
	resp = MHD_create_response_from_fd64(rec->size, fd);
	if (resp == NULL) {
		close(fd);
		return MHD_NO;
	}
	/* fd now owned by MHD */
	add_headers(resp, rec);
	cache_touch(h->c, key, rec, clock_wall_s());
	return queue(conn, r, MHD_HTTP_OK, resp, rec->size, METRICS_R_FILE,
	    r->fetches ? r->how_buf : "hit");
}

/*
 * Look key up and open its bytes.  A scanned file that changed is
 * re-indexed once; a blob that vanished is dropped.
 * @return 0 with *rec and *fd, or the cache's -errno.
 */
static int
lookup(struct http *h, const struct cache_key *key,
    struct cache_record *rec, int *fd)
{
	int rc, tries;

	for (tries = 0; ; tries++) {
		if ((rc = cache_get(h->c, key, clock_wall_s(), rec)) < 0)
			return rc;
		if ((rc = cache_open_data(h->c, rec, fd)) == 0)
			return 0;
		if (rc == -ESTALE && h->s != NULL && tries == 0 &&
		    scan_refresh(h->s, key, rec) == 0) {
			cache_record_release(rec);
			continue;
		}
		if (rc == -ESTALE || rc == -ENOENT || rc == -EIO) {
			log_warnx("dropping %s record: %s", rec->path ?
			    rec->path : "blob", strerror(-rc));
			cache_drop(h->c, key);
			rc = -ENOENT;
		}
		cache_record_release(rec);
		return rc;
	}
}

static int
mem_sink(void *ctx, const void *buf, size_t len)
{
	return buf_add(ctx, buf, len);
}

/* Store an extracted section as a derived blob; failure only costs the
 * next request another extraction, so it is logged and ignored. */
static void
store_section(struct http *h, const struct cache_key *key,
    const struct cache_record *rec, const struct buf *m)
{
	struct cache_blob	*b;
	int			 rc;

	if ((rc = cache_blob_create(h->c, &b)) == 0 &&
	    (rc = cache_blob_write(b, m->p, m->len)) == 0) {
		rc = cache_put_blob(h->c, b, key, rec, NULL);
		b = NULL;	/* consumed */
	}
	cache_blob_abort(b);
	if (rc == -EROFS)
		log_debug("read-only store: section not cached");
	else if (rc < 0)
		log_warnx("cannot cache section %s: %s", key->extra,
		    strerror(-rc));
}

/*
 * Neither file of a section is here: ask upstreams for the section itself;
 * when they cannot cut sections (503), for the debuginfo, and when none
 * has that, for the executable, to cut it here.
 */
static enum MHD_Result
section_upstream(struct http *h, struct MHD_Connection *conn, struct req *r,
    const struct webapi_req *w, const struct cache_key *key, unsigned known)
{
	struct cache_key	pk = *key;
	int			next = 0;

	/* known: bit (1 << kind) for each parent file that is here and
	 * lacks the section. */
	if (r->fetches == 0 && known == 0)
		next = CACHE_SECTION;
	else if ((r->fetches == 0 || (r->asked == CACHE_SECTION &&
	    r->fetch_result == FETCH_UNSUPPORTED)) &&
	    !(known & 1u << CACHE_DEBUGINFO))
		next = CACHE_DEBUGINFO;
	else if ((r->fetches == 0 || r->asked != CACHE_EXECUTABLE) &&
	    r->fetch_result != FETCH_TRANSIENT &&
	    r->fetch_result != FETCH_TOOBIG &&
	    !(r->asked == CACHE_SECTION && r->fetch_result == FETCH_NOTFOUND) &&
	    !(known & 1u << CACHE_EXECUTABLE))
		next = CACHE_EXECUTABLE;
	if (next != 0) {
		pk.kind = (enum cache_kind)next;
		pk.extra = next == CACHE_SECTION ? key->extra : NULL;
		if (ask_upstream(h, conn, r, &pk, w->idhex,
		    next == CACHE_SECTION ? w->raw_extra : NULL,
		    next == CACHE_SECTION, 0))
			return MHD_YES;
	}
	if (r->fetch_result == FETCH_TRANSIENT)
		return transient(conn, r);
	if (r->fetch_result == FETCH_TOOBIG)
		return after_fetch(conn, r);
	return text(conn, r, MHD_HTTP_NOT_FOUND, "no such section",
	    METRICS_R_NOTFOUND, r->fetches ? "upstream 404" : "miss");
}

/*
 * /section/NAME: from the cache when the derived entry is still fresh,
 * else extracted with libelf from the debuginfo, then the executable.
 */
static enum MHD_Result
serve_section(struct http *h, struct MHD_Connection *conn, struct req *r,
    const struct webapi_req *w, const struct cache_key *key)
{
	static const enum cache_kind parents[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct MHD_Response	*resp;
	struct cache_record	 rec, p;
	struct cache_key	 pk = *key;
	struct buf		 m = { 0 };
	enum MHD_Result		 ret;
	size_t			 i;
	unsigned		 known = 0;
	int			 fd, rc, found = 0, neg;

	rc = cache_get(h->c, key, clock_wall_s(), &rec);
	neg = rc == -ENODATA;
	if (rc == 0) {
		/* A section an upstream cut has no parent here to check. */
		if ((!(rec.flags & CACHE_F_DERIVED) ||
		    cache_derived_fresh(h->c, key->id, key->idlen, &rec,
		    clock_wall_s())) &&
		    cache_open_data(h->c, &rec, &fd) == 0) {
			ret = send_fd(h, conn, r, key, &rec, fd);
			cache_record_release(&rec);
			return ret;
		}
		cache_record_release(&rec);
	}

	pk.extra = NULL;
	for (i = 0; i < 2 && !found; i++) {
		pk.kind = parents[i];
		if ((rc = lookup(h, &pk, &p, &fd)) < 0) {
			if (rc != -ENOENT && rc != -ENODATA)
				log_warnx("section %s: %s", key->extra,
				    strerror(-rc));
			continue;
		}
		known |= 1u << pk.kind;
		m.len = 0;
		rc = elfinfo_section(fd, key->extra, mem_sink, &m);
		close(fd);
		if (rc == 0) {
			found = 1;
			memset(&rec, 0, sizeof(rec));
			rec.flags = CACHE_F_DERIVED;
			rec.parent = cache_fingerprint(&p);
			rec.size = m.len;
			rec.last_modified = p.last_modified;
			rec.stored = clock_wall_s();
			rec.origin = p.origin;
			rec.xfile = p.xfile;
			rec.xarchive = p.xarchive;
			if (m.len > 0)
				store_section(h, key, &rec, &m);
		} else if (rc != -ENOENT) {
			log_warnx("section %s of %s: %s", key->extra,
			    p.path ? p.path : "blob", strerror(-rc));
		}
		if (!found)
			cache_record_release(&p);
	}
	if (!found) {
		buf_free(&m);
		if (known == 0 && neg && r->fetches == 0)
			return text(conn, r, MHD_HTTP_NOT_FOUND,
			    "no such section", METRICS_R_NEGATIVE, "negative");
		if (h->f != NULL && known != (1u << CACHE_DEBUGINFO |
		    1u << CACHE_EXECUTABLE))
			return section_upstream(h, conn, r, w, key, known);
		return text(conn, r, MHD_HTTP_NOT_FOUND, "no such section",
		    METRICS_R_NOTFOUND, "miss");
	}
	if (refuse(conn, r, m.len, &ret)) {
		buf_free(&m);
		cache_record_release(&p);
		return ret;
	}
	if ((resp = owned_buffer(m.p, m.len)) != NULL)
		add_headers(resp, &rec);
	cache_record_release(&p);
	return queue(conn, r, MHD_HTTP_OK, resp, m.len, METRICS_R_SECTION,
	    "extracted");
}

/* ---- GSYM and batch symbolization ---- */

/* Runs on a gsymsvc worker; MHD calls handle() again. */
static void
converted(void *ctx, int rc)
{
	struct req *r = ctx;

	r->converted = 1;
	r->convert_rc = rc;
	MHD_resume_connection(r->conn);
}

/* Has the store a record of kind for w's id? */
static int
stored(struct http *h, const struct webapi_req *w, enum cache_kind kind)
{
	struct cache_record	p;
	struct cache_key	k = { kind, w->id, w->idlen, NULL };

	if (cache_get(h->c, &k, clock_wall_s(), &p) != 0)
		return 0;
	cache_record_release(&p);
	return 1;
}

/* Answer a /symbolize request from gf, which is consumed. */
static enum MHD_Result
symbolize(struct http *h, struct MHD_Connection *conn, struct req *r,
    const struct webapi_req *w, struct gsymsvc_file *gf)
{
	struct gsym_result	*res = NULL;
	struct MHD_Response	*resp;
	struct symjson		*j = NULL;
	const char		*why = NULL;
	uint64_t		*addrs = NULL;
	char			*out = NULL;
	long			 n, i;
	size_t			 len = 0;
	int			 rc;

	if (r->too_long) {
		gsymsvc_release(gf);
		return text(conn, r, MHD_HTTP_CONTENT_TOO_LARGE,
		    "too many addresses", METRICS_R_ERROR, "symbolize");
	}
	n = symjson_parse(r->body.p ? (const char *)r->body.p : "",
	    r->body.len, h->cfg->symbolize_max, &addrs, &why);
	if (n < 0) {
		gsymsvc_release(gf);
		return text(conn, r, n == -E2BIG ? MHD_HTTP_CONTENT_TOO_LARGE :
		    n == -EINVAL ? MHD_HTTP_BAD_REQUEST :
		    MHD_HTTP_INTERNAL_SERVER_ERROR, why, METRICS_R_ERROR,
		    "symbolize");
	}
	if ((res = malloc(sizeof(*res))) == NULL ||
	    symjson_create(w->idhex, (size_t)n, &j) != 0) {
		free(res);
		free(addrs);
		gsymsvc_release(gf);
		return MHD_NO;
	}
	for (i = 0, rc = 0; i < n && rc == 0; i++)
		rc = symjson_add(j, addrs[i],
		    gsymsvc_lookup(gf, addrs[i], res), res);
	/* gf last: the writer knows its strings by their address in gf. */
	if (rc == 0)
		rc = symjson_finish(j, &out, &len);
	else
		symjson_free(j);
	free(res);
	free(addrs);
	gsymsvc_release(gf);
	if (rc != 0 || (resp = owned_buffer(out, len)) == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "application/json");
	return queue(conn, r, MHD_HTTP_OK, resp, len, METRICS_R_OTHER,
	    r->converted ? "converted" : "symbolized");
}

/*
 * /gsym and /symbolize: a fresh stored GSYM, else one converted now from
 * the debuginfo (or executable) the store has or an upstream gives.
 */
static enum MHD_Result
serve_gsym(struct http *h, struct MHD_Connection *conn, struct req *r,
    const struct webapi_req *w, const struct cache_key *key)
{
	struct cache_record	 rec;
	struct cache_key	 dk = { CACHE_DEBUGINFO, w->id, w->idlen, NULL };
	struct gsymsvc_file	*ugf = NULL;
	int			 fd, rc, have_dbg;

	if (h->gs == NULL)
		return text(conn, r, MHD_HTTP_NOT_FOUND, "GSYM is disabled",
		    METRICS_R_NOTFOUND, "-");
	if (cache_get(h->c, key, clock_wall_s(), &rec) == 0) {
		struct gsymsvc_file	*gf = NULL;
		enum MHD_Result		 ret;

		rc = -ESTALE;
		if (cache_derived_fresh(h->c, w->id, w->idlen, &rec, clock_wall_s()))
			rc = w->symbolize ? gsymsvc_open(h->gs, &rec, &gf) :
			    cache_open_data(h->c, &rec, &fd);
		if (rc == 0 && w->symbolize) {
			ret = symbolize(h, conn, r, w, gf);
		} else if (rc == 0) {
			ret = send_fd(h, conn, r, key, &rec, fd);
			if (r->converted)
				r->how = "converted";
		}
		cache_record_release(&rec);
		if (rc == 0)
			return ret;
		if (rc != -ESTALE && rc != -ENOENT) {
			log_warnx("gsym %s: %s", w->idhex, strerror(-rc));
			return text(conn, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "cannot read the GSYM", METRICS_R_ERROR, "gsym");
		}
		if (rc != -ESTALE)	/* its blob is gone: forget it */
			cache_drop(h->c, key);
		/* stale or gone: convert again */
	}
	/* Converted while the store could not take it (read-only, full). */
	if (gsymsvc_unstored(h->gs, w->id, w->idlen, &rec, &fd,
	    w->symbolize ? &ugf : NULL) == 0)
		return w->symbolize ? symbolize(h, conn, r, w, ugf) :
		    send_fd(h, conn, r, key, &rec, fd);
	if (r->converted && r->convert_rc == -ENODATA && r->fetches == 0 &&
	    !stored(h, w, CACHE_DEBUGINFO)) {
		/* Only a stripped executable here: the debuginfo may be
		 * upstream. */
		r->converted = 0;
		if (ask_upstream(h, conn, r, &dk, w->idhex, NULL, 0, 0))
			return MHD_YES;
		r->converted = 1;
	}
	if (r->converted) {
		switch (r->convert_rc) {
		case 0:		/* stored, then evicted or changed again */
		case -ENOENT:	/* the parent went away meanwhile */
			return text(conn, r, MHD_HTTP_NOT_FOUND,
			    "no debuginfo for this build-id",
			    METRICS_R_NOTFOUND, "gsym");
		case -ENODATA:
			return text(conn, r, MHD_HTTP_NOT_FOUND,
			    "its debuginfo has no DWARF or symbol table to "
			    "convert", METRICS_R_NOTFOUND, "gsym");
		case -ENOEXEC:	/* definite for this build-id (logged) */
			return text(conn, r, MHD_HTTP_UNPROCESSABLE_CONTENT,
			    "its debuginfo is not ELF, or its DWARF is corrupt",
			    METRICS_R_ERROR, "gsym");
		case -ECANCELED:	/* shutting down: ask again */
			return transient(conn, r);
		default:
			log_warnx("gsym %s: %s", w->idhex,
			    strerror(-r->convert_rc));
			return text(conn, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "conversion to GSYM failed", METRICS_R_ERROR,
			    "gsym");
		}
	}
	have_dbg = stored(h, w, CACHE_DEBUGINFO);
	/* Only an executable with nothing to convert, and the upstreams said
	 * nothing definite about the debuginfo: ask again later. */
	if (r->fetches > 0 && r->fetch_result == FETCH_TRANSIENT && !have_dbg)
		return transient(conn, r);
	if (have_dbg || stored(h, w, CACHE_EXECUTABLE)) {
		r->conn = conn;
		MHD_suspend_connection(conn);
		if ((rc = gsymsvc_convert(h->gs, w->id, w->idlen, converted,
		    r)) < 0) {
			MHD_resume_connection(conn);
			log_warnx("gsym %s: %s", w->idhex, strerror(-rc));
			return text(conn, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    "cannot convert", METRICS_R_ERROR, "gsym");
		}
		return MHD_YES;
	}
	if (r->fetches == 0 && ask_upstream(h, conn, r, &dk, w->idhex, NULL,
	    0, 0))
		return MHD_YES;
	if (r->fetches > 0 && r->fetch_result == FETCH_TRANSIENT)
		return transient(conn, r);
	return text(conn, r, MHD_HTTP_NOT_FOUND,
	    "no debuginfo for this build-id", METRICS_R_NOTFOUND,
	    r->fetches ? "upstream 404" : "miss");
}

static enum MHD_Result serve_buildid(struct http *, struct MHD_Connection *,
    struct req *, const struct webapi_req *, int);

/*
 * A FileID's build-id, from the map that uploads fill (doc/protocol.md,
 * "Keys").
 * @return 1 with out a copy of w naming the build-id, else 0.
 */
static int
by_fileid(struct http *h, const struct webapi_req *w, struct webapi_req *out)
{
	unsigned char	id[CACHE_ID_MAX];
	size_t		idlen;

	if (w->idlen != CACHE_FILEID_LEN ||
	    cache_fileid_get(h->c, w->id, id, &idlen) < 0)
		return 0;
	*out = *w;	/* shares out->extra with w: w frees it */
	memcpy(out->id, id, idlen);
	out->idlen = idlen;
	hex_encode(id, idlen, out->idhex);
	out->by_fileid = 0;
	return 1;
}

static enum MHD_Result
serve_artifact(struct http *h, struct MHD_Connection *conn, struct req *r,
    const struct webapi_req *w)
{
	struct webapi_req	 mapped;

	if (w->by_fileid) {
		if (!by_fileid(h, w, &mapped))
			return text(conn, r, MHD_HTTP_NOT_FOUND,
			    "unknown FileID", METRICS_R_NOTFOUND, "fileid");
		return serve_buildid(h, conn, r, &mapped, 0);
	}
	return serve_buildid(h, conn, r, w, 1);
}

/* may_map: a miss may still be a FileID sent as a build-id. */
static enum MHD_Result
serve_buildid(struct http *h, struct MHD_Connection *conn, struct req *r,
    const struct webapi_req *w, int may_map)
{
	struct cache_record	 rec;
	struct cache_key	 key;
	const char		*via;
	enum MHD_Result		 ret;
	int			 fd, rc;
	struct webapi_req	 mapped;

	/* A hub that finds itself in the chain is asked by itself. */
	via = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "X-Symhub-Via");
	if (via != NULL && h->f != NULL && strstr(via, fetch_via(h->f)))
		return text(conn, r, MHD_HTTP_NOT_FOUND,
		    "federation loop: this hub is already in X-Symhub-Via",
		    METRICS_R_NOTFOUND, "loop");

	key.kind = w->kind;
	key.id = w->id;
	key.idlen = w->idlen;
	key.extra = w->extra;
	if (r->sfd >= 0) {
		/* The bytes an upstream just sent, being stored meanwhile. */
		fd = r->sfd;
		r->sfd = -1;
		return send_fd(h, conn, r, &key, &r->srec, fd);
	}
	if (w->kind == CACHE_SECTION)
		return serve_section(h, conn, r, w, &key);
	if (w->kind == CACHE_GSYM)
		return serve_gsym(h, conn, r, w, &key);

	rc = lookup(h, &key, &rec, &fd);
	if (rc == -ENOENT && may_map && r->fetches == 0 &&
	    by_fileid(h, w, &mapped))
		return serve_buildid(h, conn, r, &mapped, 0);
	if (rc == -ENODATA && r->fetches > 0)
		return text(conn, r, MHD_HTTP_NOT_FOUND, "not found",
		    METRICS_R_NOTFOUND, "upstream 404");
	if (rc == -ENODATA)
		return text(conn, r, MHD_HTTP_NOT_FOUND, "not found",
		    METRICS_R_NEGATIVE, "negative");
	if (rc == -ENOENT && r->fetches > 0)
		return after_fetch(conn, r);
	if (rc == -ENOENT && ask_upstream(h, conn, r, &key, w->idhex,
	    w->raw_extra, 1, 0))
		return MHD_YES;
	/*
	 * A debuginfo without DWARF (an upload with only a symbol table)
	 * must not hide a better copy an upstream has: ask once per
	 * negative-ttl, and keep the better of the two.
	 */
	if (rc == 0 && key.kind == CACHE_DEBUGINFO && h->f != NULL &&
	    !(rec.quality & ELFINFO_Q_DEBUG_INFO) && r->fetches == 0 &&
	    cache_checked(h->c, &key, clock_wall_s()) == 0 &&
	    cache_mark_checked(h->c, &key,
	    clock_wall_s() + fetch_negative_ttl(h->f)) == 0) {
		close(fd);
		cache_record_release(&rec);
		if (ask_upstream(h, conn, r, &key, w->idhex, NULL, 0, 1))
			return MHD_YES;
		rc = lookup(h, &key, &rec, &fd);
	}
	if (rc == -ENOENT)
		return text(conn, r, MHD_HTTP_NOT_FOUND, "not found",
		    METRICS_R_NOTFOUND, "miss");
	if (rc < 0) {
		log_warnx("lookup %s: %s", w->idhex, strerror(-rc));
		return text(conn, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "store error", METRICS_R_ERROR, "error");
	}
	ret = send_fd(h, conn, r, &key, &rec, fd);
	cache_record_release(&rec);
	return ret;
}

static enum MHD_Result
serve_metrics(struct http *h, struct MHD_Connection *conn, struct req *r)
{
	struct MHD_Response	*resp;
	struct cache_stats	 st;
	FILE			*fp;
	char			*buf = NULL;
	size_t			 len = 0;
	int			 have;

	have = cache_stats(h->c, &st) == 0;
	if ((fp = open_memstream(&buf, &len)) == NULL)
		return MHD_NO;
	metrics_render(fp, have ? &st : NULL);
	if (h->f != NULL)
		fetch_metrics(h->f, fp);
	if (h->gs != NULL)
		gsymsvc_metrics(h->gs, fp);
	pthread_mutex_lock(&h->cmu);
	fprintf(fp, "# TYPE symhub_http_connections gauge\n"
	    "symhub_http_connections %u\n"
	    "# TYPE symhub_http_head_timeouts_total counter\n"
	    "symhub_http_head_timeouts_total %" PRIu64 "\n"
	    "# TYPE symhub_http_post_buffered_bytes gauge\n"
	    "symhub_http_post_buffered_bytes %" PRIu64 "\n", h->nconns,
	    h->head_timeouts, __atomic_load_n(&h->buffered, __ATOMIC_RELAXED));
	pthread_mutex_unlock(&h->cmu);
	fclose(fp);
	if ((resp = owned_buffer(buf, len)) == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "text/plain; version=0.0.4");
	return queue(conn, r, MHD_HTTP_OK, resp, len, METRICS_R_OTHER, "-");
}

/*
 * PUT and DELETE: checked on the first call, before any body is read, so
 * a refused client is not sent "100 Continue".
 * @return the handler's result; r->status is set when answered already.
 */
static enum MHD_Result
begin_write(struct http *h, struct MHD_Connection *conn, struct req *r,
    const char *url, const char *method)
{
	struct webapi_req	 w;
	struct cache_key	 key;
	const char		*why = NULL, *cl, *fidhex;
	unsigned char		 fid[WEBAPI_ID_HEX_MAX / 2];
	char			 peer[NI_MAXHOST] = "-";
	unsigned long long	 len;
	int			 del, rc;
	enum MHD_Result		 ret;

	del = strcmp(method, MHD_HTTP_METHOD_DELETE) == 0;
	r->type = METRICS_T_BUILDID;
	if ((rc = webapi_parse(url, &w, &why)) < 0)
		return text(conn, r, rc == -ENOENT ? MHD_HTTP_NOT_FOUND :
		    MHD_HTTP_BAD_REQUEST, why ? why : "bad request",
		    METRICS_R_ERROR, "-");
	if (w.route != WEBAPI_ARTIFACT || (w.kind != CACHE_DEBUGINFO &&
	    w.kind != CACHE_EXECUTABLE)) {
		webapi_req_free(&w);
		return text(conn, r, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "only debuginfo and executable can be uploaded or deleted",
		    METRICS_R_ERROR, "-");
	}
	if (h->auth == NULL) {
		webapi_req_free(&w);
		return text(conn, r, MHD_HTTP_FORBIDDEN,
		    "uploads are disabled on this hub (no --tokens file)",
		    METRICS_R_ERROR, "refused");
	}
	rc = auth_check(h->auth, MHD_lookup_connection_value(conn,
	    MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
	    del ? AUTH_ADMIN : AUTH_UPLOAD, &r->who);
	if (rc < 0) {
		/* Logged without the token, which is never kept. */
		peer_addr(conn, peer, sizeof(peer));
		log_warnx("%s %s refused for %s: %s", method, url, peer,
		    rc == -EPERM ? "token lacks the scope" :
		    "missing or unknown token");
		webapi_req_free(&w);
		return text(conn, r, rc == -EPERM ? MHD_HTTP_FORBIDDEN :
		    MHD_HTTP_UNAUTHORIZED, rc == -EPERM ?
		    "this token may not do that" : "a valid bearer token is "
		    "needed", METRICS_R_ERROR, "refused");
	}
	key.kind = w.kind;
	key.id = w.id;
	key.idlen = w.idlen;
	key.extra = NULL;
	if (del) {
		rc = cache_drop(h->c, &key);
		webapi_req_free(&w);
		if (rc == -ENOENT)
			return text(conn, r, MHD_HTTP_NOT_FOUND, "not stored",
			    METRICS_R_NOTFOUND, "delete");
		if (rc < 0)
			return text(conn, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
			    strerror(-rc), METRICS_R_ERROR, "delete");
		log_info("deleted %s by %s", url, r->who);
		/* A scanned file the deleted copy had displaced takes over
		 * again: the next pass reads the files that list this key. */
		if (h->s != NULL && cache_file_invalidate(h->c, &key) > 0)
			scan_trigger(h->s);
		return text(conn, r, MHD_HTTP_OK, "deleted", METRICS_R_OTHER,
		    "delete");
	}
	cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && (len = strtoull(cl, NULL, 10)) > 0 &&
	    h->cfg->max_upload && len > h->cfg->max_upload) {
		webapi_req_free(&w);
		return text(conn, r, MHD_HTTP_CONTENT_TOO_LARGE,
		    "upload larger than the size limit", METRICS_R_ERROR,
		    "upload");
	}
	rc = upload_begin(h->c, &key, h->cfg->max_upload, &r->up);
	if (rc == 0 && w.by_fileid)
		upload_by_fileid(r->up);
	if (rc == 0 && (fidhex = MHD_lookup_connection_value(conn,
	    MHD_HEADER_KIND, "X-Symhub-FileID")) != NULL) {
		if (webapi_parse_hexid(fidhex, strlen(fidhex), fid) ==
		    CACHE_FILEID_LEN)
			upload_set_fileid(r->up, fid);
		else {
			upload_abort(r->up);
			r->up = NULL;
			webapi_req_free(&w);
			return text(conn, r, MHD_HTTP_BAD_REQUEST,
			    "X-Symhub-FileID must be 32 lowercase hex "
			    "characters", METRICS_R_ERROR, "upload");
		}
	}
	webapi_req_free(&w);
	if (rc < 0) {
		ret = text(conn, r, rc == -EROFS || rc == -ENOSPC ||
		    rc == -EDQUOT || rc == -EACCES || rc == -EPERM ?
		    MHD_HTTP_INSUFFICIENT_STORAGE :
		    MHD_HTTP_INTERNAL_SERVER_ERROR, strerror(-rc),
		    METRICS_R_ERROR, "upload");
		return ret;
	}
	return MHD_YES;
}

/* The whole body is in: validate, decide, answer. */
/* --gsym-on-upload: convert an uploaded debuginfo now, nobody waiting. */
static void
eager_gsym(struct http *h, const char *url)
{
	struct webapi_req	 w;
	const char		*why;
	int			 rc;

	if (webapi_parse(url, &w, &why) == 0 && w.route == WEBAPI_ARTIFACT &&
	    !w.by_fileid && (w.kind == CACHE_DEBUGINFO ||
	    w.kind == CACHE_EXECUTABLE) && (rc = gsymsvc_convert(h->gs, w.id,
	    w.idlen, NULL, NULL)) < 0)
		log_warnx("gsym %s: %s", w.idhex, strerror(-rc));
	webapi_req_free(&w);
}

static enum MHD_Result
finish_upload(struct http *h, struct MHD_Connection *conn, struct req *r)
{
	static const int status[] = {
		[UPLOAD_STORED] = MHD_HTTP_CREATED,
		[UPLOAD_REPLACED] = MHD_HTTP_OK,
		[UPLOAD_SAME] = MHD_HTTP_OK,
		[UPLOAD_WORSE] = MHD_HTTP_CONFLICT,
		[UPLOAD_INVALID] = MHD_HTTP_UNPROCESSABLE_CONTENT,
		[UPLOAD_TOO_BIG] = MHD_HTTP_CONTENT_TOO_LARGE,
		[UPLOAD_NO_SPACE] = MHD_HTTP_INSUFFICIENT_STORAGE,
		[UPLOAD_ERROR] = MHD_HTTP_INTERNAL_SERVER_ERROR,
	};
	enum upload_result	 res;
	const char		*f;
	char			 msg[400];
	int			 force;

	f = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "force");
	force = f != NULL && strcmp(f, "0") != 0;
	f = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "X-Symhub-Force");
	force |= f != NULL && strcmp(f, "0") != 0;
	res = upload_finish(r->up, force, r->who, msg, sizeof(msg));
	r->up = NULL;	/* consumed */
	if (h->gs != NULL && h->cfg->gsym_on_upload &&
	    (res == UPLOAD_STORED || res == UPLOAD_REPLACED))
		eager_gsym(h, r->url);
	log_info("upload %s by %s: %s", r->url, r->who ? r->who : "-", msg);
	return text(conn, r, status[res], msg, res <= UPLOAD_SAME ?
	    METRICS_R_OTHER : METRICS_R_ERROR, "upload");
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

static enum MHD_Result
busy(struct MHD_Connection *conn, struct req *r)
{
	struct MHD_Response	*resp;
	static const char	 msg[] = "too many request bodies held at once; "
				    "try again\n";

	resp = MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg,
	    MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "text/plain");
	return queue(conn, r, MHD_HTTP_SERVICE_UNAVAILABLE, resp,
	    sizeof(msg) - 1, METRICS_R_ERROR, "busy");
}

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

/*
 * Refuse from the request head alone, before any body is read: a %00 in
 * the URL, Content-Length headers that disagree, a transfer coding other
 * than chunked, a POST to a route that takes none or a body larger than
 * its route's.  @return MHD_YES with r->status 0 to go on.
 */
static enum MHD_Result
check_head(struct http *h, struct MHD_Connection *conn, struct req *r,
    const char *url, const char *method, int nul)
{
	struct webapi_req	 w;
	struct heads		 hd = { NULL, 0 };
	const char		*te, *why;
	unsigned long long	 len;
	char			*end;
	int			 rc, sym;

	if (nul)
		return text(conn, r, MHD_HTTP_BAD_REQUEST,
		    "a NUL byte (%00) in the URL", METRICS_R_ERROR, "-");
	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_heads, &hd);
	if (hd.cl_differ)
		return text(conn, r, MHD_HTTP_BAD_REQUEST,
		    "Content-Length headers that disagree", METRICS_R_ERROR,
		    "-");
	te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (te != NULL && strcasecmp(te, "chunked") != 0 &&
	    strcasecmp(te, "identity") != 0)
		return text(conn, r, MHD_HTTP_NOT_IMPLEMENTED,
		    "only the chunked transfer coding is supported",
		    METRICS_R_ERROR, "-");
	if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
		return MHD_YES;
	rc = webapi_parse(url, &w, &why);
	sym = rc == 0 && w.route == WEBAPI_ARTIFACT && w.symbolize;
	if (rc == 0)
		webapi_req_free(&w);
	if (!sym && rc != -EINVAL) {
		struct MHD_Response *resp;

		r->type = METRICS_T_OTHER;
		resp = MHD_create_response_from_buffer(19,
		    (void *)"method not allowed\n", MHD_RESPMEM_PERSISTENT);
		if (resp == NULL)
			return MHD_NO;
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
		    "GET, HEAD");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		    "text/plain");
		return queue(conn, r, MHD_HTTP_METHOD_NOT_ALLOWED, resp, 19,
		    METRICS_R_ERROR, "-");
	}
	if (hd.cl != NULL) {
		errno = 0;
		len = strtoull(hd.cl, &end, 10);
		if (errno != 0 || end == hd.cl || len >
		    (unsigned long long)h->cfg->symbolize_max * 40 + 4096)
			return text(conn, r, MHD_HTTP_CONTENT_TOO_LARGE,
			    "too many addresses", METRICS_R_ERROR, "-");
	}
	return MHD_YES;
}

/* The raw URI, before libmicrohttpd decodes it: what it returns is the
 * request's first *con_cls. */
static void *
uri_seen(void *cls, const char *uri, struct MHD_Connection *conn)
{
	const char *p;

	(void)cls;
	(void)conn;
	for (p = uri; (p = strchr(p, '%')) != NULL; p++)
		if (p[1] == '0' && p[2] == '0')
			return &nul_in_url;
	return NULL;
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_size, void **con_cls)
{
	struct http		*h = cls;
	struct req		*r = *con_cls;
	struct webapi_req	 w;
	const char		*why = NULL;
	enum MHD_Result		 ret;
	int			 rc;

	if (r == NULL || r == (void *)&nul_in_url) {
		int nul = r != NULL;

		if ((r = calloc(1, sizeof(*r) + strlen(url) + 1)) == NULL)
			return MHD_NO;
		r->t0 = clock_us();
		r->sfd = -1;
		snprintf(r->method, sizeof(r->method), "%s", method);
		memcpy(r->url, url, strlen(url) + 1);
		r->type = METRICS_T_OTHER;
		r->how = "-";
		*con_cls = r;
		head_state(h, conn, 1);
		if ((ret = check_head(h, conn, r, url, method, nul)) != MHD_YES ||
		    r->status != 0)
			return ret;
		if (strcmp(method, MHD_HTTP_METHOD_PUT) == 0 ||
		    strcmp(method, MHD_HTTP_METHOD_DELETE) == 0)
			return begin_write(h, conn, r, url, method);
		r->post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
		/* Answer on the next call: libmicrohttpd closes a connection
		 * whose response was queued on the first one, and keep-alive
		 * is worth 2x on small hits. */
		return MHD_YES;
	}
	if (r->up != NULL) {
		if (*upload_size == 0)
			return finish_upload(h, conn, r);
		/* A failure is remembered and answered at the end. */
		upload_write(r->up, upload_data, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->post && *upload_size != 0) {
		/* A /symbolize body: kept up to about 40 bytes an address. */
		size_t max = (size_t)h->cfg->symbolize_max * 40 + 4096;

		if (!r->too_long && r->body.len + *upload_size > max) {
			r->too_long = 1;
		} else if (!r->too_long && !r->busy && !hold(h, r,
		    *upload_size)) {
			r->busy = 1;	/* answered 503 once it is in */
		} else if (!r->too_long && !r->busy) {
			if (buf_reserve(&r->body, *upload_size + 1) != 0)
				return MHD_NO;
			buf_add(&r->body, upload_data, *upload_size);
			r->body.p[r->body.len] = '\0';
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size != 0 || r->status != 0) {
		/* A body we do not want: let MHD discard it. */
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->busy) {
		r->type = METRICS_T_BUILDID;
		return busy(conn, r);
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0 && !r->post)
		return text(conn, r, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "method not allowed", METRICS_R_ERROR, "-");

	rc = webapi_parse(url, &w, &why);
	if (rc == 0 && w.route == WEBAPI_ARTIFACT && w.symbolize != r->post) {
		webapi_req_free(&w);
		return text(conn, r, MHD_HTTP_METHOD_NOT_ALLOWED, r->post ?
		    "method not allowed" : "POST the addresses to /symbolize",
		    METRICS_R_ERROR, "-");
	}
	if (rc == 0 && r->post && w.route != WEBAPI_ARTIFACT) {
		webapi_req_free(&w);
		return text(conn, r, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "method not allowed", METRICS_R_ERROR, "-");
	}
	if (rc == -ENOENT)
		return text(conn, r, MHD_HTTP_NOT_FOUND, "no such page",
		    METRICS_R_ERROR, "-");
	if (rc < 0) {
		r->type = METRICS_T_BUILDID;
		return text(conn, r, rc == -EINVAL ? MHD_HTTP_BAD_REQUEST :
		    MHD_HTTP_INTERNAL_SERVER_ERROR, why ? why : "bad request",
		    METRICS_R_ERROR, "-");
	}
	switch (w.route) {
	case WEBAPI_ROOT:
		r->type = METRICS_T_ROOT;
		ret = text(conn, r, MHD_HTTP_OK, "symhubd " PACKAGE_VERSION
		    ": a debuginfod-compatible symbol hub",
		    METRICS_R_OTHER, "-");
		break;
	case WEBAPI_METRICS:
		r->type = METRICS_T_METRICS;
		ret = serve_metrics(h, conn, r);
		break;
	default:
		r->type = METRICS_T_BUILDID;
		ret = serve_artifact(h, conn, r, &w);
		break;
	}
	webapi_req_free(&w);
	return ret;
}

static void
completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct req			*r = *con_cls;
	char				 peer[NI_MAXHOST] = "-";
	uint64_t			 usec;

	*con_cls = NULL;
	head_state(cls, conn, 0);	/* keep-alive: the next head */
	if (r == NULL || r == (void *)&nul_in_url)
		return;
	if (r->up != NULL || (r->status == 0 && !r->reset)) {
		/* No answer: the client went away, or its body never came
		 * whole (a deadline, a reset). */
		peer_addr(conn, peer, sizeof(peer));
		log_warnx("%s %s from %s: ended before it was answered (%s%s)",
		    r->method, r->url, peer, r->up != NULL ? "upload body "
		    "incomplete, nothing stored; " : "", toe_name(toe));
	}
	upload_abort(r->up);	/* a client that went away mid-upload */
	if (r->held > 0)
		__atomic_sub_fetch(&((struct http *)cls)->buffered, r->held,
		    __ATOMIC_RELAXED);
	buf_free(&r->body);
	if (r->sfd >= 0)
		close(r->sfd);
	cache_record_release(&r->srec);
	usec = (uint64_t)(clock_us() - r->t0);
	peer_addr(conn, peer, sizeof(peer));
	if (r->reset) {
		metrics_response(0, r->type, r->result, 0, usec);
		log_access("%s %s %s RST 0 %s %.3fms", peer, r->method, r->url,
		    r->fetches ? r->how_buf : "reset", (double)usec / 1000.0);
	} else if (r->status != 0) {
		metrics_response(r->status, r->type, r->result,
		    toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? r->bytes : 0,
		    usec);
		log_access("%s %s %s %d %" PRIu64 " %s %.3fms%s", peer,
		    r->method, r->url, r->status, r->bytes, r->how,
		    (double)usec / 1000.0,
		    toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" :
		    " (aborted)");
	}
	free(r);
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = '\0';
	/* Our deliberate resets (transient()) are not news. */
	if (strstr(buf, "Application reported internal error") != NULL)
		return;
	log_warnx("http: %s", buf);
}

static int
parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo	 hints, *res;
	char		 host[256];
	const char	*port;
	size_t		 n;
	int		 rc;

	if (spec[0] == '[') {
		port = strchr(spec, ']');
		if (port == NULL || port[1] != ':')
			return -EINVAL;
		n = (size_t)(port - spec - 1);
		if (n >= sizeof(host))
			return -EINVAL;
		memcpy(host, spec + 1, n);
		host[n] = '\0';
		port += 2;
	} else {
		port = strrchr(spec, ':');
		if (port == NULL)
			return -EINVAL;
		n = (size_t)(port - spec);
		if (n >= sizeof(host))
			return -EINVAL;
		memcpy(host, spec, n);
		host[n] = '\0';
		port++;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(*host ? host : NULL, port, &hints, &res)) != 0)
		return -EINVAL;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

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

static void
notify_conn(void *cls, struct MHD_Connection *conn, void **socket_context,
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

/* The connection's request head is in (1), or it waits for another (0). */
static void
head_state(struct http *h, struct MHD_Connection *conn, int done)
{
	const union MHD_ConnectionInfo	*ci;
	struct cctx			*cc;

	(void)h;
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
http_start(const struct config *cfg, struct cache *c, struct scan *s,
    struct fetch *f, struct auth *auth, struct gsymsvc *gs, struct http **out)
{
	const union MHD_DaemonInfo	*di;
	struct sockaddr_storage		 ss;
	struct http			*h;
	socklen_t			 sslen;
	unsigned int			 flags, threads;
	long				 ncpu;

	*out = NULL;
	if (parse_listen(cfg->listen, &ss, &sslen) < 0)
		return -EINVAL;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return -ENOMEM;
	h->cfg = cfg;
	h->c = c;
	h->s = s;
	h->f = f;
	h->auth = auth;
	h->gs = gs;
	pthread_mutex_init(&h->cmu, NULL);
	pthread_cond_init(&h->ccv, NULL);
	threads = (unsigned int)cfg->threads;
	if (threads == 0) {
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		threads = ncpu > 0 ? 2 * (unsigned int)ncpu : 4;
	}
	flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
	    MHD_ALLOW_SUSPEND_RESUME;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_THREAD_POOL_SIZE, threads,
	    /* Split among MHD's threads, unevenly: twice the budget that
	     * notify_conn() keeps, so that no thread's share turns a
	     * newcomer away (within the fds: symhubd raised the limit). */
	    MHD_OPTION_CONNECTION_LIMIT, mhd_limit(cfg),
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->timeout,
	    /* Uploads arrive in chunks of about this size: 32 KiB (the
	     * default) costs a handler call and a write(2) per 16 KiB. */
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
	    MHD_OPTION_NOTIFY_COMPLETED, completed, h,
	    MHD_OPTION_URI_LOG_CALLBACK, uri_seen, h,
	    MHD_OPTION_NOTIFY_CONNECTION, notify_conn, h,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned int)cfg->conns_per_address,
	    MHD_OPTION_END);
	if (h->d == NULL) {
		free(h);
		return -EADDRINUSE;
	}
	if (pthread_create(&h->guard, NULL, guard, h) == 0)
		h->guard_started = 1;
	di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = di != NULL ? di->port : 0;
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
	pthread_mutex_lock(&h->cmu);
	h->stopping = 1;
	pthread_cond_signal(&h->ccv);
	pthread_mutex_unlock(&h->cmu);
	if (h->guard_started)
		pthread_join(h->guard, NULL);
	MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->cmu);
	pthread_cond_destroy(&h->ccv);
	free(h);
}

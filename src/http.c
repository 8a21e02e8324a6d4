/*
 * http: request handling on libmicrohttpd (epoll, thread pool, sendfile).
 *
 * Status codes (the whole mapping lives here):
 *   200  the artifact, with its X-DEBUGINFOD-* headers
 *   400  malformed id, path or artifact type (webapi says why)
 *   404  no such artifact, or no such page, or the hop limit reached
 *   405  a method other than GET and HEAD
 *   406  larger than the client's X-DEBUGINFOD-MAXSIZE
 *   500  the store failed
 * An empty artifact is answered 404: libdebuginfod takes an empty 200 as
 * "not found" anyway, and caches it as such.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "elfinfo.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "webapi.h"

struct http {
	struct MHD_Daemon	*d;
	const struct config	*cfg;
	struct cache		*c;
	struct scan		*s;
	uint16_t		 port;
};

/* Per-request state, for the access log and the metrics. */
struct req {
	struct timespec		 t0;
	int			 status;
	uint64_t		 bytes;
	enum metrics_type	 type;
	enum metrics_result	 result;
	const char		*how;
	char			 method[8];
	char			 url[];		/* as received, for the log */
};

static int64_t
now_s(void)
{
	return (int64_t)time(NULL);
}

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
		    "GET, HEAD");
	return queue(conn, r, status, resp, (uint64_t)n, result, how);
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
	t = (time_t)(rec->last_modified > 0 ? rec->last_modified :
	    rec->stored > 0 ? rec->stored : now_s());
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
	cache_touch(h->c, key, rec, now_s());
	return queue(conn, r, MHD_HTTP_OK, resp, rec->size, METRICS_R_FILE,
	    "hit");
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
		if ((rc = cache_get(h->c, key, now_s(), rec)) < 0)
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

struct membuf {
	unsigned char	*p;
	size_t		 n, cap;
};

static int
mem_sink(void *ctx, const void *buf, size_t len)
{
	struct membuf	*m = ctx;
	unsigned char	*np;
	size_t		 cap;

	if (m->cap - m->n < len) {
		cap = m->cap ? m->cap : 65536;
		while (cap - m->n < len)
			cap *= 2;
		if ((np = realloc(m->p, cap)) == NULL)
			return -ENOMEM;
		m->p = np;
		m->cap = cap;
	}
	memcpy(m->p + m->n, buf, len);
	m->n += len;
	return 0;
}

/* Store an extracted section as a derived blob; failure only costs the
 * next request another extraction, so it is logged and ignored. */
static void
store_section(struct http *h, const struct cache_key *key,
    const struct cache_record *rec, const struct membuf *m)
{
	struct cache_blob	*b;
	int			 rc;

	if ((rc = cache_blob_create(h->c, &b)) == 0 &&
	    (rc = cache_blob_write(b, m->p, m->n)) == 0) {
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

/* Does a cached section still come from the current debuginfo or
 * executable of its build-id? */
static int
section_fresh(struct http *h, const struct cache_key *key,
    const struct cache_record *sec)
{
	static const enum cache_kind parents[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct cache_record	 p;
	struct cache_key	 pk = *key;
	size_t			 i;
	int			 fresh = 0;

	pk.extra = NULL;
	for (i = 0; i < 2 && !fresh; i++) {
		pk.kind = parents[i];
		if (cache_get(h->c, &pk, now_s(), &p) != 0)
			continue;
		fresh = cache_fingerprint(&p) == sec->parent;
		cache_record_release(&p);
	}
	return fresh;
}

/*
 * /section/NAME: from the cache when the derived entry is still fresh,
 * else extracted with libelf from the debuginfo, then the executable.
 */
static enum MHD_Result
serve_section(struct http *h, struct MHD_Connection *conn, struct req *r,
    const struct cache_key *key)
{
	static const enum cache_kind parents[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct MHD_Response	*resp;
	struct cache_record	 rec, p;
	struct cache_key	 pk = *key;
	struct membuf		 m = { NULL, 0, 0 };
	enum MHD_Result		 ret;
	size_t			 i;
	int			 fd, rc, found = 0;

	if (cache_get(h->c, key, now_s(), &rec) == 0) {
		if (section_fresh(h, key, &rec) &&
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
		m.n = 0;
		rc = elfinfo_section(fd, key->extra, mem_sink, &m);
		close(fd);
		if (rc == 0) {
			found = 1;
			memset(&rec, 0, sizeof(rec));
			rec.flags = CACHE_F_DERIVED;
			rec.parent = cache_fingerprint(&p);
			rec.size = m.n;
			rec.last_modified = p.last_modified;
			rec.stored = now_s();
			rec.origin = p.origin;
			rec.xfile = p.xfile;
			rec.xarchive = p.xarchive;
			if (m.n > 0)
				store_section(h, key, &rec, &m);
		} else if (rc != -ENOENT) {
			log_warnx("section %s of %s: %s", key->extra,
			    p.path ? p.path : "blob", strerror(-rc));
		}
		if (!found)
			cache_record_release(&p);
	}
	if (!found) {
		free(m.p);
		return text(conn, r, MHD_HTTP_NOT_FOUND, "no such section",
		    METRICS_R_NOTFOUND, "miss");
	}
	if (refuse(conn, r, m.n, &ret)) {
		free(m.p);
		cache_record_release(&p);
		return ret;
	}
	resp = MHD_create_response_from_buffer(m.n, m.p,
	    MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(m.p);
		cache_record_release(&p);
		return MHD_NO;
	}
	/* m.p now owned by MHD */
	add_headers(resp, &rec);
	cache_record_release(&p);
	return queue(conn, r, MHD_HTTP_OK, resp, m.n, METRICS_R_SECTION,
	    "extracted");
}

static enum MHD_Result
serve_artifact(struct http *h, struct MHD_Connection *conn, struct req *r,
    const struct webapi_req *w)
{
	struct cache_record	 rec;
	struct cache_key	 key;
	const char		*xff;
	enum MHD_Result		 ret;
	uint64_t		 hops = 0;
	int			 fd, rc;

	/* Federation loops end here: each hub appends one address. */
	xff = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "X-Forwarded-For");
	if (xff != NULL && *xff != '\0') {
		for (hops = 1; *xff; xff++)
			hops += *xff == ',';
	}
	if (h->cfg->fwd_hops > 0 && hops >= h->cfg->fwd_hops)
		return text(conn, r, MHD_HTTP_NOT_FOUND,
		    "forwarded-ttl-limit reached", METRICS_R_NOTFOUND, "hops");

	key.kind = w->kind;
	key.id = w->id;
	key.idlen = w->idlen;
	key.extra = w->extra;
	if (w->kind == CACHE_SECTION)
		return serve_section(h, conn, r, &key);

	rc = lookup(h, &key, &rec, &fd);
	if (rc == -ENODATA)
		return text(conn, r, MHD_HTTP_NOT_FOUND, "not found",
		    METRICS_R_NEGATIVE, "negative");
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
	fclose(fp);
	resp = MHD_create_response_from_buffer(len, buf,
	    MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(buf);
		return MHD_NO;
	}
	/* buf now owned by MHD */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "text/plain; version=0.0.4");
	return queue(conn, r, MHD_HTTP_OK, resp, len, METRICS_R_OTHER, "-");
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

	if (r == NULL) {
		if ((r = calloc(1, sizeof(*r) + strlen(url) + 1)) == NULL)
			return MHD_NO;
		clock_gettime(CLOCK_MONOTONIC, &r->t0);
		snprintf(r->method, sizeof(r->method), "%s", method);
		memcpy(r->url, url, strlen(url) + 1);
		r->type = METRICS_T_OTHER;
		r->how = "-";
		*con_cls = r;
		/* Answer on the next call: libmicrohttpd closes a connection
		 * whose response was queued on the first one, and keep-alive
		 * is worth 2x on small hits. */
		return MHD_YES;
	}
	if (*upload_size != 0 || r->status != 0) {
		/* A body we do not want: let MHD discard it. */
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return text(conn, r, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "method not allowed", METRICS_R_ERROR, "-");

	rc = webapi_parse(url, &w, &why);
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
	const union MHD_ConnectionInfo	*ci;
	struct req			*r = *con_cls;
	struct timespec			 t1;
	char				 peer[NI_MAXHOST] = "-";
	uint64_t			 usec;

	if (r == NULL)
		return;
	*con_cls = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	usec = (uint64_t)((t1.tv_sec - r->t0.tv_sec) * 1000000 +
	    (t1.tv_nsec - r->t0.tv_nsec) / 1000);
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && ci->client_addr != NULL)
		getnameinfo(ci->client_addr,
		    ci->client_addr->sa_family == AF_INET6 ?
		    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
		    peer, sizeof(peer), NULL, 0, NI_NUMERICHOST);
	if (r->status != 0) {
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

int
http_start(const struct config *cfg, struct cache *c, struct scan *s,
    struct http **out)
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
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)cfg->connections,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->timeout,
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
	    MHD_OPTION_NOTIFY_COMPLETED, completed, h,
	    MHD_OPTION_END);
	if (h->d == NULL) {
		free(h);
		return -EADDRINUSE;
	}
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
	MHD_stop_daemon(h->d);
	free(h);
}

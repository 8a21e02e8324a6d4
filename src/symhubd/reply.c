/*
 * reply: every answer of the HTTP front, and the one table from what
 * happened to the status code, the metrics result and the headers.
 *
 * An empty artifact is answered 404: libdebuginfod takes an empty 200 as
 * "not found" anyway, and caches it as such.
 *
 * A miss the upstreams could not settle (timeouts, resets, 5xx, open
 * breakers) is answered per client (reply_transient()).  Most get a TCP
 * reset: of everything a server can answer, libdebuginfod 0.188 retries
 * only refused, reset and timed-out connections, while it caches every
 * HTTP error, and even a connection closed without an answer, as "not
 * found" for 10 minutes.  LLVM's client, which stops at a reset, gets a
 * 503 (doc/protocol.md, "Transient answers, per client").
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/clock.h"
#include "base/hex.h"
#include "common/elfinfo.h"
#include "common/webapi.h"
#include "route.h"

static const struct {
	int			 status;
	enum metrics_result	 result;
	const char		*cache_control;	/* NULL: none */
} replies[REPLY_N] = {
	[REPLY_OK] = { MHD_HTTP_OK, METRICS_R_OTHER, NULL },
	[REPLY_NO_CONTENT] = { MHD_HTTP_NO_CONTENT, METRICS_R_OTHER, NULL },
	[REPLY_ARTIFACT] = { MHD_HTTP_OK, METRICS_R_FILE, "public" },
	[REPLY_PARTIAL] = { MHD_HTTP_PARTIAL_CONTENT, METRICS_R_FILE,
	    "public" },
	[REPLY_NOT_MODIFIED] = { MHD_HTTP_NOT_MODIFIED, METRICS_R_FILE,
	    "public" },
	[REPLY_SECTION] = { MHD_HTTP_OK, METRICS_R_SECTION, "public" },
	[REPLY_CREATED] = { MHD_HTTP_CREATED, METRICS_R_OTHER, NULL },
	[REPLY_FOUND] = { MHD_HTTP_FOUND, METRICS_R_OTHER, NULL },
	[REPLY_BAD_REQUEST] = { MHD_HTTP_BAD_REQUEST, METRICS_R_ERROR, NULL },
	[REPLY_UNAUTHORIZED] = { MHD_HTTP_UNAUTHORIZED, METRICS_R_ERROR,
	    NULL },
	[REPLY_FORBIDDEN] = { MHD_HTTP_FORBIDDEN, METRICS_R_ERROR, NULL },
	[REPLY_NOT_FOUND] = { MHD_HTTP_NOT_FOUND, METRICS_R_NOTFOUND, NULL },
	[REPLY_NEGATIVE] = { MHD_HTTP_NOT_FOUND, METRICS_R_NEGATIVE, NULL },
	[REPLY_NO_PAGE] = { MHD_HTTP_NOT_FOUND, METRICS_R_ERROR, NULL },
	[REPLY_METHOD] = { MHD_HTTP_METHOD_NOT_ALLOWED, METRICS_R_ERROR,
	    NULL },
	[REPLY_TOO_BIG] = { MHD_HTTP_NOT_ACCEPTABLE, METRICS_R_ERROR, NULL },
	[REPLY_CONFLICT] = { MHD_HTTP_CONFLICT, METRICS_R_ERROR, NULL },
	[REPLY_TOO_LARGE] = { MHD_HTTP_CONTENT_TOO_LARGE, METRICS_R_ERROR,
	    NULL },
	[REPLY_RANGE] = { MHD_HTTP_RANGE_NOT_SATISFIABLE, METRICS_R_ERROR,
	    NULL },
	[REPLY_UNPROCESSABLE] = { MHD_HTTP_UNPROCESSABLE_CONTENT,
	    METRICS_R_ERROR, NULL },
	[REPLY_INTERNAL] = { MHD_HTTP_INTERNAL_SERVER_ERROR, METRICS_R_ERROR,
	    NULL },
	[REPLY_NOT_IMPLEMENTED] = { MHD_HTTP_NOT_IMPLEMENTED,
	    METRICS_R_ERROR, NULL },
	[REPLY_BUSY] = { MHD_HTTP_SERVICE_UNAVAILABLE, METRICS_R_ERROR,
	    NULL },
	[REPLY_UNAVAILABLE] = { MHD_HTTP_SERVICE_UNAVAILABLE, METRICS_R_ERROR,
	    NULL },
	[REPLY_TRANSIENT] = { MHD_HTTP_SERVICE_UNAVAILABLE,
	    METRICS_R_TRANSIENT, NULL },
	[REPLY_NO_SPACE] = { MHD_HTTP_INSUFFICIENT_STORAGE, METRICS_R_ERROR,
	    NULL },
	[REPLY_RATE] = { MHD_HTTP_TOO_MANY_REQUESTS, METRICS_R_ERROR, NULL },
};

/* --cors: a page from the origin may read every answer, and the headers
 * a debuginfod client reads; a preflight says what it may send. */
static void
cors_headers(const struct req *r, enum reply what, struct MHD_Response *resp)
{
	MHD_add_response_header(resp,
	    MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, r->cors);
	MHD_add_response_header(resp, "Access-Control-Expose-Headers",
	    "X-DEBUGINFOD-SIZE, X-DEBUGINFOD-FILE, X-DEBUGINFOD-ARCHIVE, "
	    "X-DEBUGINFOD-IMASIGNATURE, X-Symhub-Quality, ETag, "
	    "Content-Encoding, Content-Range, Retry-After");
	if (what != REPLY_NO_CONTENT)
		return;
	MHD_add_response_header(resp, "Access-Control-Allow-Methods",
	    "GET, HEAD, POST, OPTIONS");
	MHD_add_response_header(resp, "Access-Control-Allow-Headers",
	    "Cache-Control, Content-Type, Range, If-None-Match, "
	    "If-Modified-Since, X-DEBUGINFOD-MAXSIZE");
	MHD_add_response_header(resp, "Access-Control-Max-Age", "86400");
}

enum MHD_Result
reply_response(struct req *r, enum reply what, struct MHD_Response *resp,
    uint64_t bytes, const char *how)
{
	enum MHD_Result	 ret;
	char		 n[16];

	if (resp == NULL)
		return MHD_NO;
	/* What a token was shown for is no shared cache's to keep. */
	if (replies[what].cache_control != NULL)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
		    r->tok.name[0] != '\0' ? "private" :
		    replies[what].cache_control);
	/* Both schemes: a browser or curl offers Basic, others Bearer. */
	if (what == REPLY_UNAUTHORIZED) {
		MHD_add_response_header(resp,
		    MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		    "Bearer realm=\"symhub\"");
		MHD_add_response_header(resp,
		    MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		    "Basic realm=\"symhub\", charset=\"UTF-8\"");
	}
	if (what == REPLY_RATE) {
		snprintf(n, sizeof(n), "%u", r->retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, n);
	}
	if (what == REPLY_METHOD)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
		    route_allow(r->rt));
	if (what == REPLY_BUSY || what == REPLY_TRANSIENT)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	if (r->cors != NULL)
		cors_headers(r, what, resp);
	r->status = replies[what].status;
	r->result = replies[what].result;
	r->bytes = bytes;
	r->how = how;
	r->phase = PHASE_ANSWERED;
	ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result
reply_text(struct req *r, enum reply what, const char *msg, const char *how)
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
	return reply_response(r, what, resp, (uint64_t)n, how);
}

enum MHD_Result
reply_textf(struct req *r, enum reply what, const char *how,
    const char *fmt, ...)
{
	va_list	ap;
	char	msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return reply_text(r, what, msg, how);
}

struct MHD_Response *
reply_buffer(void *buf, size_t len, const char *ctype)
{
	struct MHD_Response	*resp;

	resp = MHD_create_response_from_buffer(len, buf,
	    MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(buf);
		return NULL;
	}
	/* buf now owned by MHD */
	if (ctype != NULL)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		    ctype);
	return resp;
}

/*
 * The entity tag of rec: its SHA-256 where the store has it (a blob),
 * else the identity of the file it refers to (size, mtime and inode, as
 * nginx makes them), which changes whenever the file does.  Empty when
 * neither is known (bytes an upstream is sending, not yet hashed).
 */
static void
etag(const struct cache_record *rec, char *buf, size_t len)
{
	static const unsigned char zero[32];
	char hex[65];

	buf[0] = '\0';
	if (memcmp(rec->digest, zero, sizeof(zero)) != 0) {
		hex_encode(rec->digest, 16, hex);
		snprintf(buf, len, "\"%s\"", hex);
	} else if (rec->flags & (CACHE_F_EXTERNAL | CACHE_F_MEMBER))
		snprintf(buf, len, "\"f%" PRIx64 "-%" PRIx64 "-%" PRIx64 "\"",
		    rec->size, (uint64_t)rec->mtime_ns, rec->ino);
}

static time_t
last_modified(const struct cache_record *rec)
{
	return (time_t)(rec->last_modified > 0 ? rec->last_modified :
	    rec->stored > 0 ? rec->stored : clock_wall_s());
}

static __thread time_t	lm_t = -1;
static __thread char	lm_buf[40];

void
reply_artifact_headers(struct MHD_Response *resp,
    const struct cache_record *rec)
{
	char		buf[96];
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
	/* The same file is asked again and again: its date is made once a
	 * thread, not per answer. */
	t = last_modified(rec);
	if (t != lm_t) {
		gmtime_r(&t, &tm);
		strftime(lm_buf, sizeof(lm_buf), "%a, %d %b %Y %H:%M:%S GMT",
		    &tm);
		lm_t = t;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_LAST_MODIFIED, lm_buf);
	etag(rec, buf, sizeof(buf));
	if (buf[0] != '\0')
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, buf);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
}

/* Is the client's copy current: If-None-Match names tag (rec's ETag, or
 * its coded copy's), or, without that header, If-Modified-Since is no
 * older than Last-Modified? */
static int
not_modified(struct req *r, const struct cache_record *rec, const char *tag)
{
	const char	*inm, *ims;
	time_t		 since;

	if ((inm = req_header(r, MHD_HTTP_HEADER_IF_NONE_MATCH)) != NULL)
		return tag[0] != '\0' && webapi_etag_match(inm, tag);
	if ((ims = req_header(r, MHD_HTTP_HEADER_IF_MODIFIED_SINCE)) == NULL)
		return 0;
	since = curl_getdate(ims, NULL);
	return since > 0 && last_modified(rec) <= since;
}

/* Does If-Range, when sent, still name this representation?  A date is
 * taken only as the exact Last-Modified (a strong validator). */
static int
if_range_holds(struct req *r, const struct cache_record *rec)
{
	const char	*ir = req_header(r, MHD_HTTP_HEADER_IF_RANGE);
	char		 tag[96];

	if (ir == NULL)
		return 1;
	ir += strspn(ir, " \t");
	if (*ir == '"') {
		etag(rec, tag, sizeof(tag));
		return tag[0] != '\0' && strcmp(ir, tag) == 0;
	}
	return curl_getdate(ir, NULL) == last_modified(rec);
}

const char *
req_header(const struct req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

uint64_t
req_maxsize(const struct req *r)
{
	const char		*v;
	char			*end;
	unsigned long long	 n;

	if ((v = req_header(r, "X-DEBUGINFOD-MAXSIZE")) == NULL)
		return UINT64_MAX;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || end == v || *v == '-')
		return UINT64_MAX;
	return n;
}

void
req_peer(const struct req *r, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci;

	ci = MHD_get_connection_info(r->conn,
	    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && ci->client_addr != NULL)
		getnameinfo(ci->client_addr,
		    ci->client_addr->sa_family == AF_INET6 ?
		    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
		    buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST);
}

int
reply_refused(struct req *r, uint64_t size, enum MHD_Result *ret)
{
	if (size == 0) {
		*ret = reply_text(r, REPLY_NOT_FOUND, "empty artifact",
		    "empty");
		return 1;
	}
	if (size > req_maxsize(r)) {
		*ret = reply_text(r, REPLY_TOO_BIG,
		    "artifact larger than X-DEBUGINFOD-MAXSIZE", "too-big");
		return 1;
	}
	return 0;
}

/* What may be sent compressed says that it depends on Accept-Encoding,
 * for the caches in between. */
static void
vary(const struct http *h, struct MHD_Response *resp,
    const struct cache_key *key)
{
	if (h->enc != NULL && (key->kind == CACHE_DEBUGINFO ||
	    key->kind == CACHE_EXECUTABLE))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY,
		    MHD_HTTP_HEADER_ACCEPT_ENCODING);
}

enum MHD_Result
reply_coded(struct http *h, struct req *r, const struct cache_key *key,
    const struct cache_record *rec, const struct cache_record *erec, int fd,
    unsigned coding)
{
	struct MHD_Response	*resp;
	enum MHD_Result		 ret;
	char			 tag[96], ctag[128], level[16];
	size_t			 n;
	int			 nm;

	if (reply_refused(r, rec->size, &ret)) {
		close(fd);
		return ret;
	}
	cache_touch(h->c, key, rec, clock_wall_s());
	/* Another representation, another tag: W/"TAG-zstd", weak, for the
	 * coded bytes change when the copy is made again at a better level
	 * (the content they decode to does not). */
	etag(rec, tag, sizeof(tag));
	ctag[0] = '\0';
	if ((n = strlen(tag)) >= 2)
		snprintf(ctag, sizeof(ctag), "W/%.*s-%s\"", (int)(n - 1), tag,
		    encode_name(coding));
	if ((nm = not_modified(r, rec, ctag))) {
		close(fd);
		resp = MHD_create_response_from_buffer(0, NULL,
		    MHD_RESPMEM_PERSISTENT);
	} else
		resp = MHD_create_response_from_fd64(erec->size, fd);
	if (resp == NULL) {
		close(fd);
		return MHD_NO;
	}
	/* X-DEBUGINFOD-SIZE stays the file's size, as libdebuginfod
	 * expects; Content-Length is the coded size. */
	reply_artifact_headers(resp, rec);
	MHD_del_response_header(resp, MHD_HTTP_HEADER_ETAG, tag);
	MHD_del_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	if (ctag[0] != '\0')
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, ctag);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING,
	    encode_name(coding));
	/* The level the copy was made at: a hub that keeps it (upzstd.h)
	 * need not make it again at the level it would itself. */
	if (erec->quality > 0) {
		snprintf(level, sizeof(level), "%u", (unsigned)erec->quality);
		MHD_add_response_header(resp, "X-Symhub-Level", level);
	}
	vary(h, resp, key);
	if (nm)
		return reply_response(r, REPLY_NOT_MODIFIED, resp, 0,
		    "not-modified");
	encode_count(h->enc, coding, erec->size);
	return reply_response(r, REPLY_ARTIFACT, resp, erec->size,
	    coding == WEBAPI_ENC_ZSTD ? "hit zstd" : "hit gzip");
}

enum MHD_Result
reply_hot(struct http *h, struct req *r, const struct cache_key *key,
    const struct cache_record *rec, struct hot_bytes *b)
{
	struct MHD_Response	*resp;
	enum MHD_Result		 ret;
	size_t			 size = hot_size(b);

	if (reply_refused(r, size, &ret)) {
		hot_release(b);
		return ret;
	}
	cache_touch(h->c, key, rec, clock_wall_s());
	resp = MHD_create_response_from_buffer_with_free_callback_cls(size,
	    (void *)hot_data(b), hot_release, b);
	if (resp == NULL) {
		hot_release(b);
		return MHD_NO;
	}
	reply_artifact_headers(resp, rec);
	vary(h, resp, key);
	return reply_response(r, REPLY_ARTIFACT, resp, size, "hit");
}

enum MHD_Result
reply_fd(struct http *h, struct req *r, const struct cache_key *key,
    const struct cache_record *rec, int fd)
{
	struct MHD_Response	*resp;
	enum MHD_Result		 ret;

	enum reply		 what = REPLY_ARTIFACT;
	struct hot_bytes	*b;
	uint64_t		 off = 0, len = rec->size;
	char			 buf[96];
	int			 rc;

	if (reply_refused(r, rec->size, &ret)) {
		close(fd);
		return ret;
	}
	cache_touch(h->c, key, rec, clock_wall_s());
	etag(rec, buf, sizeof(buf));
	if (not_modified(r, rec, buf)) {
		close(fd);
		resp = MHD_create_response_from_buffer(0, NULL,
		    MHD_RESPMEM_PERSISTENT);
		if (resp == NULL)
			return MHD_NO;
		reply_artifact_headers(resp, rec);
		vary(h, resp, key);
		return reply_response(r, REPLY_NOT_MODIFIED, resp, 0,
		    "not-modified");
	}
	rc = if_range_holds(r, rec) ? webapi_range(req_header(r,
	    MHD_HTTP_HEADER_RANGE), rec->size, &off, &len) : 0;
	if (rc == -ENODATA) {
		close(fd);
		snprintf(buf, sizeof(buf), "bytes */%" PRIu64, rec->size);
		resp = MHD_create_response_from_buffer(0, NULL,
		    MHD_RESPMEM_PERSISTENT);
		if (resp == NULL)
			return MHD_NO;
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE,
		    buf);
		return reply_response(r, REPLY_RANGE, resp, 0, "range");
	}
	if (rc == 1)
		what = REPLY_PARTIAL;
	else if (r->ask.fetches == 0 && (b = hot_keep(h->hot, key, rec, fd)) !=
	    NULL)
		return reply_hot(h, r, key, rec, b);
	resp = MHD_create_response_from_fd_at_offset64(len, fd, off);
	if (resp == NULL) {
		close(fd);
		return MHD_NO;
	}
	/* fd now owned by MHD */
	reply_artifact_headers(resp, rec);
	vary(h, resp, key);
	if (what == REPLY_PARTIAL) {
		snprintf(buf, sizeof(buf), "bytes %" PRIu64 "-%" PRIu64
		    "/%" PRIu64, off, off + len - 1, rec->size);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_RANGE,
		    buf);
	}
	return reply_response(r, what, resp, len,
	    r->ask.fetches ? r->how_buf : "hit");
}

/* Send r's client a TCP reset, now. */
static void
rst(struct req *r)
{
	const union MHD_ConnectionInfo	*ci;
	struct linger			 lg = { 1, 0 };
	struct sockaddr			 unspec = { .sa_family = AF_UNSPEC };

	ci = MHD_get_connection_info(r->conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);
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
	r->reset = 1;
}

enum MHD_Result
reply_reset(struct req *r)
{
	rst(r);
	r->how = "reset";
	r->phase = PHASE_ANSWERED;
	return MHD_NO;
}

/* A stream's reader: the request lives while libmicrohttpd reads. */
struct sreader {
	struct fetch_stream	*s;
	struct fetch_reader	 rd;
	struct req		*r;
	struct encode		*enc;
	uint64_t		 out;
	int			 ended;
	/* zstd: the stream's one coder's bytes (fetch_stream_zstd()), or
	 * the upstream's zstd as it came (fwd); else as it is. */
	int			 zstd, fwd;
};

static void
sreader_suspend(void *ctx)
{
	MHD_suspend_connection(ctx);
}

static void
sreader_resume(void *ctx)
{
	MHD_resume_connection(ctx);
}

/* The file failed its checks, or the upstream cut or stalled: the
 * client is reset short of its Content-Length (or, coded, of the last
 * chunk and of the frame's end), and libdebuginfod keeps nothing and
 * asks again. */
static ssize_t
sreader_cut(struct sreader *sr)
{
	rst(sr->r);
	sr->r->how = "stream cut";
	return MHD_CONTENT_READER_END_WITH_ERROR;
}

static ssize_t
sreader_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sreader	*sr = cls;
	ssize_t		 n;

	/* Nothing yet: suspended until more is let out (no busy loop). */
	if ((n = fetch_stream_read(sr->s, pos, buf, max, &sr->rd)) >= 0)
		return n;
	if (n == -ENODATA)
		return MHD_CONTENT_READER_END_OF_STREAM;
	return sreader_cut(sr);
}

/* The same, coded: the stream's zstd (fetch_stream_read_zstd()), or
 * another hub's as it came (fetch_stream_read_coded()).  Either ends
 * its frame only once the file is verified. */
static ssize_t
sreader_read_coded(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sreader	*sr = cls;
	ssize_t		 n;

	n = sr->fwd ? fetch_stream_read_coded(sr->s, pos, buf, max, &sr->rd) :
	    fetch_stream_read_zstd(sr->s, pos, buf, max, &sr->rd);
	if (n >= 0) {
		sr->out += (uint64_t)n;
		sr->r->bytes = sr->out;
		return n;
	}
	if (n == -ENODATA) {
		sr->ended = 1;
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	return sreader_cut(sr);
}

static void
sreader_free(void *cls)
{
	struct sreader *sr = cls;

	if ((sr->zstd || sr->fwd) && sr->ended)
		encode_count(sr->enc, WEBAPI_ENC_ZSTD, sr->out);
	fetch_stream_release(sr->s, &sr->rd);
	free(sr);
}

enum MHD_Result
reply_stream(struct http *h, struct req *r, const struct cache_key *key,
    const struct cache_record *rec, struct fetch_stream *s, unsigned coding)
{
	struct MHD_Response	*resp;
	struct sreader		*sr;
	enum MHD_Result		 ret;
	size_t			 n;

	if (reply_refused(r, rec->size, &ret)) {
		fetch_stream_release(s, NULL);
		return ret;
	}
	if ((sr = calloc(1, sizeof(*sr))) == NULL) {
		fetch_stream_release(s, NULL);
		return MHD_NO;
	}
	sr->s = s;
	sr->r = r;
	sr->enc = h->enc;
	sr->rd.suspend = sreader_suspend;
	sr->rd.resume = sreader_resume;
	sr->rd.ctx = r->conn;
	/*
	 * zstd, as a warm hit would be, to a client that asks with GET over
	 * HTTP/1.1: the coded length is not known before the end, so the
	 * answer is chunked, and only the last chunk says it is whole (an
	 * HTTP/1.0 answer would end with the connection, cut or not).
	 */
	if (coding == WEBAPI_ENC_ZSTD && r->http11 &&
	    strcmp(r->method, MHD_HTTP_METHOD_GET) == 0) {
		/* Another hub's coded bytes need no coding again. */
		if (fetch_stream_coded(s))
			sr->fwd = 1;
		else if (fetch_stream_zstd(s, (int)h->cfg->compress_level) == 0)
			sr->zstd = 1;	/* else sent as it is */
	}
	/* The size is the one announced: a client that gets it all got
	 * the whole file, verified. */
	if (sr->fwd || sr->zstd)
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN,
		    128 * 1024, sreader_read_coded, sr, sreader_free);
	else
		resp = MHD_create_response_from_callback(rec->size,
		    128 * 1024, sreader_read, sr, sreader_free);
	if (resp == NULL) {
		sreader_free(sr);
		return MHD_NO;
	}
	/* s now owned by resp */
	reply_artifact_headers(resp, rec);
	vary(h, resp, key);
	if (!sr->zstd && !sr->fwd)
		return reply_response(r, REPLY_ARTIFACT, resp, rec->size,
		    r->how_buf);
	/* X-DEBUGINFOD-SIZE stays the file's, as with a stored copy. */
	MHD_del_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING,
	    encode_name(coding));
	n = strlen(r->how_buf);
	snprintf(r->how_buf + n, sizeof(r->how_buf) - n, " zstd");
	return reply_response(r, REPLY_ARTIFACT, resp, 0, r->how_buf);
}

enum MHD_Result
reply_transient(struct req *r)
{
	/* Not through another server: elfutils' debuginfod forwards
	 * User-Agent (empty or not: libcurl drops an empty one) and always
	 * adds X-Forwarded-For, and takes an HTTP error from upstream for
	 * "not found" and caches it, where it answers a reset with a 503 it
	 * does not cache. */
	if (req_header(r, MHD_HTTP_HEADER_USER_AGENT) == NULL &&
	    req_header(r, "X-Forwarded-For") == NULL)
		return reply_text(r, REPLY_TRANSIENT, "no definite answer from "
		    "the upstreams: ask again, or ask another server",
		    r->ask.fetches ? r->how_buf : "transient");
	return reply_reset(r);
}

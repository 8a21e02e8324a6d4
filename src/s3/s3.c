/*
 * s3: see s3.h and doc/s3.md.
 *
 * Connections: a pool of idle easy handles under a mutex.  Each easy
 * handle keeps its own connection open between requests, and
 * curl_easy_reset() keeps it, so a worker that borrows a handle reuses a
 * warm connection without any lock held during the transfer.  A CURLSH
 * sharing one connection cache would do the same with a lock taken on
 * every connection lookup and libcurl's own caveats about sharing
 * connections between threads; a handle per call from a pool is the
 * plainer contract.  Handles beyond IDLE_MAX are closed when returned.
 *
 * libcurl 7.88 signs with SigV4 but leaves three things to us: the
 * x-amz-content-sha256 header (S3 requires it), the canonical query (it
 * signs the query as given, so parameters must come sorted and
 * percent-encoded as SigV4 encodes them: '/' too) and the canonical path
 * (as given: keys are encoded here, and CURLOPT_PATH_AS_IS keeps libcurl
 * from resolving "." and ".." segments that are part of a key).
 */
#include <sys/types.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "s3.h"
#include "s3conf.h"
#include "s3xml.h"
#include "base/buf.h"
#include "base/hex.h"

#define IDLE_MAX	16
#define ERRBODY_MAX	(64 << 10)	/* an error's XML kept */
#define LISTBODY_MAX	(16 << 20)	/* a listing page: 1000 keys of 1 KiB */
#define UNSIGNED	"UNSIGNED-PAYLOAD"

struct s3 {
	struct s3_config	 cfg;
	char			 sigv4[64];	/* "aws:amz:REGION:s3" */
	char			 base[sizeof(((struct s3_config *)0)->endpoint) +
				    sizeof(((struct s3_config *)0)->bucket) + 2];
	pthread_mutex_t		 lock;
	int			 lock_ok, global_ok;
	CURL			*idle[IDLE_MAX];	/* under lock */
	int			 nidle;
	atomic_uint_fast64_t	 requests, connects, failures, up, down;
};

/* One request and its answer. */
struct req {
	struct s3		*s3;
	CURL			*c;
	const char		*method;
	struct buf		 url;
	struct curl_slist	*hdrs;
	long			 status;	/* of the last status line */
	int			 cberr;		/* why a callback aborted */
	char			 errbuf[CURL_ERROR_SIZE];
	/* a PUT's body */
	int			 fd;
	uint64_t		 size, off;
	EVP_MD_CTX		*md;
	unsigned char		 want[32];
	/* a GET's body, when 2xx */
	int			(*sink)(void *, const void *, size_t);
	void			*ctx;
	uint64_t		 got;
	/* a listing's body when 2xx, an error's otherwise */
	int			 keep;
	struct buf		 body;
	/* the answer's headers */
	struct s3_info		*info;
	int64_t			 clen;		/* -1: none */
};

static _Thread_local struct s3_status last;

const struct s3_status *
s3_last(void)
{
	return &last;
}

static void
last_reset(void)
{
	last.http = 0;
	last.code[0] = last.message[0] = '\0';
}

static void
last_message(const char *m)
{
	snprintf(last.message, sizeof(last.message), "%s", m);
}

/* ---- names ---- */

/* Length of the UTF-8 character at s (max bytes left), 0 when invalid,
 * a control character, or one XML 1.0 cannot hold. */
static size_t
utf8_char(const unsigned char *s, size_t max)
{
	uint32_t	cp;
	size_t		n, i;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f ? 1 : 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > max)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

static int
unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~';
}

/* Append s percent-encoded as SigV4 wants (uppercase hex). */
static void
pct(struct buf *b, const char *s, int keep_slash)
{
	static const char	 up[] = "0123456789ABCDEF";
	const unsigned char	*p;
	char			 e[3];

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (unreserved(*p) || (keep_slash && *p == '/')) {
			buf_add(b, p, 1);
		} else {
			e[0] = '%';
			e[1] = up[*p >> 4];
			e[2] = up[*p & 15];
			buf_add(b, e, 3);
		}
	}
}

int
s3_key_check(const char *key)
{
	const unsigned char	*s = (const unsigned char *)key;
	size_t			 len, i, n;

	len = strlen(key);
	if (len == 0 || len > S3_KEY_MAX)
		return -EINVAL;
	for (i = 0; i < len; i += n)
		if ((n = utf8_char(s + i, len - i)) == 0)
			return -EINVAL;
	return 0;
}

int
s3_key_encode(const char *key, int keep_slash, char *out, size_t outsz)
{
	struct buf	b = {0};
	int		rc;

	if ((rc = s3_key_check(key)) < 0)
		return rc;
	pct(&b, key, keep_slash);
	if ((rc = b.err) == 0 && b.len >= outsz)
		rc = -ENAMETOOLONG;
	if (rc == 0) {
		memcpy(out, b.p, b.len);
		out[b.len] = '\0';
		rc = (int)b.len;
	}
	buf_free(&b);
	return rc;
}

/* ---- errors ---- */

int
s3_errno_http(long status, const char *code)
{
	if (status >= 200 && status < 300)
		return 0;
	/* S3 sends 400 when it gave up waiting for the body: transient. */
	if (status == 400 && code != NULL && strcmp(code, "RequestTimeout") == 0)
		return -EAGAIN;
	switch (status) {
	case 400:
		return -EINVAL;
	case 403:
		return -EACCES;
	case 404:
		return -ENOENT;
	case 412:
		return -EEXIST;
	case 501:
		return -ENOTSUP;
	case 429:
	case 500:
	case 502:
	case 503:
	case 504:
		return -EAGAIN;
	default:
		return -EPROTO;
	}
}

static int
curl_errno(CURLcode res)
{
	switch (res) {
	case CURLE_OK:
		return 0;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return -ECONNREFUSED;
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return -ECONNRESET;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_URL_MALFORMAT:
		return -EINVAL;
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
		return -EPROTO;
	default:
		return -EIO;
	}
}

/* ---- the pool ---- */

static CURL *
borrow(struct s3 *s3)
{
	CURL *c = NULL;

	pthread_mutex_lock(&s3->lock);
	if (s3->nidle > 0)
		c = s3->idle[--s3->nidle];
	pthread_mutex_unlock(&s3->lock);
	return c != NULL ? c : curl_easy_init();
}

/* Give c back; a handle whose request failed in transport is closed, so
 * that no doubtful connection is reused. */
static void
give_back(struct s3 *s3, CURL *c, int healthy)
{
	if (c == NULL)
		return;
	if (healthy) {
		curl_easy_reset(c);
		pthread_mutex_lock(&s3->lock);
		if (s3->nidle < IDLE_MAX) {
			s3->idle[s3->nidle++] = c;
			c = NULL;
		}
		pthread_mutex_unlock(&s3->lock);
	}
	curl_easy_cleanup(c);
}

void
s3_free(struct s3 *s3)
{
	int i;

	if (s3 == NULL)
		return;
	for (i = 0; i < s3->nidle; i++)
		curl_easy_cleanup(s3->idle[i]);
	if (s3->lock_ok)
		pthread_mutex_destroy(&s3->lock);
	if (s3->global_ok)
		curl_global_cleanup();
	OPENSSL_cleanse(s3->cfg.secret_key, sizeof(s3->cfg.secret_key));
	free(s3);
}

int
s3_create(const struct s3_config *cfg, struct s3 **out)
{
	struct s3	*s3;
	const char	*why;
	int		 rc = 0;

	*out = NULL;
	if (s3conf_check(cfg, &why) < 0)
		return -EINVAL;
	if ((s3 = calloc(1, sizeof(*s3))) == NULL)
		return -ENOMEM;
	s3->cfg = *cfg;
	if (s3->cfg.region[0] == '\0')
		snprintf(s3->cfg.region, sizeof(s3->cfg.region), "us-east-1");
	if (s3->cfg.connect_ms <= 0)
		s3->cfg.connect_ms = 5000;
	if (s3->cfg.stall_s <= 0)
		s3->cfg.stall_s = 30;
	if (s3->cfg.timeout_ms < 0)
		s3->cfg.timeout_ms = 0;
	if (s3->cfg.list_page < 0)
		s3->cfg.list_page = 0;
	snprintf(s3->sigv4, sizeof(s3->sigv4), "aws:amz:%s:s3",
	    s3->cfg.region);
	snprintf(s3->base, sizeof(s3->base), "%s/%s", s3->cfg.endpoint,
	    s3->cfg.bucket);
	if (pthread_mutex_init(&s3->lock, NULL) != 0) {
		rc = -ENOMEM;
		goto out;
	}
	s3->lock_ok = 1;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		rc = -ENOMEM;
		goto out;
	}
	s3->global_ok = 1;
out:
	if (rc < 0)
		s3_free(s3);
	else
		*out = s3;
	return rc;
}

void
s3_stats(const struct s3 *s3, struct s3_stats *out)
{
	out->requests = atomic_load_explicit(&s3->requests,
	    memory_order_relaxed);
	out->connects = atomic_load_explicit(&s3->connects,
	    memory_order_relaxed);
	out->failures = atomic_load_explicit(&s3->failures,
	    memory_order_relaxed);
	out->bytes_up = atomic_load_explicit(&s3->up, memory_order_relaxed);
	out->bytes_down = atomic_load_explicit(&s3->down, memory_order_relaxed);
}

/* ---- callbacks ---- */

static void
info_reset(struct s3_info *info)
{
	info->size = 0;
	info->mtime = -1;
	info->etag[0] = '\0';
	memset(info->sha256, 0, sizeof(info->sha256));
	info->meta[0] = '\0';
}

const char *
s3_info_meta(const struct s3_info *info, const char *name)
{
	const char *p = info->meta;

	while (*p != '\0') {
		if (strcmp(p, name) == 0)
			return p + strlen(p) + 1;
		p += strlen(p) + 1;
		p += strlen(p) + 1;
	}
	return NULL;
}

static void
meta_add(struct s3_info *info, const char *name, size_t nlen,
    const char *val, size_t vlen)
{
	size_t used = 0, i;
	char *p = info->meta;

	while (p[used] != '\0') {
		used += strlen(p + used) + 1;
		used += strlen(p + used) + 1;
	}
	/* name, NUL, value, NUL, and the final empty name */
	if (nlen == 0 || nlen + vlen + 3 > sizeof(info->meta) - used)
		return;
	for (i = 0; i < nlen; i++)
		p[used + i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ?
		    name[i] - 'A' + 'a' : name[i]);
	p[used + nlen] = '\0';
	memcpy(p + used + nlen + 1, val, vlen);
	p[used + nlen + 1 + vlen] = '\0';
	p[used + nlen + vlen + 2] = '\0';
}

static int
parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t	v = 0;
	size_t		i;

	if (len == 0 || len > 19)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

static size_t
on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct req	*r = arg;
	size_t		 len = sz * n, nlen, vlen;
	const char	*v;
	char		 date[128];
	uint64_t	 u;

	/* A status line starts each answer (a 100 Continue comes first). */
	if (len >= 9 && strncmp(p, "HTTP/", 5) == 0) {
		v = memchr(p, ' ', len);
		r->status = 0;
		if (v != NULL && (size_t)(v - p) + 4 <= len &&
		    parse_u64(v + 1, 3, &u) == 0)
			r->status = (long)u;
		info_reset(r->info);
		r->clen = -1;
		return len;
	}
	if ((v = memchr(p, ':', len)) == NULL)
		return len;
	nlen = (size_t)(v - p);
	v++;
	vlen = len - nlen - 1;
	while (vlen > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		vlen--;
	}
	while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' ||
	    v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
		vlen--;
	if (nlen == 14 && strncasecmp(p, "content-length", 14) == 0) {
		if (parse_u64(v, vlen, &u) == 0 && u <= INT64_MAX)
			r->clen = (int64_t)u;
	} else if (nlen == 4 && strncasecmp(p, "etag", 4) == 0) {
		if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
			v++;
			vlen -= 2;
		}
		if (vlen < sizeof(r->info->etag)) {
			memcpy(r->info->etag, v, vlen);
			r->info->etag[vlen] = '\0';
		}
	} else if (nlen == 13 && strncasecmp(p, "last-modified", 13) == 0) {
		if (vlen < sizeof(date)) {
			memcpy(date, v, vlen);
			date[vlen] = '\0';
			r->info->mtime = (int64_t)curl_getdate(date, NULL);
		}
	} else if (nlen > 11 && strncasecmp(p, "x-amz-meta-", 11) == 0) {
		meta_add(r->info, p + 11, nlen - 11, v, vlen);
	}
	return len;
}

static size_t
on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct req	*r = arg;
	size_t		 len = sz * n;
	int		 ok = r->status >= 200 && r->status < 300, rc;

	if (ok && r->sink != NULL) {
		if ((rc = r->sink(r->ctx, p, len)) < 0) {
			r->cberr = rc;
			return 0;
		}
		if (EVP_DigestUpdate(r->md, p, len) != 1) {
			r->cberr = -ENOMEM;
			return 0;
		}
		r->got += len;
		return len;
	}
	if (ok && !r->keep)
		return len;
	if (ok && len > LISTBODY_MAX - r->body.len) {
		r->cberr = -EPROTO;
		last_message("listing page past 16 MiB");
		return 0;
	}
	/* An error's body: what fits is enough to read its Code. */
	if (!ok && len > ERRBODY_MAX - r->body.len)
		return len;
	if (buf_add(&r->body, p, len) < 0) {
		r->cberr = -ENOMEM;
		return 0;
	}
	return len;
}

static int
md_restart(struct req *r)
{
	return EVP_DigestInit_ex(r->md, EVP_sha256(), NULL) == 1 ? 0 : -ENOMEM;
}

static size_t
on_read(char *p, size_t sz, size_t n, void *arg)
{
	struct req	*r = arg;
	size_t		 room = sz * n;
	unsigned char	 h[32];
	ssize_t		 got;

	if (r->off >= r->size)
		return 0;
	if (room > r->size - r->off)
		room = (size_t)(r->size - r->off);
	do
		got = pread(r->fd, p, room, (off_t)r->off);
	while (got < 0 && errno == EINTR);
	if (got <= 0) {
		r->cberr = got < 0 ? -errno : -EIO;
		last_message(got < 0 ? "reading the file failed" :
		    "the file is shorter than the size given");
		return CURL_READFUNC_ABORT;
	}
	if (EVP_DigestUpdate(r->md, p, (size_t)got) != 1) {
		r->cberr = -ENOMEM;
		return CURL_READFUNC_ABORT;
	}
	r->off += (uint64_t)got;
	/* The last bytes go only if all of them hash as promised: else the
	 * server sees a short body and stores nothing. */
	if (r->off == r->size) {
		if (EVP_DigestFinal_ex(r->md, h, NULL) != 1) {
			r->cberr = -ENOMEM;
			return CURL_READFUNC_ABORT;
		}
		if (memcmp(h, r->want, sizeof(h)) != 0) {
			r->cberr = -EIO;
			last_message("the file does not hash to the SHA-256 "
			    "given (changed while sent?)");
			return CURL_READFUNC_ABORT;
		}
	}
	return (size_t)got;
}

/* libcurl rewinds to send the body again (a reused connection that had
 * died): start the hash over. */
static int
on_seek(void *arg, curl_off_t offset, int origin)
{
	struct req *r = arg;

	if (origin != SEEK_SET || offset != 0 || md_restart(r) < 0)
		return CURL_SEEKFUNC_CANTSEEK;
	r->off = 0;
	return CURL_SEEKFUNC_OK;
}

/* ---- one request ---- */

static int
add_header(struct req *r, const char *name, const char *value)
{
	struct curl_slist	*l;
	struct buf		 b = {0};

	buf_printf(&b, "%s: %s", name, value);
	buf_add(&b, "", 1);
	if (b.err != 0)
		return b.err;
	l = curl_slist_append(r->hdrs, (char *)b.p);
	buf_free(&b);
	if (l == NULL)
		return -ENOMEM;
	r->hdrs = l;
	return 0;
}

/* The URL of KEY (or of the bucket, key NULL), into r->url. */
static int
req_url(struct req *r, const char *key)
{
	int rc;

	buf_puts(&r->url, r->s3->base);
	if (key != NULL) {
		if ((rc = s3_key_check(key)) < 0) {
			last_message("key refused (empty, too long, not UTF-8, "
			    "or a control character)");
			return rc;
		}
		buf_add(&r->url, "/", 1);
		pct(&r->url, key, 1);
	}
	return r->url.err;
}

static void
req_init(struct req *r, struct s3 *s3, const char *method,
    struct s3_info *info)
{
	memset(r, 0, sizeof(*r));
	r->s3 = s3;
	r->method = method;
	r->fd = -1;
	r->info = info;
	r->clen = -1;
	info_reset(info);
	last_reset();
}

static void
req_done(struct req *r)
{
	buf_free(&r->url);
	buf_free(&r->body);
	curl_slist_free_all(r->hdrs);
	EVP_MD_CTX_free(r->md);
}

/* What every request to the bucket is: its URL, path as written (keys
 * may hold "." and ".." segments), signed by libcurl with the keys, and
 * the headers hdrs (x-amz-content-sha256 among them).  CURLOPT_URL
 * copies url. */
static void
sign(struct s3 *s3, CURL *c, const char *url, struct curl_slist *hdrs)
{
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "symhub/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_AWS_SIGV4, s3->sigv4);
	/* Separately: an access key may hold a colon (Swift's "test:tester"). */
	curl_easy_setopt(c, CURLOPT_USERNAME, s3->cfg.access_key);
	curl_easy_setopt(c, CURLOPT_PASSWORD, s3->cfg.secret_key);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
}

static int
perform(struct req *r, const char *payload_sha)
{
	struct s3	*s3 = r->s3;
	CURL		*c;
	CURLcode	 res;
	curl_off_t	 up = 0, down = 0;
	long		 nconn = 0;
	int		 rc;

	if ((rc = add_header(r, "x-amz-content-sha256", payload_sha)) < 0 ||
	    (rc = buf_add(&r->url, "", 1)) < 0)
		return rc;
	if ((c = r->c = borrow(s3)) == NULL)
		return -ENOMEM;
	sign(s3, c, (char *)r->url.p, r->hdrs);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, s3->cfg.connect_ms);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, s3->cfg.stall_s);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, s3->cfg.timeout_ms);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	if (strcmp(r->method, "HEAD") == 0) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (strcmp(r->method, "DELETE") == 0) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
	} else if (strcmp(r->method, "PUT") == 0) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE,
		    (curl_off_t)r->size);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, r);
		curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(c, CURLOPT_SEEKDATA, r);
	}
	res = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &nconn);
	curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &up);
	curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &down);
	atomic_fetch_add_explicit(&s3->requests, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s3->connects, (uint_fast64_t)nconn,
	    memory_order_relaxed);
	atomic_fetch_add_explicit(&s3->up, (uint_fast64_t)up,
	    memory_order_relaxed);
	atomic_fetch_add_explicit(&s3->down, (uint_fast64_t)down,
	    memory_order_relaxed);
	last.http = r->status;
	if (res != CURLE_OK) {
		rc = r->cberr != 0 ? r->cberr : curl_errno(res);
		if (r->cberr == 0 || last.message[0] == '\0')
			last_message(r->errbuf[0] != '\0' ? r->errbuf :
			    curl_easy_strerror(res));
	} else if (r->status < 200 || r->status >= 300) {
		(void)s3xml_error((const char *)r->body.p, r->body.len,
		    last.code, sizeof(last.code), last.message,
		    sizeof(last.message));
		rc = s3_errno_http(r->status, last.code);
	} else if (r->clen >= 0 && r->sink != NULL &&
	    r->got != (uint64_t)r->clen) {
		/* libcurl says so itself (CURLE_PARTIAL_FILE); kept as the
		 * promise s3_get() makes. */
		rc = -ECONNRESET;
		last_message("body shorter than its Content-Length");
	} else {
		rc = 0;
	}
	if (rc < 0)
		atomic_fetch_add_explicit(&s3->failures, 1,
		    memory_order_relaxed);
	give_back(s3, c, res == CURLE_OK);
	r->c = NULL;
	return rc;
}

/* ---- the calls ---- */

int
s3_get_setup(struct s3 *s3, const char *key, CURL *c,
    struct curl_slist **hdrs)
{
	struct s3_info	info;
	struct req	r;
	int		rc;

	*hdrs = NULL;
	req_init(&r, s3, "GET", &info);
	if ((rc = req_url(&r, key)) < 0 ||
	    (rc = buf_add(&r.url, "", 1)) < 0 ||
	    (rc = add_header(&r, "x-amz-content-sha256", UNSIGNED)) < 0)
		goto out;
	sign(s3, c, (char *)r.url.p, r.hdrs);	/* the URL is copied */
	*hdrs = r.hdrs;				/* now the caller's */
	r.hdrs = NULL;
out:
	req_done(&r);
	return rc;
}

/* The SHA-256 of bytes [0, size) of fd. */
static int
hash_fd(int fd, uint64_t size, unsigned char out[32])
{
	EVP_MD_CTX	*md;
	unsigned char	*b;
	uint64_t	 off = 0;
	ssize_t		 got;
	size_t		 want;
	int		 rc = 0;

	md = EVP_MD_CTX_new();
	b = malloc(1 << 17);
	if (md == NULL || b == NULL ||
	    EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		rc = -ENOMEM;
		goto out;
	}
	while (off < size) {
		want = size - off < (1 << 17) ? (size_t)(size - off) : 1 << 17;
		do
			got = pread(fd, b, want, (off_t)off);
		while (got < 0 && errno == EINTR);
		if (got <= 0) {
			rc = got < 0 ? -errno : -EIO;
			last_message(got < 0 ? "reading the file failed" :
			    "the file is shorter than the size given");
			goto out;
		}
		if (EVP_DigestUpdate(md, b, (size_t)got) != 1) {
			rc = -ENOMEM;
			goto out;
		}
		off += (uint64_t)got;
	}
	if (EVP_DigestFinal_ex(md, out, NULL) != 1)
		rc = -ENOMEM;
out:
	free(b);
	EVP_MD_CTX_free(md);
	return rc;
}

static int
meta_headers(struct req *r, const char *const *meta)
{
	struct buf	 name = {0};
	size_t		 total = 0, i, vlen;
	const char	*n, *v;
	int		 rc = 0;

	for (; meta != NULL && meta[0] != NULL; meta += 2) {
		n = meta[0];
		v = meta[1];
		rc = -EINVAL;
		if (v == NULL || *n == '\0' || *v == '\0')
			break;
		for (i = 0; n[i] != '\0'; i++)
			if (!((n[i] >= 'a' && n[i] <= 'z') ||
			    (n[i] >= '0' && n[i] <= '9') || n[i] == '-'))
				goto out;
		vlen = strlen(v);
		for (i = 0; i < vlen; i++)
			if (v[i] < 0x20 || v[i] > 0x7e)
				goto out;
		if (v[0] == ' ' || v[vlen - 1] == ' ')
			break;
		total += strlen(n) + vlen;
		if (total > 2048)
			break;
		name.len = 0;
		buf_printf(&name, "x-amz-meta-%s", n);
		buf_add(&name, "", 1);
		if ((rc = name.err) < 0 ||
		    (rc = add_header(r, (char *)name.p, v)) < 0)
			goto out;
		rc = 0;
	}
out:
	if (rc == -EINVAL)
		last_message("metadata refused");
	buf_free(&name);
	return rc;
}

int
s3_put_fd(struct s3 *s3, const char *key, int fd, uint64_t size,
    const unsigned char *sha256, unsigned flags, const char *const *meta)
{
	struct s3_info	 info;
	struct req	 r;
	char		 hex[65];
	int		 rc;

	req_init(&r, s3, "PUT", &info);
	if (size > S3_PUT_MAX) {
		rc = -EFBIG;
		goto out;
	}
	r.fd = fd;
	r.size = size;
	if ((rc = req_url(&r, key)) < 0 || (rc = meta_headers(&r, meta)) < 0)
		goto out;
	if (sha256 != NULL)
		memcpy(r.want, sha256, sizeof(r.want));
	else if ((rc = hash_fd(fd, size, r.want)) < 0)
		goto out;
	if ((r.md = EVP_MD_CTX_new()) == NULL || md_restart(&r) < 0) {
		rc = -ENOMEM;
		goto out;
	}
	/* No read call will check an empty body: check it here. */
	if (size == 0 && (rc = hash_fd(fd, 0, info.sha256)) == 0 &&
	    memcmp(info.sha256, r.want, sizeof(r.want)) != 0) {
		rc = -EIO;
		last_message("the SHA-256 given is not that of no bytes");
	}
	if (rc < 0)
		goto out;
	if ((flags & S3_PUT_IF_ABSENT) &&
	    (rc = add_header(&r, "If-None-Match", "*")) < 0)
		goto out;
	hex_encode(r.want, sizeof(r.want), hex);
	rc = perform(&r, hex);
out:
	req_done(&r);
	return rc;
}

int
s3_get(struct s3 *s3, const char *key,
    int (*sink)(void *ctx, const void *p, size_t n), void *ctx,
    struct s3_info *info)
{
	struct s3_info	 mine;
	struct req	 r;
	int		 rc;

	req_init(&r, s3, "GET", info != NULL ? info : &mine);
	if (sink == NULL) {
		rc = -EINVAL;
		goto out;
	}
	r.sink = sink;
	r.ctx = ctx;
	if ((rc = req_url(&r, key)) < 0)
		goto out;
	if ((r.md = EVP_MD_CTX_new()) == NULL || md_restart(&r) < 0) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = perform(&r, UNSIGNED)) < 0)
		goto out;
	r.info->size = r.got;
	if (EVP_DigestFinal_ex(r.md, r.info->sha256, NULL) != 1)
		rc = -ENOMEM;
out:
	req_done(&r);
	return rc;
}

static int
to_fd(void *ctx, const void *p, size_t n)
{
	const char	*b = p;
	int		 fd = *(int *)ctx, rc;
	ssize_t		 w;

	while (n > 0) {
		if ((w = write(fd, b, n)) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			last_message("writing the object to its fd failed");
			return rc;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int
s3_get_fd(struct s3 *s3, const char *key, int fd, struct s3_info *info)
{
	return s3_get(s3, key, to_fd, &fd, info);
}

int
s3_head(struct s3 *s3, const char *key, struct s3_info *info)
{
	struct s3_info	mine;
	struct req	r;
	int		rc;

	if (info == NULL)
		info = &mine;
	req_init(&r, s3, "HEAD", info);
	if ((rc = req_url(&r, key)) < 0 || (rc = perform(&r, UNSIGNED)) < 0)
		goto out;
	if (r.clen < 0) {
		rc = -EPROTO;
		last_message("HEAD answer without Content-Length");
		goto out;
	}
	info->size = (uint64_t)r.clen;
out:
	req_done(&r);
	return rc;
}

int
s3_copy(struct s3 *s3, const char *from, const char *to)
{
	static const unsigned char empty[32] = {
		0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb,
		0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4,
		0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52,
		0xb8, 0x55 };
	struct s3_info	 info;
	struct req	 r;
	struct buf	 src = {0};
	char		 hex[65];
	int		 rc;

	req_init(&r, s3, "PUT", &info);
	/* The answer's body says how it went: a copy may fail after its
	 * 200 (S3 documents it), with an Error in the body. */
	r.keep = 1;
	if ((rc = s3_key_check(from)) < 0 || (rc = req_url(&r, to)) < 0)
		goto out;
	buf_puts(&src, "/");
	buf_puts(&src, s3->cfg.bucket);
	buf_puts(&src, "/");
	pct(&src, from, 1);
	buf_add(&src, "", 1);
	if ((rc = src.err) < 0 ||
	    (rc = add_header(&r, "x-amz-copy-source", (char *)src.p)) < 0)
		goto out;
	if ((r.md = EVP_MD_CTX_new()) == NULL || md_restart(&r) < 0) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(r.want, empty, sizeof(empty));
	hex_encode(empty, sizeof(empty), hex);
	if ((rc = perform(&r, hex)) == 0 && r.body.len > 0 &&
	    memmem(r.body.p, r.body.len, "<Error>", 7) != NULL) {
		(void)s3xml_error((const char *)r.body.p, r.body.len,
		    last.code, sizeof(last.code), last.message,
		    sizeof(last.message));
		rc = s3_errno_http(500, last.code);
	}
out:
	buf_free(&src);
	req_done(&r);
	return rc;
}

int
s3_delete(struct s3 *s3, const char *key)
{
	struct s3_info	info;
	struct req	r;
	int		rc;

	req_init(&r, s3, "DELETE", &info);
	if ((rc = req_url(&r, key)) == 0)
		rc = perform(&r, UNSIGNED);
	req_done(&r);
	return rc;
}

/* One page of a listing, after token ("" for the first). */
static int
list_page(struct s3 *s3, const char *prefix, const char *after,
    const char *token, int (*fn)(void *, const char *, uint64_t), void *ctx,
    struct s3xml_page *page)
{
	struct s3_info	info;
	struct req	r;
	int		rc;

	req_init(&r, s3, "GET", &info);
	r.keep = 1;
	/* SigV4 signs the query sorted by name: libcurl 7.88 signs it as
	 * written, so it is written sorted. */
	buf_puts(&r.url, s3->base);
	buf_puts(&r.url, "?");
	if (token[0] != '\0') {
		buf_puts(&r.url, "continuation-token=");
		pct(&r.url, token, 0);
		buf_puts(&r.url, "&");
	}
	buf_puts(&r.url, "list-type=2");
	if (s3->cfg.list_page > 0)
		buf_printf(&r.url, "&max-keys=%ld", s3->cfg.list_page);
	if (prefix != NULL && prefix[0] != '\0') {
		buf_puts(&r.url, "&prefix=");
		pct(&r.url, prefix, 0);
	}
	/* Once a page has a token, it says where the next one starts. */
	if (after != NULL && after[0] != '\0' && token[0] == '\0') {
		buf_puts(&r.url, "&start-after=");
		pct(&r.url, after, 0);
	}
	if ((rc = r.url.err) < 0 || (rc = perform(&r, UNSIGNED)) < 0)
		goto out;
	rc = s3xml_list((const char *)r.body.p, r.body.len, fn, ctx, page);
	if (rc == -EPROTO)
		last_message("the listing is not ListObjectsV2 XML");
out:
	req_done(&r);
	return rc;
}

int
s3_list(struct s3 *s3, const char *prefix,
    int (*fn)(void *ctx, const char *key, uint64_t size), void *ctx)
{
	return s3_list_after(s3, prefix, NULL, fn, ctx);
}

int
s3_list_after(struct s3 *s3, const char *prefix, const char *after,
    int (*fn)(void *ctx, const char *key, uint64_t size), void *ctx)
{
	struct s3xml_page	*page;
	char			*token;
	int			 rc;

	last_reset();
	if (fn == NULL)
		return -EINVAL;
	if ((prefix != NULL && prefix[0] != '\0' && s3_key_check(prefix) < 0) ||
	    (after != NULL && after[0] != '\0' && s3_key_check(after) < 0)) {
		last_message("prefix or start refused");
		return -EINVAL;
	}
	page = malloc(sizeof(*page));
	token = calloc(1, S3XML_TOKEN_MAX + 1);
	if (page == NULL || token == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		if ((rc = list_page(s3, prefix, after, token, fn, ctx,
		    page)) != 0 ||
		    !page->truncated)
			break;
		/* A server that hands the same token back would loop. */
		if (strcmp(page->token, token) == 0) {
			rc = -EPROTO;
			last_message("the same continuation token twice");
			break;
		}
		memcpy(token, page->token, S3XML_TOKEN_MAX + 1);
	}
out:
	free(page);
	free(token);
	return rc;
}

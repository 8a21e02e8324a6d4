/*
 * s3: a client for S3-compatible object stores (AWS S3, MinIO, Ceph RGW,
 * OpenStack Swift's s3api): the transport of symhub's S3 tier
 * (doc/s3.md).
 *
 * libcurl signs every request (SigV4, CURLOPT_AWS_SIGV4); URLs are
 * path-style, ENDPOINT/BUCKET/KEY; objects stream from and to file
 * descriptors and are never held whole in memory.  No retries: a call
 * makes one request (a listing one per page), and a transient failure
 * comes back as such for the caller to decide.
 *
 * Thread-safety: one struct s3 serves any number of threads at once.
 * Each call borrows a libcurl handle, with the connection it keeps open,
 * from a small pool and gives it back, so that a worker's next call
 * reuses a connection.  s3_create() and s3_free() call
 * curl_global_init() and curl_global_cleanup(): call them before other
 * threads use libcurl, or after the program called curl_global_init()
 * itself.
 *
 * Errors: every call returns 0 (a listing: or its callback's result) or
 * a negative errno, with one meaning each (src/base/errors.h):
 *
 *   -ENOENT        404: no such key, or no such bucket (see s3_last()).
 *   -EACCES        403: credentials or signature refused, or no right.
 *   -EEXIST        412: S3_PUT_IF_ABSENT and the key is there.
 *   -ENOTSUP       501: the server does not do what was asked (Swift:
 *                  S3_PUT_IF_ABSENT).
 *   -EINVAL        400 (but RequestTimeout), or an argument refused
 *                  before anything was sent (a key, metadata).
 *   -EAGAIN        500, 502, 503, 504, 429, and 400 RequestTimeout: the
 *                  server's trouble; the same call may succeed later (S3
 *                  asks for retries with back-off).
 *   -EPROTO        any other status, or an answer S3 would not give (a
 *                  listing that is not ListObjectsV2 XML), or TLS failed.
 *   -ETIMEDOUT     no connection within connect_ms, a transfer slower
 *                  than 1 byte/s for stall_s seconds, or past timeout_ms.
 *   -ECONNREFUSED  no connection could be made (refused, unreachable, an
 *                  unknown host name).
 *   -ECONNRESET    the connection broke mid-request (no answer, half an
 *                  answer, a body short of its Content-Length).
 *   -EIO           the file given to s3_put_fd() is shorter than size or
 *                  does not hash to the SHA-256 given (nothing is then
 *                  stored); any other failure libcurl reports.
 *   -EFBIG         an object past S3's 5 GiB limit for one PUT.
 *   -ENOMEM        out of memory.
 *   -errno         of pread() or write() on the caller's fd, and whatever
 *                  negative errno a caller's callback returned.
 */
#ifndef SYMHUB_S3_H
#define SYMHUB_S3_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

/* Longest key, bytes of UTF-8, as S3. */
#define S3_KEY_MAX	1024
/* Largest object one PUT stores, as S3 and Swift. */
#define S3_PUT_MAX	((uint64_t)5 << 30)

/* What a client needs; filled by hand or by s3conf.h.  Copied by
 * s3_create(): the caller may wipe it afterwards (the secret). */
struct s3_config {
	char	endpoint[256];	/* http[s]://HOST[:PORT], no path */
	char	bucket[64];	/* S3's rules: 3-63 of [a-z0-9.-] */
	char	region[32];	/* signing region; "" is us-east-1 */
	char	access_key[128];
	char	secret_key[128];
	long	connect_ms;	/* to connect; 0: 5000 */
	long	stall_s;	/* a transfer slower than 1 byte/s for this
				 * long is abandoned; 0: 30 */
	long	timeout_ms;	/* a whole request; 0: no limit (big objects
				 * on a slow link need time; stall_s guards) */
	long	list_page;	/* max-keys of a listing's page; 0: the
				 * server's (1000) */
};

struct s3;	/* opaque: one endpoint and bucket, shared by threads */

/*
 * @return 0 with *out (free with s3_free()); -EINVAL for a config with no
 *         endpoint, bucket or keys, or malformed ones (s3conf_check());
 *         -ENOMEM.  No request is made.
 */
int	s3_create(const struct s3_config *cfg, struct s3 **out);

/* Close every pooled connection.  No call may be running.  Accepts NULL. */
void	s3_free(struct s3 *s3);

/* What a HEAD or GET learned of an object. */
struct s3_info {
	uint64_t	size;		/* Content-Length (GET: bytes received) */
	int64_t		mtime;		/* Last-Modified, seconds since the
					 * epoch; -1 unknown */
	char		etag[80];	/* ETag without its quotes, or "" */
	unsigned char	sha256[32];	/* s3_get(): of the bytes received */
	/* x-amz-meta-* as "name\0value\0" pairs, names lowercase and
	 * without the prefix, an empty name after the last; what does not
	 * fit is left out.  Read with s3_info_meta(). */
	char		meta[4352];
};

/* The value of user metadata NAME (lowercase, without "x-amz-meta-"),
 * pointing into info; NULL when absent. */
const char *s3_info_meta(const struct s3_info *info, const char *name);

/* s3_put_fd() flags. */
#define S3_PUT_IF_ABSENT	0x1u	/* If-None-Match: *: -EEXIST when there */

/*
 * Store bytes [0, size) of fd (read with pread(): the file offset is not
 * used and not moved) as KEY, replacing what is there.  The bytes stream
 * from the file; their SHA-256 is sent as x-amz-content-sha256, which
 * the server checks, and checked again as they are read: a file that
 * changes or ends early aborts the request before its last byte is sent,
 * so the server stores nothing new.  A failed PUT leaves either the old
 * object or none, never part of the new one (S3's atomic PUT).
 * @param sha256  the bytes' SHA-256 when the caller knows it, or NULL:
 *                the file is then read twice (once to hash).
 * @param meta    NULL, or a NULL-terminated list of name, value, name,
 *                value...: user metadata (x-amz-meta-NAME); names of
 *                [a-z0-9-], values of printable ASCII with no space at
 *                either end, 2 KiB in all.
 * @return 0 stored; -EEXIST, -ENOTSUP (S3_PUT_IF_ABSENT; the caller may
 *         fall back to a plain PUT); -EFBIG past S3_PUT_MAX; -EIO; the
 *         errors above.  fd stays the caller's.
 */
int	s3_put_fd(struct s3 *s3, const char *key, int fd, uint64_t size,
	    const unsigned char *sha256, unsigned flags,
	    const char *const *meta);

/*
 * Read object KEY, handing its bytes to sink in order as they arrive.
 * Success means every byte of the Content-Length arrived; a cut
 * connection is -ECONNRESET (or -ETIMEDOUT), never a short success.  On
 * failure sink may have had part of the object: the caller discards it.
 * @param sink  returns 0 to go on, a negative errno to abort (returned).
 * @param info  NULL, or filled (size, mtime, ETag, SHA-256 of the bytes,
 *              metadata) on success.
 */
int	s3_get(struct s3 *s3, const char *key,
	    int (*sink)(void *ctx, const void *p, size_t n), void *ctx,
	    struct s3_info *info);

/* s3_get() written to fd at its offset (write(), all of it).  On failure
 * fd holds an unspecified prefix of the object.  fd stays the caller's. */
int	s3_get_fd(struct s3 *s3, const char *key, int fd, struct s3_info *info);

/*
 * Set up the caller's libcurl handle c for a GET of KEY, for a caller
 * that drives its own transfers (symhubd's fetch engine, on a multi
 * handle): the URL, SigV4 signing, the keys, and the
 * x-amz-content-sha256 header S3 needs, in *hdrs (the caller's:
 * curl_slist_free_all() after the transfer; more may be appended, and
 * set again with CURLOPT_HTTPHEADER).  Nothing else is set: timeouts,
 * callbacks and the answer's status are the caller's, and s3_last()
 * and s3_stats() know nothing of the transfer.
 * @return 0; -EINVAL for a key refused; -ENOMEM.
 */
int	s3_get_setup(struct s3 *s3, const char *key, CURL *c,
	    struct curl_slist **hdrs);

/* @param info  NULL, or filled on success (all but sha256).
 * @return 0, -ENOENT, the errors above. */
int	s3_head(struct s3 *s3, const char *key, struct s3_info *info);

/*
 * Copy object FROM to TO on the server (a PUT with x-amz-copy-source):
 * TO becomes FROM's bytes and metadata at once, whole or not at all.
 * @return 0; -ENOENT when FROM is not there; the errors above.
 */
int	s3_copy(struct s3 *s3, const char *from, const char *to);

/* @return 0 also when the key was not there (S3 answers 204 alike). */
int	s3_delete(struct s3 *s3, const char *key);

/*
 * Every key that starts with PREFIX ("" or NULL: all), in S3's order
 * (bytes of UTF-8), page after page (ListObjectsV2 and its continuation
 * tokens).  A key written during the listing may or may not be seen.
 * @param fn  gets each key (NUL-terminated, valid during the call) and
 *            its size; returns 0 to go on, anything else to stop.
 * @return 0 when every key went to fn; fn's non-zero result, which
 *         stopped the listing; the errors above (the keys before the
 *         failure have gone to fn).
 */
int	s3_list(struct s3 *s3, const char *prefix,
	    int (*fn)(void *ctx, const char *key, uint64_t size), void *ctx);

/* s3_list() of the keys after AFTER only (S3's start-after; NULL or "":
 * from the first), for a caller that lists a growing set of keys named
 * in order, as a log. */
int	s3_list_after(struct s3 *s3, const char *prefix, const char *after,
	    int (*fn)(void *ctx, const char *key, uint64_t size), void *ctx);

/*
 * What the calling thread's last s3_* call heard, for its log line:
 * valid until that thread's next call.
 */
struct s3_status {
	long	http;		/* the HTTP status; 0: no answer */
	char	code[64];	/* the S3 error Code ("NoSuchKey",
				 * "SignatureDoesNotMatch"), or "" */
	char	message[256];	/* the S3 error Message, or libcurl's, or "" */
};
const struct s3_status *s3_last(void);

/* Counters since s3_create(), read without a lock. */
struct s3_stats {
	uint64_t	requests;	/* made, whatever their outcome */
	uint64_t	connects;	/* new connections they opened */
	uint64_t	failures;	/* that returned an error, 404 included */
	uint64_t	bytes_up, bytes_down;	/* bodies */
};
void	s3_stats(const struct s3 *s3, struct s3_stats *out);

/*
 * Percent-encode KEY for a URL as SigV4 wants it: every byte but
 * A-Z a-z 0-9 - . _ ~ (and '/', with keep_slash) as %XX, uppercase hex.
 * Keys are checked: 1 to S3_KEY_MAX bytes of valid UTF-8 with no control
 * character (XML 1.0 could not list it).
 * @return the encoded length (out NUL-terminated); -EINVAL for a key
 *         refused; -ENAMETOOLONG when out is too small.
 */
int	s3_key_encode(const char *key, int keep_slash, char *out,
	    size_t outsz);

/* Is KEY one S3 can name: 1 to S3_KEY_MAX bytes of valid UTF-8 with no
 * control character?  @return 0 or -EINVAL. */
int	s3_key_check(const char *key);

/* The errno of an HTTP status and S3 error Code (or NULL); 0 for 2xx. */
int	s3_errno_http(long status, const char *code);

#endif

/*
 * test_s3: the S3 client against a real S3 server (a one-node OpenStack
 * Swift with s3api, started by tests/test_s3.sh), and against the
 * misbehaving servers of tests/s3proxy.py.
 *
 * Environment, set by the driver:
 *   S3_ENDPOINT S3_REGION S3_ACCESS_KEY S3_SECRET_KEY S3_BUCKET
 *                  the server (tests/s3/start-s3.sh prints them)
 *   S3_HANG        an endpoint that accepts and never answers
 *   S3_CUTDOWN     a proxy to S3_ENDPOINT that closes after the first
 *                  CUT_BYTES bytes of an answer
 *   S3_CUTUP       one that closes after the first CUT_BYTES of a request
 *   S3_STOP        a command that stops the server (run last)
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/clock.h"
#include "base/hex.h"
#include "s3/s3.h"
#include "s3/s3conf.h"
#include "tap.h"
#include "testlib.h"

#define MiB		(1024 * 1024)
#define CUT_BYTES	(1 * MiB)	/* as tests/test_s3.sh starts the proxies */

static char		*dir;
static struct s3_config	 cfg0;
static unsigned		 nfile;

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	if (v == NULL || *v == '\0') {
		printf("Bail out! %s is not set (run tests/test_s3.sh)\n", name);
		exit(99);
	}
	return v;
}

static void
set(char *dst, size_t n, const char *v)
{
	snprintf(dst, n, "%s", v);
}

#define SET(field, v)	set(field, sizeof(field), v)

static struct s3 *
client(const struct s3_config *cfg)
{
	struct s3 *s3;

	if (s3_create(cfg, &s3) != 0) {
		printf("Bail out! s3_create\n");
		exit(99);
	}
	return s3;
}

static void
sha_buf(const void *p, size_t n, unsigned char out[32])
{
	EVP_Digest(p, n, out, NULL, EVP_sha256(), NULL);
}

/* A fresh file of size pseudo-random bytes (seed), open for reading;
 * its SHA-256 to sha. */
static int
make_file(size_t size, uint64_t seed, unsigned char sha[32])
{
	unsigned char	*b = malloc(size ? size : 1);
	char		 path[512];
	int		 fd;

	snprintf(path, sizeof(path), "%s/f%u", dir, nfile++);
	if (b == NULL || (fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0)
		abort();
	fill(b, size, seed);
	if (write(fd, b, size) != (ssize_t)size)
		abort();
	if (sha != NULL)
		sha_buf(b, size, sha);
	free(b);
	return fd;
}

/* An empty file to get into. */
static int
out_file(void)
{
	char	path[512];
	int	fd;

	snprintf(path, sizeof(path), "%s/o%u", dir, nfile++);
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0)
		abort();
	return fd;
}

/* The SHA-256 and size of what fd holds. */
static void
sha_fd(int fd, unsigned char out[32], uint64_t *size)
{
	EVP_MD_CTX	*md = EVP_MD_CTX_new();
	unsigned char	 b[65536];
	ssize_t		 n;
	off_t		 off = 0;

	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	while ((n = pread(fd, b, sizeof(b), off)) > 0) {
		EVP_DigestUpdate(md, b, (size_t)n);
		off += n;
	}
	EVP_DigestFinal_ex(md, out, NULL);
	EVP_MD_CTX_free(md);
	*size = (uint64_t)off;
}

/* GET key into a fresh file: 0 when its bytes hash to sha and number
 * size, else the error (or -EIO). */
static int
get_same(struct s3 *s3, const char *key, const unsigned char sha[32],
    uint64_t size)
{
	struct s3_info	*info = malloc(sizeof(*info));
	unsigned char	 got[32];
	uint64_t	 n;
	int		 fd = out_file(), rc;

	if ((rc = s3_get_fd(s3, key, fd, info)) == 0) {
		sha_fd(fd, got, &n);
		if (n != size || memcmp(got, sha, 32) != 0 ||
		    info->size != size || memcmp(info->sha256, sha, 32) != 0)
			rc = -EIO;
	}
	close(fd);
	free(info);
	return rc;
}

static void
round_trip(struct s3 *s3, size_t size, int give_sha)
{
	struct s3_info	*info = malloc(sizeof(*info));
	unsigned char	 sha[32];
	char		 key[64];
	int		 fd, rc;

	snprintf(key, sizeof(key), "rt/size-%zu", size);
	fd = make_file(size, size + 1, sha);
	rc = s3_put_fd(s3, key, fd, size, give_sha ? sha : NULL, 0, NULL);
	ok(rc == 0, "put %zu bytes (SHA-256 %s): %d %s", size,
	    give_sha ? "given" : "computed", rc, s3_last()->message);
	rc = s3_head(s3, key, info);
	ok(rc == 0 && info->size == size && info->etag[0] != '\0' &&
	    info->mtime > 1600000000, "head %zu: size %" PRIu64 ", ETag %s, "
	    "Last-Modified %" PRId64, size, info->size, info->etag,
	    info->mtime);
	ok(get_same(s3, key, sha, size) == 0, "get %zu bytes back, same "
	    "SHA-256", size);
	ok(s3_delete(s3, key) == 0 && s3_head(s3, key, info) == -ENOENT,
	    "delete %zu: then head is -ENOENT", size);
	close(fd);
	free(info);
}

/* ---- keys ---- */

struct seen {
	char		 keys[64][1100];
	uint64_t	 sizes[64];
	int		 n, stop_at;
};

static int
collect(void *ctx, const char *key, uint64_t size)
{
	struct seen *s = ctx;

	if (s->n < 64) {
		snprintf(s->keys[s->n], sizeof(s->keys[0]), "%s", key);
		s->sizes[s->n] = size;
	}
	s->n++;
	return s->stop_at > 0 && s->n == s->stop_at ? 7 : 0;
}

static void
odd_keys(struct s3 *s3)
{
	static const char *keys[] = {
		"enc/source/usr/src/a b+c.c",
		"enc/unicode/\xc3\xa9t\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac/\xf0\x9f\x90\xa7.c",
		"enc/x/./y",
		"enc/x/../y",
		"enc/x//y",
		"enc/dir/",
		"enc/punct ~!*'()=&?#%[]@$,;:",
		"enc/100%25 plus+",
	};
	struct seen	*seen = calloc(1, sizeof(*seen));
	unsigned char	 sha[32];
	size_t		 i;
	int		 fd, rc, found, all = 1;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		fd = make_file(100 + i, 1000 + i, sha);
		rc = s3_put_fd(s3, keys[i], fd, 100 + i, sha, 0, NULL);
		close(fd);
		ok(rc == 0 && get_same(s3, keys[i], sha, 100 + i) == 0,
		    "key '%s': put %d and get back", keys[i], rc);
	}
	rc = s3_list(s3, "enc/", collect, seen);
	ok(rc == 0 && seen->n == (int)(sizeof(keys) / sizeof(keys[0])),
	    "list enc/: %d keys (%d)", seen->n, rc);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		found = 0;
		for (int j = 0; j < seen->n && j < 64; j++)
			if (strcmp(seen->keys[j], keys[i]) == 0 &&
			    seen->sizes[j] == 100 + i)
				found = 1;
		all &= found;
	}
	ok(all, "every key listed as written, with its size");
	for (i = 0; i + 1 < (size_t)seen->n && i + 1 < 64; i++)
		if (strcmp(seen->keys[i], seen->keys[i + 1]) >= 0)
			all = 0;
	ok(all, "listed in byte order");
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		s3_delete(s3, keys[i]);
	memset(seen, 0, sizeof(*seen));
	rc = s3_list(s3, "enc/unicode/\xc3\xa9t\xc3\xa9/", collect, seen);
	ok(rc == 0 && seen->n == 0, "deleted: a unicode prefix lists nothing");
	free(seen);
}

static void
bad_keys(struct s3 *s3)
{
	struct s3_stats	before, after;
	char		long_key[S3_KEY_MAX + 2];
	unsigned char	sha[32];
	int		fd = make_file(10, 1, sha);

	s3_stats(s3, &before);
	memset(long_key, 'k', sizeof(long_key) - 1);
	long_key[sizeof(long_key) - 1] = '\0';
	ok(s3_put_fd(s3, "", fd, 10, sha, 0, NULL) == -EINVAL,
	    "empty key: -EINVAL");
	ok(s3_put_fd(s3, "a\nb", fd, 10, sha, 0, NULL) == -EINVAL,
	    "a control character: -EINVAL");
	ok(s3_get_fd(s3, "bad\xff", fd, NULL) == -EINVAL,
	    "not UTF-8: -EINVAL");
	ok(s3_head(s3, long_key, NULL) == -EINVAL, "%zu bytes: -EINVAL",
	    strlen(long_key));
	long_key[S3_KEY_MAX] = '\0';
	ok(s3_delete(s3, long_key) == 0, "%d bytes: accepted",
	    S3_KEY_MAX);
	s3_stats(s3, &after);
	ok(after.requests == before.requests + 1,
	    "refused keys sent no request");
	close(fd);
}

/* Server-side copies: bytes and metadata, whole; a missing source. */
static void
copies(struct s3 *s3)
{
	static const char	*meta[] = { "sha256", "abc", NULL };
	struct s3_info		 info;
	unsigned char		 sha[32];
	int			 fd = make_file(70000, 7, sha), out;
	char			 got[PATH_MAX];

	ok(s3_put_fd(s3, "copy/from", fd, 70000, sha, 0, meta) == 0,
	    "copy: the source is stored");
	ok(s3_copy(s3, "copy/from", "copy/to") == 0, "copy: copied (%s)",
	    s3_last()->code);
	snprintf(got, sizeof(got), "%s/copied", dir);
	out = open(got, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ok(s3_get_fd(s3, "copy/to", out, &info) == 0 && info.size == 70000 &&
	    memcmp(info.sha256, sha, 32) == 0, "copy: the same bytes");
	ok(s3_info_meta(&info, "sha256") != NULL &&
	    strcmp(s3_info_meta(&info, "sha256"), "abc") == 0,
	    "copy: the same metadata");
	ok(s3_copy(s3, "copy/none", "copy/to2") == -ENOENT &&
	    s3_head(s3, "copy/to2", NULL) == -ENOENT,
	    "copy of a missing source: -ENOENT, nothing made (%s)",
	    s3_last()->code);
	s3_delete(s3, "copy/from");
	s3_delete(s3, "copy/to");
	close(out);
	close(fd);
}

/* ---- listing ---- */

static void
listing(void)
{
	struct s3_config cfg = cfg0;
	struct s3_stats	before, after;
	struct seen	*seen = calloc(1, sizeof(*seen));
	struct s3	*s3;
	unsigned char	 sha[32];
	char		 key[64];
	int		 fd, i, rc, sorted = 1, sizes = 1;

	cfg.list_page = 4;
	s3 = client(&cfg);
	for (i = 0; i < 25; i++) {
		snprintf(key, sizeof(key), "page/%02d", i);
		fd = make_file((size_t)i, (uint64_t)i, sha);
		if (s3_put_fd(s3, key, fd, (uint64_t)i, sha, 0, NULL) != 0)
			sizes = 0;
		close(fd);
	}
	/* Another key past the prefix, which must not be listed. */
	fd = make_file(1, 1, sha);
	s3_put_fd(s3, "pagf", fd, 1, sha, 0, NULL);
	close(fd);
	ok(sizes, "25 keys under page/ stored");
	s3_stats(s3, &before);
	rc = s3_list(s3, "page/", collect, seen);
	s3_stats(s3, &after);
	ok(rc == 0 && seen->n == 25, "list page/ with max-keys 4: %d keys "
	    "(%d %s)", seen->n, rc, s3_last()->code);
	ok(after.requests - before.requests == 7, "in %" PRIu64 " pages "
	    "(7 expected: continuation tokens followed)",
	    after.requests - before.requests);
	for (i = 0; i < seen->n && i < 25; i++) {
		snprintf(key, sizeof(key), "page/%02d", i);
		if (strcmp(seen->keys[i], key) != 0)
			sorted = 0;
		if (seen->sizes[i] != (uint64_t)i)
			sizes = 0;
	}
	ok(sorted && sizes, "each key once, in order, with its size");
	memset(seen, 0, sizeof(*seen));
	seen->stop_at = 6;
	s3_stats(s3, &before);
	rc = s3_list(s3, "page/", collect, seen);
	s3_stats(s3, &after);
	ok(rc == 7 && seen->n == 6 && after.requests - before.requests == 2,
	    "a callback's 7 stops the listing at once: %d after %d keys, "
	    "%" PRIu64 " pages", rc, seen->n,
	    after.requests - before.requests);
	memset(seen, 0, sizeof(*seen));
	rc = s3_list_after(s3, "page/", "page/17", collect, seen);
	ok(rc == 0 && seen->n == 7 && strcmp(seen->keys[0], "page/18") == 0 &&
	    strcmp(seen->keys[6], "page/24") == 0,
	    "start-after page/17: the 7 keys after it, over pages (%d, %d "
	    "keys)", rc, seen->n);
	memset(seen, 0, sizeof(*seen));
	rc = s3_list(s3, "nothing-here/", collect, seen);
	ok(rc == 0 && seen->n == 0, "an empty listing");
	for (i = 0; i < 25; i++) {
		snprintf(key, sizeof(key), "page/%02d", i);
		s3_delete(s3, key);
	}
	s3_delete(s3, "pagf");
	s3_free(s3);
	free(seen);
}

/* ---- metadata, conditions, errors ---- */

static void
metadata(struct s3 *s3)
{
	struct s3_info	*info = malloc(sizeof(*info));
	unsigned char	 sha[32];
	char		 hex[65];
	const char	*v;
	int		 fd = make_file(300, 3, sha), rc;
	const char	*meta[] = { "sha256", hex, "origin", "upload ci",
	    NULL };
	const char	*bad[] = { "Upper", "x", NULL };
	const char	*badv[] = { "x", "line\nfeed", NULL };

	hex_encode(sha, 32, hex);
	rc = s3_put_fd(s3, "meta/one", fd, 300, sha, 0, meta);
	ok(rc == 0, "put with metadata: %d %s", rc, s3_last()->message);
	rc = s3_head(s3, "meta/one", info);
	v = s3_info_meta(info, "sha256");
	ok(rc == 0 && v != NULL && strcmp(v, hex) == 0,
	    "head: x-amz-meta-sha256 back (%s)", v ? v : "none");
	v = s3_info_meta(info, "origin");
	ok(v != NULL && strcmp(v, "upload ci") == 0,
	    "head: x-amz-meta-origin back (%s)", v ? v : "none");
	ok(s3_info_meta(info, "nope") == NULL, "no other metadata");
	rc = s3_get_fd(s3, "meta/one", out_file(), info);
	v = s3_info_meta(info, "sha256");
	ok(rc == 0 && v != NULL && strcmp(v, hex) == 0 &&
	    memcmp(info->sha256, sha, 32) == 0,
	    "get: the metadata and the bytes' SHA-256 agree");
	ok(s3_put_fd(s3, "meta/two", fd, 300, sha, 0, bad) == -EINVAL,
	    "a metadata name in upper case: -EINVAL");
	ok(s3_put_fd(s3, "meta/two", fd, 300, sha, 0, badv) == -EINVAL,
	    "a metadata value with a newline: -EINVAL");
	s3_delete(s3, "meta/one");
	close(fd);
	free(info);
}

static void
conditional(struct s3 *s3)
{
	unsigned char	sha[32];
	int		fd = make_file(50, 5, sha), rc;

	s3_put_fd(s3, "cond/there", fd, 50, sha, 0, NULL);
	rc = s3_put_fd(s3, "cond/there", fd, 50, sha, S3_PUT_IF_ABSENT, NULL);
	if (rc == -ENOTSUP) {
		ok(s3_last()->http == 501 &&
		    strcmp(s3_last()->code, "NotImplemented") == 0,
		    "If-None-Match: * -> -ENOTSUP (HTTP %ld %s: \"%s\")",
		    s3_last()->http, s3_last()->code, s3_last()->message);
		ok(s3_put_fd(s3, "cond/absent", fd, 50, sha,
		    S3_PUT_IF_ABSENT, NULL) == -ENOTSUP &&
		    s3_head(s3, "cond/absent", NULL) == -ENOENT,
		    "-ENOTSUP stores nothing, also for an absent key");
	} else {
		/* A server that does conditional PUTs (AWS since 2024). */
		ok(rc == -EEXIST, "If-None-Match: * on a key there: -EEXIST "
		    "(%d)", rc);
		rc = s3_put_fd(s3, "cond/absent", fd, 50, sha,
		    S3_PUT_IF_ABSENT, NULL);
		ok(rc == 0, "If-None-Match: * on an absent key: stored (%d)",
		    rc);
	}
	s3_delete(s3, "cond/there");
	s3_delete(s3, "cond/absent");
	close(fd);
}

static int
refuse(void *ctx, const void *p, size_t n)
{
	(*(int *)ctx)++;
	return -ENOSPC;
}

static int
count_keys(void *ctx, const char *key, uint64_t size)
{
	(*(int *)ctx)++;
	return 0;
}

static void
errors(struct s3 *s3)
{
	struct s3_config cfg = cfg0;
	struct s3	*bad;
	unsigned char	 sha[32], wrong[32];
	int		 fd, rc, n = 0;

	rc = s3_get_fd(s3, "no/such/key", out_file(), NULL);
	ok(rc == -ENOENT && s3_last()->http == 404 &&
	    strcmp(s3_last()->code, "NoSuchKey") == 0,
	    "get of a missing key: -ENOENT, 404 NoSuchKey (%d %ld %s)", rc,
	    s3_last()->http, s3_last()->code);
	ok(s3_head(s3, "no/such/key", NULL) == -ENOENT,
	    "head of a missing key: -ENOENT");
	ok(s3_delete(s3, "no/such/key") == 0,
	    "delete of a missing key: 0 (S3 answers 204)");

	fd = make_file(4096, 9, sha);
	s3_put_fd(s3, "err/sink", fd, 4096, sha, 0, NULL);
	rc = s3_get(s3, "err/sink", refuse, &n, NULL);
	ok(rc == -ENOSPC && n == 1, "a sink's -ENOSPC ends the GET with it");

	/* Bytes that are not those promised: nothing stored. */
	memcpy(wrong, sha, 32);
	wrong[0] ^= 1;
	rc = s3_put_fd(s3, "err/wrong-sha", fd, 4096, wrong, 0, NULL);
	ok(rc == -EIO && s3_head(s3, "err/wrong-sha", NULL) == -ENOENT,
	    "put with a wrong SHA-256: -EIO, nothing stored (%d)", rc);
	rc = s3_put_fd(s3, "err/short", fd, 8192, NULL, 0, NULL);
	ok(rc == -EIO && s3_head(s3, "err/short", NULL) == -ENOENT,
	    "put of a file shorter than its size: -EIO, nothing stored");
	rc = s3_put_fd(s3, "err/empty", fd, 0, sha, 0, NULL);
	ok(rc == -EIO, "put of 0 bytes with another SHA-256: -EIO");
	close(fd);
	s3_delete(s3, "err/sink");

	SET(cfg.secret_key, "not-the-secret");
	bad = client(&cfg);
	rc = s3_head(bad, "err/sink", NULL);
	ok(rc == -EACCES && s3_last()->http == 403, "wrong secret: head "
	    "-EACCES (%d, %ld)", rc, s3_last()->http);
	fd = make_file(10, 10, sha);
	rc = s3_put_fd(bad, "err/forbidden", fd, 10, sha, 0, NULL);
	ok(rc == -EACCES && strcmp(s3_last()->code,
	    "SignatureDoesNotMatch") == 0, "wrong secret: put -EACCES, %s",
	    s3_last()->code);
	ok(s3_list(bad, "", count_keys, &n) == -EACCES,
	    "wrong secret: list -EACCES");
	close(fd);
	s3_free(bad);

	cfg = cfg0;
	SET(cfg.bucket, "no-such-bucket");
	bad = client(&cfg);
	rc = s3_list(bad, NULL, count_keys, &n);
	ok(rc == -ENOENT && strcmp(s3_last()->code, "NoSuchBucket") == 0,
	    "a missing bucket: -ENOENT, %s", s3_last()->code);
	s3_free(bad);
}

/* ---- servers that misbehave ---- */

static void
hanging(void)
{
	struct s3_config cfg = cfg0;
	struct s3	*s3;
	unsigned char	 sha[32];
	int64_t		 t0, ms;
	int		 rc, fd;

	SET(cfg.endpoint, env("S3_HANG"));
	cfg.stall_s = 2;
	s3 = client(&cfg);
	t0 = clock_ms();
	rc = s3_get_fd(s3, "hang/get", out_file(), NULL);
	ms = clock_ms() - t0;
	/* No upper bound: a stall never detected hangs the call, and
	 * test_s3.sh's timeout ends the test. */
	ok(rc == -ETIMEDOUT && ms >= 1500,
	    "a server that never answers: get -ETIMEDOUT after %" PRId64
	    " ms (stall_s 2)", ms);
	fd = make_file(2 * MiB, 2, sha);
	t0 = clock_ms();
	rc = s3_put_fd(s3, "hang/put", fd, 2 * MiB, sha, 0, NULL);
	ms = clock_ms() - t0;
	ok(rc == -ETIMEDOUT, "... put of 2 MiB -ETIMEDOUT after %" PRId64
	    " ms (%d)", ms, rc);
	close(fd);
	s3_free(s3);

	/* A stall so long that only timeout_ms can end the call before
	 * test_s3.sh's timeout does. */
	cfg.stall_s = 3600;
	cfg.timeout_ms = 1500;
	s3 = client(&cfg);
	t0 = clock_ms();
	rc = s3_head(s3, "hang/head", NULL);
	ms = clock_ms() - t0;
	ok(rc == -ETIMEDOUT && ms >= 1400,
	    "... head -ETIMEDOUT after %" PRId64 " ms (timeout_ms 1500)", ms);
	s3_free(s3);
}

struct counted {
	uint64_t	n;
};

static int
count_bytes(void *ctx, const void *p, size_t n)
{
	((struct counted *)ctx)->n += n;
	return 0;
}

static void
cut(struct s3 *direct)
{
	struct s3_config cfg = cfg0;
	struct s3_info	*info = malloc(sizeof(*info));
	struct counted	 c = {0};
	struct s3	*s3;
	unsigned char	 sha[32], sha_a[32];
	size_t		 size = 4 * MiB;
	int		 fd, fd_a, rc;

	fd = make_file(size, 77, sha);
	ok(s3_put_fd(direct, "cut/get", fd, size, sha, 0, NULL) == 0,
	    "4 MiB stored for a cut GET");
	SET(cfg.endpoint, env("S3_CUTDOWN"));
	s3 = client(&cfg);
	rc = s3_get(s3, "cut/get", count_bytes, &c, info);
	ok((rc == -ECONNRESET || rc == -EIO) && c.n < size,
	    "GET cut after %d bytes: %d (%s), %" PRIu64 " bytes given, "
	    "never a short success", CUT_BYTES, rc, s3_last()->message, c.n);
	s3_free(s3);
	ok(get_same(direct, "cut/get", sha, size) == 0,
	    "the object itself is whole");

	SET(cfg.endpoint, env("S3_CUTUP"));
	s3 = client(&cfg);
	rc = s3_put_fd(s3, "cut/put-new", fd, size, sha, 0, NULL);
	ok(rc == -ECONNRESET || rc == -EIO || rc == -EAGAIN,
	    "PUT cut after %d bytes: %d (%s)", CUT_BYTES, rc,
	    s3_last()->message);
	rc = s3_head(direct, "cut/put-new", info);
	ok(rc == -ENOENT || (rc == 0 && info->size == size &&
	    get_same(direct, "cut/put-new", sha, size) == 0),
	    "a new key after a cut PUT: absent or whole (%s)",
	    rc == -ENOENT ? "absent" : "whole");

	fd_a = make_file(3 * MiB, 78, sha_a);
	s3_put_fd(direct, "cut/put-old", fd_a, 3 * MiB, sha_a, 0, NULL);
	rc = s3_put_fd(s3, "cut/put-old", fd, size, sha, 0, NULL);
	ok(rc < 0, "PUT over an object, cut: %d", rc);
	ok(get_same(direct, "cut/put-old", sha_a, 3 * MiB) == 0 ||
	    get_same(direct, "cut/put-old", sha, size) == 0,
	    "the object is the old or the new, whole (old: %s)",
	    get_same(direct, "cut/put-old", sha_a, 3 * MiB) == 0 ? "yes" :
	    "no");
	s3_free(s3);
	s3_delete(direct, "cut/get");
	s3_delete(direct, "cut/put-new");
	s3_delete(direct, "cut/put-old");
	close(fd);
	close(fd_a);
	free(info);
}

/* ---- threads ---- */

#define THREADS		8
#define ROUNDS		12

struct worker {
	struct s3	*s3;
	int		 id, good;
	int		 retries;	/* -EAGAIN answers retried */
	char		 why[512];
};

/*
 * s3.h's contract: -EAGAIN is the server's trouble (Swift answers 503
 * "Please reduce your request rate" when its disk is busy, as on a
 * loaded machine), and the caller retries with back-off, as the daemon
 * does.  The wait is the back-off, not a verdict.  @return 1: retry.
 */
static int
again(struct worker *w, int rc, int *tries)
{
	if (rc != -EAGAIN || ++*tries > 6)
		return 0;
	w->retries++;
	usleep(50000u << *tries);
	return 1;
}

static void *
work(void *arg)
{
	struct worker	*w = arg;
	unsigned char	 sha[32];
	char		 key[64];
	size_t		 size;
	int		 i, fd, rc, tries;

	for (i = 0; i < ROUNDS; i++) {
		snprintf(key, sizeof(key), "threads/%d/%d", w->id, i);
		size = 65536 + (size_t)(w->id * 1000 + i);
		/* make_file's counter is not shared safely: a name of our own. */
		{
			char		 path[512];
			unsigned char	*b = malloc(size);

			snprintf(path, sizeof(path), "%s/t%d-%d", dir, w->id, i);
			fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
			fill(b, size, (uint64_t)(w->id * 100 + i));
			if (fd < 0 || write(fd, b, size) != (ssize_t)size)
				abort();
			sha_buf(b, size, sha);
			free(b);
		}
		tries = 0;
		do
			rc = s3_put_fd(w->s3, key, fd, size, i % 2 ? sha :
			    NULL, 0, NULL);
		while (again(w, rc, &tries));
		if (rc == 0) {
			struct s3_info	*info = malloc(sizeof(*info));
			struct counted	 c = {0};

			tries = 0;
			do {
				c.n = 0;
				rc = s3_get(w->s3, key, count_bytes, &c, info);
			} while (again(w, rc, &tries));
			if (rc == 0 && (c.n != size ||
			    memcmp(info->sha256, sha, 32) != 0))
				rc = -EIO;
			tries = 0;
			if (rc == 0)
				do
					rc = s3_delete(w->s3, key);
				while (again(w, rc, &tries));
			free(info);
		}
		close(fd);
		if (rc != 0) {
			snprintf(w->why, sizeof(w->why), "%s: %d %ld %s %s",
			    key, rc, s3_last()->http, s3_last()->code,
			    s3_last()->message);
			return NULL;
		}
	}
	w->good = 1;
	return NULL;
}

static void
threads(void)
{
	struct worker	 w[THREADS];
	pthread_t	 t[THREADS];
	struct s3_stats	 st;
	struct s3	*s3 = client(&cfg0);
	int		 i, good = 0, retries = 0;

	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .s3 = s3, .id = i };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		good += w[i].good;
		retries += w[i].retries;
		if (!w[i].good)
			printf("# thread %d: %s\n", i, w[i].why);
	}
	s3_stats(s3, &st);
	ok(good == THREADS, "%d threads x %d put, get, compare, delete on "
	    "one client: %d threads without a failure (%d answers of the "
	    "server's trouble retried)", THREADS, ROUNDS, good, retries);
	ok(st.requests == (uint64_t)(THREADS * ROUNDS * 3 + retries) &&
	    st.failures == (uint64_t)retries,
	    "%" PRIu64 " requests, %" PRIu64 " failures, all retried",
	    st.requests, st.failures);
	ok(st.connects * 4 <= st.requests, "connections reused: %" PRIu64
	    " opened for %" PRIu64 " requests", st.connects, st.requests);
	s3_free(s3);
}

/* ---- the server gone ---- */

static void
stopped(struct s3 *s3)
{
	unsigned char	sha[32];
	int		fd, rc, n = 0;

	ok(s3_head(s3, "no/such/key", NULL) == -ENOENT,
	    "before: a pooled connection is open");
	ok(run("%s", env("S3_STOP")) == 0, "the server stopped");
	rc = s3_head(s3, "no/such/key", NULL);
	ok(rc == -ECONNREFUSED && s3_last()->http == 0,
	    "server gone: head -ECONNREFUSED (%d: %s)", rc,
	    s3_last()->message);
	fd = make_file(100, 1, sha);
	ok(s3_put_fd(s3, "gone", fd, 100, sha, 0, NULL) == -ECONNREFUSED,
	    "server gone: put -ECONNREFUSED");
	ok(s3_get_fd(s3, "gone", out_file(), NULL) == -ECONNREFUSED,
	    "server gone: get -ECONNREFUSED");
	ok(s3_list(s3, "", count_keys, &n) == -ECONNREFUSED,
	    "server gone: list -ECONNREFUSED");
	close(fd);
}

int
main(void)
{
	struct s3	*s3;
	const char	*why;

	setvbuf(stdout, NULL, _IOLBF, 0);
	dir = scratch("s3");
	SET(cfg0.endpoint, env("S3_ENDPOINT"));
	SET(cfg0.region, env("S3_REGION"));
	SET(cfg0.access_key, env("S3_ACCESS_KEY"));
	SET(cfg0.secret_key, env("S3_SECRET_KEY"));
	SET(cfg0.bucket, env("S3_BUCKET"));
	cfg0.stall_s = 20;
	ok(s3conf_check(&cfg0, &why) == 0, "the server's config is valid: %s",
	    why ? why : "yes");
	s3 = client(&cfg0);

	round_trip(s3, 0, 1);
	round_trip(s3, 1, 0);
	round_trip(s3, 5 * MiB + 3, 1);
	round_trip(s3, 3 * MiB, 0);
	odd_keys(s3);
	bad_keys(s3);
	copies(s3);
	listing();
	metadata(s3);
	conditional(s3);
	errors(s3);
	hanging();
	cut(s3);
	threads();
	stopped(s3);

	s3_free(s3);
	rmtree(dir);
	free(dir);
	return done();
}

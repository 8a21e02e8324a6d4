/*
 * blob: the blob writer.  A blob is staged in memory (a memfd) or written
 * to a file of tmp/ while its SHA-256 is computed; cache_put_blob()
 * (cache.c) renames it into blobs/ in the transaction that indexes it.
 * See cache.h for the contract of cache_blob_*().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* mkostemp, memfd_create; configure sets it too */
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cache/cache.h"
#include "cache/cache_int.h"

/* Writeback is started every this many bytes (see cache_blob_write). */
#define WRITEBACK_CHUNK	((uint64_t)8 << 20)

/* A staged blob moves to a file of tmp/ when it grows past this. */
#define STAGE_MAX	((uint64_t)8 << 20)

/* Give b a file of tmp/ and a digest to update. */
static int
blob_open(struct cache *c, struct cache_blob *b)
{
	if (snprintf(b->tmp, sizeof(b->tmp), "%s/tmp/blob.XXXXXX", c->dir) >=
	    (int)sizeof(b->tmp)) {
		b->tmp[0] = '\0';
		return -ENAMETOOLONG;
	}
	if ((b->fd = mkostemp(b->tmp, O_CLOEXEC)) < 0) {
		b->tmp[0] = '\0';
		return -errno;
	}
	/* Blobs are public artifacts: readable by whoever reads the store. */
	(void)fchmod(b->fd, 0644);
	if ((b->md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(b->md, EVP_sha256(), NULL) != 1)
		return -ENOMEM;
	return 0;
}

int
cache_blob_create(struct cache *c, struct cache_blob **out)
{
	struct cache_blob	*b;
	int			 rc;

	*out = NULL;
	if (c->readonly)
		return -EROFS;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return -ENOMEM;
	b->c = c;
	b->fd = -1;
	if ((rc = blob_open(c, b)) < 0) {
		cache_blob_abort(b);
		return rc;
	}
	*out = b;
	return 0;
}

int
cache_blob_create_staged(struct cache *c, struct cache_blob **out)
{
	struct cache_blob	*b;

	*out = NULL;
	if (c->readonly)
		return -EROFS;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return -ENOMEM;
	b->c = c;
	if ((b->fd = memfd_create("symhub-blob", MFD_CLOEXEC)) < 0) {
		free(b);
		return cache_blob_create(c, out);
	}
	b->staged = 1;
	*out = b;
	return 0;
}

/* Hand the first size bytes of fd to fn, 64 KiB at a time.
 * @return 0, fn's value, or -errno. */
static int
read_out(int fd, uint64_t size, int (*fn)(void *, const void *, size_t),
    void *ctx)
{
	unsigned char	 buf[65536];
	uint64_t	 off = 0;
	ssize_t		 n;
	int		 rc = 0;

	while (rc == 0 && off < size) {
		n = pread(fd, buf, size - off < sizeof(buf) ?
		    (size_t)(size - off) : sizeof(buf), (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = n < 0 ? -errno : -EIO;
		else if ((rc = fn(ctx, buf, (size_t)n)) == 0)
			off += (uint64_t)n;
	}
	return rc;
}

static int
write_fn(void *ctx, const void *buf, size_t len)
{
	return cache_blob_write(ctx, buf, len);
}

static int
hash_fn(void *ctx, const void *buf, size_t len)
{
	return EVP_DigestUpdate(ctx, buf, len) == 1 ? 0 : -EIO;
}

/* Move a staged blob into a file of tmp/, hashing it on the way. */
int
cache_blob_unstage(struct cache_blob *b)
{
	uint64_t	 size = b->size;
	int		 mfd = b->fd, rc;

	b->fd = -1;
	b->size = b->flushed = 0;
	b->staged = 0;
	if ((rc = blob_open(b->c, b)) == 0)
		rc = read_out(mfd, size, write_fn, b);
	close(mfd);
	return rc;
}

int
cache_blob_write(struct cache_blob *b, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;
	int		 rc;

	if (b->staged && b->size + len > STAGE_MAX &&
	    (rc = cache_blob_unstage(b)) < 0)
		return rc;
	if (b->md != NULL && EVP_DigestUpdate(b->md, buf, len) != 1)
		return -EIO;
	while (len > 0) {
		if ((n = write(b->fd, p, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		b->size += (uint64_t)n;
	}
	if (b->staged)
		return 0;
	/*
	 * Start writing back what is complete, without waiting: the disk
	 * works while the rest arrives, so the fsync at the end has little
	 * left to do (a 1 GiB upload otherwise waits ~1 s there), and dirty
	 * pages stay bounded.  Advisory: errors show up at fsync.
	 */
	if (b->size - b->flushed >= WRITEBACK_CHUNK) {
		(void)sync_file_range(b->fd, (off_t)b->flushed,
		    (off_t)(b->size - b->flushed), SYNC_FILE_RANGE_WRITE);
		b->flushed = b->size;
	}
	return 0;
}

uint64_t
cache_blob_size(const struct cache_blob *b)
{
	return b->size;
}

int
cache_blob_fd(const struct cache_blob *b)
{
	return b->fd;
}

int
cache_blob_digest(const struct cache_blob *b, unsigned char out[32])
{
	EVP_MD_CTX	*copy;
	unsigned int	 len;
	int		 rc = -EIO;

	if ((copy = EVP_MD_CTX_new()) == NULL)
		return -ENOMEM;
	if (!b->staged) {
		if (EVP_MD_CTX_copy_ex(copy, b->md) == 1 &&
		    EVP_DigestFinal_ex(copy, out, &len) == 1)
			rc = 0;
	} else if (EVP_DigestInit_ex(copy, EVP_sha256(), NULL) == 1 &&
	    read_out(b->fd, b->size, hash_fn, copy) == 0 &&
	    EVP_DigestFinal_ex(copy, out, &len) == 1) {
		rc = 0;		/* staged: hashed from the bytes read back */
	}
	EVP_MD_CTX_free(copy);
	return rc;
}

void
cache_blob_abort(struct cache_blob *b)
{
	if (b == NULL)
		return;
	if (b->fd >= 0)
		close(b->fd);
	if (b->tmp[0] != '\0')
		unlink(b->tmp);
	EVP_MD_CTX_free(b->md);
	free(b);
}

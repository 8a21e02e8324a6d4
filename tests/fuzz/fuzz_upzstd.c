/*
 * Fuzz upzstd (src/symhubd/upzstd.c): any bytes as a zstd answer from
 * another hub.  The first four bytes are the announced size (little
 * endian, at most 1 MiB), the fifth the chunk size libcurl hands over
 * (1 to 256 bytes, or 16 KB); the rest is the body.  Promises: never more
 * decoded than announced; an error stays; a body upzstd_end() takes
 * decodes, in one call of libzstd, to the same bytes.
 *
 * The store's blobs are stood in for here (no cache to open): a blob is
 * a buffer, which is also what the checks read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "fuzz.h"
#include "cache/cache.h"
#include "symhubd/upzstd.h"

#define LIMIT_MAX	(1u << 20)

struct cache_blob {
	unsigned char	*b;
	size_t		 n, cap;
};

int
cache_blob_create_staged(struct cache *c, struct cache_blob **out)
{
	(void)c;
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? 0 : -ENOMEM;
}

int
cache_blob_write(struct cache_blob *b, const void *buf, size_t len)
{
	unsigned char *n;

	if (b->n + len > b->cap) {
		b->cap = (b->n + len) * 2;
		if ((n = realloc(b->b, b->cap)) == NULL)
			return -ENOMEM;
		b->b = n;
	}
	memcpy(b->b + b->n, buf, len);
	b->n += len;
	return 0;
}

int
cache_blob_fd(const struct cache_blob *b)
{
	(void)b;
	return -1;	/* kept in memory here: nothing to read back */
}

void
cache_blob_abort(struct cache_blob *b)
{
	if (b == NULL)
		return;
	free(b->b);
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cache_blob	 out = { NULL, 0, 0 }, *kept;
	struct upzstd		*z;
	unsigned char		*one = NULL;
	uint64_t		 limit;
	size_t			 chunk, off, n, r;
	int			 rc = 0, end;

	if (size < 5)
		return 0;
	limit = ((uint64_t)data[0] | (uint64_t)data[1] << 8 |
	    (uint64_t)data[2] << 16 | (uint64_t)data[3] << 24) % (LIMIT_MAX + 1);
	chunk = data[4] == 0 ? 16384 : data[4];
	data += 5;
	size -= 5;
	/* A fake cache pointer: the stubs never look at it. */
	if (upzstd_create((struct cache *)&out, limit, &z) < 0)
		return 0;
	for (off = 0; off < size; off += n) {
		n = size - off < chunk ? size - off : chunk;
		if ((rc = upzstd_write(z, data + off, n, &out)) < 0)
			break;
		if (out.n > limit)
			abort();
	}
	if (rc < 0 && upzstd_write(z, data, 0, &out) != rc)
		abort();	/* errors stay */
	end = upzstd_end(z);
	if (rc < 0 && end != rc)
		abort();
	if (upzstd_coded(z) > size)
		abort();
	kept = upzstd_take(z);
	if (end == 0) {
		/* What was kept is the body, and decodes to what came out. */
		if (kept == NULL || kept->n != size ||
		    (size > 0 && memcmp(kept->b, data, size) != 0))
			abort();
		if ((one = malloc(out.n + 1)) == NULL)
			abort();
		r = ZSTD_decompress(one, out.n + 1, data, size);
		if (ZSTD_isError(r) || r != out.n ||
		    (r > 0 && memcmp(one, out.b, r) != 0))
			abort();
	}
	cache_blob_abort(kept);
	upzstd_free(z);
	free(out.b);
	free(one);
	return 0;
}

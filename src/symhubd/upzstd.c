/*
 * upzstd: a zstd body decoded as it arrives (see upzstd.h).
 *
 * Runs on the fetch thread, in libcurl's write callback: one call per
 * chunk, no call blocks but the blobs' writes.
 */
#include <errno.h>
#include <stdlib.h>

#include <zstd.h>

#include "upzstd.h"

/*
 * The window a frame may ask for, which the decoder allocates: 2^23
 * (8 MiB, what levels up to 19 use) or the announced size rounded up,
 * at most 2^27 (128 MiB, zstd's own limit without --long).  An encoder
 * never needs a window larger than its input, so a frame that asks for
 * more than the file is refused, not given memory the sender chose.
 */
#define WINDOW_LOG_MIN	23
#define WINDOW_LOG_MAX	27

struct upzstd {
	ZSTD_DCtx		*d;
	struct cache_blob	*kept;		/* the coded bytes, or NULL */
	void			*obuf;
	size_t			 olen;
	uint64_t		 limit, decoded, coded;
	size_t			 hint;		/* 0: at a frame's end */
	int			 err;		/* sticky */
};

int
upzstd_create(struct cache *c, uint64_t limit, struct upzstd **out)
{
	struct upzstd	*z;
	int		 rc, wlog = WINDOW_LOG_MIN;

	*out = NULL;
	while (wlog < WINDOW_LOG_MAX && ((uint64_t)1 << wlog) < limit)
		wlog++;
	if ((z = calloc(1, sizeof(*z))) == NULL)
		return -ENOMEM;
	z->limit = limit;
	z->hint = 1;		/* no frame yet: an empty body is no file */
	z->olen = ZSTD_DStreamOutSize();
	if ((z->d = ZSTD_createDCtx()) == NULL ||
	    (z->obuf = malloc(z->olen)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (ZSTD_isError(ZSTD_DCtx_setParameter(z->d, ZSTD_d_windowLogMax,
	    wlog))) {
		rc = -EINVAL;
		goto out;
	}
	if (c != NULL && (rc = cache_blob_create_staged(c, &z->kept)) < 0)
		goto out;
	*out = z;
	return 0;
out:
	upzstd_free(z);
	return rc;
}

int
upzstd_write(struct upzstd *z, const void *buf, size_t len,
    struct cache_blob *out)
{
	ZSTD_inBuffer	in = { buf, len, 0 };
	ZSTD_outBuffer	ob;
	size_t		r;
	int		rc;

	if (z->err)
		return z->err;
	z->coded += len;
	if (z->kept != NULL && (rc = cache_blob_write(z->kept, buf, len)) < 0)
		goto fail;
	/* Until the input is used and the output buffer was not filled:
	 * a full buffer may hold back more of what the input gave. */
	do {
		ob.dst = z->obuf;
		ob.size = z->olen;
		ob.pos = 0;
		r = ZSTD_decompressStream(z->d, &ob, &in);
		if (ZSTD_isError(r)) {
			rc = -EBADMSG;
			goto fail;
		}
		z->hint = r;
		/* Refused before the bytes are written: a bomb costs at most
		 * the announced size on disk, and one buffer in memory. */
		if (ob.pos > z->limit - z->decoded) {
			rc = -EFBIG;
			goto fail;
		}
		if (ob.pos > 0 && (rc = cache_blob_write(out, z->obuf,
		    ob.pos)) < 0)
			goto fail;
		z->decoded += ob.pos;
	} while (in.pos < in.size || ob.pos == ob.size);
	return 0;
fail:
	z->err = rc;
	/* What was kept is of no use now. */
	cache_blob_abort(z->kept);
	z->kept = NULL;
	return rc;
}

int
upzstd_end(struct upzstd *z)
{
	if (z->err)
		return z->err;
	/* ZSTD_decompressStream() returns 0 exactly at a frame's end. */
	return z->hint == 0 ? 0 : -EBADMSG;
}

uint64_t
upzstd_coded(const struct upzstd *z)
{
	return z->coded;
}

int
upzstd_kept_fd(const struct upzstd *z)
{
	return z->kept != NULL ? cache_blob_fd(z->kept) : -1;
}

struct cache_blob *
upzstd_take(struct upzstd *z)
{
	struct cache_blob *b;

	if (z == NULL || z->err)
		return NULL;
	b = z->kept;
	z->kept = NULL;
	return b;
}

void
upzstd_free(struct upzstd *z)
{
	if (z == NULL)
		return;
	cache_blob_abort(z->kept);
	ZSTD_freeDCtx(z->d);
	free(z->obuf);
	free(z);
}

/*
 * upzstd: a zstd body from an upstream hub, decoded as it arrives.
 *
 * A hub asks another symhub for zstd (an upstream's accept-encoding=zstd)
 * and gets the copy that hub keeps: a fraction of the bytes on the wire.
 * The decoded bytes go to the blob the fetch engine verifies and stores
 * (the build-id, X-DEBUGINFOD-SIZE) as with an identity body; the coded
 * bytes are kept beside them, and stored as this hub's zstd copy
 * (encode.h), so clients that accept zstd get them without compressing
 * again.  What the stream decodes to is bounded by the size the upstream
 * announced: a bomb is refused at the first byte past it, and memory
 * stays a window and a buffer.  No HTTP and no logging here.
 */
#ifndef SYMHUB_UPZSTD_H
#define SYMHUB_UPZSTD_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"

struct upzstd;		/* opaque */

/*
 * A decoder for a body that decodes to limit bytes (X-DEBUGINFOD-SIZE),
 * keeping the coded bytes in a staged blob of c when c is not NULL.
 * @return 0 with *out (free it with upzstd_free()), or -errno.
 */
int	upzstd_create(struct cache *c, uint64_t limit, struct upzstd **out);

/*
 * The next len coded bytes: decoded into out, written as they came to
 * the kept copy.
 * @return 0; -EFBIG they decode past the limit; -EBADMSG not zstd, or
 *         corrupt; the blobs' -errno.  After an error the decoder stays
 *         failed (every later call returns it).
 */
int	upzstd_write(struct upzstd *z, const void *buf, size_t len,
	    struct cache_blob *out);

/*
 * All the body came.  @return 0 when it was whole zstd frames (what they
 *         decoded to may still be short of the limit: the engine's size
 *         check says so); -EBADMSG cut inside a frame, or no frame at
 *         all; the error upzstd_write() returned.
 */
int	upzstd_end(struct upzstd *z);

/* Coded bytes taken so far. */
uint64_t upzstd_coded(const struct upzstd *z);

/* The kept copy's descriptor (it changes when a staged blob moves to
 * tmp/), or -1 when none is kept (c NULL, taken, or after an error). */
int	upzstd_kept_fd(const struct upzstd *z);

/*
 * Take the kept copy (NULL when none is kept, or after an error): the
 * caller finishes it (encode_adopt()) or aborts it.
 */
struct cache_blob *upzstd_take(struct upzstd *z);

/* Free z and a copy not taken.  Accepts NULL. */
void	upzstd_free(struct upzstd *z);

#endif

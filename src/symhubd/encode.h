/*
 * encode: compressed copies of the debuginfo and executable files the
 * store holds, for clients that accept a content coding (zstd, gzip).
 *
 * A file is compressed once, on a worker thread, the first time a client
 * that accepts the coding asks for it, and the copy kept in the store as
 * a derived, evictable entry (CACHE_ENCODED, "ENCODING:KIND") tied to the
 * bytes it came from: a changed file makes it stale and it is made anew.
 * A file that compresses by less than a tenth is kept as an empty entry
 * that says so, and sent as it is.  libzstd and zlib do the compressing.
 * No HTTP here: the front chooses the coding and the answer.
 */
#ifndef SYMHUB_ENCODE_H
#define SYMHUB_ENCODE_H

#include <stdint.h>
#include <stdio.h>

#include "cache/cache.h"
#include "common/webapi.h"
#include "config.h"
#include "scan.h"

struct encode;		/* opaque */

/* The coding's name, as Content-Encoding says it ("zstd", "gzip"). */
const char *encode_name(unsigned coding);

/*
 * Start the worker.  cfg: compress (the codings offered), compress-level.
 * @param s  the scanner, to re-index a changed file; NULL: none.
 * @return 0 with *out (NULL when cfg offers no coding), or -errno.
 */
int	encode_create(struct cache *c, struct scan *s, const struct config *cfg,
	    struct encode **out);

/* The codings offered (WEBAPI_ENC_* bits); 0 for NULL. */
unsigned encode_offered(const struct encode *e);

/*
 * The stored copy of key (CACHE_DEBUGINFO or CACHE_EXECUTABLE), whose
 * record is rec, in coding, if it was made from rec's bytes.
 * @return 0 with *erec (release it) and *fd (close it); -ENODATA when
 *         the file does not compress (send it as it is); -ENOENT when
 *         there is no fresh copy (encode_request() makes one); -errno.
 */
int	encode_lookup(struct encode *e, const struct cache_key *key,
	    const struct cache_record *rec, unsigned coding,
	    struct cache_record *erec, int *fd);

/* Called once, on the worker: 0 (stored: look it up again), or -errno
 * (-ECANCELED stopping, -EROFS/-ENOSPC store refused, ...). */
typedef void (*encode_done_fn)(void *ctx, int rc);

/*
 * Make the copy of key in coding, joining one under way.  Copies key.
 * @return 0 (done is called once, later), -EBUSY when ENCODE_QUEUE_MAX
 *         files wait already (send the file as it is), or -errno.
 */
int	encode_request(struct encode *e, const struct cache_key *key,
	    unsigned coding, encode_done_fn done, void *ctx);

#define ENCODE_QUEUE_MAX	64

/*
 * Keep b (consumed in every case), bytes in coding that another hub sent
 * (upzstd.h), as key's copy in that coding: the copy of the file whose
 * record, just stored, has fingerprint parent and size bytes, made at
 * level (the sender's X-Symhub-Level; 0: not known).  The second pass
 * (--compress-best-level) makes it again only when that is lower.  A
 * copy that saves under a tenth is kept as the empty entry that says so.
 * No struct encode needed: the fetch engine stores it as it stores the
 * file.  @return 0 or -errno.
 */
int	encode_adopt(struct cache *c, const struct cache_key *key,
	    uint64_t parent, uint64_t size, const struct cache_record *rec,
	    unsigned coding, int level, struct cache_blob *b);

/*
 * A coder of one answer whose bytes come a piece at a time (a cold miss
 * streamed as it arrives, fetch.h), in zstd at level: the coded bytes
 * are let out as the caller says (ENCODE_FLUSH: everything taken so
 * far, before it waits for more), and the frame is ended, with its
 * checksum, only by ENCODE_END.  A coder never ended leaves a frame no
 * decoder takes for whole.  No I/O.
 */
struct encode_coder;	/* opaque */

enum encode_flush {
	ENCODE_MORE,		/* more to come: code at leisure */
	ENCODE_FLUSH,		/* let out what was taken */
	ENCODE_END		/* the file is whole: end the frame */
};

/* @param size  the file's, announced: the frame header says it.
 * @return 0 with *out (encode_coder_free()), -ENOTSUP for a coding
 *         other than zstd, -ENOMEM. */
int	encode_coder_create(unsigned coding, int level, uint64_t size,
	    struct encode_coder **out);

/* Take len bytes of the file (none: just how); the coded bytes wait in
 * the coder for encode_coder_drain().  @return 0, -EIO (libzstd refused:
 * more bytes than size, say), -ENOMEM. */
int	encode_coder_write(struct encode_coder *c, const void *buf,
	    size_t len, enum encode_flush how);

/* Copy at most max coded bytes waiting into buf.  @return how many. */
size_t	encode_coder_drain(struct encode_coder *c, void *buf, size_t max);

/* Coded bytes waiting to be drained. */
size_t	encode_coder_pending(const struct encode_coder *c);

/* Accepts NULL. */
void	encode_coder_free(struct encode_coder *c);

/* Count an answer sent in coding (0: as it is, to a client that accepts
 * a coding) of bytes on the wire, for the metrics. */
void	encode_count(struct encode *e, unsigned coding, uint64_t bytes);

/* Stop the worker; waiters get -ECANCELED.  Idempotent; accepts NULL. */
void	encode_stop(struct encode *e);
void	encode_free(struct encode *e);

/* Prometheus lines. */
void	encode_metrics(struct encode *e, FILE *fp);

#endif

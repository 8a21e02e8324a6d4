/*
 * upload: the private upload store's write path.  A body streams into a
 * cache blob (never into memory), is validated with libelf, and then
 * replaces what the store has for the key only if it is better, or if the
 * uploader insists.  Uploaded records are pinned: the byte budget never
 * evicts them.  No status codes here: the HTTP front maps the results.
 */
#ifndef SYMHUB_UPLOAD_H
#define SYMHUB_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"

enum upload_result {
	UPLOAD_STORED,		/* nothing was stored for the key before */
	UPLOAD_REPLACED,	/* replaced a worse copy, or forced */
	UPLOAD_SAME,		/* these very bytes were stored already */
	UPLOAD_WORSE,		/* the stored copy is as good or better */
	UPLOAD_INVALID,		/* not ELF, truncated, wrong build-id, no
				 * symbols, no code, empty: msg says which */
	UPLOAD_TOO_BIG,		/* over the size limit */
	UPLOAD_NO_SPACE,	/* the store is full or read-only */
	UPLOAD_ERROR		/* anything else; msg says what */
};

struct upload;

/*
 * Start an upload for key (CACHE_DEBUGINFO, CACHE_EXECUTABLE, or
 * CACHE_BUNDLE: a source bundle, which bundle.h takes).
 * @param max  bytes at most; 0: no limit.
 * @return 0 and *out, -EINVAL for another kind, -errno from the store.
 */
int	upload_begin(struct cache *c, const struct cache_key *key,
	    uint64_t max, struct upload **out);

/* Append body bytes.  @return 0, -EFBIG past max, -errno (-ENOSPC). */
int	upload_write(struct upload *u, const void *buf, size_t len);

/*
 * Key the upload by FileID instead of build-id (a binary without a GNU
 * build-id, PUT /fileid/FILEID/...): an executable must then hash to that
 * FileID; a debuginfo is taken on the uploader's word.
 */
void	upload_by_fileid(struct upload *u);

/* The FileID of the deployed binary these symbols belong to (from the
 * X-Symhub-FileID header), recorded in the FileID map on success. */
void	upload_set_fileid(struct upload *u,
	    const unsigned char fid[CACHE_FILEID_LEN]);

/* Do not pin the stored copy: its durable copy is elsewhere (the
 * bucket, --s3), and the store is a cache the budget may evict. */
void	upload_unpinned(struct upload *u);

/* Store the upload private (CACHE_F_PRIVATE): its tenant only reads it,
 * and it stays pinned here, never written to a shared bucket. */
void	upload_private(struct upload *u);

/* The bounds of a source bundle's members (CACHE_BUNDLE): unpacked
 * bytes and members at most.  Default: none. */
void	upload_bundle_limits(struct upload *u, uint64_t bytes,
	    uint64_t members);

/* Bytes received so far. */
uint64_t upload_size(const struct upload *u);

/*
 * Validate and, if it wins, store.  Consumes u in every case.
 * @param force  store even when the stored copy is as good or better.
 * @param who    the uploader, recorded as the origin ("upload:WHO").
 * @param msg    receives one line for the client: what happened and why.
 */
enum upload_result upload_finish(struct upload *u, int force,
	    const char *who, char *msg, size_t msglen);

/* Drop an upload.  Accepts NULL. */
void	upload_abort(struct upload *u);

/*
 * With a bucket (--s3) an upload is durable only once the bucket has
 * it: one that left a copy here (res UPLOAD_STORED, UPLOAD_REPLACED or
 * UPLOAD_SAME) is answered only after bucket_put(), and its result
 * stands only if the bucket took it (upload_bucket_done()).
 * @return 1 when res must wait for the bucket.
 */
int	upload_wants_bucket(enum upload_result res);

/*
 * The bucket's answer rc to an upload of key that ended in res: a copy
 * it did not take (rc < 0; -EEXIST: its own is as good or better) is
 * not kept here either, for another replica would not have it, and
 * what the bucket holds is served again; these very bytes stored
 * before (UPLOAD_SAME) stay.  @return rc.
 */
int	upload_bucket_done(struct cache *c, const struct cache_key *key,
	    enum upload_result res, int rc);

/*
 * DELETE: drop key's copy.  A scanned file that copy displaced takes
 * over again: s's next pass reads the files that list key (s NULL:
 * none).
 * @param elsewhere  a copy was deleted elsewhere (the bucket): none
 *                   here is then no miss.
 * @return 0 when deleted; -ENOENT when nothing was stored; -errno.
 */
struct scan;
int	upload_delete(struct cache *c, struct scan *s,
	    const struct cache_key *key, int elsewhere);

#endif

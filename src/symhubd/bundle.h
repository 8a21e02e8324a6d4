/*
 * bundle: source bundles uploaded with a build (PUT /buildid/ID/sources,
 * symhub upload --sources; the format is common/srcbundle.h).
 *
 * A bundle is taken only for a build-id whose debuginfo the store has,
 * and only the members its DWARF names (line tables and units, as
 * elfinfo_sources() lists them, canonical) are kept: the others are
 * dropped and named in the answer.  A member that is a link, has an
 * absolute name or a ".." segment refuses the whole bundle, as do
 * corrupt bytes and the bounds.  What is kept is written again as a
 * bundle of its own (the same members make the same bytes, so a
 * re-upload is "the same") and stored under (CACHE_BUNDLE, id), pinned
 * like every upload: that record is what the budget, the bucket and
 * export see.  A member is put in the store as a plain source record
 * when first asked for (unpinned: made again from the bundle when
 * evicted), which /buildid/ID/source/PATH then serves like any other.
 * No status codes here: the HTTP front maps the upload results.
 */
#ifndef SYMHUB_BUNDLE_H
#define SYMHUB_BUNDLE_H

#include <stddef.h>

#include "cache/cache.h"
#include "common/srcbundle.h"
#include "upload.h"

/*
 * Check the bundle uploaded into blob in (consumed in every case) for
 * key (CACHE_BUNDLE, id) and store what it keeps.
 * @param pin      pin the stored bundle (not with a bucket: upload.h)
 * @param who      the uploader, the origin "upload:WHO"
 * @param msg      one line for the client: what was kept and dropped,
 *                 or why it was refused
 * @param kept     receives the members kept (may be NULL)
 * @param dropped  receives the members dropped (may be NULL)
 * @return UPLOAD_STORED, UPLOAD_REPLACED (another bundle was stored),
 *         UPLOAD_SAME; UPLOAD_INVALID (no debuginfo, corrupt, a member
 *         refused, nothing the DWARF names); UPLOAD_TOO_BIG (a bound);
 *         UPLOAD_NO_SPACE; UPLOAD_ERROR.
 */
enum upload_result bundle_take(struct cache *c, struct cache_blob *in,
	    const struct cache_key *key, const struct srcbundle_limits *lim,
	    int pin, const char *who, char *msg, size_t msglen,
	    size_t *kept, size_t *dropped);

/*
 * The lookup's hook: does the bundle stored for id hold path (canonical,
 * absolute)?  Then it is put in the store as a source record (origin
 * "bundle", not pinned), so that the next look-up of (id, path) is a
 * hit.  Runs on the caller's thread and unpacks the bundle up to path.
 * @return 0 when path is a member; -ENOENT when there is no bundle or
 *         path is not in it; -errno.
 */
int	bundle_expand(struct cache *c, const unsigned char *id, size_t idlen,
	    const char *path);

/*
 * Put every member of id's bundle that the store lacks as a source
 * record, and call each(ctx, key) for every member (for the bucket's
 * write-back).  @return 0, -ENOENT when no bundle is stored, -errno.
 */
int	bundle_expand_all(struct cache *c, const unsigned char *id,
	    size_t idlen, void (*each)(void *ctx, const struct cache_key *key),
	    void *ctx);

/*
 * Drop the source records made from id's bundle (origin "bundle"):
 * before it is deleted, or after it was replaced.
 * @return 0, -ENOENT when no bundle is stored, -errno.
 */
int	bundle_forget(struct cache *c, const unsigned char *id, size_t idlen);

/*
 * The Last-Modified of rec, a source record of key made from a bundle
 * (origin "bundle"), is served with: its own, never later than the
 * debuginfo's or the executable's of the build-id.  Records put before
 * members kept their tar's mtime carry the bundle's upload time, which
 * may be later than the build's (and make gdb warn "Source file is more
 * recent than executable"); this serves them as they would be made now.
 * @return seconds since the epoch.
 */
int64_t	bundle_served_time(struct cache *c, const struct cache_key *key,
	    const struct cache_record *rec);

#endif

/*
 * records: how the daemon opens what the store holds, and the one place
 * that decides a record is broken and drops it.
 *
 * cache/ reports what it finds (a blob gone: -ENOENT; unreadable: -EIO;
 * a scanned file changed: -ESTALE) and scan re-reads a changed file; the
 * decision to forget a record is taken here, logged with the reason, for
 * every reader: the artifact route, section cutting, GSYM conversion and
 * serving.  Nothing that could be served again is dropped: a changed
 * scanned file is re-indexed first, once.
 */
#ifndef SYMHUB_RECORDS_H
#define SYMHUB_RECORDS_H

#include "cache/cache.h"
#include "scan.h"

/*
 * Look key up and open its bytes.  A source made from a bundle has its
 * last_modified as it is served (bundle_served_time()).
 * @param s    the scanner, to re-index a changed file; NULL: none.
 * @return 0 with *rec (release it) and *fd (close it); -ENODATA for a
 *         negative entry; -ENOENT when there is none, or there was a
 *         broken one (now dropped); another -errno from the store.
 */
int	records_open(struct cache *c, struct scan *s,
	    const struct cache_key *key, struct cache_record *rec, int *fd);

/*
 * records_open() of a record the caller looked up already (cache_get()
 * returned 0 for key into rec): opens its bytes, with the same re-index
 * and drop.  @return as records_open(); on failure rec is released.
 */
int	records_open_got(struct cache *c, struct scan *s,
	    const struct cache_key *key, struct cache_record *rec, int *fd);

/*
 * May reader (a token's name, "TENANT/NAME"; NULL or "": no token) read
 * rec?  A private upload (CACHE_F_PRIVATE) is its tenant's only: the
 * origin "upload:TENANT/NAME" upload_finish() recorded says whose.
 * @return 1 or 0.
 */
int	records_may_read_record(const struct cache_record *rec,
	    const char *reader);

/* May reader read id: neither its debuginfo nor its executable is
 * another tenant's private upload.  @return 1 or 0. */
int	records_may_read(struct cache *c, const unsigned char *id,
	    size_t idlen, const char *reader);

/* Has the store a live record of kind for id (no bytes opened)?
 * @return 1 or 0. */
int	records_have(struct cache *c, enum cache_kind kind,
	    const unsigned char *id, size_t idlen);

/*
 * A record whose bytes failed to open or read with rc: drop it when rc
 * says they are gone for good (-ENOENT, -EIO, -ESTALE).
 * @return -ENOENT when dropped, else rc.
 */
int	records_broken(struct cache *c, const struct cache_key *key,
	    const struct cache_record *rec, int rc);

#endif

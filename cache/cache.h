/*
 * cache: symhub's storage engine.
 *
 * An LMDB index over content-addressed blob files, plus references to files
 * indexed in place (scanned directories), negative entries, a byte budget
 * with least-recently-used eviction, and an open-time consistency check.
 *
 * Layout under the store directory:
 *   index/        the LMDB environment
 *   blobs/ab/cd…  blob files, named by the SHA-256 of their bytes
 *   catalog/xx/…  one entry per blob record and FileID mapping: what the
 *                 index says of it, so the index can be rebuilt from
 *                 catalog and blobs (cache_rebuild())
 *   quarantine/   blob files no record refers to, and blobs whose bytes
 *                 failed their SHA-256; deleted only by
 *                 cache_quarantine_collect(), after a grace time
 *   tmp/          files being written; anything here at open is garbage
 *   lock          held shared by every open, exclusive by cache_rebuild()
 *
 * A blob is written to tmp/, fsynced, renamed into blobs/, its catalog
 * entry written, and only then indexed, all under one write transaction,
 * so a crash at any point leaves at most an unindexed blob (that the next
 * cache_open() moves to quarantine/) and a catalog entry ahead of the
 * index.  The cache deletes a blob only when a committed change released
 * its last reference: never because the index does not know it.
 *
 * No HTTP, no logging: every function returns 0 (or a count) on success and
 * a negative errno on failure.  A miss is a result (-ENOENT), not an error.
 * All functions are safe to call from several threads on one struct cache.
 * Open the cache after any fork(), never before.
 */
#ifndef SYMHUB_CACHE_H
#define SYMHUB_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* The kinds (enum cache_kind), CACHE_ID_MAX and CACHE_FILEID_LEN. */
#include "base/artifact.h"

struct cache;		/* opaque */
struct cache_blob;	/* opaque: a blob being written */

struct cache_key {
	enum cache_kind		 kind;
	const unsigned char	*id;
	size_t			 idlen;		/* 1..CACHE_ID_MAX */
	const char		*extra;		/* NULL unless SOURCE or SECTION */
};

/* Record flags. */
#define CACHE_F_EXTERNAL 0x01u	/* refers to a file in place, not a blob */
#define CACHE_F_PINNED	 0x02u	/* never evicted by the byte budget */
#define CACHE_F_DERIVED	 0x04u	/* made from another record (a section) */
/* With EXTERNAL: the bytes are member xfile of the archive at path, whose
 * identity is dev, ino, mtime_ns and parent (its size); cache_open_data()
 * cannot open them: the daemon extracts them into a CACHE_MEMBER entry. */
#define CACHE_F_MEMBER	 0x08u
/* A private upload: served only to the tenant its origin names (the
 * daemon's business); absent from stores written before it, so an old
 * record is public. */
#define CACHE_F_PRIVATE	 0x10u

#define CACHE_SEEK_MAX	32	/* bytes of a record's seek */

struct cache_record {
	uint64_t	 size;		/* bytes of the artifact */
	uint32_t	 flags;		/* CACHE_F_* */
	uint32_t	 quality;	/* opaque to the cache (elfinfo markers) */
	unsigned char	 digest[32];	/* SHA-256 of the blob; zero if EXTERNAL */
	/* EXTERNAL: identity of the file when it was indexed.  A file whose
	 * identity no longer matches is never served (-ESTALE). */
	uint64_t	 dev, ino;
	int64_t		 mtime_ns;
	int64_t		 last_modified;	/* seconds, sent as Last-Modified */
	int64_t		 stored;	/* seconds, when it was indexed */
	int64_t		 atime;		/* seconds, last recorded access */
	uint64_t	 parent;	/* DERIVED: cache_fingerprint() of its source;
					 * MEMBER: the archive's size (size is
					 * the member's) */
	/* Strings, NUL-terminated or NULL.  In a record filled by cache_get()
	 * they point into storage owned by the record: valid until
	 * cache_record_release().  In a record passed to a put function they
	 * are the caller's, and copied. */
	const char	*path;		/* EXTERNAL: the file */
	const char	*origin;	/* "scan", "upload", an upstream's name */
	const char	*xfile;		/* X-DEBUGINFOD-FILE */
	const char	*xarchive;	/* X-DEBUGINFOD-ARCHIVE */
	const char	*ximasig;	/* X-DEBUGINFOD-IMASIGNATURE */
	void		*mem;		/* private: storage behind the strings */
	/* MEMBER: where its bytes start in the archive, opaque to the cache
	 * (the scanner's, so that it can seek there rather than read the
	 * archive from its start); seeklen 0: not known.  Kept inline. */
	unsigned char	 seek[CACHE_SEEK_MAX];
	size_t		 seeklen;
};

struct cache_options {
	uint64_t	budget;		/* blob bytes to keep; 0: no limit */
	size_t		mapsize;	/* initial LMDB map size; 0: default */
	int		readonly;	/* open for reading only (no check) */
	/* A guest beside a running hub (symhub import): the open check,
	 * which takes files in flight for leftovers, runs only when no
	 * other process has the store open. */
	int		guest;
};

struct cache_stats {
	uint64_t	bytes;		/* bytes of blob files indexed */
	uint64_t	blobs;		/* distinct blob files */
	uint64_t	records;	/* artifact records (blob or external) */
	uint64_t	negatives;	/* negative entries, fresh or not */
	uint64_t	evictions;	/* records evicted since open */
	uint64_t	check_dropped;	/* records dropped by the open check */
	uint64_t	check_removed;	/* tmp/ leftovers removed by the check */
	uint64_t	check_quarantined; /* unindexed blobs moved by the check */
	uint64_t	check_restored;	/* records and FileIDs the catalog
					 * lists and the index lacked, taken
					 * back by the check */
	uint64_t	check_resorted;	/* tables the check found out of
					 * key order (flipped key bytes) and
					 * sorted again */
	uint64_t	opened_clean;	/* 1: the open found the store as a
					 * clean close left it (index/clean)
					 * and ran no check */
	uint64_t	verified;	/* blobs verified since open */
	uint64_t	verified_bytes;	/* their bytes */
	uint64_t	verify_passes;	/* passes over every blob completed */
	uint64_t	verify_last_pass; /* seconds the last pass took */
	int64_t		verify_last_end; /* when it ended (epoch s); 0: none */
	uint64_t	first_verified;	/* blobs hashed at their first open */
	uint64_t	first_failed;	/* of them, rotten (quarantined) */
	uint64_t	quarantine_deleted; /* files cache_quarantine_collect()
					 * deleted since open */
	uint64_t	verify_failed;	/* blobs found rotten, by cache_verify()
					 * or at their first open */
	uint64_t	mapsize;	/* current LMDB map size */
};

/*
 * Open (creating if needed) the store in dir, and check it: first walk the
 * whole index in a child process, so that damage that would crash LMDB
 * (a truncated or bit-flipped data.mdb) is found before this process maps
 * it; then clear stale LMDB readers, remove tmp/ leftovers, sort again a
 * table whose keys are out of order (a flipped byte in a key), drop
 * records whose blob is missing or of the wrong size, rebuild blob
 * reference counts, take back every catalog entry the index lacks whose
 * blob is intact (damage that hid a record: it is served again, pinned if
 * it was), and move unindexed blobs to quarantine/.  What the check found
 * is in cache_stats(), for the caller to report.
 * The check costs time in proportion to the store, so it is skipped when
 * the last process to close the store closed it cleanly and nothing has
 * touched the index or blobs/ since (index/clean, cache/cleanmark.h):
 * the open then costs the same at ten records or ten million.
 * @param opt  NULL for defaults.
 * @param out  set to the new handle on success, NULL on failure.
 * @return 0, or -errno: -EROFS/-EACCES for an unwritable store;
 *         -EUCLEAN when the index is damaged, or lost (empty while the
 *         catalog is not): nothing was changed, run cache_rebuild().
 */
int	cache_open(const char *dir, const struct cache_options *opt,
	    struct cache **out);

/*
 * Is there a store in dir?  For a command that works on a store (verify,
 * export) and must not make one on a mistyped path, as cache_open()
 * would: call this first.  A store is a directory with index/data.mdb.
 * Creates nothing.
 * @return 0; -ENOTDIR when dir is not a directory; -ENOENT when it does
 *         not exist, or holds no index/data.mdb and no catalog/ (it is
 *         not a store); -EUCLEAN when catalog/ is there and
 *         index/data.mdb is not (the index was lost: cache_rebuild());
 *         -errno.
 */
int	cache_present(const char *dir);

/* Flush recorded accesses and close.  Accepts NULL. */
void	cache_close(struct cache *c);

struct cache_rebuild_report {
	uint64_t	records;	/* records restored */
	uint64_t	fileids;	/* FileID mappings restored */
	uint64_t	missing;	/* entries whose blob is gone or wrong */
	uint64_t	bad_entries;	/* catalog files that do not decode */
	uint64_t	restored;	/* blobs brought back from quarantine/ */
	uint64_t	quarantined;	/* blobs no entry refers to, moved */
	char		moved[64];	/* where the old index went ("" if none) */
};

/*
 * Rebuild the index of the store in dir from its catalog and blobs: the
 * old index/ is renamed to index.old-<time> (kept for inspection), and a
 * new one lists every catalog entry whose blob is present with its size
 * and SHA-256 (looked for in blobs/, then quarantine/).  Blobs no entry
 * refers to go to quarantine/.  Nothing is deleted.  Files indexed in
 * place are not in the catalog: the next scan indexes them again.
 * A directory that holds neither index/data.mdb nor catalog/ is not a
 * store, and is refused with nothing created in it.
 * @param rep  filled (counts) on success and failure.
 * @return 0; -EBUSY when another process has the store open; -ENOTDIR
 *         when dir is not a directory; -ENOENT when it does not exist or
 *         is not a store; -errno.
 */
int	cache_rebuild(const char *dir, struct cache_rebuild_report *rep);

/*
 * Verify stored blobs against their names (SHA-256), in digest order,
 * starting after *cursor (32 bytes; all zero to start) and reading about
 * max_bytes at most.  A blob that fails is moved to quarantine/ and every
 * record referring to it dropped (the next request fetches it again).
 * *cursor is advanced; it wraps to zero after the last blob.
 * @param failed  incremented per blob that failed (may be NULL).
 * @return the number of blobs read, 0 at the end of a pass, or -errno.
 */
int	cache_verify(struct cache *c, unsigned char cursor[32],
	    uint64_t max_bytes, uint64_t *failed);

/*
 * From now on, cache_open_data() hashes a blob of at most max_size bytes
 * the first time it opens it since cache_open(), unless its bytes were
 * hashed since (written, or verified by cache_verify()); a blob whose
 * bytes are not its name then goes to quarantine/, every record that
 * refers to it is dropped, and the open answers -ENOENT, a miss.  Rot
 * that happened while the store was closed is so never read, at the cost
 * of one read of each blob per open (the first request waits for it).
 * Larger blobs are left to cache_verify().  0 (the default): none.
 */
void	cache_set_verify_first(struct cache *c, uint64_t max_size);

/*
 * Delete the files of quarantine/ moved there before `before` (seconds
 * since the epoch: a move stamps the file's mtime).  What is kept there
 * is for a person to look at and for cache_rebuild() to take back; after
 * a grace time it is only disk space.
 * @return the number of files deleted, or -errno (-EROFS read-only).
 */
int	cache_quarantine_collect(struct cache *c, int64_t before);

/*
 * Look key up.
 * @param now  seconds since the epoch, for negative entry expiry.
 * @param out  on 0, the record; release it with cache_record_release().
 *             Untouched otherwise.
 * @return 0 hit; -ENOENT miss (no record, no fresh negative entry);
 *         -ENODATA a fresh negative entry; other -errno on failure.
 */
int	cache_get(struct cache *c, const struct cache_key *key, int64_t now,
	    struct cache_record *out);

/* Free what cache_get() attached to rec.  Accepts a zeroed record. */
void	cache_record_release(struct cache_record *rec);

/*
 * Open the bytes behind rec for reading: the blob, or the external file
 * after checking its identity (device, inode, size, mtime).
 * @param fd  on 0, an O_RDONLY descriptor the caller owns.
 * @return 0; -ESTALE when an external file changed or vanished; -ENOENT
 *         when a blob is missing, or was found rotten and dropped
 *         (cache_set_verify_first()); -EMEDIUMTYPE for an archive member
 *         (CACHE_F_MEMBER), whose archive is not its bytes; -errno.
 */
int	cache_open_data(struct cache *c, const struct cache_record *rec,
	    int *fd);

/*
 * Is the file rec (CACHE_F_EXTERNAL) refers to still the one it was
 * indexed from: device, inode, size (a member's: its archive's, in
 * rec->parent) and mtime?  fd: the file open, or -1 to look at
 * rec->path itself (a symbolic link there is another file).
 * @return 1 or 0.
 */
int	cache_external_same(const struct cache_record *rec, int fd);

/*
 * Open the file rec (CACHE_F_EXTERNAL) refers to, a package for a member,
 * checked with cache_external_same().
 * @return 0 with *fd (the caller's); -ESTALE when it changed or vanished;
 *         -errno.
 */
int	cache_open_external(const struct cache_record *rec, int *fd);

/* A 64-bit fingerprint of what rec's bytes are: the digest of a blob, or
 * the path and identity of an external file.  For CACHE_F_DERIVED. */
uint64_t cache_fingerprint(const struct cache_record *rec);
/* Is rec, derived from id's debuginfo or executable (a section, a GSYM),
 * still derived from what is stored for them now?  @return 1 when the
 * fingerprint of either is rec->parent, else 0. */
int	cache_derived_fresh(struct cache *c, const unsigned char *id,
	    size_t idlen, const struct cache_record *rec, int64_t now);

/*
 * Note an access to key, for LRU eviction.  Costs no write transaction:
 * accesses are kept in memory and written by cache_flush().  rec is the
 * record just served (an access within a minute of rec->atime is ignored).
 */
void	cache_touch(struct cache *c, const struct cache_key *key,
	    const struct cache_record *rec, int64_t now);

/*
 * Write recorded accesses in one transaction, then evict least-recently
 * used blob records (not PINNED, not EXTERNAL) until the blob bytes fit
 * the budget.  Call it periodically from one maintenance thread.
 * @return number of records evicted, or -errno.
 */
int	cache_flush(struct cache *c, int64_t now);

/*
 * Start writing a blob into tmp/.
 * @param out  the writer; finish it with cache_put_blob() or
 *             cache_blob_abort().
 * @return 0 or -errno.
 */
int	cache_blob_create(struct cache *c, struct cache_blob **out);

/*
 * cache_blob_create(), but the bytes wait in memory (a memfd) until the
 * blob is stored, which then writes them to tmp/ and hashes them: for a
 * caller that answers clients from the blob's descriptor first and
 * stores it on another thread, so that no file is created, written or
 * hashed before they are answered.  Past 8 MiB the blob moves to tmp/ on
 * its own (memory stays bounded).  Without memfd, a plain blob.
 * @return 0 or -errno.
 */
int	cache_blob_create_staged(struct cache *c, struct cache_blob **out);

/* Append bytes.  @return 0 or -errno (-ENOSPC on a full disk). */
int	cache_blob_write(struct cache_blob *b, const void *buf, size_t len);

/* Bytes written so far. */
uint64_t cache_blob_size(const struct cache_blob *b);

/* The blob's file, open for reading and writing, for checks after the
 * last cache_blob_write() and before it is indexed.  Owned by the blob;
 * a staged blob's changes when it moves to tmp/ (a dup stays valid). */
int	cache_blob_fd(const struct cache_blob *b);

/* The SHA-256 of the bytes written so far, without finishing the blob.
 * @return 0 or -EIO. */
int	cache_blob_digest(const struct cache_blob *b, unsigned char out[32]);

/* Discard a blob being written.  Accepts NULL. */
void	cache_blob_abort(struct cache_blob *b);

/*
 * Finish blob b (fsync, rename into blobs/) and index it under key with
 * rec's metadata; rec->size, rec->digest and rec->flags' EXTERNAL bit are
 * set from the blob.  Identical bytes under several keys share one file.
 * Replaces any record and negative entry for key.  b is consumed in every
 * case.  An LMDB map that is full is grown, never reported.
 * @param digest_out  if not NULL, receives the blob's SHA-256.
 * @return 0 or -errno.
 */
int	cache_put_blob(struct cache *c, struct cache_blob *b,
	    const struct cache_key *key, const struct cache_record *rec,
	    unsigned char digest_out[32]);

/*
 * cache_put_blob(), decided inside the write transaction: decide(ctx, old)
 * sees the record stored for key at that moment (NULL for none) and
 * returns 1 to store, 0 to keep it; rec->digest is already set then.  It
 * must be quick and do no I/O: it runs with the writer lock held.  b is
 * consumed in every case.
 * @return 0 stored, -ECANCELED kept (decide said 0), or -errno.
 */
int	cache_put_blob_if(struct cache *c, struct cache_blob *b,
	    const struct cache_key *key, const struct cache_record *rec,
	    int (*decide)(void *ctx, const struct cache_record *old,
	    const struct cache_record *rec), void *ctx,
	    unsigned char digest_out[32]);

/*
 * Index an external file under key (rec->flags must have CACHE_F_EXTERNAL
 * and rec->path set).  Replaces any record and negative entry for key.
 * @return 0 or -errno.
 */
int	cache_put(struct cache *c, const struct cache_key *key,
	    const struct cache_record *rec);

/*
 * cache_put() of n keys and records, in one transaction: all or none.
 * @return 0 or -errno.
 */
int	cache_put_many(struct cache *c, const struct cache_key *keys,
	    const struct cache_record *recs, size_t n);

/* Remove key's record (and its blob when no other record uses it).
 * @return 0, -ENOENT when there was none, or -errno. */
int	cache_drop(struct cache *c, const struct cache_key *key);

/*
 * Record a negative entry for key: the key's miss count grows by one and
 * the entry expires at now + ttls[min(misses, nttls) - 1].  A key that has
 * a record is left alone (-EEXIST).
 * @return the new miss count, or -errno.
 */
int	cache_put_negative(struct cache *c, const struct cache_key *key,
	    int64_t now, const int64_t *ttls, size_t nttls);

/*
 * Remember until `until` that key was checked against upstreams although
 * it has a record (a copy that might have a better one upstream).  Kept
 * with the negative entries: cache_get() still returns the record, and
 * cache_drop() forgets the mark.
 * @return 0 or -errno.
 */
int	cache_mark_checked(struct cache *c, const struct cache_key *key,
	    int64_t until);

/* @return 1 while such a mark is fresh, 0 otherwise, or -errno. */
int	cache_checked(struct cache *c, const struct cache_key *key,
	    int64_t now);

/* Forget key's negative entry (or mark), so the next cache_get() is a
 * miss rather than -ENODATA: the key may exist elsewhere now.
 * @return 0 (also when there was none) or -errno. */
int	cache_forget_negative(struct cache *c, const struct cache_key *key);

/* Fill st.  @return 0 or -errno. */
int	cache_stats(struct cache *c, struct cache_stats *st);

/*
 * Called for each record by cache_foreach(), with no transaction open (it
 * may do I/O, and call into the cache).  key->extra is the source path or
 * section name: from the catalog for a blob, the file's path for a
 * scanned source.  key and rec are valid during the call only.
 * @return 0 to go on; anything else ends the walk and is returned.
 */
typedef int (*cache_foreach_fn)(void *ctx, const struct cache_key *key,
    const struct cache_record *rec);

/*
 * Call fn for every record, in key order, a batch at a time under short
 * read transactions: records put or dropped meanwhile may be seen or not.
 * A source or section whose name cannot be read (its catalog entry lost)
 * is passed over and counted in *skipped (NULL: not counted).
 * @return 0, fn's non-zero result, or -errno.
 */
int	cache_foreach(struct cache *c, cache_foreach_fn fn, void *ctx,
	    uint64_t *skipped);

/*
 * cache_foreach() over the records of one kind only, CACHE_DEBUGINFO,
 * CACHE_EXECUTABLE, CACHE_GSYM or CACHE_BUNDLE (kinds without an extra
 * string): the
 * walk starts at the kind's first record and ends after its last.
 * @return 0, fn's non-zero result, -EINVAL for another kind, or -errno.
 */
int	cache_foreach_kind(struct cache *c, enum cache_kind kind,
	    cache_foreach_fn fn, void *ctx);

/*
 * The id of a record of kind (CACHE_DEBUGINFO, CACHE_EXECUTABLE or
 * CACHE_GSYM) whose id begins with prefix; an id shorter than plen
 * matches when prefix is it followed by zeros (a Breakpad debug id holds
 * a build-id's first 16 bytes, zero-padded).  The shortest such id wins,
 * then the lowest.  Costs one look-up per id length.
 * @return 0 with id[0..*idlen); -ENOENT; -errno.
 */
int	cache_find_prefix(struct cache *c, enum cache_kind kind,
	    const unsigned char *prefix, size_t plen,
	    unsigned char id[CACHE_ID_MAX], size_t *idlen);

/*
 * The FileID map (doc/protocol.md, "Keys"): the FileID of a deployed binary to
 * the build-id its artifacts are stored under.  A binary without a
 * build-id maps to its own FileID.  A FileID is CACHE_FILEID_LEN bytes
 * (base/artifact.h).
 */

/* @return 0 or -errno. */
int	cache_fileid_put(struct cache *c,
	    const unsigned char fid[CACHE_FILEID_LEN],
	    const unsigned char *id, size_t idlen);

/* @return 0 with id[0..*idlen), or -ENOENT. */
int	cache_fileid_get(struct cache *c,
	    const unsigned char fid[CACHE_FILEID_LEN],
	    unsigned char id[CACHE_ID_MAX], size_t *idlen);

/* Called by cache_fileid_foreach() with no transaction open.
 * @return 0 to go on; anything else ends the walk and is returned. */
typedef int (*cache_fileid_fn)(void *ctx,
    const unsigned char fid[CACHE_FILEID_LEN], const unsigned char *id,
    size_t idlen);

/* Call fn for every FileID mapping, in FileID order.
 * @return 0, fn's non-zero result, or -errno. */
int	cache_fileid_foreach(struct cache *c, cache_fileid_fn fn, void *ctx);

/*
 * Files indexed in place.  For each scanned path the cache remembers the
 * file's identity and the keys the file was indexed under, so a rescan can
 * skip unchanged files and drop what vanished.
 */
struct cache_file {
	uint64_t	dev, ino, size;
	int64_t		mtime_ns;
};

/*
 * Make the next scan read again every remembered file that lists key (for
 * when key's record went away, and a scanned file should take over).
 * @return the number of files marked, or -errno.
 */
int	cache_file_invalidate(struct cache *c, const struct cache_key *key);

/* @return 0 and *out, or -ENOENT. */
int	cache_file_get(struct cache *c, const char *path,
	    struct cache_file *out);

/*
 * Remember path with identity f and the nkeys keys it was indexed under.
 * Keys it had before and no longer lists are dropped when their record
 * still refers to path.
 * @return 0 or -errno.
 */
int	cache_file_set(struct cache *c, const char *path,
	    const struct cache_file *f, const struct cache_key *keys,
	    size_t nkeys);

/*
 * Visit every remembered path that starts with prefix; where keep()
 * returns 0 the path is forgotten and its keys' records that still refer to
 * it are dropped (a file's own records, its sources', and the members
 * extracted from it, CACHE_MEMBER records whose xarchive is it).
 * @return number of paths forgotten, or -errno.
 */
int	cache_file_sweep(struct cache *c, const char *prefix,
	    int (*keep)(void *ctx, const char *path), void *ctx);

#endif

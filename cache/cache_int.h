/*
 * cache_int: what the files of cache/ share, private to them (not
 * installed; tests/test_layers.sh fails when a file outside cache/
 * includes it).  cache.h is the store's contract; this header is the
 * struct behind its opaque handle, the values of the LMDB tables, and
 * the helpers one file of the store calls in another, each explained
 * where it is defined.  They keep cache.h's rules (no HTTP, no logging)
 * and return 0 or a negative errno, except where their comment says an
 * LMDB code or a positive errno (a cache_wtxn() fn's result).
 *
 *   cache.c    open and close, get/put/drop, negative entries, eviction,
 *              walking the records
 *   core.c     the environment, transactions, the catalog, the lru
 *              table, blob references
 *   check.c    the open-time check and the crash probe
 *   blob.c     the blob writer (cache_blob_*())
 *   files.c    the files table and the FileID map
 *   rebuild.c  rebuilding the index from the catalog, verifying blobs
 *
 * Locking: every transaction holds c->resize for reading; growing the map
 * (mdb_env_set_mapsize needs no transaction active in the process) takes
 * it for writing.  Writers also hold c->wmu: a new blob is renamed into
 * blobs/ inside the transaction that first references it (a crash before
 * the commit leaves an unindexed file, removed at the next open), and a
 * blob whose last reference goes is unlinked only after the commit (a
 * crash before the unlink leaves the same), never before it.
 */
#ifndef SYMHUB_CACHE_INT_H
#define SYMHUB_CACHE_INT_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>
#include <openssl/evp.h>

#include "cache/cache.h"
#include "cache/record.h"

#define DEFAULT_MAPSIZE		((size_t)256 << 20)
#define TOUCH_BUCKETS		1024

struct cache {
	MDB_env			*env;
	MDB_dbi			 records;	/* key -> record */
	MDB_dbi			 negs;		/* key -> {expires, misses} */
	MDB_dbi			 blobs;		/* digest -> {refs, size} */
	MDB_dbi			 files;		/* path -> file entry */
	MDB_dbi			 meta;		/* "bytes" -> u64 */
	MDB_dbi			 fileids;	/* FileID -> build-id */
	MDB_dbi			 lru;		/* atime | key -> "" (lru_*) */
	char			*dir;
	uint64_t		 budget;
	int			 readonly;
	pthread_rwlock_t	 resize;

	/* Held across a write transaction and the blob unlinks after its
	 * commit, so no writer re-adds a blob between the two. */
	pthread_mutex_t		 wmu;
	unsigned char		(*gone)[32];	/* blobs to unlink on commit */
	size_t			 ngone, cgone;
	struct catkey		*uncat;		/* catalog entries, likewise */
	size_t			 nuncat, cuncat;
	int			 lockfd;

	pthread_mutex_t		 touch_mu;
	struct touch		*touch[TOUCH_BUCKETS];
	size_t			 ntouch;

	/* Leave index/clean at close (cleanmark.h): the store was checked,
	 * or trusted through the mark, and nothing since left a file the
	 * index does not know of (dirty). */
	int			 markable;
	int			 dirty;
	int			 trusted;	/* opened through the mark */

	uint64_t		 evictions, check_dropped, check_removed;
	uint64_t		 check_quarantined, verified, verify_failed;
	uint64_t		 check_restored, check_resorted;
	uint64_t		 verified_bytes, verify_passes;
	int64_t			 verify_pass_start, verify_last_pass;
	int64_t			 verify_last_end;

	/* Blobs whose bytes were hashed since open (written, verified, or
	 * checked when first opened): the first 8 bytes of their digest,
	 * open addressing.  Bounded: emptied when it holds VSET_MAX, which
	 * costs a second hashing of a blob, never a wrong answer. */
	pthread_mutex_t		 vmu;
	uint64_t		*vset;
	size_t			 vcap, vn;
	uint64_t		 verify_first_max;	/* 0: none */
	uint64_t		 first_verified, first_failed;
	uint64_t		 quarantine_deleted;
};

struct cache_blob {
	struct cache	*c;
	int		 fd;
	uint64_t	 size;
	uint64_t	 flushed;	/* writeback started up to here */
	EVP_MD_CTX	*md;		/* NULL while staged */
	int		 staged;	/* fd is a memfd, tmp[] empty */
	char		 tmp[PATH_MAX];
};

struct neg {
	int64_t		expires;
	uint32_t	misses;
	uint32_t	pad;
};

struct blobref {
	uint64_t	refs;
	uint64_t	size;
};

static const char META_BYTES[] = "bytes";

/* A key of the lru table: atime | record key (core.c, "The eviction
 * order"). */
#define LRU_KEY_MAX	(8 + RECORD_KEY_MAX)

#define REBUILD_BATCH	256

/* Catalog entries read, waiting to be indexed a batch at a time. */
struct rebuildctx {
	struct cache_rebuild_report	*rep;
	unsigned char			*bufs[REBUILD_BATCH];
	struct record_cat		 ents[REBUILD_BATCH];
	char				 had[REBUILD_BATCH];
	size_t				 n;
	int				 repair;	/* into a live index:
						 * a key it has is kept */
};

/* core.c */
int	cache_merr(int rc);
int	cache_keyval(const struct cache_key *key,
	    unsigned char kb[RECORD_KEY_MAX], MDB_val *k);
int	cache_neg_read(struct cache *c, MDB_txn *t, MDB_val *k,
	    struct neg *n);
int	cache_neg_write(struct cache *c, MDB_txn *t, MDB_val *k,
	    struct neg *n);
int	cache_blob_path(const struct cache *c, const unsigned char digest[32],
	    char *out, int dir_only);
int	cache_cat_path(const struct cache *c, int type,
	    const unsigned char *k, size_t kl, char *out, int dir_only);
int	cache_cat_write(struct cache *c, const struct record_cat *e);
int	cache_uncat_add(struct cache *c, const MDB_val *k);
int	cache_rbegin(struct cache *c, MDB_txn **t);
void	cache_rend(struct cache *c, MDB_txn *t);
int	cache_wtxn(struct cache *c,
	    int (*fn)(struct cache *, MDB_txn *, void *), void *ctx);
int	cache_gone_add(struct cache *c, const unsigned char digest[32]);
int	cache_get_bytes(struct cache *c, MDB_txn *t, uint64_t *bytes);
int	cache_lru_evictable(const MDB_val *v, int64_t *atime);
void	cache_lru_key(const MDB_val *k, int64_t atime,
	    unsigned char out[LRU_KEY_MAX], MDB_val *lk);
int	cache_lru_set(struct cache *c, MDB_txn *t, const MDB_val *k,
	    const MDB_val *v, int add);
int	cache_rec_put(struct cache *c, MDB_txn *t, MDB_val *k, MDB_val *v);
int	cache_rec_del(struct cache *c, MDB_txn *t, MDB_val *k);
int	cache_blob_unref(struct cache *c, MDB_txn *t,
	    const unsigned char digest[32], int *unlink_it);
int	cache_blob_ref(struct cache *c, MDB_txn *t,
	    const unsigned char digest[32], uint64_t size, int *is_new);
int	cache_drop_raw(struct cache *c, MDB_txn *t, MDB_val *k,
	    unsigned char gone[32], int *unlink_it);
int	cache_walk2(const char *dir,
	    int (*fn)(void *, int, const char *, const char *), void *ctx);
int	cache_open_index(struct cache *c, const char *path, size_t mapsize);
int	cache_mark_catalog_fn(struct cache *c, MDB_txn *t, void *ctx);
int	cache_catalog_check(struct cache *c);

/* check.c */
void	cache_clear_tmp(struct cache *c);
int	cache_quarantine_blob(const struct cache *c, int dfd,
	    const char h[65], const char *why);
int	cache_quarantine_strays(struct cache *c);
int	cache_open_check(struct cache *c);
int	cache_probe_index(struct cache *c, const char *path);

/* blob.c */
int	cache_blob_unstage(struct cache_blob *b);

/* cache.c */
struct cache	*cache_alloc(const char *dir, const struct cache_options *opt);
int	cache_lock_store(struct cache *c, int how);
int	cache_store_present(const char *dir, int rebuild_too);
int	cache_condemn(struct cache *c, const unsigned char digest[32]);

/* rebuild.c */
int	cache_vset_has(struct cache *c, const unsigned char d[32]);
void	cache_vset_add(struct cache *c, const unsigned char d[32]);
int	cache_hash_fd(int fd, unsigned char d[32], uint64_t *size);
int	cache_rebuild_one(struct cache *c, struct rebuildctx *rb, int dfd,
	    const char *name);
int	cache_rebuild_flush(struct cache *c, struct rebuildctx *rb);
int	cache_drop_digest_fn(struct cache *c, MDB_txn *t, void *ctx);

#endif

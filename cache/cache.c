/*
 * cache: opening and closing a store, get/put/drop, negative entries,
 * access times and eviction, and walking the records.  See cache.h for
 * the contract and the on-disk layout, cache_int.h for the locking and
 * the other files of the store (core.c, check.c, blob.c, files.c,
 * rebuild.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* rwlock kinds; configure sets it too */
#endif

#include <errno.h>
#include <stdint.h>
#include <sys/file.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>
#include <openssl/evp.h>

#include "base/fs.h"
#include "base/hex.h"
#include "cache/cache.h"
#include "cache/cache_int.h"
#include "cache/cleanmark.h"
#include "cache/record.h"

#define ATIME_GRANULARITY	60	/* seconds between recorded accesses */
#define TOUCH_MAX		65536	/* pending accesses kept at most */

struct touch {
	struct touch	*next;
	int64_t		 atime;
	size_t		 klen;
	unsigned char	 k[RECORD_KEY_MAX];
};

/* Present once the lru table lists every evictable record. */
static const char META_LRU[] = "lru";

int
cache_lock_store(struct cache *c, int how)
{
	char	path[PATH_MAX];
	int	tries;

	snprintf(path, sizeof(path), "%s/lock", c->dir);
	if ((c->lockfd = open(path, (c->readonly ? O_RDONLY : O_RDWR | O_CREAT)
	    | O_CLOEXEC, 0644)) < 0)
		return c->readonly ? 0 : -errno;
	/* A shared lock waits a second for a closer holding it exclusively
	 * while it writes index/clean (two fsyncs); a rebuild holds it far
	 * longer and is reported busy. */
	for (tries = 0; flock(c->lockfd, how | LOCK_NB) != 0; tries++) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -errno;
		if (how != LOCK_SH || tries >= 100)
			return -EBUSY;
		usleep(10000);
	}
	return 0;
}

/* A struct cache with its locks, not opened yet. */
struct cache *
cache_alloc(const char *dir, const struct cache_options *opt)
{
	struct cache		*c;
	pthread_rwlockattr_t	 ra;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->lockfd = -1;
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra,
	    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&c->resize, &ra);
	pthread_rwlockattr_destroy(&ra);
	pthread_mutex_init(&c->touch_mu, NULL);
	pthread_mutex_init(&c->wmu, NULL);
	pthread_mutex_init(&c->vmu, NULL);
	if ((c->dir = strdup(dir)) == NULL) {
		cache_close(c);
		return NULL;
	}
	if (opt != NULL) {
		c->budget = opt->budget;
		c->readonly = opt->readonly;
	}
	return c;
}

/* List every evictable record in the lru table, once, for an index
 * made before it. */
static int
lru_fill_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	MDB_val		 mk = { sizeof(META_LRU), (void *)META_LRU };
	MDB_val		 mv = { 1, (void *)"1" }, k, v;
	MDB_cursor	*cur;
	int		 rc;

	(void)ctx;
	if ((rc = mdb_get(t, c->meta, &mk, &v)) != MDB_NOTFOUND)
		return rc;
	if ((rc = mdb_drop(t, c->lru, 0)) != 0 ||
	    (rc = mdb_cursor_open(t, c->records, &cur)) != 0)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
		if ((rc = cache_lru_set(c, t, &k, &v, 1)) != 0)
			break;
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND)
		return rc;
	return mdb_put(t, c->meta, &mk, &mv, 0);
}

/*
 * Is dir a store?  index/data.mdb makes one; so does catalog/ alone for
 * a rebuild (rebuild_too), whose work is an index that was lost.  A
 * mistyped path is refused rather than made into an empty store that
 * then reports nothing wrong.
 * @return 0, -ENOTDIR, -ENOENT (no such directory, or not a store),
 *         -EUCLEAN (catalog/ without index/data.mdb, !rebuild_too), -errno.
 */
int
cache_store_present(const char *dir, int rebuild_too)
{
	struct stat	st;
	char		path[PATH_MAX];
	int		cat;

	if (stat(dir, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (snprintf(path, sizeof(path), "%s/index/data.mdb", dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	if (stat(path, &st) == 0)
		return 0;
	if (errno != ENOENT && errno != ENOTDIR)
		return -errno;
	snprintf(path, sizeof(path), "%s/catalog", dir);
	cat = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	if (!cat)
		return -ENOENT;
	return rebuild_too ? 0 : -EUCLEAN;
}

int
cache_present(const char *dir)
{
	return cache_store_present(dir, 0);
}

int
cache_open(const char *dir, const struct cache_options *opt,
    struct cache **out)
{
	static const char	*subdirs[] = { "index", "blobs", "catalog",
				    "tmp" };
	struct cache		*c;
	char			 path[PATH_MAX];
	size_t			 i;
	int			 rc, guest_beside = 0, trusted = 0;

	*out = NULL;
	if ((c = cache_alloc(dir, opt)) == NULL)
		return -ENOMEM;
	for (i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, subdirs[i]);
		if (!c->readonly && (rc = fs_mkdir_p(path, 0)) < 0)
			goto out;
	}
	/* A store we cannot write to is refused up front with a clear
	 * errno, rather than failing on the first write. */
	if (!c->readonly && access(path, W_OK) != 0) {
		rc = -errno;
		goto out;
	}
	/* A guest that finds the store open elsewhere leaves the check to
	 * its owner; alone, it checks, then shares like everyone. */
	if (opt != NULL && opt->guest && !c->readonly &&
	    cache_lock_store(c, LOCK_EX) == -EBUSY)
		guest_beside = 1;
	if (c->lockfd >= 0)
		close(c->lockfd);
	c->lockfd = -1;
	if ((rc = cache_lock_store(c, LOCK_SH)) < 0)
		goto out;
	/* Left as a clean close left it: no probe, no check (cleanmark.h).
	 * A writer takes the mark away before its first write; a guest
	 * beside the owner never saw it. */
	if (!guest_beside && cleanmark_valid(dir) > 0)
		trusted = c->readonly || cleanmark_remove(dir) == 0;
	snprintf(path, sizeof(path), "%s/index", dir);
	if ((!trusted && (rc = cache_probe_index(c, path)) < 0) ||
	    (rc = cache_open_index(c, path, opt != NULL && opt->mapsize ?
	    opt->mapsize : DEFAULT_MAPSIZE)) < 0 ||
	    (rc = cache_catalog_check(c)) < 0)
		goto out;
	c->trusted = trusted;
	if (!c->readonly && !guest_beside) {
		if (trusted) {
			int dead;

			mdb_reader_check(c->env, &dead);
			cache_clear_tmp(c);
		} else if ((rc = cache_open_check(c)) < 0) {
			goto out;
		}
		c->markable = 1;
	}
	if (!c->readonly && (rc = cache_wtxn(c, lru_fill_fn, NULL)) < 0)
		goto out;
	/* OpenSSL 3 loads its providers on the first digest, 1.2 ms here:
	 * let that not be the first blob's. */
	if (!c->readonly) {
		EVP_MD_CTX *md = EVP_MD_CTX_new();

		if (md != NULL)
			(void)EVP_DigestInit_ex(md, EVP_sha256(), NULL);
		EVP_MD_CTX_free(md);
	}
	*out = c;
	return 0;
out:
	/* Nothing of a refused store is written on the way out. */
	if (rc == -EUCLEAN)
		c->readonly = 1;
	cache_close(c);
	return rc;
}

static void
touch_clear(struct cache *c)
{
	struct touch	*p, *n;
	size_t		 i;

	for (i = 0; i < TOUCH_BUCKETS; i++) {
		for (p = c->touch[i]; p != NULL; p = n) {
			n = p->next;
			free(p);
		}
		c->touch[i] = NULL;
	}
	c->ntouch = 0;
}

void
cache_close(struct cache *c)
{
	if (c == NULL)
		return;
	if (c->env != NULL) {
		if (!c->readonly && cache_flush(c, 0) < 0)
			c->dirty = 1;
		mdb_env_close(c->env);
		c->env = NULL;
		/* The last one out, with nothing left astray, leaves the
		 * mark.  (A failed conversion of the lock loses it: we are
		 * closing anyway.) */
		if (c->markable && !c->dirty && c->lockfd >= 0 &&
		    flock(c->lockfd, LOCK_EX | LOCK_NB) == 0)
			(void)cleanmark_write(c->dir);
	}
	touch_clear(c);
	if (c->lockfd >= 0)
		close(c->lockfd);
	pthread_rwlock_destroy(&c->resize);
	pthread_mutex_destroy(&c->touch_mu);
	pthread_mutex_destroy(&c->wmu);
	pthread_mutex_destroy(&c->vmu);
	free(c->vset);
	free(c->gone);
	free(c->uncat);
	free(c->dir);
	free(c);
}

int
cache_get(struct cache *c, const struct cache_key *key, int64_t now,
    struct cache_record *out)
{
	unsigned char	kb[RECORD_KEY_MAX];
	MDB_txn		*t;
	MDB_val		 k, v;
	struct neg	 n;
	int		 rc;

	if ((rc = cache_keyval(key, kb, &k)) < 0)
		return rc;
	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	rc = mdb_get(t, c->records, &k, &v);
	if (rc == 0) {
		rc = record_decode(v.mv_data, v.mv_size, out);
	} else if (rc == MDB_NOTFOUND) {
		rc = cache_neg_read(c, t, &k, &n) == 0 && n.expires > now ?
		    -ENODATA : -ENOENT;
	} else {
		rc = cache_merr(rc);
	}
	cache_rend(c, t);
	return rc;
}

void
cache_record_release(struct cache_record *rec)
{
	if (rec == NULL)
		return;
	free(rec->mem);
	memset(rec, 0, sizeof(*rec));
}

int
cache_external_same(const struct cache_record *rec, int fd)
{
	struct stat	st;
	uint64_t	size;

	if (fd >= 0 ? fstat(fd, &st) != 0 : rec->path == NULL ||
	    lstat(rec->path, &st) != 0)
		return 0;
	size = rec->flags & CACHE_F_MEMBER ? rec->parent : rec->size;
	return S_ISREG(st.st_mode) && (uint64_t)st.st_size == size &&
	    (uint64_t)st.st_dev == rec->dev && (uint64_t)st.st_ino == rec->ino &&
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec ==
	    rec->mtime_ns;
}

int
cache_open_external(const struct cache_record *rec, int *fdp)
{
	int fd;

	*fdp = -1;
	if (!(rec->flags & CACHE_F_EXTERNAL) || rec->path == NULL)
		return -EINVAL;
	/* The path was resolved when indexed: a symlink there now is a
	 * different file, never followed. */
	if ((fd = open(rec->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ?
		    -ESTALE : -errno;
	if (!cache_external_same(rec, fd)) {
		close(fd);
		return -ESTALE;
	}
	*fdp = fd;
	return 0;
}

/*
 * A blob whose bytes are not its name: to quarantine/, and every record
 * that refers to it dropped (the next request fetches it again).
 * @return 0 or -errno.
 */
int
cache_condemn(struct cache *c, const unsigned char digest[32])
{
	char	dir[PATH_MAX], h[65];
	int	dfd, rc;

	__atomic_add_fetch(&c->verify_failed, 1, __ATOMIC_RELAXED);
	if (c->readonly)
		return 0;
	hex_encode(digest, 32, h);
	if (cache_blob_path(c, digest, dir, 1) == 0 &&
	    (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		(void)cache_quarantine_blob(c, dfd, h, ".bad");
		close(dfd);
	}
	if ((rc = cache_wtxn(c, cache_drop_digest_fn, (void *)digest)) < 0)
		c->dirty = 1;	/* records whose blob is in quarantine/ */
	return rc;
}

/*
 * The first open of a blob since the store was: hash it before anybody
 * reads it, so that bytes that rotted while the hub was down (which no
 * identity in index/clean shows) are never served, nor sent to the
 * bucket, nor converted.  @return 0, or -ENOENT (it was rotten, now
 * gone) or -errno.
 */
static int
verify_first(struct cache *c, int fd, const struct cache_record *rec)
{
	unsigned char	d[32];
	uint64_t	size;
	int		rc;

	if ((rc = cache_hash_fd(fd, d, &size)) < 0)
		return rc;
	__atomic_add_fetch(&c->first_verified, 1, __ATOMIC_RELAXED);
	if (size == rec->size && memcmp(d, rec->digest, 32) == 0) {
		cache_vset_add(c, rec->digest);
		return 0;
	}
	__atomic_add_fetch(&c->first_failed, 1, __ATOMIC_RELAXED);
	(void)cache_condemn(c, rec->digest);
	return -ENOENT;
}

int
cache_open_data(struct cache *c, const struct cache_record *rec, int *fdp)
{
	struct stat	st;
	char		path[PATH_MAX];
	int		fd, rc;

	*fdp = -1;
	if (rec->flags & CACHE_F_MEMBER)
		return -EMEDIUMTYPE;
	if (rec->flags & CACHE_F_EXTERNAL)
		return cache_open_external(rec, fdp);
	if ((rc = cache_blob_path(c, rec->digest, path, 0)) < 0)
		return rc;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if ((uint64_t)st.st_size != rec->size) {
		close(fd);
		return -EIO;
	}
	if (rec->size <= __atomic_load_n(&c->verify_first_max,
	    __ATOMIC_RELAXED) && !cache_vset_has(c, rec->digest) &&
	    (rc = verify_first(c, fd, rec)) < 0) {
		close(fd);
		return rc;
	}
	*fdp = fd;
	return 0;
}

void
cache_set_verify_first(struct cache *c, uint64_t max_size)
{
	__atomic_store_n(&c->verify_first_max, max_size, __ATOMIC_RELAXED);
}

uint64_t
cache_fingerprint(const struct cache_record *rec)
{
	uint64_t	 h = 0xcbf29ce484222325ull, v[4];
	const unsigned char *p;
	size_t		 i, n;

	if (!(rec->flags & CACHE_F_EXTERNAL)) {
		memcpy(&h, rec->digest, sizeof(h));
		return h;
	}
	/* FNV-1a over the path and the file's identity (an archive's, for
	 * a member). */
	v[0] = rec->dev;
	v[1] = rec->ino;
	v[2] = rec->flags & CACHE_F_MEMBER ? rec->parent : rec->size;
	v[3] = (uint64_t)rec->mtime_ns;
	p = (const unsigned char *)(rec->path ? rec->path : "");
	n = strlen((const char *)p);
	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	p = (const unsigned char *)v;
	for (i = 0; i < sizeof(v); i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

int
cache_derived_fresh(struct cache *c, const unsigned char *id, size_t idlen,
    const struct cache_record *rec, int64_t now)
{
	static const enum cache_kind parents[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct cache_record	p;
	struct cache_key	k = { CACHE_DEBUGINFO, id, idlen, NULL };
	size_t			i;
	int			fresh = 0;

	for (i = 0; i < 2 && !fresh; i++) {
		k.kind = parents[i];
		if (cache_get(c, &k, now, &p) != 0)
			continue;
		fresh = cache_fingerprint(&p) == rec->parent;
		cache_record_release(&p);
	}
	return fresh;
}

static size_t
touch_hash(const unsigned char *k, size_t n)
{
	uint64_t	h = 0xcbf29ce484222325ull;
	size_t		i;

	for (i = 0; i < n; i++)
		h = (h ^ k[i]) * 0x100000001b3ull;
	return (size_t)(h % TOUCH_BUCKETS);
}

void
cache_touch(struct cache *c, const struct cache_key *key,
    const struct cache_record *rec, int64_t now)
{
	unsigned char	 kb[RECORD_KEY_MAX];
	struct touch	*p;
	size_t		 b;
	int		 kl;

	if (c->readonly || now - rec->atime < ATIME_GRANULARITY)
		return;
	if ((kl = record_key(key, kb)) < 0)
		return;
	b = touch_hash(kb, (size_t)kl);
	pthread_mutex_lock(&c->touch_mu);
	for (p = c->touch[b]; p != NULL; p = p->next)
		if (p->klen == (size_t)kl && memcmp(p->k, kb, p->klen) == 0)
			break;
	if (p != NULL) {
		p->atime = now;
	} else if (c->ntouch < TOUCH_MAX &&
	    (p = malloc(sizeof(*p))) != NULL) {
		/* Past TOUCH_MAX, accesses are forgotten until the next
		 * flush: LRU order is approximate by design. */
		p->atime = now;
		p->klen = (size_t)kl;
		memcpy(p->k, kb, p->klen);
		p->next = c->touch[b];
		c->touch[b] = p;
		c->ntouch++;
	}
	pthread_mutex_unlock(&c->touch_mu);
}

struct flushctx {
	struct touch	**list;
	int64_t		  now;
	int		  evicted;
};

static int
write_atimes(struct cache *c, MDB_txn *t, struct touch **list)
{
	struct touch	*p;
	unsigned char	*buf;
	MDB_val		 k, v;
	size_t		 i;
	int		 rc;

	for (i = 0; i < TOUCH_BUCKETS; i++) {
		for (p = list[i]; p != NULL; p = p->next) {
			k.mv_size = p->klen;
			k.mv_data = p->k;
			rc = mdb_get(t, c->records, &k, &v);
			if (rc == MDB_NOTFOUND || v.mv_size < RECORD_FIXED)
				continue;
			if (rc != 0)
				return rc;
			if ((buf = malloc(v.mv_size)) == NULL)
				return ENOMEM;
			memcpy(buf, v.mv_data, v.mv_size);
			memcpy(buf + RECORD_ATIME_OFF, &p->atime,
			    sizeof(p->atime));
			v.mv_data = buf;
			rc = cache_rec_put(c, t, &k, &v);
			free(buf);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

/* Least recently used first, until the blob bytes fit the budget: the
 * oldest entries of the lru table, each checked against its record. */
static int
evict(struct cache *c, MDB_txn *t, struct flushctx *fc)
{
	MDB_cursor	*cur;
	MDB_val		 lk, lv, k, v, want, empty = { 0, NULL };
	unsigned char	 kb[RECORD_KEY_MAX], lb[LRU_KEY_MAX], gone[32];
	uint64_t	 bytes;
	int64_t		 atime;
	int		 rc, unl, evictable;

	if ((rc = cache_get_bytes(c, t, &bytes)) != 0 || bytes <= c->budget)
		return rc;
	if ((rc = mdb_cursor_open(t, c->lru, &cur)) != 0)
		return rc;
	while (bytes > c->budget &&
	    (rc = mdb_cursor_get(cur, &lk, &lv, MDB_FIRST)) == 0) {
		if (lk.mv_size <= 8 || lk.mv_size > LRU_KEY_MAX) {
			if ((rc = mdb_cursor_del(cur, 0)) != 0)
				break;
			continue;
		}
		k.mv_size = lk.mv_size - 8;
		memcpy(kb, (char *)lk.mv_data + 8, k.mv_size);
		k.mv_data = kb;
		/* An entry whose record is gone, not evictable or of
		 * another time lies: deleted, and the record's own entry
		 * put in its place, read before any write. */
		rc = mdb_get(t, c->records, &k, &v);
		if (rc != 0 && rc != MDB_NOTFOUND)
			break;
		evictable = rc == 0 && cache_lru_evictable(&v, &atime);
		if (evictable)
			cache_lru_key(&k, atime, lb, &want);
		if (!evictable || want.mv_size != lk.mv_size ||
		    memcmp(lb, lk.mv_data, lk.mv_size) != 0) {
			if ((rc = mdb_cursor_del(cur, 0)) != 0 || (evictable &&
			    (rc = mdb_put(t, c->lru, &want, &empty, 0)) != 0))
				break;
			continue;
		}
		if ((rc = cache_drop_raw(c, t, &k, gone, &unl)) != 0 ||
		    (unl && (rc = cache_gone_add(c, gone)) != 0) ||
		    (rc = cache_uncat_add(c, &k)) != 0)
			break;
		fc->evicted++;
		if ((rc = cache_get_bytes(c, t, &bytes)) != 0)
			break;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int
flush_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct flushctx	*fc = ctx;
	int		 rc;

	fc->evicted = 0;
	if ((rc = write_atimes(c, t, fc->list)) != 0)
		return rc;
	if (c->budget && (rc = evict(c, t, fc)) != 0)
		return rc;
	return 0;
}

int
cache_flush(struct cache *c, int64_t now)
{
	struct touch	*list[TOUCH_BUCKETS];
	struct flushctx	 fc = { list, now, 0 };
	size_t		 i;
	int		 rc;

	if (c->readonly)
		return 0;
	pthread_mutex_lock(&c->touch_mu);
	memcpy(list, c->touch, sizeof(list));
	memset(c->touch, 0, sizeof(c->touch));
	c->ntouch = 0;
	pthread_mutex_unlock(&c->touch_mu);

	rc = cache_wtxn(c, flush_fn, &fc);
	for (i = 0; i < TOUCH_BUCKETS; i++) {
		struct touch *p, *n;

		for (p = list[i]; p != NULL; p = n) {
			n = p->next;
			free(p);
		}
	}
	if (rc < 0)
		return rc;
	__atomic_add_fetch(&c->evictions, (uint64_t)fc.evicted,
	    __ATOMIC_RELAXED);
	return fc.evicted;
}

struct putctx {
	const struct cache_key		*key;
	struct cache_record		*rec;	/* a copy of the caller's */
	int	(*decide)(void *, const struct cache_record *,
		    const struct cache_record *);
	void				*dctx;
	const char			*tmp;	/* blob to rename in, or NULL */
	int				 renamed;
};

/* A new entry counts as used when stored, so eviction takes entries
 * nobody asked for since before it, not the newest. */
static void
stamp(struct cache_record *r)
{
	if (r->stored == 0)
		r->stored = (int64_t)time(NULL);
	if (r->atime == 0)
		r->atime = r->stored;
}

static int
put_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct putctx		*pc = ctx;
	struct record_cat	 e;
	unsigned char		 kb[RECORD_KEY_MAX], gone[32], *val = NULL;
	char			 path[PATH_MAX], dir[PATH_MAX];
	MDB_val			 k, v;
	size_t			 vlen;
	int			 rc, unl = 0, is_new = 0, had;

	if ((rc = cache_keyval(pc->key, kb, &k)) < 0)
		return -rc;
	if (pc->decide != NULL) {
		struct cache_record	old;
		int			store;

		rc = mdb_get(t, c->records, &k, &v);
		if (rc == 0 && record_decode(v.mv_data, v.mv_size, &old) == 0) {
			store = pc->decide(pc->dctx, &old, pc->rec);
			cache_record_release(&old);
		} else if (rc == 0 || rc == MDB_NOTFOUND) {
			store = pc->decide(pc->dctx, NULL, pc->rec);
		} else {
			return rc;
		}
		if (!store)
			return ECANCELED;
	}
	rc = cache_drop_raw(c, t, &k, gone, &unl);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return rc;
	had = rc == 0;
	/* The same blob again under this key: keep its file. */
	if (unl && pc->tmp != NULL && memcmp(gone, pc->rec->digest, 32) == 0)
		unl = 0;
	if (pc->tmp != NULL &&
	    (rc = cache_blob_ref(c, t, pc->rec->digest, pc->rec->size,
	    &is_new)))
		return rc;
	if ((rc = -record_encode(pc->rec, &val, &vlen)) != 0)
		return rc;
	v.mv_size = vlen;
	v.mv_data = val;
	if ((rc = cache_rec_put(c, t, &k, &v)) != 0)
		goto out;
	rc = mdb_del(t, c->negs, &k, NULL);
	if (rc != 0 && rc != MDB_NOTFOUND)
		goto out;
	rc = 0;

	if (unl && (rc = cache_gone_add(c, gone)) != 0)
		goto out;
	/* A file in place replaces a blob: its entry goes with the commit. */
	if (pc->tmp == NULL && had && (rc = cache_uncat_add(c, &k)) != 0)
		goto out;
	/* File system changes last: nothing below can fill the map. */
	if (pc->tmp != NULL && is_new && !pc->renamed) {
		cache_blob_path(c, pc->rec->digest, dir, 1);
		cache_blob_path(c, pc->rec->digest, path, 0);
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			rc = errno;
			goto out;
		}
		if (rename(pc->tmp, path) != 0) {
			rc = errno;
			goto out;
		}
		pc->renamed = 1;
		if ((rc = -fs_fsync_dir(dir)) != 0)
			goto out;
	}
	/* The catalog entry before the commit: an index that has the
	 * record always has its entry (a crash may leave an entry ahead). */
	if (pc->tmp != NULL) {
		memset(&e, 0, sizeof(e));
		e.type = RECORD_CAT_RECORD;
		e.key = kb;
		e.klen = k.mv_size;
		e.extra = pc->key->extra;
		e.extralen = e.extra != NULL ? strlen(e.extra) : 0;
		e.val = val;
		e.vlen = vlen;
		rc = cache_cat_write(c, &e);
	}
out:
	free(val);
	return rc;
}

int
cache_put_blob(struct cache *c, struct cache_blob *b,
    const struct cache_key *key, const struct cache_record *rec,
    unsigned char digest_out[32])
{
	return cache_put_blob_if(c, b, key, rec, NULL, NULL, digest_out);
}

int
cache_put_blob_if(struct cache *c, struct cache_blob *b,
    const struct cache_key *key, const struct cache_record *rec,
    int (*decide)(void *, const struct cache_record *,
    const struct cache_record *), void *dctx, unsigned char digest_out[32])
{
	struct cache_record	r = *rec;
	struct putctx		pc = { key, &r, decide, dctx, NULL, 0 };
	unsigned int		dlen;
	int			rc;

	stamp(&r);
	if (b->staged && (rc = cache_blob_unstage(b)) < 0)
		goto out;
	if (fsync(b->fd) != 0) {
		rc = -errno;
		goto out;
	}
	if (EVP_DigestFinal_ex(b->md, r.digest, &dlen) != 1) {
		rc = -EIO;
		goto out;
	}
	r.size = b->size;
	r.flags &= ~CACHE_F_EXTERNAL;
	r.path = NULL;
	pc.tmp = b->tmp;
	rc = cache_wtxn(c, put_fn, &pc);
	if (rc == 0 && digest_out != NULL)
		memcpy(digest_out, r.digest, 32);
	/* Its bytes were hashed as they were written. */
	if (rc == 0 && pc.renamed)
		cache_vset_add(c, r.digest);
	/* Renamed into blobs/ by a transaction that did not commit: a
	 * file the index does not know, for the next open's check. */
	if (rc != 0 && pc.renamed)
		c->dirty = 1;
	if (pc.renamed)
		b->tmp[0] = '\0';
out:
	cache_blob_abort(b);
	return rc;
}

int
cache_put(struct cache *c, const struct cache_key *key,
    const struct cache_record *rec)
{
	struct cache_record	r = *rec;
	struct putctx		pc = { key, &r, NULL, NULL, NULL, 0 };

	if (!(rec->flags & CACHE_F_EXTERNAL) || rec->path == NULL)
		return -EINVAL;
	memset(r.digest, 0, sizeof(r.digest));
	stamp(&r);
	return cache_wtxn(c, put_fn, &pc);
}

struct putmany {
	const struct cache_key		*keys;
	const struct cache_record	*recs;
	size_t				 n;
};

static int
put_many_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct putmany	*pm = ctx;
	size_t		 i;
	int		 rc;

	for (i = 0; i < pm->n; i++) {
		struct cache_record	r = pm->recs[i];
		struct putctx		pc = { &pm->keys[i], &r, NULL, NULL,
					    NULL, 0 };

		memset(r.digest, 0, sizeof(r.digest));
		stamp(&r);
		if ((rc = put_fn(c, t, &pc)) != 0)
			return rc;
	}
	return 0;
}

int
cache_put_many(struct cache *c, const struct cache_key *keys,
    const struct cache_record *recs, size_t n)
{
	struct putmany	pm = { keys, recs, n };
	size_t		i;

	for (i = 0; i < n; i++)
		if (!(recs[i].flags & CACHE_F_EXTERNAL) || recs[i].path == NULL)
			return -EINVAL;
	return n == 0 ? 0 : cache_wtxn(c, put_many_fn, &pm);
}

struct dropctx {
	const struct cache_key	*key;
};

static int
drop_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct dropctx	*dc = ctx;
	unsigned char	 kb[RECORD_KEY_MAX], gone[32];
	MDB_val		 k;
	int		 rc, unl;

	if ((rc = cache_keyval(dc->key, kb, &k)) < 0)
		return -rc;
	if ((rc = cache_drop_raw(c, t, &k, gone, &unl)) != 0)
		return rc;
	/* A mark of cache_mark_checked() would turn into a negative entry. */
	rc = mdb_del(t, c->negs, &k, NULL);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return rc;
	if ((rc = cache_uncat_add(c, &k)) != 0)
		return rc;
	return unl ? cache_gone_add(c, gone) : 0;
}

int
cache_drop(struct cache *c, const struct cache_key *key)
{
	struct dropctx dc = { key };

	return cache_wtxn(c, drop_fn, &dc);
}

struct negctx {
	const struct cache_key	*key;
	int64_t			 now;
	const int64_t		*ttls;
	size_t			 nttls;
	uint32_t		 misses;
};

static int
neg_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct negctx	*nc = ctx;
	unsigned char	 kb[RECORD_KEY_MAX];
	struct neg	 n;
	MDB_val		 k, v;
	size_t		 i;
	int		 rc;

	if ((rc = cache_keyval(nc->key, kb, &k)) < 0)
		return -rc;
	rc = mdb_get(t, c->records, &k, &v);
	if (rc == 0)
		return EEXIST;
	if (rc != MDB_NOTFOUND || (rc = cache_neg_read(c, t, &k, &n)) != 0)
		return rc;
	if (n.misses < UINT32_MAX)
		n.misses++;
	i = n.misses < nc->nttls ? n.misses : nc->nttls;
	n.expires = nc->now + nc->ttls[i - 1];
	nc->misses = n.misses;
	return cache_neg_write(c, t, &k, &n);
}

int
cache_put_negative(struct cache *c, const struct cache_key *key,
    int64_t now, const int64_t *ttls, size_t nttls)
{
	struct negctx	nc = { key, now, ttls, nttls, 0 };
	int		rc;

	if (nttls == 0)
		return -EINVAL;
	if ((rc = cache_wtxn(c, neg_fn, &nc)) < 0)
		return rc;
	return (int)(nc.misses > INT32_MAX ? INT32_MAX : nc.misses);
}

struct markctx {
	const struct cache_key	*key;
	int64_t			 until;
};

static int
mark_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct markctx	*mc = ctx;
	unsigned char	 kb[RECORD_KEY_MAX];
	struct neg	 n;
	MDB_val		 k;
	int		 rc;

	if ((rc = cache_keyval(mc->key, kb, &k)) < 0)
		return -rc;
	if ((rc = cache_neg_read(c, t, &k, &n)) != 0)
		return rc;
	n.expires = mc->until;
	return cache_neg_write(c, t, &k, &n);
}

int
cache_mark_checked(struct cache *c, const struct cache_key *key,
    int64_t until)
{
	struct markctx mc = { key, until };

	return cache_wtxn(c, mark_fn, &mc);
}

static int
unneg_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	MDB_val	*k = ctx;
	int	 rc;

	rc = mdb_del(t, c->negs, k, NULL);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int
cache_forget_negative(struct cache *c, const struct cache_key *key)
{
	unsigned char	kb[RECORD_KEY_MAX];
	MDB_val		k, v;
	MDB_txn		*t;
	int		rc;

	if ((rc = cache_keyval(key, kb, &k)) < 0)
		return rc;
	/* Most keys have none: look before taking the writer's lock. */
	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	rc = mdb_get(t, c->negs, &k, &v);
	cache_rend(c, t);
	if (rc == MDB_NOTFOUND)
		return 0;
	return cache_wtxn(c, unneg_fn, &k);
}

int
cache_checked(struct cache *c, const struct cache_key *key, int64_t now)
{
	unsigned char	kb[RECORD_KEY_MAX];
	struct neg	n;
	MDB_txn		*t;
	MDB_val		 k;
	int		 rc;

	if ((rc = cache_keyval(key, kb, &k)) < 0)
		return rc;
	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	rc = cache_neg_read(c, t, &k, &n);
	cache_rend(c, t);
	return rc != 0 ? cache_merr(rc) : n.expires > now;
}

/* ---- walking the records ---- */

#define FOREACH_BATCH	256

struct fe_item {
	unsigned char		 k[RECORD_KEY_MAX];
	size_t			 kl;
	struct cache_record	 rec;
};

/* The extra string of a blob record's key, from its catalog entry.
 * @return 0 with *out (malloc'd), or -errno. */
static int
cat_extra(const struct cache *c, const unsigned char *k, size_t kl,
    char **out)
{
	struct record_cat	 e;
	struct stat		 st;
	char			 path[PATH_MAX];
	unsigned char		*buf = NULL;
	ssize_t			 n;
	int			 fd, rc = -EIO;

	if ((rc = cache_cat_path(c, RECORD_CAT_RECORD, k, kl, path, 0)) < 0)
		return rc;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	rc = -EBADMSG;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size <= (2 << 20) &&
	    (buf = malloc((size_t)st.st_size + 1)) != NULL &&
	    (n = pread(fd, buf, (size_t)st.st_size, 0)) == st.st_size &&
	    record_cat_decode(buf, (size_t)n, &e) == 0 &&
	    e.type == RECORD_CAT_RECORD && e.klen == kl &&
	    memcmp(e.key, k, kl) == 0 && e.extra != NULL)
		rc = (*out = strndup(e.extra, e.extralen)) != NULL ? 0 :
		    -ENOMEM;
	close(fd);
	free(buf);
	return rc;
}

/* Up to FOREACH_BATCH records after the key last (lastlen 0: the first),
 * of kind only (0: of any kind).  @return how many, or -errno. */
static int
fe_batch(struct cache *c, const unsigned char *last, size_t lastlen,
    int kind, struct fe_item *items)
{
	unsigned char	 first = (unsigned char)kind;

	MDB_txn		*t;
	MDB_cursor	*cur;
	MDB_val		 k, v;
	int		 n = 0, rc;

	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	if ((rc = mdb_cursor_open(t, c->records, &cur)) != 0) {
		cache_rend(c, t);
		return cache_merr(rc);
	}
	/* Keys begin with their kind: a kind's records are one run. */
	k.mv_data = lastlen ? (void *)last : &first;
	k.mv_size = lastlen ? lastlen : 1;
	rc = mdb_cursor_get(cur, &k, &v, lastlen || kind ? MDB_SET_RANGE :
	    MDB_FIRST);
	if (rc == 0 && lastlen && k.mv_size == lastlen &&
	    memcmp(k.mv_data, last, lastlen) == 0)
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	for (; rc == 0 && n < FOREACH_BATCH;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (kind && ((const unsigned char *)k.mv_data)[0] != first) {
			rc = MDB_NOTFOUND;
			break;
		}
		if (k.mv_size < 3 || k.mv_size > RECORD_KEY_MAX ||
		    record_decode(v.mv_data, v.mv_size, &items[n].rec) != 0)
			continue;	/* the open check drops such records */
		memcpy(items[n].k, k.mv_data, k.mv_size);
		items[n].kl = k.mv_size;
		n++;
	}
	mdb_cursor_close(cur);
	cache_rend(c, t);
	if (rc != 0 && rc != MDB_NOTFOUND) {
		while (n > 0)
			cache_record_release(&items[--n].rec);
		return cache_merr(rc);
	}
	return n;
}

static int
foreach(struct cache *c, int kind, cache_foreach_fn fn, void *ctx,
    uint64_t *skipped)
{
	struct fe_item	*items;
	struct cache_key key;
	unsigned char	 last[RECORD_KEY_MAX];
	size_t		 lastlen = 0;
	char		*extra;
	int		 n, i, rc = 0;

	if ((items = calloc(FOREACH_BATCH, sizeof(*items))) == NULL)
		return -ENOMEM;
	while (rc == 0 && (n = fe_batch(c, last, lastlen, kind, items)) > 0) {
		for (i = 0; i < n; i++) {
			struct fe_item *it = &items[i];

			extra = NULL;
			key.kind = (enum cache_kind)it->k[0];
			key.idlen = it->k[1];
			key.id = it->k + 2;
			key.extra = NULL;
			if (rc == 0 && (key.kind == CACHE_SOURCE ||
			    key.kind == CACHE_SECTION ||
			    key.kind == CACHE_MEMBER ||
			    key.kind == CACHE_ENCODED)) {
				/* A scanned source's name is its xfile (its
				 * path may be where a symlink led, or the
				 * archive it is a member of). */
				if (it->rec.flags & CACHE_F_EXTERNAL)
					extra = it->rec.xfile != NULL ?
					    strdup(it->rec.xfile) :
					    it->rec.path != NULL ?
					    strdup(it->rec.path) : NULL;
				else if (cat_extra(c, it->k, it->kl,
				    &extra) < 0)
					extra = NULL;
				if (extra == NULL && skipped != NULL)
					(*skipped)++;
				key.extra = extra;
			}
			if (rc == 0 && (key.extra != NULL ||
			    (key.kind != CACHE_SOURCE &&
			    key.kind != CACHE_SECTION &&
			    key.kind != CACHE_MEMBER &&
			    key.kind != CACHE_ENCODED)) &&
			    2 + key.idlen <= it->kl)
				rc = fn(ctx, &key, &it->rec);
			free(extra);
		}
		memcpy(last, items[n - 1].k, items[n - 1].kl);
		lastlen = items[n - 1].kl;
		for (i = 0; i < n; i++)
			cache_record_release(&items[i].rec);
	}
	free(items);
	return rc != 0 ? rc : n < 0 ? n : 0;
}

int
cache_foreach(struct cache *c, cache_foreach_fn fn, void *ctx,
    uint64_t *skipped)
{
	return foreach(c, 0, fn, ctx, skipped);
}

int
cache_foreach_kind(struct cache *c, enum cache_kind kind,
    cache_foreach_fn fn, void *ctx)
{
	if (kind != CACHE_DEBUGINFO && kind != CACHE_EXECUTABLE &&
	    kind != CACHE_GSYM && kind != CACHE_BUNDLE)
		return -EINVAL;
	return foreach(c, (int)kind, fn, ctx, NULL);
}

int
cache_find_prefix(struct cache *c, enum cache_kind kind,
    const unsigned char *prefix, size_t plen, unsigned char id[CACHE_ID_MAX],
    size_t *idlen)
{
	unsigned char	 kb[2 + CACHE_ID_MAX];
	const unsigned char *kp;
	MDB_txn		*t;
	MDB_cursor	*cur;
	MDB_val		 k, v;
	size_t		 len, i;
	int		 rc = MDB_NOTFOUND;

	if ((kind != CACHE_DEBUGINFO && kind != CACHE_EXECUTABLE &&
	    kind != CACHE_GSYM) || plen == 0 || plen > CACHE_ID_MAX)
		return -EINVAL;
	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	if ((rc = mdb_cursor_open(t, c->records, &cur)) != 0) {
		cache_rend(c, t);
		return cache_merr(rc);
	}
	rc = MDB_NOTFOUND;
	for (len = 1; len <= CACHE_ID_MAX && rc == MDB_NOTFOUND; len++) {
		size_t n = len < plen ? len : plen;

		/* A shorter id: the rest of the prefix must be padding. */
		for (i = n; i < plen && prefix[i] == 0; i++)
			;
		if (i < plen)
			continue;
		kb[0] = (unsigned char)kind;
		kb[1] = (unsigned char)len;
		memcpy(kb + 2, prefix, n);
		k.mv_data = kb;
		k.mv_size = 2 + n;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (rc != 0)
			break;
		kp = k.mv_data;
		if (k.mv_size != 2 + len || kp[0] != kind || kp[1] != len ||
		    memcmp(kp + 2, prefix, n) != 0) {
			rc = MDB_NOTFOUND;
			continue;
		}
		memcpy(id, kp + 2, len);
		*idlen = len;
	}
	mdb_cursor_close(cur);
	cache_rend(c, t);
	if (rc == MDB_NOTFOUND)
		return -ENOENT;
	return cache_merr(rc);
}

int
cache_stats(struct cache *c, struct cache_stats *st)
{
	MDB_txn		*t;
	MDB_stat	 ms;
	MDB_envinfo	 info;
	int		 rc;

	memset(st, 0, sizeof(*st));
	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	if ((rc = cache_get_bytes(c, t, &st->bytes)) == 0 &&
	    (rc = mdb_stat(t, c->records, &ms)) == 0) {
		st->records = ms.ms_entries;
		if ((rc = mdb_stat(t, c->blobs, &ms)) == 0)
			st->blobs = ms.ms_entries;
		if (rc == 0 && (rc = mdb_stat(t, c->negs, &ms)) == 0)
			st->negatives = ms.ms_entries;
	}
	mdb_env_info(c->env, &info);
	cache_rend(c, t);
	st->mapsize = info.me_mapsize;
	st->evictions = __atomic_load_n(&c->evictions, __ATOMIC_RELAXED);
	st->check_dropped = c->check_dropped;
	st->check_removed = c->check_removed;
	st->check_quarantined = c->check_quarantined;
	st->check_restored = c->check_restored;
	st->check_resorted = c->check_resorted;
	st->opened_clean = (uint64_t)c->trusted;
	st->verified = __atomic_load_n(&c->verified, __ATOMIC_RELAXED);
	st->verify_failed = __atomic_load_n(&c->verify_failed,
	    __ATOMIC_RELAXED);
#define LOAD(x) __atomic_load_n(&c->x, __ATOMIC_RELAXED)
	st->verified_bytes = LOAD(verified_bytes);
	st->verify_passes = LOAD(verify_passes);
	st->verify_last_pass = (uint64_t)LOAD(verify_last_pass);
	st->verify_last_end = LOAD(verify_last_end);
	st->first_verified = LOAD(first_verified);
	st->first_failed = LOAD(first_failed);
	st->quarantine_deleted = LOAD(quarantine_deleted);
#undef LOAD
	return cache_merr(rc);
}

/*
 * core: the store's environment (index/ opened, its map grown), its
 * transactions, the catalog written beside the index, the lru table's
 * entries, blob references, and the walk of blobs/ and catalog/.  See
 * cache_int.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* configure sets it too */
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>

#include "base/buf.h"
#include "base/fs.h"
#include "base/hex.h"
#include "cache/cache.h"
#include "cache/cache_int.h"
#include "cache/record.h"

#define MAX_MAPSIZE		((size_t)1 << 40)

/* A catalog entry to unlink once the write transaction commits. */
struct catkey {
	size_t		klen;
	unsigned char	k[RECORD_KEY_MAX];
};

/* Present once every blob record has its catalog entry. */
static const char META_CATALOG[] = "catalog";

/* LMDB result to -errno. */
int
cache_merr(int rc)
{
	if (rc == 0)
		return 0;
	if (rc == MDB_NOTFOUND)
		return -ENOENT;
	if (rc == MDB_MAP_FULL)
		return -ENOSPC;
	if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH ||
	    rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND)
		return -EUCLEAN;
	if (rc > 0)
		return -rc;
	return -EIO;
}

/* Encode key into kb and point k at it.  @return 0 or -EINVAL. */
int
cache_keyval(const struct cache_key *key, unsigned char kb[RECORD_KEY_MAX],
    MDB_val *k)
{
	int kl;

	if ((kl = record_key(key, kb)) < 0)
		return kl;
	k->mv_size = (size_t)kl;
	k->mv_data = kb;
	return 0;
}

/* The negative entry at k, or a zeroed one.  @return 0 or an LMDB code. */
int
cache_neg_read(struct cache *c, MDB_txn *t, MDB_val *k, struct neg *n)
{
	MDB_val	v;
	int	rc;

	memset(n, 0, sizeof(*n));
	rc = mdb_get(t, c->negs, k, &v);
	if (rc == 0 && v.mv_size == sizeof(*n))
		memcpy(n, v.mv_data, sizeof(*n));
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int
cache_neg_write(struct cache *c, MDB_txn *t, MDB_val *k, struct neg *n)
{
	MDB_val v = { sizeof(*n), n };

	return mdb_put(t, c->negs, k, &v, 0);
}

/* blobs/ab/cdef… for digest; out must hold PATH_MAX bytes. */
int
cache_blob_path(const struct cache *c, const unsigned char digest[32],
    char *out, int dir_only)
{
	char	h[65];
	int	n;

	hex_encode(digest, 32, h);
	if (dir_only)
		n = snprintf(out, PATH_MAX, "%s/blobs/%.2s", c->dir, h);
	else
		n = snprintf(out, PATH_MAX, "%s/blobs/%.2s/%s", c->dir, h,
		    h + 2);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

static void	blob_unlink(struct cache *, const unsigned char [32]);

/*
 * catalog/<xx>/<r|f><hex key>: the name spells the LMDB key, so an entry
 * is found and replaced without reading it; xx is the first id byte (the
 * FileID's for mappings), for fan-out.
 */
int
cache_cat_path(const struct cache *c, int type, const unsigned char *k,
    size_t kl, char *out, int dir_only)
{
	char		h[2 * RECORD_KEY_MAX + 1];
	unsigned	fan;
	int		n;

	if (kl == 0 || kl > RECORD_KEY_MAX)
		return -EINVAL;
	fan = type == RECORD_CAT_RECORD ? (kl > 2 ? k[2] : 0) : k[0];
	hex_encode(k, kl, h);
	if (dir_only)
		n = snprintf(out, PATH_MAX, "%s/catalog/%02x", c->dir, fan);
	else
		n = snprintf(out, PATH_MAX, "%s/catalog/%02x/%c%s", c->dir,
		    fan, type == RECORD_CAT_RECORD ? 'r' : 'f', h);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/*
 * Write e as a catalog file: a file of tmp/, fsynced, renamed over the
 * entry's name.  @return 0 or a positive errno (a cache_wtxn() fn's code).
 */
int
cache_cat_write(struct cache *c, const struct record_cat *e)
{
	unsigned char	*buf = NULL;
	char		 tmp[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
	size_t		 len;
	int		 fd = -1, rc;

	tmp[0] = '\0';
	if ((rc = -record_cat_encode(e, &buf, &len)) != 0 ||
	    (rc = -cache_cat_path(c, e->type, e->key, e->klen, dir, 1)) != 0 ||
	    (rc = -cache_cat_path(c, e->type, e->key, e->klen, path, 0)) != 0)
		goto out;
	if (snprintf(tmp, sizeof(tmp), "%s/tmp/cat.XXXXXX", c->dir) >=
	    (int)sizeof(tmp)) {
		tmp[0] = '\0';
		rc = ENAMETOOLONG;
		goto out;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		tmp[0] = '\0';
		rc = errno;
		goto out;
	}
	(void)fchmod(fd, 0644);
	if ((rc = -fs_write_all(fd, buf, len)) != 0)
		goto out;
	if (fsync(fd) != 0 || (mkdir(dir, 0755) != 0 && errno != EEXIST) ||
	    rename(tmp, path) != 0) {
		rc = errno;
		goto out;
	}
	tmp[0] = '\0';
	rc = -fs_fsync_dir(dir);
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0] != '\0')
		unlink(tmp);
	free(buf);
	return rc;
}

/* Unlink record key k's catalog entry when the running write transaction
 * commits.  @return 0 or ENOMEM (for fn). */
int
cache_uncat_add(struct cache *c, const MDB_val *k)
{
	if (k->mv_size == 0 || k->mv_size > RECORD_KEY_MAX)
		return 0;
	if (array_grow(&c->uncat, &c->cuncat, c->nuncat + 1,
	    sizeof(*c->uncat)) != 0)
		return ENOMEM;
	c->uncat[c->nuncat].klen = k->mv_size;
	memcpy(c->uncat[c->nuncat].k, k->mv_data, k->mv_size);
	c->nuncat++;
	return 0;
}

static void
uncat_apply(struct cache *c)
{
	char	path[PATH_MAX];
	size_t	i;

	for (i = 0; i < c->nuncat; i++)
		if (cache_cat_path(c, RECORD_CAT_RECORD, c->uncat[i].k,
		    c->uncat[i].klen, path, 0) == 0)
			unlink(path);
	c->nuncat = 0;
}

/* Another process grew the map: adopt its size. */
static void
adopt(struct cache *c)
{
	pthread_rwlock_wrlock(&c->resize);
	mdb_env_set_mapsize(c->env, 0);
	pthread_rwlock_unlock(&c->resize);
}

int
cache_rbegin(struct cache *c, MDB_txn **t)
{
	int rc, tries;

	for (tries = 0; ; tries++) {
		pthread_rwlock_rdlock(&c->resize);
		if ((rc = mdb_txn_begin(c->env, NULL, MDB_RDONLY, t)) == 0)
			return 0;
		pthread_rwlock_unlock(&c->resize);
		if (rc != MDB_MAP_RESIZED || tries >= 3)
			return cache_merr(rc);
		adopt(c);
	}
}

void
cache_rend(struct cache *c, MDB_txn *t)
{
	mdb_txn_abort(t);
	pthread_rwlock_unlock(&c->resize);
}

static int
grow(struct cache *c)
{
	MDB_envinfo	info;
	int		rc;

	pthread_rwlock_wrlock(&c->resize);
	mdb_env_info(c->env, &info);
	if (info.me_mapsize >= MAX_MAPSIZE)
		rc = ENOSPC;
	else
		rc = mdb_env_set_mapsize(c->env, info.me_mapsize * 2);
	pthread_rwlock_unlock(&c->resize);
	return cache_merr(rc);
}

/*
 * Run fn inside a write transaction and commit.  fn returns 0, a positive
 * errno or an LMDB code, and must do its file system changes after its
 * last LMDB write: when the map is full the transaction is aborted, the
 * map grown, and fn run again from the start.
 */
int
cache_wtxn(struct cache *c, int (*fn)(struct cache *, MDB_txn *, void *),
    void *ctx)
{
	MDB_txn	*t;
	size_t	 i;
	int	 rc, tries;

	if (c->readonly)
		return -EROFS;
	pthread_mutex_lock(&c->wmu);
	for (tries = 0; ; tries++) {
		c->ngone = 0;
		c->nuncat = 0;
		pthread_rwlock_rdlock(&c->resize);
		rc = mdb_txn_begin(c->env, NULL, 0, &t);
		if (rc == 0) {
			if ((rc = fn(c, t, ctx)) == 0)
				rc = mdb_txn_commit(t);
			else
				mdb_txn_abort(t);
		}
		pthread_rwlock_unlock(&c->resize);
		if (rc == MDB_MAP_RESIZED && tries < 24) {
			adopt(c);
			continue;
		}
		if (rc != MDB_MAP_FULL || tries >= 24)
			break;
		if ((rc = grow(c)) < 0)
			goto out;
	}
	if (rc == 0) {
		uncat_apply(c);
		for (i = 0; i < c->ngone; i++)
			blob_unlink(c, c->gone[i]);
	}
	rc = cache_merr(rc);
out:
	c->ngone = 0;
	c->nuncat = 0;
	pthread_mutex_unlock(&c->wmu);
	return rc;
}

/* Unlink this blob when the running write transaction commits.
 * @return 0 or ENOMEM (an LMDB-style code, for fn). */
int
cache_gone_add(struct cache *c, const unsigned char digest[32])
{
	if (array_grow(&c->gone, &c->cgone, c->ngone + 1,
	    sizeof(*c->gone)) != 0)
		return ENOMEM;
	memcpy(c->gone[c->ngone++], digest, 32);
	return 0;
}

int
cache_get_bytes(struct cache *c, MDB_txn *t, uint64_t *bytes)
{
	MDB_val	k = { sizeof(META_BYTES), (void *)META_BYTES }, v;
	int	rc;

	*bytes = 0;
	rc = mdb_get(t, c->meta, &k, &v);
	if (rc == 0 && v.mv_size == sizeof(*bytes))
		memcpy(bytes, v.mv_data, sizeof(*bytes));
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int
add_bytes(struct cache *c, MDB_txn *t, int64_t delta)
{
	MDB_val		k = { sizeof(META_BYTES), (void *)META_BYTES }, v;
	uint64_t	bytes;
	int		rc;

	if ((rc = cache_get_bytes(c, t, &bytes)) != 0)
		return rc;
	if (delta < 0 && (uint64_t)-delta > bytes)
		bytes = 0;
	else
		bytes += (uint64_t)delta;
	v.mv_size = sizeof(bytes);
	v.mv_data = &bytes;
	return mdb_put(t, c->meta, &k, &v, 0);
}

/*
 * The eviction order.  The lru table holds, for every record the byte
 * budget may evict (a blob, not pinned), the key atime (8 bytes, big
 * endian, sign bit flipped) | record key, and no value: evict() takes
 * the oldest first and does work in proportion to what it evicts.  Every
 * change of a record goes through cache_rec_put() and cache_rec_del(),
 * which keep it; evict() mends an entry that lies (its record gone or changed).
 */

/* Is the encoded record v evictable?  *atime is its access time. */
int
cache_lru_evictable(const MDB_val *v, int64_t *atime)
{
	uint32_t	flags;

	if (v->mv_size < RECORD_FIXED)
		return 0;
	memcpy(&flags, (const char *)v->mv_data + 4, sizeof(flags));
	memcpy(atime, (const char *)v->mv_data + RECORD_ATIME_OFF,
	    sizeof(*atime));
	return !(flags & (CACHE_F_EXTERNAL | CACHE_F_PINNED));
}

void
cache_lru_key(const MDB_val *k, int64_t atime, unsigned char out[LRU_KEY_MAX],
    MDB_val *lk)
{
	uint64_t	u = (uint64_t)atime ^ (1ull << 63);
	int		i;

	for (i = 0; i < 8; i++)
		out[i] = (unsigned char)(u >> (56 - 8 * i));
	memcpy(out + 8, k->mv_data, k->mv_size);
	lk->mv_size = 8 + k->mv_size;
	lk->mv_data = out;
}

/* Add (add) or remove the lru entry of the record k -> v. */
int
cache_lru_set(struct cache *c, MDB_txn *t, const MDB_val *k, const MDB_val *v,
    int add)
{
	unsigned char	lb[LRU_KEY_MAX];
	MDB_val		lk, empty = { 0, NULL };
	int64_t		atime;
	int		rc;

	if (k->mv_size > RECORD_KEY_MAX || !cache_lru_evictable(v, &atime))
		return 0;
	cache_lru_key(k, atime, lb, &lk);
	if (add)
		return mdb_put(t, c->lru, &lk, &empty, 0);
	rc = mdb_del(t, c->lru, &lk, NULL);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Store record k -> v, replacing any (and its lru entry). */
int
cache_rec_put(struct cache *c, MDB_txn *t, MDB_val *k, MDB_val *v)
{
	MDB_val	old;
	int	rc;

	rc = mdb_get(t, c->records, k, &old);
	if (rc == 0)
		rc = cache_lru_set(c, t, k, &old, 0);
	else if (rc == MDB_NOTFOUND)
		rc = 0;
	if (rc != 0 || (rc = mdb_put(t, c->records, k, v, 0)) != 0)
		return rc;
	return cache_lru_set(c, t, k, v, 1);
}

/* Remove record k (and its lru entry).  MDB_NOTFOUND when there is
 * none.  (A cursor walk calls cache_lru_set() then mdb_cursor_del().) */
int
cache_rec_del(struct cache *c, MDB_txn *t, MDB_val *k)
{
	MDB_val	old;
	int	rc;

	if ((rc = mdb_get(t, c->records, k, &old)) != 0 ||
	    (rc = cache_lru_set(c, t, k, &old, 0)) != 0)
		return rc;
	return mdb_del(t, c->records, k, NULL);
}

/*
 * Drop one reference to a blob.  *unlink_it is set when this was the last
 * one: the caller removes the file after its last LMDB write.
 */
int
cache_blob_unref(struct cache *c, MDB_txn *t, const unsigned char digest[32],
    int *unlink_it)
{
	MDB_val		k = { 32, (void *)digest }, v;
	struct blobref	r;
	int		rc;

	*unlink_it = 0;
	if ((rc = mdb_get(t, c->blobs, &k, &v)) == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return rc;
	if (v.mv_size != sizeof(r))
		return mdb_del(t, c->blobs, &k, NULL);
	memcpy(&r, v.mv_data, sizeof(r));
	if (r.refs > 1) {
		r.refs--;
		v.mv_size = sizeof(r);
		v.mv_data = &r;
		return mdb_put(t, c->blobs, &k, &v, 0);
	}
	if ((rc = mdb_del(t, c->blobs, &k, NULL)) != 0)
		return rc;
	*unlink_it = 1;
	return add_bytes(c, t, -(int64_t)r.size);
}

/* Add a reference; *is_new is set when the blob was not indexed yet. */
int
cache_blob_ref(struct cache *c, MDB_txn *t, const unsigned char digest[32],
    uint64_t size, int *is_new)
{
	MDB_val		k = { 32, (void *)digest }, v;
	struct blobref	r = { 0, size };
	int		rc;

	rc = mdb_get(t, c->blobs, &k, &v);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return rc;
	*is_new = rc == MDB_NOTFOUND;
	if (!*is_new && v.mv_size == sizeof(r))
		memcpy(&r, v.mv_data, sizeof(r));
	r.refs++;
	v.mv_size = sizeof(r);
	v.mv_data = &r;
	if ((rc = mdb_put(t, c->blobs, &k, &v, 0)) != 0)
		return rc;
	return *is_new ? add_bytes(c, t, (int64_t)size) : 0;
}

static void
blob_unlink(struct cache *c, const unsigned char digest[32])
{
	char path[PATH_MAX];

	/* One left behind is a stray for the next open's check. */
	if (cache_blob_path(c, digest, path, 0) != 0 ||
	    (unlink(path) != 0 && errno != ENOENT))
		c->dirty = 1;
}

/*
 * Remove the record at encoded key k, releasing its blob reference.
 * *gone receives the digest to unlink, if any.
 */
int
cache_drop_raw(struct cache *c, MDB_txn *t, MDB_val *k, unsigned char gone[32],
    int *unlink_it)
{
	struct cache_record	rec;
	MDB_val			v;
	int			rc;

	*unlink_it = 0;
	if ((rc = mdb_get(t, c->records, k, &v)) != 0)
		return rc;
	if (record_decode(v.mv_data, v.mv_size, &rec) == 0 &&
	    !(rec.flags & CACHE_F_EXTERNAL)) {
		memcpy(gone, rec.digest, 32);
		rc = cache_blob_unref(c, t, rec.digest, unlink_it);
	}
	cache_record_release(&rec);
	if (rc != 0)
		return rc;
	return cache_rec_del(c, t, k);
}

/*
 * Call fn(ctx, dirfd, sub, name) for every file of dir/<sub>/ (the layout
 * of blobs/ and catalog/), dot files left out, until fn returns non-zero.
 * @return fn's last value, or -errno when dir cannot be opened.
 */
int
cache_walk2(const char *dir, int (*fn)(void *, int, const char *, const char *),
    void *ctx)
{
	DIR		*top, *sub;
	struct dirent	*e, *f;
	int		 fd, rc = 0;

	if ((top = opendir(dir)) == NULL)
		return -errno;
	while (rc == 0 && (e = readdir(top)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		fd = openat(dirfd(top), e->d_name, O_RDONLY | O_DIRECTORY);
		if (fd < 0 || (sub = fdopendir(fd)) == NULL) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while (rc == 0 && (f = readdir(sub)) != NULL)
			if (f->d_name[0] != '.')
				rc = fn(ctx, dirfd(sub), e->d_name, f->d_name);
		closedir(sub);
	}
	closedir(top);
	return rc;
}

/* Create and open the LMDB environment; on failure c->env is NULL. */
static int
env_open(struct cache *c, const char *path, unsigned int flags,
    size_t mapsize)
{
	int rc;

	if ((rc = mdb_env_create(&c->env)) != 0) {
		c->env = NULL;
		return cache_merr(rc);
	}
	mdb_env_set_maxdbs(c->env, 8);
	mdb_env_set_maxreaders(c->env, 512);
	mdb_env_set_mapsize(c->env, mapsize);
	if ((rc = mdb_env_open(c->env, path, flags, 0644)) != 0) {
		mdb_env_close(c->env);
		c->env = NULL;
	}
	return cache_merr(rc);
}

/* Open the environment of index/ and its databases. */
int
cache_open_index(struct cache *c, const char *path, size_t mapsize)
{
	MDB_txn		*t;
	unsigned	 fl = c->readonly ? 0 : MDB_CREATE;
	int		 rc;

	rc = env_open(c, path, c->readonly ? MDB_RDONLY : 0, mapsize);
	/* A store we may not write to at all cannot take LMDB's lock file
	 * either; read it without locking (nobody can write it anyway). */
	if (c->readonly && (rc == -EACCES || rc == -EROFS))
		rc = env_open(c, path, MDB_RDONLY | MDB_NOLOCK, mapsize);
	if (rc < 0)
		return rc;
	rc = mdb_txn_begin(c->env, NULL, c->readonly ? MDB_RDONLY : 0, &t);
	if ((rc = cache_merr(rc)) < 0)
		return rc;
	if ((rc = mdb_dbi_open(t, "records", fl, &c->records)) ||
	    (rc = mdb_dbi_open(t, "negative", fl, &c->negs)) ||
	    (rc = mdb_dbi_open(t, "blobs", fl, &c->blobs)) ||
	    (rc = mdb_dbi_open(t, "files", fl, &c->files)) ||
	    (rc = mdb_dbi_open(t, "meta", fl, &c->meta)) ||
	    (rc = mdb_dbi_open(t, "fileids", fl, &c->fileids))) {
		mdb_txn_abort(t);
		return cache_merr(rc);
	}
	/* A reader never evicts: an index from before the lru table is
	 * read as it is. */
	if ((rc = mdb_dbi_open(t, "lru", fl, &c->lru)) != 0 &&
	    !(c->readonly && rc == MDB_NOTFOUND)) {
		mdb_txn_abort(t);
		return cache_merr(rc);
	}
	return cache_merr(mdb_txn_commit(t));
}

/* Does catalog/ hold at least one entry? */
static int
any_file(void *ctx, int dfd, const char *sub, const char *name)
{
	return 1;
}

static int
catalog_nonempty(const struct cache *c)
{
	char	path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/catalog", c->dir);
	return cache_walk2(path, any_file, NULL) == 1;
}

int
cache_mark_catalog_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	MDB_val	k = { sizeof(META_CATALOG), (void *)META_CATALOG };
	MDB_val	v = { 1, (void *)"1" };

	(void)ctx;
	return mdb_put(t, c->meta, &k, &v, 0);
}

/* Write the catalog entry of every blob record and FileID mapping: once,
 * for a store made before the catalog. */
static int
catalog_migrate(struct cache *c)
{
	struct record_cat	 e;
	struct cache_record	 rec;
	MDB_cursor		*cur = NULL;
	MDB_txn			*t;
	MDB_val			 k, v;
	int			 rc, wrc = 0;

	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	if ((rc = mdb_cursor_open(t, c->records, &cur)) != 0)
		goto out;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && wrc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (record_decode(v.mv_data, v.mv_size, &rec) != 0)
			continue;
		if (!(rec.flags & CACHE_F_EXTERNAL)) {
			memset(&e, 0, sizeof(e));
			e.type = RECORD_CAT_RECORD;
			e.key = k.mv_data;
			e.klen = k.mv_size;
			e.val = v.mv_data;
			e.vlen = v.mv_size;
			wrc = cache_cat_write(c, &e);
		}
		cache_record_release(&rec);
	}
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND || wrc != 0 ||
	    (rc = mdb_cursor_open(t, c->fileids, &cur)) != 0)
		goto out;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && wrc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size != CACHE_FILEID_LEN || v.mv_size == 0 ||
		    v.mv_size > CACHE_ID_MAX)
			continue;
		memset(&e, 0, sizeof(e));
		e.type = RECORD_CAT_FILEID;
		e.key = k.mv_data;
		e.klen = k.mv_size;
		e.val = v.mv_data;
		e.vlen = v.mv_size;
		wrc = cache_cat_write(c, &e);
	}
	mdb_cursor_close(cur);
out:
	cache_rend(c, t);
	if (wrc != 0)
		return -wrc;
	return rc == MDB_NOTFOUND ? 0 : cache_merr(rc);
}

/*
 * An index without the catalog marker is new, or from before the catalog
 * (then it gets its entries now), or lost: empty while the catalog is
 * not, as after index/ was removed or data.mdb truncated to nothing.
 */
int
cache_catalog_check(struct cache *c)
{
	MDB_val		 k = { sizeof(META_CATALOG), (void *)META_CATALOG }, v;
	MDB_stat	 ms;
	MDB_txn		*t;
	int		 rc, marked;

	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	marked = mdb_get(t, c->meta, &k, &v) == 0;
	rc = mdb_stat(t, c->records, &ms);
	cache_rend(c, t);
	if (rc != 0)
		return cache_merr(rc);
	if (marked)
		return 0;
	if (ms.ms_entries == 0 && catalog_nonempty(c))
		return -EUCLEAN;
	if (c->readonly)
		return 0;
	if ((rc = catalog_migrate(c)) < 0)
		return rc;
	return cache_wtxn(c, cache_mark_catalog_fn, NULL);
}

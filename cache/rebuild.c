/*
 * rebuild: the index made again from the catalog and the blobs
 * (cache_rebuild(); the open check's repair uses the same reader), and
 * blobs verified against their names (cache_verify(), and the set of
 * blobs hashed since open that spares a second hashing).  See cache_int.h,
 * and doc/store.md, "Open, check, rebuild, verify".
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
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>
#include <openssl/evp.h>

#include "base/buf.h"
#include "base/fs.h"
#include "base/hex.h"
#include "cache/cache.h"
#include "cache/cache_int.h"
#include "cache/record.h"

#define VSET_MAX	((size_t)1 << 20)

/*
 * Blobs hashed since open.
 */

static uint64_t
vkey(const unsigned char d[32])
{
	uint64_t k;

	memcpy(&k, d, sizeof(k));
	return k != 0 ? k : 1;		/* 0 marks a free slot */
}

static size_t
vslot(const uint64_t *set, size_t cap, uint64_t k)
{
	size_t i = (size_t)(k ^ (k >> 29)) & (cap - 1);

	while (set[i] != 0 && set[i] != k)
		i = (i + 1) & (cap - 1);
	return i;
}

int
cache_vset_has(struct cache *c, const unsigned char d[32])
{
	int has;

	pthread_mutex_lock(&c->vmu);
	has = c->vcap > 0 && c->vset[vslot(c->vset, c->vcap, vkey(d))] != 0;
	pthread_mutex_unlock(&c->vmu);
	return has;
}

void
cache_vset_add(struct cache *c, const unsigned char d[32])
{
	uint64_t	*n, k = vkey(d);
	size_t		 i, cap;

	pthread_mutex_lock(&c->vmu);
	if (c->vn >= VSET_MAX) {
		memset(c->vset, 0, c->vcap * sizeof(*c->vset));
		c->vn = 0;
	}
	if (2 * (c->vn + 1) > c->vcap) {
		cap = c->vcap ? 2 * c->vcap : 1024;
		if ((n = calloc(cap, sizeof(*n))) == NULL)
			goto out;	/* hashed again next time */
		for (i = 0; i < c->vcap; i++)
			if (c->vset[i] != 0)
				n[vslot(n, cap, c->vset[i])] = c->vset[i];
		free(c->vset);
		c->vset = n;
		c->vcap = cap;
	}
	i = vslot(c->vset, c->vcap, k);
	if (c->vset[i] == 0) {
		c->vset[i] = k;
		c->vn++;
	}
out:
	pthread_mutex_unlock(&c->vmu);
}

/* SHA-256 and size of what fd holds, read with pread (its offset is left
 * alone).  @return 0 or -errno. */
int
cache_hash_fd(int fd, unsigned char d[32], uint64_t *size)
{
	unsigned char	 buf[65536];
	EVP_MD_CTX	*md = NULL;
	unsigned int	 dlen;
	ssize_t		 n = 0;
	int		 rc = -EIO;

	*size = 0;
	if ((md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		goto out;
	for (;;) {
		if ((n = pread(fd, buf, sizeof(buf), (off_t)*size)) < 0 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (EVP_DigestUpdate(md, buf, (size_t)n) != 1)
			goto out;
		*size += (uint64_t)n;
	}
	if (n < 0)
		rc = -errno;
	else if (EVP_DigestFinal_ex(md, d, &dlen) == 1)
		rc = 0;
out:
	EVP_MD_CTX_free(md);
	return rc;
}

/*
 * Rebuilding the index from the catalog, and verifying blobs.
 */

/* SHA-256 and size of the file at dfd/name.  @return 0 or -errno. */
static int
hash_file(int dfd, const char *name, unsigned char d[32], uint64_t *size)
{
	int fd, rc;

	*size = 0;
	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	rc = cache_hash_fd(fd, d, size);
	close(fd);
	return rc;
}

/* Is the blob digest (size bytes) intact under blobs/?  If not, and an
 * intact copy sits in quarantine/, move it back.  @return 1 restored,
 * 0 intact, -ENOENT neither. */
static int
blob_find(struct cache *c, const unsigned char digest[32], uint64_t size)
{
	char		 h[65], dir[PATH_MAX], q[PATH_MAX], path[PATH_MAX];
	unsigned char	 d[32];
	uint64_t	 n;
	int		 dfd, ok;

	hex_encode(digest, 32, h);
	if (cache_blob_path(c, digest, dir, 1) != 0 ||
	    cache_blob_path(c, digest, path, 0) != 0)
		return -ENOENT;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		ok = hash_file(dfd, h + 2, d, &n) == 0 && n == size &&
		    memcmp(d, digest, 32) == 0;
		close(dfd);
		if (ok)
			return 0;
	}
	if (snprintf(q, sizeof(q), "%s/quarantine", c->dir) >= (int)sizeof(q) ||
	    (dfd = open(q, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -ENOENT;
	ok = hash_file(dfd, h, d, &n) == 0 && n == size &&
	    memcmp(d, digest, 32) == 0;
	close(dfd);
	if (!ok)
		return -ENOENT;
	/* Whatever sits under the blob's name now is wrong: keep it aside. */
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		(void)cache_quarantine_blob(c, dfd, h, ".bad");
		close(dfd);
	}
	if (snprintf(q, sizeof(q), "%s/quarantine/%s", c->dir, h) >=
	    (int)sizeof(q) || (mkdir(dir, 0755) != 0 && errno != EEXIST) ||
	    rename(q, path) != 0 || fs_fsync_dir(dir) != 0)
		return -ENOENT;
	return 1;
}


static int
rebuild_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct rebuildctx	*rb = ctx;
	struct cache_record	 rec;
	struct record_cat	*e;
	MDB_val			 k, v;
	size_t			 i;
	int			 rc = 0, is_new;

	for (i = 0; i < rb->n && rc == 0; i++) {
		e = &rb->ents[i];
		k.mv_size = e->klen;
		k.mv_data = (void *)e->key;
		/* A key the live index has after all (found once the table
		 * was sorted again) keeps its record and reference count. */
		rb->had[i] = rb->repair && mdb_get(t, e->type ==
		    RECORD_CAT_FILEID ? c->fileids : c->records, &k, &v) == 0;
		if (rb->had[i])
			continue;
		v.mv_size = e->vlen;
		v.mv_data = (void *)e->val;
		if (e->type == RECORD_CAT_FILEID) {
			rc = mdb_put(t, c->fileids, &k, &v, 0);
			continue;
		}
		if (record_decode(e->val, e->vlen, &rec) != 0)
			continue;
		if ((rc = cache_blob_ref(c, t, rec.digest, rec.size,
		    &is_new)) == 0)
			rc = cache_rec_put(c, t, &k, &v);
		cache_record_release(&rec);
	}
	return rc;
}

/* Index the batch, and count it once it is committed. */
int
cache_rebuild_flush(struct cache *c, struct rebuildctx *rb)
{
	size_t	i;
	int	rc;

	if (rb->n == 0)
		return 0;
	rc = cache_wtxn(c, rebuild_fn, rb);
	for (i = 0; i < rb->n; i++) {
		if (rc != 0 || rb->had[i])
			;
		else if (rb->ents[i].type == RECORD_CAT_FILEID)
			rb->rep->fileids++;
		else
			rb->rep->records++;
		free(rb->bufs[i]);
	}
	rb->n = 0;
	return rc;
}

/* Read one catalog file; queue it if it decodes and its blob is intact. */
int
cache_rebuild_one(struct cache *c, struct rebuildctx *rb, int dfd,
    const char *name)
{
	struct cache_record	 rec;
	struct record_cat	*e = &rb->ents[rb->n];
	struct stat		 st;
	unsigned char		*buf = NULL;
	ssize_t			 n;
	int			 fd, rc;

	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > (2 << 20) ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL ||
	    (n = pread(fd, buf, (size_t)st.st_size, 0)) != st.st_size ||
	    record_cat_decode(buf, (size_t)n, e) != 0) {
		close(fd);
		free(buf);
		rb->rep->bad_entries++;
		return 0;
	}
	close(fd);
	if (e->type == RECORD_CAT_RECORD) {
		if (record_decode(e->val, e->vlen, &rec) != 0) {
			rb->rep->bad_entries++;
			free(buf);
			return 0;
		}
		rc = rec.flags & CACHE_F_EXTERNAL ? -ENOENT :
		    blob_find(c, rec.digest, rec.size);
		cache_record_release(&rec);
		if (rc < 0) {
			rb->rep->missing++;
			free(buf);
			return 0;
		}
		rb->rep->restored += rc == 1;
	}
	rb->bufs[rb->n++] = buf;
	return rb->n == REBUILD_BATCH ? cache_rebuild_flush(c, rb) : 0;
}

struct rebuildwalk {
	struct cache		*c;
	struct rebuildctx	*rb;
};

static int
rebuild_file(void *ctx, int dfd, const char *sub, const char *name)
{
	struct rebuildwalk *w = ctx;

	return cache_rebuild_one(w->c, w->rb, dfd, name);
}

static int
rebuild_all(struct cache *c, struct cache_rebuild_report *rep)
{
	struct rebuildwalk	 w = { c, NULL };
	char			 path[PATH_MAX];
	int			 rc;

	if ((w.rb = calloc(1, sizeof(*w.rb))) == NULL)
		return -ENOMEM;
	w.rb->rep = rep;
	snprintf(path, sizeof(path), "%s/catalog", c->dir);
	rc = cache_walk2(path, rebuild_file, &w);
	if (rc == -ENOENT)
		rc = 0;
	if (rc == 0)
		rc = cache_rebuild_flush(c, w.rb);
	while (w.rb->n > 0)
		free(w.rb->bufs[--w.rb->n]);
	free(w.rb);
	return rc;
}

int
cache_rebuild(const char *dir, struct cache_rebuild_report *rep)
{
	static const char	*subdirs[] = { "blobs", "catalog", "tmp" };
	struct cache		*c;
	char			 path[PATH_MAX], old[PATH_MAX];
	size_t			 i;
	int			 rc, n;

	memset(rep, 0, sizeof(*rep));
	if ((rc = cache_store_present(dir, 1)) < 0)
		return rc;
	if ((c = cache_alloc(dir, NULL)) == NULL)
		return -ENOMEM;
	for (i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, subdirs[i]);
		if ((rc = fs_mkdir_p(path, 0)) < 0)
			goto out;
	}
	if ((rc = cache_lock_store(c, LOCK_EX)) < 0)
		goto out;
	cache_clear_tmp(c);
	snprintf(path, sizeof(path), "%s/index", dir);
	if (access(path, F_OK) == 0) {
		for (i = 0; ; i++) {
			n = snprintf(rep->moved, sizeof(rep->moved),
			    i ? "index.old-%lld.%zu" : "index.old-%lld",
			    (long long)time(NULL), i);
			if (n < 0 || n >= (int)sizeof(rep->moved) ||
			    snprintf(old, sizeof(old), "%s/%s", dir,
			    rep->moved) >= (int)sizeof(old)) {
				rc = -ENAMETOOLONG;
				goto out;
			}
			if (renameat2(AT_FDCWD, path, AT_FDCWD, old,
			    RENAME_NOREPLACE) == 0)
				break;
			if (errno != EEXIST || i >= 100) {
				rc = -errno;
				goto out;
			}
		}
	}
	if ((rc = fs_mkdir_p(path, 0)) < 0 ||
	    (rc = cache_open_index(c, path, DEFAULT_MAPSIZE)) < 0 ||
	    (rc = rebuild_all(c, rep)) < 0 ||
	    (rc = cache_wtxn(c, cache_mark_catalog_fn, NULL)) < 0 ||
	    (rc = cache_quarantine_strays(c)) < 0)
		goto out;
	rep->quarantined = c->check_quarantined;
	c->markable = 1;	/* as checked as a check leaves it */
out:
	cache_close(c);
	return rc;
}

int
cache_quarantine_collect(struct cache *c, int64_t before)
{
	char		 path[PATH_MAX];
	struct stat	 st;
	struct dirent	*e;
	DIR		*d;
	int		 n = 0;

	if (c->readonly)
		return -EROFS;
	if (snprintf(path, sizeof(path), "%s/quarantine", c->dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((d = opendir(path)) == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || (int64_t)st.st_mtime >= before)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0 && n < INT_MAX)
			n++;
	}
	closedir(d);
	__atomic_add_fetch(&c->quarantine_deleted, (uint64_t)n,
	    __ATOMIC_RELAXED);
	return n;
}

/* Drop every record that refers to digest. */
int
cache_drop_digest_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	const unsigned char	*digest = ctx;
	struct cache_record	 rec;
	MDB_cursor		*cur;
	MDB_val			 k, v;
	unsigned char		 gone[32];
	int			 rc, match, unl;

	if ((rc = mdb_cursor_open(t, c->records, &cur)) != 0)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (record_decode(v.mv_data, v.mv_size, &rec) != 0)
			continue;
		match = !(rec.flags & CACHE_F_EXTERNAL) &&
		    memcmp(rec.digest, digest, 32) == 0;
		cache_record_release(&rec);
		if (!match)
			continue;
		if ((rc = cache_lru_set(c, t, &k, &v, 0)) != 0 ||
		    (rc = cache_blob_unref(c, t, digest, &unl)) != 0 ||
		    (rc = cache_uncat_add(c, &k)) != 0 ||
		    (rc = mdb_cursor_del(cur, 0)) != 0)
			break;
	}
	mdb_cursor_close(cur);
	(void)gone;
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* A pass starts at the zero cursor and ends when cache_verify() finds no
 * blob after it.  One verifier at a time (the maintenance thread, or
 * symhub store verify) keeps these; readers take them as they are. */
static void
pass_begin(struct cache *c, const unsigned char cursor[32])
{
	static const unsigned char zero[32];

	if (memcmp(cursor, zero, 32) == 0 && c->verify_pass_start == 0)
		__atomic_store_n(&c->verify_pass_start, (int64_t)time(NULL),
		    __ATOMIC_RELAXED);
}

static void
pass_end(struct cache *c)
{
	int64_t now = (int64_t)time(NULL);

	if (c->verify_pass_start == 0)
		return;
	__atomic_store_n(&c->verify_last_pass, now - c->verify_pass_start,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&c->verify_last_end, now, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->verify_passes, 1, __ATOMIC_RELAXED);
	c->verify_pass_start = 0;
}

int
cache_verify(struct cache *c, unsigned char cursor[32], uint64_t max_bytes,
    uint64_t *failed)
{
	unsigned char	 (*ds)[32] = NULL;
	uint64_t	  *sizes = NULL, bytes = 0, size;
	struct blobref	   r;
	unsigned char	   d[32];
	char		   dir[PATH_MAX], h[65];
	MDB_cursor	  *cur = NULL;
	MDB_txn		  *t;
	MDB_val		   k, v;
	size_t		   n = 0, i;
	int		   rc, dfd, bad;

	if (c->readonly)
		return -EROFS;
	if ((ds = malloc(REBUILD_BATCH * 32)) == NULL ||
	    (sizes = malloc(REBUILD_BATCH * sizeof(*sizes))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* Pick the next blobs after the cursor, up to max_bytes. */
	if ((rc = cache_rbegin(c, &t)) < 0)
		goto out;
	k.mv_size = 32;
	k.mv_data = cursor;
	if ((rc = mdb_cursor_open(t, c->blobs, &cur)) == 0) {
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (rc == 0 && memcmp(k.mv_data, cursor, 32) == 0)
			rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
		for (; rc == 0 && n < REBUILD_BATCH && (n == 0 ||
		    bytes < max_bytes);
		    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			if (k.mv_size != 32 || v.mv_size != sizeof(r))
				continue;
			memcpy(&r, v.mv_data, sizeof(r));
			memcpy(ds[n], k.mv_data, 32);
			sizes[n++] = r.size;
			bytes += r.size;
		}
		mdb_cursor_close(cur);
	}
	cache_rend(c, t);
	if (rc != 0 && rc != MDB_NOTFOUND) {
		rc = cache_merr(rc);
		goto out;
	}
	if (n == 0) {
		memset(cursor, 0, 32);
		pass_end(c);
		rc = 0;
		goto out;
	}
	pass_begin(c, cursor);
	for (i = 0; i < n; i++) {
		hex_encode(ds[i], 32, h);
		/* Gone, unreadable or different: bad.  Out of fds: not the
		 * blob's fault, try it next pass. */
		bad = 0;
		if (cache_blob_path(c, ds[i], dir, 1) != 0)
			continue;
		if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			bad = errno == ENOENT;
			size = 0;
		} else {
			rc = hash_file(dfd, h + 2, d, &size);
			bad = rc == -ENOENT || rc == -EIO || (rc == 0 &&
			    (size != sizes[i] || memcmp(d, ds[i], 32) != 0));
			close(dfd);
		}
		__atomic_add_fetch(&c->verified, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->verified_bytes, size, __ATOMIC_RELAXED);
		if (!bad) {
			cache_vset_add(c, ds[i]);
			continue;
		}
		if (failed != NULL)
			(*failed)++;
		if ((rc = cache_condemn(c, ds[i])) < 0)
			goto out;
	}
	memcpy(cursor, ds[n - 1], 32);
	rc = (int)n;
out:
	free(ds);
	free(sizes);
	return rc;
}

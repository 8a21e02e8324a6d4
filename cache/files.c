/*
 * files: the FileID map (a deployed binary's FileID to the build-id its
 * artifacts are stored under) and the files table (what a scanned file
 * was when indexed, and the records that refer to it).  See cache.h for
 * the contract of cache_fileid_*() and cache_file_*().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* configure sets it too */
#endif

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "base/buf.h"
#include "cache/cache.h"
#include "cache/cache_int.h"
#include "cache/record.h"

/*
 * The FileID map.
 */

struct fidctx {
	const unsigned char	*fid, *id;
	size_t			 idlen;
};

static int
fileid_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct fidctx	*fc = ctx;
	MDB_val		 k = { CACHE_FILEID_LEN, (void *)fc->fid };
	MDB_val		 v = { fc->idlen, (void *)fc->id };
	struct record_cat e = { RECORD_CAT_FILEID, fc->fid, CACHE_FILEID_LEN,
			    NULL, 0, fc->id, fc->idlen };
	int		 rc;

	if ((rc = mdb_put(t, c->fileids, &k, &v, 0)) != 0)
		return rc;
	return cache_cat_write(c, &e);
}

int
cache_fileid_put(struct cache *c, const unsigned char fid[CACHE_FILEID_LEN],
    const unsigned char *id, size_t idlen)
{
	struct fidctx fc = { fid, id, idlen };

	if (idlen == 0 || idlen > CACHE_ID_MAX)
		return -EINVAL;
	return cache_wtxn(c, fileid_fn, &fc);
}

int
cache_fileid_get(struct cache *c, const unsigned char fid[CACHE_FILEID_LEN],
    unsigned char id[CACHE_ID_MAX], size_t *idlen)
{
	MDB_txn	*t;
	MDB_val	 k = { CACHE_FILEID_LEN, (void *)fid }, v;
	int	 rc;

	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	if ((rc = mdb_get(t, c->fileids, &k, &v)) == 0) {
		if (v.mv_size == 0 || v.mv_size > CACHE_ID_MAX) {
			rc = EINVAL;
		} else {
			memcpy(id, v.mv_data, v.mv_size);
			*idlen = v.mv_size;
		}
	}
	cache_rend(c, t);
	return cache_merr(rc);
}

struct fidpair {
	unsigned char	fid[CACHE_FILEID_LEN];
	unsigned char	id[CACHE_ID_MAX];
	size_t		idlen;
};

int
cache_fileid_foreach(struct cache *c, cache_fileid_fn fn, void *ctx)
{
	struct fidpair	*v = NULL;
	MDB_cursor	*cur = NULL;
	MDB_txn		*t;
	MDB_val		 k, d;
	size_t		 n = 0, cap = 0, i;
	int		 rc;

	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	if ((rc = mdb_cursor_open(t, c->fileids, &cur)) == 0) {
		for (rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST); rc == 0;
		    rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) {
			if (k.mv_size != CACHE_FILEID_LEN || d.mv_size == 0 ||
			    d.mv_size > CACHE_ID_MAX)
				continue;	/* not ours: passed over */
			if (array_grow(&v, &cap, n + 1, sizeof(*v)) != 0) {
				rc = ENOMEM;	/* cache_merr passes it on */
				break;
			}
			memcpy(v[n].fid, k.mv_data, CACHE_FILEID_LEN);
			memcpy(v[n].id, d.mv_data, d.mv_size);
			v[n].idlen = d.mv_size;
			n++;
		}
		if (rc == MDB_NOTFOUND)
			rc = 0;
		mdb_cursor_close(cur);
	}
	cache_rend(c, t);
	rc = cache_merr(rc);		/* from here on, fn's results */
	for (i = 0; rc == 0 && i < n; i++)
		rc = fn(ctx, v[i].fid, v[i].id, v[i].idlen);
	free(v);
	return rc;
}

/*
 * The files table.
 */

struct invctx {
	unsigned char	kb[RECORD_KEY_MAX];
	size_t		klen;
	int		marked;
};

static int
invalidate_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct invctx		*ic = ctx;
	struct record_file	 f;
	const unsigned char	*ok;
	MDB_cursor		*cur;
	MDB_val			 k, v, nv;
	unsigned char		*copy;
	size_t			 pos, okl;
	int64_t			 stale = -1;
	int			 rc, hit;

	ic->marked = 0;
	if ((rc = mdb_cursor_open(t, c->files, &cur)) != 0)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (record_file_decode(v.mv_data, v.mv_size, &f) < 0)
			continue;
		for (hit = 0, pos = 0; !hit &&
		    record_file_next_key(&f, &pos, &ok, &okl) == 1; )
			hit = okl == ic->klen && memcmp(ok, ic->kb, okl) == 0;
		if (!hit)
			continue;
		/* An impossible mtime: the next pass sees a changed file. */
		if ((copy = malloc(v.mv_size)) == NULL) {
			rc = ENOMEM;
			break;
		}
		memcpy(copy, v.mv_data, v.mv_size);
		memcpy(copy + RECORD_FILE_MTIME_OFF, &stale, sizeof(stale));
		nv.mv_size = v.mv_size;
		nv.mv_data = copy;
		rc = mdb_cursor_put(cur, &k, &nv, MDB_CURRENT);
		free(copy);
		if (rc != 0)
			break;
		ic->marked++;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int
cache_file_invalidate(struct cache *c, const struct cache_key *key)
{
	struct invctx	ic;
	int		kl, rc;

	if ((kl = record_key(key, ic.kb)) < 0)
		return kl;
	ic.klen = (size_t)kl;
	if ((rc = cache_wtxn(c, invalidate_fn, &ic)) < 0)
		return rc;
	return ic.marked;
}

int
cache_file_get(struct cache *c, const char *path, struct cache_file *out)
{
	unsigned char		 kb[RECORD_KEY_MAX];
	const unsigned char	*kp;
	struct record_file	 f;
	MDB_txn			*t;
	MDB_val			 k, v;
	int			 rc;

	k.mv_size = record_file_key(path, kb, &kp);
	k.mv_data = (void *)kp;
	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	if ((rc = mdb_get(t, c->files, &k, &v)) == 0) {
		if (record_file_decode(v.mv_data, v.mv_size, &f) < 0)
			rc = EINVAL;
		else
			*out = f.id;
	}
	cache_rend(c, t);
	return cache_merr(rc);
}

/* Drop the record at encoded key kb if it is an external one for path. */
static int
drop_if_owned(struct cache *c, MDB_txn *t, const unsigned char *kb,
    size_t kl, const char *path, size_t plen)
{
	struct cache_record	 rec;
	MDB_val			 k = { kl, (void *)kb }, v;
	int			 rc, own;

	if ((rc = mdb_get(t, c->records, &k, &v)) != 0)
		return rc == MDB_NOTFOUND ? 0 : rc;
	if (record_decode(v.mv_data, v.mv_size, &rec) != 0)
		return cache_rec_del(c, t, &k);
	/* A source record refers to the source file, not to the ELF file
	 * that named it; the ELF file's key list is what ties them. */
	/* A member extracted from an archive is the archive's too (a blob:
	 * its xarchive names it). */
	if (kb[0] == CACHE_MEMBER)
		own = rec.xarchive != NULL && strlen(rec.xarchive) == plen &&
		    memcmp(rec.xarchive, path, plen) == 0;
	else
		own = (rec.flags & CACHE_F_EXTERNAL) &&
		    (kb[0] == CACHE_SOURCE || (rec.path != NULL &&
		    strlen(rec.path) == plen &&
		    memcmp(rec.path, path, plen) == 0));
	cache_record_release(&rec);
	if (own && kb[0] == CACHE_MEMBER) {
		/* A blob: its reference released, its catalog entry too. */
		unsigned char	gone[32];
		int		unl;

		if ((rc = cache_drop_raw(c, t, &k, gone, &unl)) != 0 ||
		    (unl && (rc = cache_gone_add(c, gone)) != 0))
			return rc;
		return cache_uncat_add(c, &k);
	}
	return own ? cache_rec_del(c, t, &k) : 0;
}

struct filectx {
	const char		*path;
	const struct cache_file	*f;
	const struct cache_key	*keys;
	size_t			 nkeys;
};

static int
file_set_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct filectx		*fc = ctx;
	unsigned char		 kb[RECORD_KEY_MAX], nk[RECORD_KEY_MAX];
	unsigned char		*val;
	const unsigned char	*kp, *ok;
	struct record_file	 old;
	MDB_val			 k, v;
	size_t			 vlen, pos = 0, okl, i, plen;
	int			 rc, found, kl;

	plen = strlen(fc->path);
	k.mv_size = record_file_key(fc->path, kb, &kp);
	k.mv_data = (void *)kp;
	rc = mdb_get(t, c->files, &k, &v);
	if (rc == 0 && record_file_decode(v.mv_data, v.mv_size, &old) >= 0) {
		/* v's memory is valid until the next write: copy it. */
		if ((val = malloc(v.mv_size)) == NULL)
			return ENOMEM;
		memcpy(val, v.mv_data, v.mv_size);
		record_file_decode(val, v.mv_size, &old);
		while ((rc = record_file_next_key(&old, &pos, &ok, &okl)) == 1) {
			for (found = 0, i = 0; i < fc->nkeys && !found; i++) {
				kl = record_key(&fc->keys[i], nk);
				found = kl == (int)okl &&
				    memcmp(nk, ok, okl) == 0;
			}
			if (!found && (rc = drop_if_owned(c, t, ok, okl,
			    fc->path, plen)) != 0)
				break;
		}
		free(val);
		if (rc < 0)
			rc = EINVAL;
		if (rc != 0)
			return rc;
	} else if (rc != 0 && rc != MDB_NOTFOUND) {
		return rc;
	}
	if ((rc = -record_file_encode(fc->path, fc->f, fc->keys, fc->nkeys,
	    &val, &vlen)) != 0)
		return rc;
	v.mv_size = vlen;
	v.mv_data = val;
	rc = mdb_put(t, c->files, &k, &v, 0);
	free(val);
	return rc;
}

int
cache_file_set(struct cache *c, const char *path, const struct cache_file *f,
    const struct cache_key *keys, size_t nkeys)
{
	struct filectx fc = { path, f, keys, nkeys };

	return cache_wtxn(c, file_set_fn, &fc);
}

struct sweepctx {
	char	**paths;
	size_t	  n;
	int	  forgotten;
};

static int
forget_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	struct sweepctx		*sc = ctx;
	unsigned char		 kb[RECORD_KEY_MAX];
	const unsigned char	*kp, *ok;
	struct record_file	 f;
	MDB_val			 k, v;
	size_t			 i, pos, okl;
	unsigned char		*copy;
	int			 rc;

	sc->forgotten = 0;
	for (i = 0; i < sc->n; i++) {
		k.mv_size = record_file_key(sc->paths[i], kb, &kp);
		k.mv_data = (void *)kp;
		if ((rc = mdb_get(t, c->files, &k, &v)) == MDB_NOTFOUND)
			continue;
		if (rc != 0)
			return rc;
		if ((copy = malloc(v.mv_size)) == NULL)
			return ENOMEM;
		memcpy(copy, v.mv_data, v.mv_size);
		pos = 0;
		rc = 0;
		if (record_file_decode(copy, v.mv_size, &f) >= 0) {
			while (record_file_next_key(&f, &pos, &ok, &okl) == 1)
				if ((rc = drop_if_owned(c, t, ok, okl,
				    sc->paths[i], strlen(sc->paths[i]))) != 0)
					break;
		}
		free(copy);
		if (rc != 0 || (rc = mdb_del(t, c->files, &k, NULL)) != 0)
			return rc;
		sc->forgotten++;
	}
	return 0;
}

int
cache_file_sweep(struct cache *c, const char *prefix,
    int (*keep)(void *ctx, const char *path), void *ctx)
{
	struct sweepctx	 sc = { NULL, 0, 0 };
	struct record_file f;
	MDB_cursor	*cur;
	MDB_txn		*t;
	MDB_val		 k, v;
	char		**all = NULL;
	size_t		 nall = 0, cap = 0, i, plen = strlen(prefix);
	int		 rc, pl;

	/* Collect the paths under a read transaction, ask keep() with no
	 * transaction open (it does I/O), then forget in one write. */
	if ((rc = cache_rbegin(c, &t)) < 0)
		return rc;
	if ((rc = mdb_cursor_open(t, c->files, &cur)) != 0) {
		cache_rend(c, t);
		return cache_merr(rc);
	}
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if ((pl = record_file_decode(v.mv_data, v.mv_size, &f)) < 0 ||
		    (size_t)pl < plen || memcmp(f.path, prefix, plen) != 0)
			continue;
		if (array_grow(&all, &cap, nall + 1, sizeof(*all)) != 0) {
			rc = ENOMEM;
			break;
		}
		if ((all[nall] = strndup(f.path, (size_t)pl)) == NULL) {
			rc = ENOMEM;
			break;
		}
		nall++;
	}
	mdb_cursor_close(cur);
	cache_rend(c, t);
	if (rc != MDB_NOTFOUND) {
		rc = cache_merr(rc);
		goto out;
	}
	if ((sc.paths = calloc(nall ? nall : 1, sizeof(*sc.paths))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nall; i++)
		if (!keep(ctx, all[i]))
			sc.paths[sc.n++] = all[i];
	rc = sc.n ? cache_wtxn(c, forget_fn, &sc) : 0;
	if (rc == 0)
		rc = sc.forgotten;
out:
	for (i = 0; i < nall; i++)
		free(all[i]);
	free(all);
	free(sc.paths);
	return rc;
}

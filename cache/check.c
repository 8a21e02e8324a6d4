/*
 * check: the open-time check (tmp/ emptied, tables re-sorted, records
 * checked against their blobs, the catalog taken back, stray blobs
 * quarantined) and the crash probe that runs before it in a child.  See
 * cache_int.h, and doc/store.md, "Open, check, rebuild, verify".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* configure sets it too */
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lmdb.h>

#include "base/buf.h"
#include "base/fs.h"
#include "base/hex.h"
#include "cache/cache.h"
#include "cache/cache_int.h"
#include "cache/record.h"

/*
 * The open-time check.
 */

void
cache_clear_tmp(struct cache *c)
{
	char		 path[PATH_MAX];
	DIR		*d;
	struct dirent	*e;

	snprintf(path, sizeof(path), "%s/tmp", c->dir);
	if ((d = opendir(path)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			c->check_removed++;
	}
	closedir(d);
}

/* Drop records whose blob is missing or of the wrong size, and rebuild
 * the reference counts and byte total from the records that remain. */
static int
check_records(struct cache *c, MDB_txn *t, void *ctx)
{
	MDB_cursor		*cur;
	MDB_val			 k, v, mk, mv;
	struct cache_record	 rec;
	struct stat		 st;
	char			 path[PATH_MAX];
	uint64_t		 bytes = 0, *dropped = ctx;
	int			 rc, is_new, bad;

	*dropped = 0;
	mk.mv_size = sizeof(META_BYTES);
	mk.mv_data = (void *)META_BYTES;
	mv.mv_size = sizeof(bytes);
	mv.mv_data = &bytes;
	/* The eviction order is rebuilt too: an index written meanwhile by a
	 * binary from before the table has records it does not list. */
	if ((rc = mdb_drop(t, c->blobs, 0)) != 0 ||
	    (rc = mdb_drop(t, c->lru, 0)) != 0 ||
	    (rc = mdb_put(t, c->meta, &mk, &mv, 0)) != 0)
		return rc;
	if ((rc = mdb_cursor_open(t, c->records, &cur)) != 0)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		bad = record_decode(v.mv_data, v.mv_size, &rec) != 0;
		if (!bad && !(rec.flags & CACHE_F_EXTERNAL)) {
			bad = cache_blob_path(c, rec.digest, path, 0) != 0 ||
			    stat(path, &st) != 0 ||
			    (uint64_t)st.st_size != rec.size;
			if (!bad)
				rc = cache_blob_ref(c, t, rec.digest, rec.size,
				    &is_new);
		}
		cache_record_release(&rec);
		if (rc != 0)
			break;
		if (bad) {
			if ((rc = mdb_cursor_del(cur, 0)) != 0)
				break;
			(*dropped)++;
		} else if ((rc = cache_lru_set(c, t, &k, &v, 1)) != 0) {
			break;
		}
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Parse blobs/<xx>/<62 hex> back into a digest. */
static int
parse_blob_name(const char *dir2, const char *name, unsigned char d[32])
{
	char	h[65];

	if (strlen(dir2) != 2 || strlen(name) != 62)
		return -1;
	memcpy(h, dir2, 2);
	memcpy(h + 2, name, 63);
	return hex_decode(h, 64, d) == 32 ? 0 : -1;
}

/*
 * Move a file of blobs/<dir2>/ to quarantine/<dir2><name>, never over
 * another file there (a suffix .1, .2, ... when the name is taken).
 * @return 0 or -errno.
 */
static int
quarantine_file(const struct cache *c, int fromfd, const char *dir2,
    const char *name, const char *why)
{
	char	q[PATH_MAX], dst[NAME_MAX + 1];
	int	qfd, rc = 0, i;

	if (snprintf(q, sizeof(q), "%s/quarantine", c->dir) >= (int)sizeof(q))
		return -ENAMETOOLONG;
	if (mkdir(q, 0755) != 0 && errno != EEXIST)
		return -errno;
	if ((qfd = open(q, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	for (i = 0; i < 1000; i++) {
		if ((i == 0 ? snprintf(dst, sizeof(dst), "%s%s%s", dir2, name,
		    why) : snprintf(dst, sizeof(dst), "%s%s%s.%d", dir2, name,
		    why, i)) >= (int)sizeof(dst)) {
			rc = -ENAMETOOLONG;
			break;
		}
		if (renameat2(fromfd, name, qfd, dst, RENAME_NOREPLACE) == 0) {
			/* A blob keeps the time it was written: stamp the
			 * move, which cache_quarantine_collect() counts
			 * its grace from. */
			(void)utimensat(qfd, dst, NULL, 0);
			rc = 0;
			break;
		}
		rc = -errno;
		if (errno != EEXIST)
			break;
	}
	if (rc == 0 && fsync(qfd) != 0)
		rc = -errno;
	close(qfd);
	return rc;
}

/* The blob of hex digest h, a file of dfd (its blobs/xx/). */
int
cache_quarantine_blob(const struct cache *c, int dfd, const char h[65],
    const char *why)
{
	char	d2[3] = { h[0], h[1], '\0' };

	return quarantine_file(c, dfd, d2, h + 2, why);
}

struct strayctx {
	struct cache	*c;
	MDB_txn		*t;
};

static int
stray_one(void *ctx, int dfd, const char *sub, const char *name)
{
	struct strayctx	*sc = ctx;
	unsigned char	 d[32];
	MDB_val		 k = { 32, d }, v;

	if (parse_blob_name(sub, name, d) == 0 &&
	    mdb_get(sc->t, sc->c->blobs, &k, &v) == 0)
		return 0;
	if (quarantine_file(sc->c, dfd, sub, name, "") == 0)
		sc->c->check_quarantined++;
	return 0;
}

/* Move blob files that no record refers to into quarantine/: the index
 * may be what is wrong, and blobs can be rebuilt from, never deleted. */
int
cache_quarantine_strays(struct cache *c)
{
	struct strayctx	 sc = { c, NULL };
	char		 path[PATH_MAX];
	int		 rc;

	snprintf(path, sizeof(path), "%s/blobs", c->dir);
	if ((rc = cache_rbegin(c, &sc.t)) < 0)
		return rc;
	rc = cache_walk2(path, stray_one, &sc);
	cache_rend(c, sc.t);
	return rc;
}

/*
 * A key whose bytes flipped in data.mdb breaks the order LMDB searches
 * by: the record under it is no longer found, nor may its neighbours be,
 * and an insert lands beside it wherever the search ends.  A walk by
 * cursor sees every entry whatever the order: copy each table found out
 * of order into a spare one and back, sorted.  *done is incremented when
 * dbi was.  @return 0 or an LMDB code.
 */
static int
resort_table(MDB_txn *t, MDB_dbi dbi, uint64_t *done)
{
	MDB_cursor	*cur;
	MDB_dbi		 spare;
	MDB_val		 k, v, prev = { 0, NULL };
	int		 rc, ordered = 1;

	if ((rc = mdb_cursor_open(t, dbi, &cur)) != 0)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && ordered;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (prev.mv_data != NULL && mdb_cmp(t, dbi, &prev, &k) >= 0)
			ordered = 0;
		prev = k;
	}
	mdb_cursor_close(cur);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return rc;
	if (ordered)
		return 0;
	(*done)++;
	if ((rc = mdb_dbi_open(t, "resort", MDB_CREATE, &spare)) != 0 ||
	    (rc = mdb_drop(t, spare, 0)) != 0 ||
	    (rc = mdb_cursor_open(t, dbi, &cur)) != 0)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
		if ((rc = mdb_put(t, spare, &k, &v, 0)) != 0)
			break;
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND || (rc = mdb_drop(t, dbi, 0)) != 0 ||
	    (rc = mdb_cursor_open(t, spare, &cur)) != 0)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
		if ((rc = mdb_put(t, dbi, &k, &v, MDB_APPEND)) != 0)
			break;
	mdb_cursor_close(cur);
	if (rc != MDB_NOTFOUND)
		return rc;
	return mdb_drop(t, spare, 1);
}

static int
resort_fn(struct cache *c, MDB_txn *t, void *ctx)
{
	MDB_dbi		dbis[4] = { c->records, c->negs, c->files,
			    c->fileids };
	uint64_t	*resorted = ctx;
	size_t		 i;
	int		 rc;

	*resorted = 0;
	for (i = 0; i < 4; i++)
		if ((rc = resort_table(t, dbis[i], resorted)) != 0)
			return rc;
	return 0;
}

/* A catalog entry the index lacks, by its place under catalog/. */
struct catname {
	char	sub[3];
	char	name[NAME_MAX + 1];
};

struct lackctx {
	struct cache	*c;
	MDB_txn		*t;
	struct catname	*v;
	size_t		 n, cap;
	int		 err;
};

static int
lack_one(void *ctx, int dfd, const char *sub, const char *name)
{
	struct lackctx	*lc = ctx;
	unsigned char	 kb[RECORD_KEY_MAX];
	size_t		 hl = strlen(name + 1);
	MDB_val		 k, v;

	(void)dfd;
	/* Not an entry's name (a leftover of ours, or a stranger's): for
	 * cache_rebuild() to judge, as it reads every file. */
	if ((name[0] != 'r' && name[0] != 'f') || strlen(sub) != 2 ||
	    hl == 0 || hl > 2 * RECORD_KEY_MAX ||
	    hex_decode(name + 1, hl, kb) < 0)
		return 0;
	k.mv_size = hl / 2;
	k.mv_data = kb;
	if (mdb_get(lc->t, name[0] == 'r' ? lc->c->records : lc->c->fileids,
	    &k, &v) == 0)
		return 0;
	if (array_grow(&lc->v, &lc->cap, lc->n + 1, sizeof(*lc->v)) != 0) {
		lc->err = -ENOMEM;
		return 1;
	}
	memcpy(lc->v[lc->n].sub, sub, 3);
	snprintf(lc->v[lc->n].name, sizeof(lc->v[lc->n].name), "%s", name);
	lc->n++;
	return 0;
}

/*
 * Take back into the index every catalog entry it lacks, whose blob is
 * intact (a FileID mapping needs none): the entry is written before the
 * record is committed, so the index lacking one means either a crash
 * between a drop's commit and the entry's removal (the record comes back;
 * it is evicted or dropped again) or a damaged index, which would answer
 * 404 for what it holds (a pinned upload stays pinned: its entry says so).
 * Costs a look-up per entry, no read of it.  @return the number taken
 * back, or -errno.
 */
static int
catalog_repair(struct cache *c)
{
	struct lackctx		 lc;
	struct rebuildctx	*rb = NULL;
	struct cache_rebuild_report rep;
	char			 path[PATH_MAX];
	size_t			 i;
	int			 rc, dfd;

	memset(&lc, 0, sizeof(lc));
	memset(&rep, 0, sizeof(rep));
	lc.c = c;
	if ((rc = cache_rbegin(c, &lc.t)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/catalog", c->dir);
	rc = cache_walk2(path, lack_one, &lc);
	cache_rend(c, lc.t);
	if (lc.err < 0) {
		rc = lc.err;
		goto out;
	}
	if (rc < 0 && rc != -ENOENT)
		goto out;
	rc = 0;
	if (lc.n == 0)
		goto out;
	if ((rb = calloc(1, sizeof(*rb))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rb->rep = &rep;
	rb->repair = 1;
	for (i = 0; i < lc.n && rc == 0; i++) {
		if (snprintf(path, sizeof(path), "%s/catalog/%s", c->dir,
		    lc.v[i].sub) >= (int)sizeof(path) ||
		    (dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		rc = cache_rebuild_one(c, rb, dfd, lc.v[i].name);
		close(dfd);
	}
	if (rc == 0)
		rc = cache_rebuild_flush(c, rb);
	while (rb->n > 0)
		free(rb->bufs[--rb->n]);
	if (rc == 0)
		rc = (int)(rep.records + rep.fileids);
out:
	free(rb);
	free(lc.v);
	return rc;
}

int
cache_open_check(struct cache *c)
{
	int	dead, rc;

	mdb_reader_check(c->env, &dead);
	cache_clear_tmp(c);
	if ((rc = cache_wtxn(c, resort_fn, &c->check_resorted)) < 0 ||
	    (rc = cache_wtxn(c, check_records, &c->check_dropped)) < 0)
		return rc;
	if ((rc = catalog_repair(c)) < 0)
		return rc;
	c->check_restored = (uint64_t)rc;
	return cache_quarantine_strays(c);
}

/*
 * Damage that would crash this process.  LMDB maps data.mdb and trusts its
 * pages: a truncated file is a SIGBUS, flipped bits a SIGSEGV or an
 * assertion.  So a child walks every page (the free list, every database,
 * every value's bytes) first; if it dies, the index is damaged.
 */
#define PROBE_OK	0
#define PROBE_DAMAGED	1
#define PROBE_CANNOT	2	/* could not even try (EACCES...): let the
				 * real open report it */

static int
probe_walk(MDB_txn *t, MDB_dbi dbi, uint64_t *left)
{
	MDB_cursor		*cur;
	MDB_val			 k, v;
	volatile unsigned char	 sink = 0;
	size_t			 i;
	int			 rc;

	if (mdb_cursor_open(t, dbi, &cur) != 0)
		return -1;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		/* A cycle in the tree cannot list more entries than the
		 * file has bytes. */
		if ((*left)-- == 0)
			break;
		for (i = 0; i < k.mv_size; i += 512)
			sink ^= ((unsigned char *)k.mv_data)[i];
		for (i = 0; i < v.mv_size; i += 512)
			sink ^= ((unsigned char *)v.mv_data)[i];
		if (v.mv_size > 0)
			sink ^= ((unsigned char *)v.mv_data)[v.mv_size - 1];
	}
	(void)sink;
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : -1;
}

static void
probe_crashed(int sig)
{
	(void)sig;
	_exit(PROBE_DAMAGED);
}

static int
probe_env(MDB_env **env, const char *path, uint64_t size, unsigned flags)
{
	int	rc;

	if ((rc = mdb_env_create(env)) != 0)
		return rc;
	mdb_env_set_maxdbs(*env, 8);
	mdb_env_set_maxreaders(*env, 512);
	mdb_env_set_mapsize(*env, size);
	if ((rc = mdb_env_open(*env, path, flags, 0644)) != 0) {
		mdb_env_close(*env);	/* a failed env is not reused */
		*env = NULL;
	}
	return rc;
}

/*
 * The free list (DBI 0) is what a commit trusts most: each value is an
 * ID list, a count then that many page numbers, descending, each a page
 * past the two metas and within the file.
 */
static int
probe_freelist(MDB_env *env, MDB_txn *t)
{
	MDB_envinfo	 info;
	MDB_cursor	*cur;
	MDB_val		 k, v;
	size_t		 n, i, pg[2];
	int		 rc;

	if (mdb_env_info(env, &info) != 0 || mdb_cursor_open(t, 0, &cur) != 0)
		return -1;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size != sizeof(size_t) || v.mv_size < sizeof(size_t) ||
		    v.mv_size % sizeof(size_t) != 0)
			break;
		memcpy(&n, v.mv_data, sizeof(n));
		if (n != v.mv_size / sizeof(size_t) - 1)
			break;
		for (i = 1; i <= n; i++) {
			memcpy(&pg[i & 1], (char *)v.mv_data + i * sizeof(size_t),
			    sizeof(size_t));
			if (pg[i & 1] < 2 || pg[i & 1] > info.me_last_pgno ||
			    (i > 1 && pg[i & 1] >= pg[(i - 1) & 1]))
				break;
		}
		if (i <= n)
			break;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : -1;
}

/*
 * Pages that read well can still crash a writer (a page header that lies
 * about its free space, a free list a commit trips on): run the open
 * check's writes, a large allocation and the commit on a copy of the
 * index in tmp/, which the parent removes.
 */
static void
probe_write(struct cache *c, MDB_env *env)
{
	static unsigned char	 big[256 * 1024];
	MDB_val			 k = { 5, (void *)"probe" }, v = { sizeof(big),
				    big };
	MDB_txn			*t;
	char			 copy[PATH_MAX];
	uint64_t		 dropped;
	int			 rc;

	snprintf(copy, sizeof(copy), "%s/tmp/probe-%ld", c->dir,
	    (long)getpid());
	if (mkdir(copy, 0700) != 0 || mdb_env_copy2(env, copy, 0) != 0)
		return;		/* no room to try: the open will tell */
	if (cache_open_index(c, copy, DEFAULT_MAPSIZE) < 0 ||
	    mdb_txn_begin(c->env, NULL, 0, &t) != 0)
		_exit(PROBE_DAMAGED);
	if ((rc = check_records(c, t, &dropped)) == 0 &&
	    (rc = mdb_put(t, c->meta, &k, &v, 0)) == 0)
		rc = mdb_txn_commit(t);
	else
		mdb_txn_abort(t);
	if (rc != 0 && rc != MDB_MAP_FULL)
		_exit(PROBE_DAMAGED);
}

static int __attribute__((noreturn))
probe_child(struct cache *c, const char *path, uint64_t size)
{
	MDB_env		*env;
	MDB_txn		*t;
	MDB_cursor	*cur;
	MDB_val		 k, v;
	MDB_dbi		 dbi;
	char		 name[256];
	struct sigaction sa;
	uint64_t	 left = size;
	int		 rc;

	/* A crash is the answer we probe for: no core, no report. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probe_crashed;
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	alarm(3600);	/* a last resort: a loop we did not foresee */
	if ((rc = probe_env(&env, path, size, MDB_RDONLY)) == EACCES ||
	    rc == EROFS)
		rc = probe_env(&env, path, size, MDB_RDONLY | MDB_NOLOCK);
	if (rc == EACCES || rc == EROFS || rc == ENOMEM || rc == EAGAIN)
		_exit(PROBE_CANNOT);
	if (rc != 0 || mdb_txn_begin(env, NULL, MDB_RDONLY, &t) != 0)
		_exit(PROBE_DAMAGED);
	if (probe_walk(t, 0, &left) != 0 || probe_freelist(env, t) != 0 ||
	    mdb_cursor_open(t, 1, &cur) != 0)		/* the main DB */
		_exit(PROBE_DAMAGED);
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size == 0 || k.mv_size >= sizeof(name))
			_exit(PROBE_DAMAGED);
		memcpy(name, k.mv_data, k.mv_size);
		name[k.mv_size] = '\0';
		if (mdb_dbi_open(t, name, 0, &dbi) != 0 ||
		    probe_walk(t, dbi, &left) != 0)
			_exit(PROBE_DAMAGED);
		if (left == 0)
			break;
	}
	if ((rc != 0 && rc != MDB_NOTFOUND) || left == 0)
		_exit(PROBE_DAMAGED);
	mdb_txn_abort(t);
	if (!c->readonly)
		probe_write(c, env);
	_exit(PROBE_OK);
}

static void
probe_clean(const struct cache *c, pid_t pid)
{
	static const char	*files[] = { "data.mdb", "lock.mdb" };
	char			 path[PATH_MAX];
	size_t			 i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/tmp/probe-%ld/%s", c->dir,
		    (long)pid, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/tmp/probe-%ld", c->dir, (long)pid);
	rmdir(path);
}

/* @return 0 (sound, or nothing yet), -EUCLEAN (damaged), or -errno. */
int
cache_probe_index(struct cache *c, const char *path)
{
	char		data[PATH_MAX];
	struct stat	st;
	pid_t		pid;
	int		status;

	if (snprintf(data, sizeof(data), "%s/data.mdb", path) >=
	    (int)sizeof(data))
		return -ENAMETOOLONG;
	if (stat(data, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (st.st_size == 0)
		return 0;	/* LMDB makes one: see cache_catalog_check() */
	fflush(NULL);
	if ((pid = fork()) < 0)
		return -errno;
	if (pid == 0)
		probe_child(c, path, (uint64_t)st.st_size);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	probe_clean(c, pid);
	if (WIFEXITED(status) && (WEXITSTATUS(status) == PROBE_OK ||
	    WEXITSTATUS(status) == PROBE_CANNOT))
		return 0;
	return -EUCLEAN;
}

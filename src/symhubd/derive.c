/*
 * derive: sections cut on demand, GSYM conversions on worker threads,
 * and open GSYM files with a cache of decoded hot records.  See derive.h.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/hex.h"
#include "common/dwline.h"
#include "common/dwsource.h"
#include "common/elfinfo.h"
#include "common/kind.h"
#include "bucket.h"
#include "derive.h"
#include "recent.h"
#include "gsym/gsym_dwarf.h"
#include "gsym/gsym_write.h"
#include "log.h"
#include "records.h"

#define NSHARDS		16
#define SHARD_BUDGET	(2u << 20)	/* decoded bytes kept per shard */
/* GSYM files kept open: a profiler's stack crosses tens of modules, and a
 * file closed loses its decoded records (8 made a 50-module batch open
 * and decode 42 files again on every request: 8,000 page faults). */
#define MAX_OPEN	64
#define HOT_BUDGET	(256u << 20)	/* decoded bytes kept in all: each
					 * open file's share of it */
#define MAX_FAILED	64		/* corrupt parents remembered */
#define MAX_UNSTORED	4		/* GSYM the store could not take */
#define MAX_AHEAD	65536		/* conversions queued ahead of need */
/* Backlog conversions queued at once: the walk waits for room, so that
 * the queue (scanned by every worker's pick) stays short however large
 * the store. */
#define BACKLOG_QUEUED	64
#define UNSTORED_TTL	60		/* seconds one is served; then the
					 * store is tried again */
/* Debuginfo whose source names are kept (derive_source()): a miss, or a
 * relative request, costs a look at a list, not reading the tables. */
#define MAX_SRCNAMES	16

struct waiter {
	derive_done_fn	 done;
	void		*ctx;
	struct waiter	*next;
};

struct job {
	unsigned char	 id[CACHE_ID_MAX];
	size_t		 idlen;
	int		 running;
	int		 backlog;	/* queued by the backlog pass, nobody
					 * waiting: the lowest priority */
	struct waiter	*waiters;
	struct job	*next;
};

struct hot {			/* one decoded record */
	uint32_t	 index;
	struct gsym_func *fn;
	struct hot	*next;
};

struct shard {
	pthread_mutex_t	 mu;
	struct hot	*head;	/* a short list per shard is enough: the
				 * shard is cleared when over budget */
	struct hot	**tab;
	size_t		 cap, n, bytes;
};

struct derive_gsym {
	struct derive	*s;
	unsigned char	 digest[32];
	struct gsym	*g;
	unsigned	 refs;
	uint64_t	 used;		/* LRU tick */
	struct shard	 shards[NSHARDS];
};

/* A parent whose conversion failed for good (its DWARF is corrupt):
 * asked again, the answer is the same without converting again. */
struct failed {
	unsigned char	 id[CACHE_ID_MAX];
	size_t		 idlen;
	uint64_t	 parent;	/* cache_fingerprint(); 0: empty */
	int		 rc;
};

/* A GSYM converted while the store could not take it (read-only, full),
 * kept in memory to answer the clients that asked. */
struct unstored {
	unsigned char		 id[CACHE_ID_MAX];
	size_t			 idlen;
	uint64_t		 parent;
	int64_t			 made;
	int			 fd;		/* a memfd; -1: empty */
	uint64_t		 size;
	struct derive_gsym	*f;		/* over fd */
};

/* The names the line tables of a parent give (dwsource.h). */
struct srcnames {
	unsigned char		 id[CACHE_ID_MAX];
	size_t			 idlen;
	uint64_t		 parent;	/* cache_fingerprint() */
	uint64_t		 used;		/* LRU tick */
	int			 corrupt;	/* a line table could not be read */
	struct dwsource_names	 nl;		/* idlen 0: a free slot */
};

struct derive {
	struct cache		*c;
	struct scan		*scan;		/* NULL: none */
	struct bucket		*bucket;	/* NULL: none */
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	struct job		*jobs;		/* queued and running */
	int			 stop;
	pthread_t		*threads;
	unsigned		 nthreads;
	unsigned		 convert_threads; /* a conversion's */
	struct derive_gsym	*open[MAX_OPEN];
	uint64_t		 tick;
	int			 cancel;	/* set by derive_stop() */
	struct failed		 failed[MAX_FAILED];
	size_t			 nextfailed;
	struct unstored		 unstored[MAX_UNSTORED];
	/* metrics */
	uint64_t		 n_ok, n_nodata, n_missing, n_error;
	uint64_t		 n_corrupt, n_unstored, n_bucket;
	uint64_t		 n_coalesced;
	size_t			 nahead;	/* queued, nobody waiting */
	uint64_t		 n_ahead, n_ahead_dropped;
	/* The backlog pass (derive_gsym_backlog()); under mu. */
	pthread_t		 bthread;
	int			 bstarted;	/* bthread runs */
	pthread_cond_t		 bcv;		/* room, or a pass asked for */
	int			 bwanted;	/* another pass asked for */
	int			 brunning;	/* a pass is under way */
	uint64_t		 bbudget;	/* the store's; 0: none */
	uint64_t		 bpass_budget;	/* the pass's: bthread's only */
	int			 refused;	/* the store refused a GSYM
						 * since the pass began */
	size_t			 nbacklog;	/* its jobs queued, not begun */
	uint64_t		 n_backlog, n_backlog_checked;
	uint64_t		 n_backlog_passes;
	double			 seconds;
	uint64_t		 hot_hits, hot_misses;
	uint64_t		 hot_bytes;	/* decoded, all files */
	unsigned		 nopen;		/* files in open[] */
	pthread_mutex_t		 srcmu;		/* srcnames, srctick */
	struct srcnames		 srcnames[MAX_SRCNAMES];
	uint64_t		 srctick;
	uint64_t		 n_src_text, n_src_listed, n_src_read;
};

/* ---- sections ---- */

static int
mem_sink(void *ctx, const void *buf, size_t len)
{
	return buf_add(ctx, buf, len);
}

/* Store a section just cut; failure only costs the next request another
 * cut, so it is logged and forgotten. */
static void
store_section(struct derive *d, const struct cache_key *key,
    const struct cache_record *rec, const struct buf *m)
{
	struct cache_blob	*b;
	int			 rc;

	if ((rc = cache_blob_create(d->c, &b)) == 0 &&
	    (rc = cache_blob_write(b, m->p, m->len)) == 0) {
		rc = cache_put_blob(d->c, b, key, rec, NULL);
		b = NULL;	/* consumed */
	}
	cache_blob_abort(b);
	if (rc == -EROFS)
		log_debug("read-only store: section not cached");
	else if (rc < 0)
		log_warnx("cannot cache %s %s: %s", kind_name(key->kind),
		    key->extra, strerror(-rc));
}

int
derive_section(struct derive *d, const struct cache_key *key,
    struct buf *out, struct cache_record *rec, struct cache_record *parent,
    unsigned *known)
{
	static const enum cache_kind parents[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct cache_key	pk = *key;
	size_t			i;
	int			fd, rc;

	*known = 0;
	pk.extra = NULL;
	for (i = 0; i < 2; i++) {
		pk.kind = parents[i];
		if ((rc = records_open(d->c, d->scan, &pk, parent, &fd)) < 0) {
			if (rc != -ENOENT && rc != -ENODATA)
				log_warnx("section %s: %s", key->extra,
				    strerror(-rc));
			continue;
		}
		*known |= 1u << pk.kind;
		out->len = 0;
		rc = elfinfo_section(fd, key->extra, mem_sink, out);
		close(fd);
		if (rc == 0) {
			memset(rec, 0, sizeof(*rec));
			rec->flags = CACHE_F_DERIVED;
			rec->parent = cache_fingerprint(parent);
			rec->size = out->len;
			rec->last_modified = parent->last_modified;
			rec->stored = clock_wall_s();
			rec->origin = parent->origin;
			rec->xfile = parent->xfile;
			rec->xarchive = parent->xarchive;
			if (out->len > 0)
				store_section(d, key, rec, out);
			return 0;
		}
		if (rc == -ENOMEM) {
			cache_record_release(parent);
			return rc;
		}
		if (rc != -ENOENT)
			log_warnx("section %s of %s: %s", key->extra,
			    parent->path ? parent->path : "blob",
			    strerror(-rc));
		cache_record_release(parent);
	}
	return -ENOENT;
}

/* ---- sources embedded in the line tables ---- */

struct srcfind {
	struct dwsource	*ds;
	struct buf	*out;
};

/* The text lives in the sections: copied while they are mapped. */
static int
srcfind_lines(void *ctx, const struct dwline_sects *s)
{
	struct srcfind	*f = ctx;
	int		 rc;

	rc = dwsource_find(f->ds, s, f->ds->want);
	if (rc == 0 && f->ds->text != NULL &&
	    buf_add(f->out, f->ds->text, f->ds->textlen) < 0)
		return -ENOMEM;
	return rc;
}

static int
srcfind_name(void *ctx, const char *path)
{
	return dwsource_name(ctx, path);
}

/*
 * The source ds->want in the file on fd: 0 with the text in out;
 * -ENODATA with ds->path when named, not embedded; -ENOENT, -ENOTUNIQ;
 * -EINVAL when not named by what could be read, and a line table could
 * not (*corrupt set); -ENOMEM.  Every name seen goes to ds->names.
 */
static int
source_in(int fd, struct dwsource *ds, struct buf *out, int *corrupt)
{
	struct srcfind	f = { ds, out };
	int		rc, lrc;

	rc = elfinfo_line_sections(fd, srcfind_lines, &f);
	*corrupt = rc == -EINVAL || rc == -ENOEXEC;
	if (rc == -ENOTSUP || rc == -EINVAL) {
		/* Not all version 5 (nothing embedded), or a table dwline
		 * does not take: the names libdw reads (it passes over a
		 * unit it cannot read). */
		dwsource_free(ds);
		lrc = elfinfo_sources(fd, srcfind_name, ds);
		if (lrc == -ENOMEM)
			return lrc;
		if (lrc != 0)
			*corrupt = 1;
		rc = lrc == 0 ? dwsource_result(ds) : -ENOENT;
	}
	if (rc == -ENOEXEC || (rc == -ENOENT && *corrupt))
		rc = *corrupt ? -EINVAL : -ENOENT;
	if (rc == 0 && ds->text == NULL)
		rc = -ENODATA;
	return rc;
}

/*
 * ds->want against the names kept for parent of id, if they are.
 * @return 1 with *rc (as source_in(), and 0 when the text is embedded:
 *         read it), or 0 when none are kept.
 */
static int
srcnames_match(struct derive *d, const unsigned char *id, size_t idlen,
    uint64_t parent, struct dwsource *ds, int *rc)
{
	struct srcnames	*sn;
	size_t		 i;
	int		 found = 0;

	pthread_mutex_lock(&d->srcmu);
	for (i = 0; i < MAX_SRCNAMES && !found; i++) {
		sn = &d->srcnames[i];
		if (sn->idlen == 0 || sn->parent != parent ||
		    sn->idlen != idlen || memcmp(sn->id, id, idlen) != 0)
			continue;
		found = 1;
		sn->used = ++d->srctick;
		if ((*rc = dwsource_match(ds, &sn->nl)) == 0 &&
		    !ds->embedded)
			*rc = -ENODATA;
		else if (*rc == -ENOENT && sn->corrupt)
			*rc = -EINVAL;
	}
	pthread_mutex_unlock(&d->srcmu);
	return found;
}

/* Keep nl (taken: zeroed) as the names of parent of id, in place of the
 * least recently used (a changed parent's, asked no more, goes so). */
static void
srcnames_keep(struct derive *d, const unsigned char *id, size_t idlen,
    uint64_t parent, struct dwsource_names *nl, int corrupt)
{
	struct srcnames	*sn, *lru = &d->srcnames[0];
	size_t		 i;

	pthread_mutex_lock(&d->srcmu);
	for (i = 0; i < MAX_SRCNAMES; i++) {
		sn = &d->srcnames[i];
		if (sn->used < lru->used)
			lru = sn;
	}
	dwsource_names_free(&lru->nl);
	memcpy(lru->id, id, idlen);
	lru->idlen = idlen;
	lru->parent = parent;
	lru->corrupt = corrupt;
	lru->used = ++d->srctick;
	lru->nl = *nl;
	memset(nl, 0, sizeof(*nl));
	pthread_mutex_unlock(&d->srcmu);
}

int
derive_source(struct derive *d, const struct cache_key *key,
    struct buf *out, struct cache_record *rec, struct cache_record *parent,
    char **named)
{
	static const enum cache_kind parents[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct cache_key	 pk = *key;
	struct dwsource_names	 nl;
	struct dwsource		 ds;
	uint64_t		 fp;
	size_t			 i;
	int			 fd, rc = -ENOENT, corrupt;

	*named = NULL;
	pk.extra = NULL;
	memset(&nl, 0, sizeof(nl));
	memset(&ds, 0, sizeof(ds));
	ds.want = key->extra;
	for (i = 0; i < 2 && rc == -ENOENT; i++) {
		pk.kind = parents[i];
		if ((rc = records_open(d->c, d->scan, &pk, parent, &fd)) < 0) {
			if (rc != -ENOENT && rc != -ENODATA)
				log_warnx("source %s: %s", key->extra,
				    strerror(-rc));
			rc = -ENOENT;
			continue;
		}
		fp = cache_fingerprint(parent);
		out->len = 0;
		if (srcnames_match(d, key->id, key->idlen, fp, &ds, &rc)) {
			/* The text is read only when it is there. */
			if (rc == 0) {
				dwsource_free(&ds);
				rc = source_in(fd, &ds, out, &corrupt);
			}
		} else {
			ds.names = &nl;
			rc = source_in(fd, &ds, out, &corrupt);
			if (rc != -ENOMEM && !nl.over)
				srcnames_keep(d, key->id, key->idlen, fp, &nl,
				    corrupt);
			ds.names = NULL;
			dwsource_names_free(&nl);
			pthread_mutex_lock(&d->srcmu);
			d->n_src_read++;
			pthread_mutex_unlock(&d->srcmu);
		}
		close(fd);
		if (rc == 0)
			break;
		if (rc == -EINVAL)
			log_limited("dwarf-source", NULL, "source %s of %s: "
			    "line tables cannot be read", key->extra,
			    parent->path ? parent->path : "blob");
		cache_record_release(parent);
		/* Named by a table: the answer, whatever the next says. */
		if (rc != -ENOENT)
			break;
		dwsource_free(&ds);
	}
	if (rc == 0) {
		memset(rec, 0, sizeof(*rec));
		rec->flags = CACHE_F_DERIVED;
		rec->parent = cache_fingerprint(parent);
		rec->size = out->len;
		rec->last_modified = parent->last_modified;
		rec->stored = clock_wall_s();
		rec->origin = parent->origin;
		store_section(d, key, rec, out);
	}
	pthread_mutex_lock(&d->srcmu);
	if (rc == 0)
		d->n_src_text++;
	else if (rc == -ENODATA || rc == -ENOTUNIQ)
		d->n_src_listed++;
	pthread_mutex_unlock(&d->srcmu);
	if ((rc == -ENODATA || rc == -ENOTUNIQ) &&
	    (*named = strdup(ds.path)) == NULL)
		rc = -ENOMEM;
	dwsource_free(&ds);
	return rc;
}

/* ---- conversions ---- */

struct sink {
	struct cache_blob	*b;
	int			 rc;	/* the store's error */
};

static int
blob_sink(void *ctx, const void *buf, size_t len)
{
	struct sink *k = ctx;

	return k->rc = cache_blob_write(k->b, buf, len);
}

/* The store cannot take a new blob now: read-only, full, over quota. */
static int
refused(int rc)
{
	return rc == -EROFS || rc == -EACCES || rc == -EPERM ||
	    rc == -ENOSPC || rc == -EDQUOT;
}

static void file_free(struct derive_gsym *);
static struct derive_gsym *file_new(struct derive *, struct gsym *,
    const unsigned char *);

static void
unstored_clear(struct derive *s, struct unstored *u)
{
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	if (u->f != NULL && --u->f->refs == 0)	/* under s->mu */
		file_free(u->f);
	u->f = NULL;
}

/* The entry of id, fresh; under s->mu. */
static struct unstored *
unstored_find(struct derive *s, const unsigned char *id, size_t idlen)
{
	size_t i;

	for (i = 0; i < MAX_UNSTORED; i++) {
		struct unstored *u = &s->unstored[i];
		int64_t age = clock_wall_s() - u->made;

		if (u->fd < 0 || u->idlen != idlen ||
		    memcmp(u->id, id, idlen) != 0)
			continue;
		if (age >= UNSTORED_TTL || age < 0) {
			unstored_clear(s, u);
			return NULL;
		}
		return u;
	}
	return NULL;
}

/*
 * Convert fd (the parent fingerprinted parent) into memory, for the
 * clients waiting, when the store cannot take the GSYM.
 */
static int
convert_unstored(struct derive *s, const unsigned char *id, size_t idlen,
    uint64_t parent, int fd, const struct gsym_convert_opts *o)
{
	struct derive_gsym *f = NULL;
	struct unstored *u = NULL;
	struct gsym *g = NULL;
	struct stat st;
	size_t i;
	int mfd, rc;

	if ((mfd = memfd_create("symhub-gsym", MFD_CLOEXEC)) < 0)
		return -errno;
	if ((rc = gsym_dwarf_convert_opts(fd, o, gsym_fd_sink, &mfd,
	    NULL)) < 0)
		goto out;
	if (fstat(mfd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if ((rc = gsym_open_fd(mfd, &g)) < 0)
		goto out;
	if ((f = file_new(s, g, NULL)) == NULL) {
		gsym_free(g);
		rc = -ENOMEM;
		goto out;
	}
	pthread_mutex_lock(&s->mu);
	for (i = 0; i < MAX_UNSTORED; i++) {
		struct unstored *v = &s->unstored[i];

		if (v->fd >= 0 && v->idlen == idlen &&
		    memcmp(v->id, id, idlen) == 0) {
			u = v;
			break;
		}
		if (u == NULL || v->fd < 0 || (u->fd >= 0 &&
		    v->made < u->made))
			u = v;		/* empty, else the oldest */
	}
	unstored_clear(s, u);
	memcpy(u->id, id, idlen);
	u->idlen = idlen;
	u->parent = parent;
	u->made = clock_wall_s();
	u->fd = mfd;
	u->size = (uint64_t)st.st_size;
	u->f = f;		/* the entry's reference */
	s->n_unstored++;
	pthread_mutex_unlock(&s->mu);
	return 0;
out:
	close(mfd);
	return rc;
}

/* The failure remembered for (id, parent), or 0. */
static int
failed_get(struct derive *s, const unsigned char *id, size_t idlen,
    uint64_t parent)
{
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&s->mu);
	for (i = 0; i < MAX_FAILED && rc == 0; i++)
		if (s->failed[i].parent == parent && parent != 0 &&
		    s->failed[i].idlen == idlen &&
		    memcmp(s->failed[i].id, id, idlen) == 0)
			rc = s->failed[i].rc;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static void
failed_put(struct derive *s, const unsigned char *id, size_t idlen,
    uint64_t parent, int rc)
{
	struct failed *e;

	pthread_mutex_lock(&s->mu);
	e = &s->failed[s->nextfailed++ % MAX_FAILED];
	memcpy(e->id, id, idlen);
	e->idlen = idlen;
	e->parent = parent;
	e->rc = rc;
	pthread_mutex_unlock(&s->mu);
}

/* The record of a GSYM made from the parent of fingerprint parent. */
static void
gsym_record(struct cache_record *rec, uint64_t parent, const char *origin)
{
	memset(rec, 0, sizeof(*rec));
	rec->flags = CACHE_F_DERIVED;
	rec->parent = parent;
	rec->stored = clock_wall_s();
	rec->last_modified = rec->stored;
	rec->origin = origin;
}

/* The GSYM another replica converted from this very debuginfo (p), from
 * the bucket, stored as if converted here.  @return 0 or -errno. */
static int
from_bucket(struct derive *s, const struct cache_key *key,
    const struct cache_record *p, uint64_t parent)
{
	struct cache_record	 rec;
	struct cache_blob	*b = NULL;
	struct gsym		*g = NULL;
	int			 rc;

	if ((rc = cache_blob_create(s->c, &b)) < 0)
		return rc;
	if ((rc = bucket_gsym_get(s->bucket, key->id, key->idlen, p->digest,
	    b)) < 0 || (rc = gsym_open_fd(cache_blob_fd(b), &g)) < 0) {
		cache_blob_abort(b);
		return rc;
	}
	gsym_free(g);
	gsym_record(&rec, parent, "bucket");
	if ((rc = cache_put_blob(s->c, b, key, &rec, NULL)) == 0) {
		pthread_mutex_lock(&s->mu);
		s->n_bucket++;
		pthread_mutex_unlock(&s->mu);
	}
	return rc;
}

/* Convert from the parent of kind, straight into a blob; store.  When the
 * store cannot take it, convert into memory (convert_unstored()).  With
 * a bucket, another replica's conversion of the same debuginfo is taken
 * first, and this one's given to the others.
 * @return 0 or -errno. */
static int
convert_from(struct derive *s, const unsigned char *id, size_t idlen,
    enum cache_kind kind)
{
	struct cache_key key = { CACHE_GSYM, id, idlen, NULL };
	struct cache_key pk = { kind, id, idlen, NULL };
	struct gsym_convert_opts o = { s->convert_threads, &s->cancel };
	struct cache_record p, rec;
	struct sink k = { NULL, 0 };
	uint64_t parent;
	int fd = -1, rc;

	if ((rc = records_open(s->c, s->scan, &pk, &p, &fd)) != 0)
		return rc == -ENODATA ? -ENOENT : rc;
	parent = cache_fingerprint(&p);
	if ((rc = failed_get(s, id, idlen, parent)) < 0)
		goto out;
	if (s->bucket != NULL && kind == CACHE_DEBUGINFO &&
	    !(p.flags & CACHE_F_EXTERNAL) &&
	    from_bucket(s, &key, &p, parent) == 0) {
		rc = 0;
		goto out;
	}
	if ((rc = cache_blob_create(s->c, &k.b)) < 0) {
		k.rc = rc;
	} else if ((rc = gsym_dwarf_convert_opts(fd, &o, blob_sink, &k,
	    NULL)) == 0) {
		gsym_record(&rec, parent, "gsym");
		k.rc = rc = cache_put_blob(s->c, k.b, &key, &rec, NULL);
		k.b = NULL;	/* consumed */
		if (rc == 0 && s->bucket != NULL && kind == CACHE_DEBUGINFO &&
		    !(p.flags & CACHE_F_EXTERNAL))
			bucket_gsym_put(s->bucket, id, idlen, p.digest);
	}
	if (rc < 0 && rc == k.rc && refused(rc)) {
		cache_blob_abort(k.b);	/* its bytes may be what fills it */
		k.b = NULL;
		/* No more conversions nobody asked for. */
		__atomic_store_n(&s->refused, 1, __ATOMIC_RELAXED);
		rc = convert_unstored(s, id, idlen, parent, fd, &o);
	}
	if (rc == -ENOEXEC) {
		/* Corrupt: the same next time, answered from failed_get()
		 * without a word.  Logged here, once for this parent. */
		char hex[2 * CACHE_ID_MAX + 1];

		failed_put(s, id, idlen, parent, rc);
		hex_encode(id, idlen, hex);
		log_warnx("gsym %s: cannot convert: not ELF, or its DWARF is "
		    "corrupt", hex);
	}
out:
	cache_blob_abort(k.b);
	if (fd >= 0)
		close(fd);
	cache_record_release(&p);
	return rc;
}

static int
convert(struct derive *s, const unsigned char *id, size_t idlen)
{
	struct cache_key key = { CACHE_GSYM, id, idlen, NULL };
	struct cache_record rec;
	struct unstored *u;
	int rc, rc2;

	if (cache_get(s->c, &key, clock_wall_s(), &rec) == 0) {
		int fresh = cache_derived_fresh(s->c, id, idlen, &rec,
		    clock_wall_s());

		cache_record_release(&rec);
		if (fresh)
			return 0;
	}
	pthread_mutex_lock(&s->mu);
	u = unstored_find(s, id, idlen);
	memset(&rec, 0, sizeof(rec));
	rec.parent = u != NULL ? u->parent : 0;
	pthread_mutex_unlock(&s->mu);
	if (u != NULL && cache_derived_fresh(s->c, id, idlen, &rec, clock_wall_s()))
		return 0;
	rc = convert_from(s, id, idlen, CACHE_DEBUGINFO);
	if (rc == -ENOENT || rc == -ENODATA) {
		/* An unstripped executable converts as well. */
		rc2 = convert_from(s, id, idlen, CACHE_EXECUTABLE);
		if (rc2 != -ENOENT)
			rc = rc2;
	}
	return rc;
}

/* Every conversion goes on the status page, whoever asked (a GET, a
 * /symbolize, --gsym-ahead): as symhub_gsym_conversions_total counts.
 * Called with s->mu held (j->waiters). */
static void
remember(const struct job *j, int rc, int64_t us)
{
	char	hex[2 * CACHE_ID_MAX + 1], d[96];

	if (rc == -ECANCELED)
		return;
	hex_encode(j->id, j->idlen, hex);
	snprintf(d, sizeof(d), "%s in %.2f s%s", rc == 0 ? "converted" :
	    rc == -ENODATA ? "nothing to convert" : rc == -ENOENT ?
	    "no debuginfo" : rc == -ENOEXEC ? "corrupt DWARF" : strerror(-rc),
	    (double)us / 1e6, j->waiters == NULL ? ", ahead of need" : "");
	recent_add(RECENT_CONVERSION, hex, "gsym", d);
}

/* A conversion's outcome, in the metrics; under s->mu. */
static void
count(struct derive *s, int rc)
{
	if (rc == 0)
		s->n_ok++;
	else if (rc == -ENODATA)
		s->n_nodata++;
	else if (rc == -ENOENT)
		s->n_missing++;
	else if (rc == -ENOEXEC)
		s->n_corrupt++;
	else
		s->n_error++;
}

static void *
worker(void *arg)
{
	struct derive *s = arg;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct job *j, *o, **pp;
		struct waiter *w;
		int64_t t0;
		int rc, skip;

		/* A conversion somebody waits for goes first; then those
		 * queued ahead of need, newest first; then the backlog's,
		 * oldest first (in the store's order: the list is short). */
		for (j = s->jobs; j != NULL; j = j->next)
			if (!j->running && j->waiters != NULL)
				break;
		if (j == NULL)
			for (j = s->jobs; j != NULL && (j->running ||
			    j->backlog); j = j->next)
				;
		if (j == NULL)
			for (o = s->jobs; o != NULL; o = o->next)
				if (!o->running)
					j = o;
		if (j == NULL && !s->stop) {
			pthread_cond_wait(&s->cv, &s->mu);
			continue;
		}
		if (j == NULL)
			break;
		j->running = 1;
		skip = 0;
		if (j->backlog) {
			s->nbacklog--;
			pthread_cond_signal(&s->bcv);	/* room */
			/* The store refused one since: it takes no more. */
			skip = __atomic_load_n(&s->refused, __ATOMIC_RELAXED);
		} else if (j->waiters == NULL) {
			s->nahead--;
		}
		pthread_mutex_unlock(&s->mu);
		t0 = clock_us();
		/* A request that joins a skipped one meanwhile is asked to
		 * come again (-ECANCELED), and then converts. */
		rc = s->stop || skip ? -ECANCELED :
		    convert(s, j->id, j->idlen);
		t0 = clock_us() - t0;
		/* A corrupt parent was logged by convert_from(), once. */
		if (rc < 0 && rc != -ENODATA && rc != -ENOENT &&
		    rc != -ECANCELED && rc != -ENOEXEC) {
			char hex[2 * CACHE_ID_MAX + 1];

			hex_encode(j->id, j->idlen, hex);
			log_limited("gsym: cannot convert", NULL,
			    "gsym %s: cannot convert: %s", hex, strerror(-rc));
		}
		pthread_mutex_lock(&s->mu);
		remember(j, rc, t0);	/* waiters may join until here */
		s->seconds += (double)t0 / 1e6;
		if (!skip)	/* else nothing was done */
			count(s, rc);
		for (pp = &s->jobs; *pp != j; pp = &(*pp)->next)
			;
		*pp = j->next;
		w = j->waiters;
		pthread_mutex_unlock(&s->mu);
		while (w != NULL) {
			struct waiter *next = w->next;

			w->done(w->ctx, rc);
			free(w);
			w = next;
		}
		free(j);
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/*
 * Queue a conversion of id, or join the one queued or running; under
 * s->mu.  w: the waiter (NULL: nobody waits); backlog: queued by the
 * backlog pass, the lowest priority.  @return 0 or -ENOMEM.
 */
static int
enqueue(struct derive *s, const unsigned char *id, size_t idlen,
    struct waiter *w, int backlog)
{
	struct job *j;
	int queued;

	for (j = s->jobs; j != NULL; j = j->next)
		if (j->idlen == idlen && memcmp(j->id, id, idlen) == 0)
			break;
	if (j != NULL) {
		s->n_coalesced += w != NULL;
		queued = !j->running && j->waiters == NULL && !backlog;
		if (queued && j->backlog) {
			/* Somebody waits for it now, or it is new: no longer
			 * the backlog's. */
			j->backlog = 0;
			s->nbacklog--;
			pthread_cond_signal(&s->bcv);	/* room */
			if (w == NULL)
				s->nahead++;
		} else if (queued && w != NULL) {
			/* Queued ahead, and now somebody waits for it. */
			s->nahead--;
		}
	} else if (w == NULL && !backlog && s->nahead >= MAX_AHEAD) {
		/* Converted on the first request instead. */
		s->n_ahead_dropped++;
		return 0;
	} else {
		if ((j = calloc(1, sizeof(*j))) == NULL)
			return -ENOMEM;
		memcpy(j->id, id, idlen);
		j->idlen = idlen;
		j->next = s->jobs;
		s->jobs = j;
		if (backlog) {
			j->backlog = 1;
			s->nbacklog++;
			s->n_backlog++;
		} else if (w == NULL) {
			s->nahead++;
			s->n_ahead++;
		}
		pthread_cond_signal(&s->cv);
	}
	if (w != NULL) {
		w->next = j->waiters;
		j->waiters = w;
	}
	return 0;
}

int
derive_gsym_convert(struct derive *s, const unsigned char *id, size_t idlen,
    derive_done_fn done, void *ctx)
{
	struct waiter *w = NULL;
	int rc;

	if (idlen == 0 || idlen > CACHE_ID_MAX)
		return -EINVAL;
	if (done != NULL && (w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	if (w != NULL) {
		w->done = done;
		w->ctx = ctx;
	}
	pthread_mutex_lock(&s->mu);
	rc = s->stop ? -ECANCELED : enqueue(s, id, idlen, w, 0);
	pthread_mutex_unlock(&s->mu);
	if (rc < 0)
		free(w);
	return rc;
}

/* ---- the backlog: what the store holds without a GSYM ---- */

/* Has a file of these quality markers anything to convert (DWARF,
 * .symtab, .gopclntab)?  What has not converts to nothing at every
 * start, so it is passed over. */
static int
convertible(uint32_t quality)
{
	return (quality & (ELFINFO_Q_DEBUG_INFO | ELFINFO_Q_SYMTAB |
	    ELFINFO_Q_GOPCLNTAB)) != 0;
}

/* Is a fresh GSYM of id stored? */
static int
gsym_fresh(struct derive *s, const unsigned char *id, size_t idlen)
{
	struct cache_key	key = { CACHE_GSYM, id, idlen, NULL };
	struct cache_record	rec;
	int			fresh = 0;

	if (cache_get(s->c, &key, clock_wall_s(), &rec) == 0) {
		fresh = cache_derived_fresh(s->c, id, idlen, &rec,
		    clock_wall_s());
		cache_record_release(&rec);
	}
	return fresh;
}

/* The debuginfo of id converts: its executable is not the source. */
static int
debuginfo_converts(struct derive *s, const unsigned char *id, size_t idlen)
{
	struct cache_key	key = { CACHE_DEBUGINFO, id, idlen, NULL };
	struct cache_record	rec;
	int			yes = 0;

	if (cache_get(s->c, &key, clock_wall_s(), &rec) == 0) {
		yes = convertible(rec.quality);
		cache_record_release(&rec);
	}
	return yes;
}

/*
 * One record of the walk, with no transaction open (cache_foreach()):
 * queue its conversion unless a fresh GSYM is stored, once there is room.
 * @return 0 to go on; -ECANCELED (stopping), -ENOSPC (the store refused
 *         a GSYM), -EDQUOT (the store is near its budget): the pass ends.
 */
static int
backlog_one(void *ctx, const struct cache_key *key,
    const struct cache_record *rec)
{
	struct derive		*s = ctx;
	struct cache_stats	 st;
	int			 rc = 0;

	if (__atomic_load_n(&s->cancel, __ATOMIC_RELAXED))
		return -ECANCELED;
	__atomic_add_fetch(&s->n_backlog_checked, 1, __ATOMIC_RELAXED);
	if (!convertible(rec->quality) ||
	    (key->kind == CACHE_EXECUTABLE &&
	    debuginfo_converts(s, key->id, key->idlen)) ||
	    gsym_fresh(s, key->id, key->idlen))
		return 0;
	/* GSYM nobody asked for must not evict what was fetched. */
	if (s->bpass_budget > 0 && cache_stats(s->c, &st) == 0 &&
	    st.bytes >= s->bpass_budget / 10 * 9)
		return -EDQUOT;
	pthread_mutex_lock(&s->mu);
	while (!s->stop && s->nbacklog >= BACKLOG_QUEUED &&
	    !__atomic_load_n(&s->refused, __ATOMIC_RELAXED))
		pthread_cond_wait(&s->bcv, &s->mu);
	if (s->stop)
		rc = -ECANCELED;
	else if (__atomic_load_n(&s->refused, __ATOMIC_RELAXED))
		rc = -ENOSPC;
	else
		rc = enqueue(s, key->id, key->idlen, NULL, 1);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static void *
backlog(void *arg)
{
	struct derive	*s = arg;
	uint64_t	 queued;
	int64_t		 t0;
	int		 rc;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->stop && !s->bwanted)
			pthread_cond_wait(&s->bcv, &s->mu);
		if (s->stop)
			break;
		s->bwanted = 0;
		s->brunning = 1;
		s->bpass_budget = s->bbudget;
		queued = s->n_backlog;
		__atomic_store_n(&s->refused, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&s->mu);

		t0 = clock_us();
		/* Debuginfo first: convert() prefers it; then the
		 * executables that are the only source. */
		rc = cache_foreach_kind(s->c, CACHE_DEBUGINFO, backlog_one, s);
		if (rc == 0)
			rc = cache_foreach_kind(s->c, CACHE_EXECUTABLE,
			    backlog_one, s);
		t0 = clock_us() - t0;

		pthread_mutex_lock(&s->mu);
		s->brunning = 0;
		queued = s->n_backlog - queued;
		if (rc == -ECANCELED)
			break;
		s->n_backlog_passes++;
		if (rc == -ENOSPC)
			log_warnx("gsym backlog: the store takes no more GSYM "
			    "(read-only or full): the pass ends, %" PRIu64
			    " conversion(s) queued", queued);
		else if (rc == -EDQUOT)
			log_warnx("gsym backlog: the store is within 10%% of "
			    "--cache-max: the pass ends, %" PRIu64
			    " conversion(s) queued, so that GSYM made ahead "
			    "evict nothing fetched", queued);
		else if (rc < 0)
			log_warnx("gsym backlog: %s", strerror(-rc));
		else if (queued > 0)
			log_info("gsym backlog: %" PRIu64 " conversion(s) "
			    "queued for what the store held without GSYM "
			    "(walked in %.1f s)", queued, (double)t0 / 1e6);
		else
			log_debug("gsym backlog: nothing to queue (walked "
			    "in %.3f s)", (double)t0 / 1e6);
	}
	s->brunning = 0;
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int
derive_gsym_backlog(struct derive *s, uint64_t budget)
{
	int rc = 0;

	pthread_mutex_lock(&s->mu);
	if (s->stop) {
		rc = -ECANCELED;
	} else {
		s->bbudget = budget;
		s->bwanted = 1;
		if (!s->bstarted && (rc = -pthread_create(&s->bthread, NULL,
		    backlog, s)) == 0)
			s->bstarted = 1;
		pthread_cond_broadcast(&s->bcv);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* ---- open files and hot records ---- */

/* Decoded bytes a shard of an open file may keep. */
static size_t
shard_budget(struct derive *s)
{
	unsigned	n = __atomic_load_n(&s->nopen, __ATOMIC_RELAXED);
	size_t		share = HOT_BUDGET / ((n ? n : 1) * NSHARDS);

	return share < SHARD_BUDGET ? share : SHARD_BUDGET;
}

static void
shard_clear(struct derive *s, struct shard *sh)
{
	size_t i;

	__atomic_sub_fetch(&s->hot_bytes, sh->bytes, __ATOMIC_RELAXED);

	for (i = 0; i < sh->cap; i++) {
		struct hot *h = sh->tab[i];

		while (h != NULL) {
			struct hot *next = h->next;

			gsym_func_free(h->fn);
			free(h);
			h = next;
		}
		sh->tab[i] = NULL;
	}
	sh->n = 0;
	sh->bytes = 0;
}

static void
file_free(struct derive_gsym *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < NSHARDS; i++) {
		shard_clear(f->s, &f->shards[i]);
		free(f->shards[i].tab);
		pthread_mutex_destroy(&f->shards[i].mu);
	}
	gsym_free(f->g);
	free(f);
}

/* A file over g (now the file's), one reference; digest NULL: not
 * from the store. */
static struct derive_gsym *
file_new(struct derive *s, struct gsym *g, const unsigned char *digest)
{
	struct derive_gsym *f;
	size_t i;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->s = s;
	f->g = g;
	f->refs = 1;
	if (digest != NULL)
		memcpy(f->digest, digest, 32);
	for (i = 0; i < NSHARDS; i++)
		pthread_mutex_init(&f->shards[i].mu, NULL);
	return f;
}

/*
 * A stored GSYM that cannot be read stays so, and every request for it
 * meets it again: logged once per change (log_changed()), by its blob's
 * digest (blobs/XX/...), and once more when it reads again.
 */
static void
broken(const struct cache_record *rec, int rc)
{
	char hex[2 * 32 + 1];

	if (!log_changed("stored gsym", rec->digest, 32, (uint64_t)-rc))
		return;
	hex_encode(rec->digest, 32, hex);
	if (rc < 0)
		log_warnx("gsym: the stored GSYM %s cannot be read: %s; "
		    "requests for it fail until it is converted again or "
		    "quarantined (logged once)", hex, strerror(-rc));
	else
		log_info("gsym: the stored GSYM %s reads again", hex);
}

int
derive_gsym_open(struct derive *s, const struct cache_record *rec,
    struct derive_gsym **out)
{
	struct derive_gsym *f = NULL;
	struct gsym *g;
	size_t i, victim = MAX_OPEN;
	int fd, rc;

	*out = NULL;
	pthread_mutex_lock(&s->mu);
	for (i = 0; i < MAX_OPEN; i++)
		if (s->open[i] != NULL &&
		    memcmp(s->open[i]->digest, rec->digest, 32) == 0) {
			f = s->open[i];
			f->refs++;
			f->used = ++s->tick;
			pthread_mutex_unlock(&s->mu);
			*out = f;
			return 0;
		}
	pthread_mutex_unlock(&s->mu);

	if ((rc = cache_open_data(s->c, rec, &fd)) < 0) {
		if (rc != -ENOENT && rc != -ESTALE)
			broken(rec, rc);
		return rc;
	}
	rc = gsym_open_fd(fd, &g);
	close(fd);
	broken(rec, rc);
	if (rc < 0)
		return rc;
	if ((f = file_new(s, g, rec->digest)) == NULL) {
		gsym_free(g);
		return -ENOMEM;
	}

	pthread_mutex_lock(&s->mu);
	f->used = ++s->tick;
	for (i = 0; i < MAX_OPEN; i++) {
		if (s->open[i] == NULL) {
			victim = i;
			break;
		}
		if (s->open[i]->refs == 1 && (victim == MAX_OPEN ||
		    s->open[i]->used < s->open[victim]->used))
			victim = i;	/* only the table holds it */
	}
	if (victim < MAX_OPEN) {
		struct derive_gsym *old = s->open[victim];

		/* The table's reference. */
		f->refs++;
		s->open[victim] = f;
		if (old == NULL)
			__atomic_add_fetch(&s->nopen, 1, __ATOMIC_RELAXED);
		if (old != NULL && --old->refs == 0)
			file_free(old);
	}
	pthread_mutex_unlock(&s->mu);
	*out = f;
	return 0;
}

void
derive_gsym_release(struct derive_gsym *f)
{
	struct derive *s;
	int last;

	if (f == NULL)
		return;
	s = f->s;
	pthread_mutex_lock(&s->mu);
	last = --f->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (last)
		file_free(f);
}

int
derive_gsym_unstored(struct derive *s, const unsigned char *id, size_t idlen,
    struct cache_record *rec, int *fd, struct derive_gsym **gf)
{
	struct unstored *u;
	uint64_t parent;
	int rc = 0;

	memset(rec, 0, sizeof(*rec));
	pthread_mutex_lock(&s->mu);
	if ((u = unstored_find(s, id, idlen)) == NULL) {
		pthread_mutex_unlock(&s->mu);
		return -ENOENT;
	}
	parent = u->parent;
	rec->flags = CACHE_F_DERIVED;
	rec->parent = u->parent;
	rec->size = u->size;
	rec->stored = rec->last_modified = u->made;
	rec->origin = "gsym";
	if (gf != NULL) {
		*gf = u->f;
		u->f->refs++;
	} else if ((*fd = dup(u->fd)) < 0) {
		rc = -errno;
	}
	pthread_mutex_unlock(&s->mu);
	if (rc == 0 && !cache_derived_fresh(s->c, id, idlen, rec, clock_wall_s())) {
		/* Its debuginfo changed since. */
		if (gf != NULL) {
			derive_gsym_release(*gf);
			*gf = NULL;
		} else {
			close(*fd);
		}
		pthread_mutex_lock(&s->mu);
		if ((u = unstored_find(s, id, idlen)) != NULL &&
		    u->parent == parent)
			unstored_clear(s, u);
		pthread_mutex_unlock(&s->mu);
		rc = -ENOENT;
	}
	return rc;
}

int
derive_open(struct derive *s, const struct cache_key *key,
    struct cache_record *rec, int *fd, struct derive_gsym **gf)
{
	int rc;

	if ((rc = cache_get(s->c, key, clock_wall_s(), rec)) < 0)
		return rc == -ENODATA ? rc : -ENOENT;
	if ((rec->flags & CACHE_F_DERIVED) && !cache_derived_fresh(s->c,
	    key->id, key->idlen, rec, clock_wall_s()))
		rc = -ESTALE;
	else if (gf != NULL)
		rc = derive_gsym_open(s, rec, gf);
	else
		rc = cache_open_data(s->c, rec, fd);
	if (rc == 0)
		return 0;
	/* Its blob is gone: forget it.  Stale: what is made anew replaces
	 * it. */
	if (rc == -ENOENT)
		records_broken(s->c, key, rec, rc);
	cache_record_release(rec);
	return rc;
}

int
derive_gsym_lookup(struct derive_gsym *f, uint64_t addr,
    struct gsym_result *res)
{
	struct shard *sh;
	struct hot *h;
	struct gsym_func *fn;
	uint32_t idx;
	size_t slot;
	int rc;

	if ((rc = gsym_find(f->g, addr, &idx)) < 0)
		return rc;
	sh = &f->shards[idx % NSHARDS];
	pthread_mutex_lock(&sh->mu);
	if (sh->cap > 0) {
		slot = (idx / NSHARDS) % sh->cap;
		for (h = sh->tab[slot]; h != NULL; h = h->next)
			if (h->index == idx) {
				rc = gsym_func_lookup(f->g, h->fn, addr, res);
				pthread_mutex_unlock(&sh->mu);
				__atomic_add_fetch(&f->s->hot_hits, 1,
				    __ATOMIC_RELAXED);
				return rc;
			}
	}
	pthread_mutex_unlock(&sh->mu);
	__atomic_add_fetch(&f->s->hot_misses, 1, __ATOMIC_RELAXED);

	if ((rc = gsym_decode(f->g, idx, &fn)) < 0)
		return rc;
	rc = gsym_func_lookup(f->g, fn, addr, res);
	pthread_mutex_lock(&sh->mu);
	/* Over this shard's share, the shard starts again: SHARD_BUDGET,
	 * or less when so many files are open that all of them at that would
	 * pass HOT_BUDGET (each file's share, not the total, so that one
	 * file's records do not crowd out another's). */
	if (sh->bytes + gsym_func_size(fn) > shard_budget(f->s))
		shard_clear(f->s, sh);
	if (sh->cap == 0) {
		sh->cap = 1024;
		if ((sh->tab = calloc(sh->cap, sizeof(*sh->tab))) == NULL)
			sh->cap = 0;
	}
	if (sh->cap > 0 && (h = malloc(sizeof(*h))) != NULL) {
		slot = (idx / NSHARDS) % sh->cap;
		h->index = idx;
		h->fn = fn;
		h->next = sh->tab[slot];
		sh->tab[slot] = h;
		sh->n++;
		sh->bytes += gsym_func_size(fn);
		__atomic_add_fetch(&f->s->hot_bytes, gsym_func_size(fn),
		    __ATOMIC_RELAXED);
		fn = NULL;	/* now the cache's */
	}
	pthread_mutex_unlock(&sh->mu);
	gsym_func_free(fn);
	return rc;
}

/* ---- life cycle ---- */

void
derive_set_bucket(struct derive *s, struct bucket *b)
{
	s->bucket = b;
}

int
derive_create(struct cache *c, struct scan *scan, unsigned workers,
    unsigned threads, struct derive **out)
{
	struct derive *s;
	unsigned i;

	*out = NULL;
	if (workers == 0)
		workers = 1;
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->threads = calloc(workers, sizeof(*s->threads))) == NULL) {
		free(s);
		return -ENOMEM;
	}
	s->c = c;
	s->scan = scan;
	s->convert_threads = threads;
	for (i = 0; i < MAX_UNSTORED; i++)
		s->unstored[i].fd = -1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->srcmu, NULL);
	pthread_cond_init(&s->cv, NULL);
	pthread_cond_init(&s->bcv, NULL);
	for (i = 0; i < workers; i++) {
		if (pthread_create(&s->threads[i], NULL, worker, s) != 0)
			break;
		s->nthreads++;
	}
	if (s->nthreads == 0) {
		derive_free(s);
		return -EAGAIN;
	}
	*out = s;
	return 0;
}

void
derive_stop(struct derive *s)
{
	unsigned i;

	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	__atomic_store_n(&s->cancel, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&s->cv);
	pthread_cond_broadcast(&s->bcv);
	pthread_mutex_unlock(&s->mu);
	/* A conversion under way ends at its next look at s->cancel; the
	 * workers drain the queue, answering -ECANCELED.  The backlog's
	 * walk ends at its next record. */
	for (i = 0; i < s->nthreads; i++)
		pthread_join(s->threads[i], NULL);
	s->nthreads = 0;
	if (s->bstarted)
		pthread_join(s->bthread, NULL);
	s->bstarted = 0;
}

void
derive_free(struct derive *s)
{
	unsigned i;

	if (s == NULL)
		return;
	derive_stop(s);
	for (i = 0; i < MAX_UNSTORED; i++)
		unstored_clear(s, &s->unstored[i]);
	for (i = 0; i < MAX_OPEN; i++)
		if (s->open[i] != NULL && --s->open[i]->refs == 0)
			file_free(s->open[i]);
	for (i = 0; i < MAX_SRCNAMES; i++)
		dwsource_names_free(&s->srcnames[i].nl);
	free(s->threads);
	pthread_cond_destroy(&s->cv);
	pthread_cond_destroy(&s->bcv);
	pthread_mutex_destroy(&s->srcmu);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void
derive_metrics(struct derive *s, FILE *fp)
{
	size_t queued = 0;
	struct job *j;

	pthread_mutex_lock(&s->mu);
	for (j = s->jobs; j != NULL; j = j->next)
		queued++;
	fprintf(fp,
	    "# HELP symhub_gsym_conversions_total DWARF to GSYM conversions "
	    "by outcome.\n"
	    "# TYPE symhub_gsym_conversions_total counter\n"
	    "symhub_gsym_conversions_total{result=\"ok\"} %" PRIu64 "\n"
	    "symhub_gsym_conversions_total{result=\"nothing\"} %" PRIu64 "\n"
	    "symhub_gsym_conversions_total{result=\"missing\"} %" PRIu64 "\n"
	    "symhub_gsym_conversions_total{result=\"error\"} %" PRIu64 "\n"
	    "symhub_gsym_conversions_total{result=\"corrupt\"} %" PRIu64 "\n"
	    "# HELP symhub_gsym_from_bucket_total GSYM another replica "
	    "converted, read from the bucket (--s3) instead of converted.\n"
	    "# TYPE symhub_gsym_from_bucket_total counter\n"
	    "symhub_gsym_from_bucket_total %" PRIu64 "\n"
	    "# HELP symhub_gsym_unstored_total GSYM converted in memory, "
	    "unstored, because the store could not take them.\n"
	    "# TYPE symhub_gsym_unstored_total counter\n"
	    "symhub_gsym_unstored_total %" PRIu64 "\n"
	    "# TYPE symhub_gsym_conversion_seconds_total counter\n"
	    "symhub_gsym_conversion_seconds_total %.3f\n"
	    "# TYPE symhub_gsym_coalesced_total counter\n"
	    "symhub_gsym_coalesced_total %" PRIu64 "\n"
	    "# HELP symhub_gsym_ahead_total Conversions queued with nobody "
	    "waiting (--gsym-ahead, --gsym-on-upload), or dropped past the "
	    "queue's bound.\n"
	    "# TYPE symhub_gsym_ahead_total counter\n"
	    "symhub_gsym_ahead_total{result=\"queued\"} %" PRIu64 "\n"
	    "symhub_gsym_ahead_total{result=\"dropped\"} %" PRIu64 "\n"
	    "symhub_gsym_ahead_total{result=\"backlog\"} %" PRIu64 "\n"
	    "# HELP symhub_gsym_backlog_records_total Debuginfo and "
	    "executable records the backlog pass looked at (--gsym-ahead).\n"
	    "# TYPE symhub_gsym_backlog_records_total counter\n"
	    "symhub_gsym_backlog_records_total %" PRIu64 "\n"
	    "# HELP symhub_gsym_backlog_passes_total Backlog passes over the "
	    "store ended.\n"
	    "# TYPE symhub_gsym_backlog_passes_total counter\n"
	    "symhub_gsym_backlog_passes_total %" PRIu64 "\n"
	    "# HELP symhub_gsym_backlog_queued Backlog conversions queued, "
	    "not yet begun.\n"
	    "# TYPE symhub_gsym_backlog_queued gauge\n"
	    "symhub_gsym_backlog_queued %zu\n"
	    "# HELP symhub_gsym_backlog_running 1 while a backlog pass walks "
	    "the store.\n"
	    "# TYPE symhub_gsym_backlog_running gauge\n"
	    "symhub_gsym_backlog_running %d\n"
	    "# TYPE symhub_gsym_jobs gauge\n"
	    "symhub_gsym_jobs %zu\n"
	    "# HELP symhub_gsym_record_cache_total Lookups answered from a "
	    "decoded record (hit) or by decoding one (miss).\n"
	    "# TYPE symhub_gsym_record_cache_total counter\n"
	    "symhub_gsym_record_cache_total{result=\"hit\"} %" PRIu64 "\n"
	    "symhub_gsym_record_cache_total{result=\"miss\"} %" PRIu64 "\n"
	    "# HELP symhub_gsym_record_cache_bytes Decoded records kept, all "
	    "open GSYM files together.\n"
	    "# TYPE symhub_gsym_record_cache_bytes gauge\n"
	    "symhub_gsym_record_cache_bytes %" PRIu64 "\n",
	    s->n_ok, s->n_nodata, s->n_missing, s->n_error, s->n_corrupt,
	    s->n_bucket, s->n_unstored, s->seconds,
	    s->n_coalesced, s->n_ahead, s->n_ahead_dropped, s->n_backlog,
	    __atomic_load_n(&s->n_backlog_checked, __ATOMIC_RELAXED),
	    s->n_backlog_passes, s->nbacklog, s->brunning, queued,
	    __atomic_load_n(&s->hot_hits, __ATOMIC_RELAXED),
	    __atomic_load_n(&s->hot_misses, __ATOMIC_RELAXED),
	    __atomic_load_n(&s->hot_bytes, __ATOMIC_RELAXED));
	pthread_mutex_unlock(&s->mu);
	pthread_mutex_lock(&s->srcmu);
	fprintf(fp,
	    "# HELP symhub_dwarf_sources_total Source requests the store "
	    "had no file for, answered from the debuginfo's line tables: "
	    "its embedded text, or the path it names the file by.\n"
	    "# TYPE symhub_dwarf_sources_total counter\n"
	    "symhub_dwarf_sources_total{result=\"embedded\"} %" PRIu64 "\n"
	    "symhub_dwarf_sources_total{result=\"named\"} %" PRIu64 "\n"
	    "# HELP symhub_dwarf_source_reads_total Line tables read for "
	    "their source names (those of the last 16 files read are "
	    "kept).\n"
	    "# TYPE symhub_dwarf_source_reads_total counter\n"
	    "symhub_dwarf_source_reads_total %" PRIu64 "\n",
	    s->n_src_text, s->n_src_listed, s->n_src_read);
	pthread_mutex_unlock(&s->srcmu);
}

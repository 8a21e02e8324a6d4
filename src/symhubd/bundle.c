/*
 * bundle: see bundle.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/strmap.h"
#include "common/elfinfo.h"
#include "common/webapi.h"
#include "bundle.h"
#include "metrics.h"

#define DROPPED_SHOWN	4	/* dropped members named in the answer */

/* The names the debuginfo's DWARF gives its sources, canonical; a
 * relative one (a relative compilation directory) rooted at "/". */
static int
named(void *ctx, const char *name)
{
	struct strmap	*m = ctx;
	char		*canon;
	int		 rc = 0;

	if ((canon = webapi_canon_source(name)) == NULL)
		return errno == ENOMEM ? -ENOMEM : 0;
	if (srcbundle_name_ok(canon))
		rc = strmap_put(m, canon, 0);
	free(canon);
	return rc;
}

/* Fill m with what id's debuginfo names.  @return 0, -ENOENT when the
 * store has no debuginfo for id (or none it can open here), -errno. */
static int
dwarf_names(struct cache *c, const struct cache_key *key, struct strmap *m)
{
	struct cache_record	 rec;
	struct cache_key	 dk = { CACHE_DEBUGINFO, key->id, key->idlen,
				    NULL };
	int			 fd, rc;

	if ((rc = cache_get(c, &dk, clock_wall_s(), &rec)) < 0)
		return rc == -ENODATA ? -ENOENT : rc;
	rc = cache_open_data(c, &rec, &fd);
	cache_record_release(&rec);
	if (rc < 0)
		return rc == -ESTALE || rc == -EMEDIUMTYPE ? -ENOENT : rc;
	rc = elfinfo_sources(fd, named, m);
	close(fd);
	return rc == -ENOEXEC ? 0 : rc;
}

static int
to_blob(void *ctx, const void *buf, size_t len)
{
	return cache_blob_write(ctx, buf, len);
}

/* A member kept, held until the bundle is written in path order. */
struct member {
	char		*path;
	unsigned char	*data;
	size_t		 len;
	int64_t		 mtime;		/* the tar's; 0: none */
};

/* bundle_take()'s passes over the upload and the bundle stored. */
struct take {
	struct strmap	*names;		/* value 1: a member taken already */
	struct member	*v;
	size_t		 n, cap;
	size_t		 kept, dropped;	/* of the upload */
	uint64_t	 bytes;		/* kept, of the upload */
	int		 old;		/* the pass over the stored bundle */
	char		 shown[300];	/* some dropped names */
};

static int
keep(struct take *t, const char *path, int64_t mtime, const void *data,
    size_t len)
{
	struct member	*m, *nv;
	size_t		 cap;

	if (t->n == t->cap) {
		cap = t->cap ? 2 * t->cap : 64;
		if ((nv = reallocarray(t->v, cap, sizeof(*nv))) == NULL)
			return -ENOMEM;
		t->v = nv;
		t->cap = cap;
	}
	m = &t->v[t->n];
	if ((m->path = strdup(path)) == NULL ||
	    (m->data = malloc(len ? len : 1)) == NULL) {
		free(m->path);
		return -ENOMEM;
	}
	memcpy(m->data, data, len);
	m->len = len;
	m->mtime = mtime;
	t->n++;
	return strmap_put(t->names, path, 1);
}

static int
take_member(void *ctx, const char *path, int64_t mtime, const void *data,
    size_t len)
{
	struct take	*t = ctx;
	size_t		 seen, n;

	if (!strmap_get(t->names, path, &seen)) {
		if (!t->old && t->dropped++ < DROPPED_SHOWN) {
			n = strlen(t->shown);
			snprintf(t->shown + n, sizeof(t->shown) - n, "%s%s",
			    n > 0 ? ", " : "", path);
		}
		return 0;
	}
	/* The upload's first copy of a name stands; the stored bundle
	 * adds only what the upload lacks. */
	if (seen)
		return 0;
	if (!t->old) {
		t->kept++;
		t->bytes += len;
	}
	return keep(t, path, mtime, data, len);
}

static int
by_path(const void *a, const void *b)
{
	return strcmp(((const struct member *)a)->path,
	    ((const struct member *)b)->path);
}

/* The stored bundle's members the upload lacks: a build-id names one
 * build, so a later upload from a machine that lost some files (or sends
 * only some) adds to what is there and takes nothing away. */
static int
merge_stored(struct cache *c, const struct cache_key *key, struct take *t)
{
	static const struct srcbundle_limits lim = { (uint64_t)1 << 40,
	    (uint64_t)1 << 24 };
	struct cache_record	 rec;
	char			 why[SRCBUNDLE_WHY_MAX];
	int			 fd, rc;

	if (cache_get(c, key, clock_wall_s(), &rec) < 0)
		return 0;
	rc = cache_open_data(c, &rec, &fd);
	cache_record_release(&rec);
	if (rc < 0)
		return rc == -ENOMEM ? rc : 0;	/* gone: nothing to keep */
	t->old = 1;
	rc = srcbundle_read_fd(fd, &lim, take_member, t, why);
	close(fd);
	return rc == -ENOMEM ? rc : 0;
}

/* Write the members held, in path order: the same members make the
 * same bytes, whatever order they came in. */
static int
write_sorted(struct take *t, struct cache_blob *out)
{
	struct srcbundle_writer	*w;
	size_t			 i;
	int			 rc;

	qsort(t->v, t->n, sizeof(*t->v), by_path);
	if ((rc = srcbundle_write_open(to_blob, out, &w)) < 0)
		return rc;
	for (i = 0; rc == 0 && i < t->n; i++)
		rc = srcbundle_write_add(w, t->v[i].path, t->v[i].mtime,
		    t->v[i].data, t->v[i].len);
	if (rc == 0)
		return srcbundle_write_close(w, 0);
	srcbundle_write_close(w, 1);
	return rc;
}

/* Inside the write transaction: the same bytes are no change. */
struct decision {
	int			 pin;
	enum upload_result	 res;
};

static int
decide(void *ctx, const struct cache_record *old,
    const struct cache_record *rec)
{
	struct decision *d = ctx;

	if (old == NULL) {
		d->res = UPLOAD_STORED;
		return 1;
	}
	if (memcmp(old->digest, rec->digest, 32) == 0) {
		d->res = UPLOAD_SAME;
		return d->pin && !(old->flags & CACHE_F_PINNED);
	}
	d->res = UPLOAD_REPLACED;
	return 1;
}

static int
store_full(int rc)
{
	return rc == -ENOSPC || rc == -EDQUOT || rc == -EROFS ||
	    rc == -EACCES || rc == -EPERM;
}

/* Refused or failed: count it, and say so.  @return res. */
static enum upload_result
refused(enum upload_result res, struct take *t, size_t *kept,
    size_t *dropped)
{
	metrics_bundle(METRICS_BUNDLE_REFUSED, 0, 0, 0);
	if (kept != NULL)
		*kept = 0;
	if (dropped != NULL)
		*dropped = t->dropped;
	return res;
}

enum upload_result
bundle_take(struct cache *c, struct cache_blob *in,
    const struct cache_key *key, const struct srcbundle_limits *lim,
    int pin, const char *who, char *msg, size_t msglen, size_t *kept,
    size_t *dropped)
{
	struct strmap		 names = { 0 };
	struct take		 t;
	struct cache_blob	*out = NULL;
	struct cache_record	 rec;
	struct decision		 d = { pin, UPLOAD_ERROR };
	enum upload_result	 res;
	char			 why[SRCBUNDLE_WHY_MAX], origin[128];
	uint64_t		 size;
	size_t			 i;
	int			 rc;

	why[0] = '\0';
	memset(&t, 0, sizeof(t));
	t.names = &names;
	if (cache_blob_size(in) == 0) {
		snprintf(msg, msglen, "empty upload");
		res = refused(UPLOAD_INVALID, &t, kept, dropped);
		goto out;
	}
	if ((rc = dwarf_names(c, key, &names)) < 0) {
		snprintf(msg, msglen, "%s", rc == -ENOENT ? "no debuginfo is "
		    "stored for this build-id: upload it first (symhub upload "
		    "-d FILE --sources sends both)" : strerror(-rc));
		res = refused(rc == -ENOENT ? UPLOAD_INVALID : UPLOAD_ERROR,
		    &t, kept, dropped);
		goto out;
	}
	rc = srcbundle_read_fd(cache_blob_fd(in), lim, take_member, &t, why);
	if (rc == 0 && t.kept == 0) {
		snprintf(why, sizeof(why), "no member is a file the DWARF "
		    "names%s%.180s%s", t.dropped ? " (dropped: " : "",
		    t.dropped ? t.shown : "", t.dropped ? ")" : "");
		rc = -ENOENT;
	}
	if (rc == 0)
		rc = merge_stored(c, key, &t);
	if (rc == 0 && (rc = cache_blob_create(c, &out)) == 0)
		rc = write_sorted(&t, out);
	if (rc < 0) {
		snprintf(msg, msglen, "bundle refused: %s", why[0] != '\0' ?
		    why : strerror(-rc));
		res = rc == -EFBIG || rc == -E2BIG ? UPLOAD_TOO_BIG :
		    rc == -EPERM || rc == -EBADMSG || rc == -ENOENT ?
		    UPLOAD_INVALID : store_full(rc) ? UPLOAD_NO_SPACE :
		    UPLOAD_ERROR;
		res = refused(res, &t, kept, dropped);
		goto out;
	}

	memset(&rec, 0, sizeof(rec));
	rec.flags = pin ? CACHE_F_PINNED : 0;
	snprintf(origin, sizeof(origin), "upload:%s", who ? who : "-");
	rec.origin = origin;
	size = cache_blob_size(out);
	rc = cache_put_blob_if(c, out, key, &rec, decide, &d, NULL);
	out = NULL;	/* consumed */
	if (rc < 0 && rc != -ECANCELED) {
		snprintf(msg, msglen, "cannot store: %s", strerror(-rc));
		res = refused(store_full(rc) ? UPLOAD_NO_SPACE : UPLOAD_ERROR,
		    &t, kept, dropped);
		goto out;
	}
	res = d.res;
	/* Sources are made from the bundle when asked for (bundle_expand()),
	 * one at a time: putting them all now would cost a synced write
	 * each while the uploader waits.  Those made from the bundle this
	 * one replaces may be stale: made again. */
	if (res == UPLOAD_REPLACED)
		(void)bundle_forget(c, key->id, key->idlen);
	snprintf(msg, msglen, "%s: %zu source%s, %llu bytes",
	    res == UPLOAD_SAME ? "already stored: the same bundle" :
	    res == UPLOAD_REPLACED ? "replaced" : "stored", t.kept,
	    t.kept == 1 ? "" : "s", (unsigned long long)t.bytes);
	if (t.dropped > 0) {
		size_t n = strlen(msg);

		snprintf(msg + n, msglen - n, "; dropped %zu member%s the DWARF "
		    "does not name: %s%s", t.dropped, t.dropped == 1 ? "" : "s",
		    t.shown, t.dropped > DROPPED_SHOWN ? ", ..." : "");
	}
	metrics_bundle(res == UPLOAD_SAME ? METRICS_BUNDLE_SAME :
	    METRICS_BUNDLE_STORED, t.kept, t.dropped, res == UPLOAD_SAME ? 0 :
	    size);
	if (kept != NULL)
		*kept = t.kept;
	if (dropped != NULL)
		*dropped = t.dropped;
out:
	for (i = 0; i < t.n; i++) {
		free(t.v[i].path);
		free(t.v[i].data);
	}
	free(t.v);
	cache_blob_abort(out);
	cache_blob_abort(in);
	strmap_free(&names);
	return res;
}

/* One walk of a stored bundle (walk()). */
enum walk_mode {
	W_ONE,		/* put the member want, if missing, and stop */
	W_ALL,		/* put every member missing, then call each */
	W_FORGET	/* drop every member's record of origin "bundle" */
};

struct expand {
	struct cache		*c;
	const unsigned char	*id;
	size_t			 idlen;
	enum walk_mode		 mode;
	const char		*want;		/* W_ONE */
	void			(*each)(void *, const struct cache_key *);
	void			*ctx;
	int64_t			 when;		/* the latest a member gets */
	uint64_t		 put;
};

#define FOUND	1	/* W_ONE: the walk ends at want */

static int
put_member(struct expand *x, const struct cache_key *key, int64_t mtime,
    const void *data, size_t len)
{
	struct cache_record	 rec;
	struct cache_blob	*b;
	int			 rc;

	if ((rc = cache_blob_create(x->c, &b)) < 0)
		return rc;
	if ((rc = cache_blob_write(b, data, len)) < 0) {
		cache_blob_abort(b);
		return rc;
	}
	memset(&rec, 0, sizeof(rec));
	rec.origin = "bundle";
	rec.xfile = key->extra;
	/* The file's own mtime: clients give the file they keep the
	 * Last-Modified, and gdb warns of a source "more recent than
	 * executable" when it is later than the debuginfo's. */
	rec.last_modified = mtime > 0 && mtime < x->when ? mtime : x->when;
	rec.stored = clock_wall_s();
	if ((rc = cache_put_blob(x->c, b, key, &rec, NULL)) == 0)
		x->put++;
	return rc;
}

static int
walk_member(void *ctx, const char *path, int64_t mtime, const void *data,
    size_t len)
{
	struct expand		*x = ctx;
	struct cache_key	 key = { CACHE_SOURCE, x->id, x->idlen, path };
	struct cache_record	 rec;
	int			 have, ours, rc;

	if (x->mode == W_ONE && strcmp(x->want, path) != 0)
		return 0;
	have = cache_get(x->c, &key, clock_wall_s(), &rec) == 0;
	ours = have && rec.origin != NULL && strcmp(rec.origin, "bundle") == 0;
	if (have)
		cache_record_release(&rec);
	switch (x->mode) {
	case W_FORGET:
		if (ours)
			(void)cache_drop(x->c, &key);
		return 0;
	case W_ONE:
		if (!have && (rc = put_member(x, &key, mtime, data, len)) < 0)
			return rc;
		return FOUND;
	case W_ALL:
		if (!have && (rc = put_member(x, &key, mtime, data, len)) < 0)
			return rc;
		x->each(x->ctx, &key);
		return 0;
	}
	return 0;
}

/* The Last-Modified a record is served with (reply.c's rule). */
static int64_t
served_time(const struct cache_record *rec)
{
	return rec->last_modified > 0 ? rec->last_modified : rec->stored;
}

/*
 * t, made no later than the debuginfo's or the executable's time of the
 * build-id id (both uploaded before the bundle, or fetched): the latest
 * a member of id's bundle may be served with.
 */
static int64_t
latest_member(struct cache *c, const unsigned char *id, size_t idlen,
    int64_t t)
{
	static const enum cache_kind kinds[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct cache_record	 rec;
	int64_t			 now = clock_wall_s();
	size_t			 i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct cache_key k = { kinds[i], id, idlen, NULL };

		if (cache_get(c, &k, now, &rec) != 0)
			continue;
		if (served_time(&rec) > 0 && served_time(&rec) < t)
			t = served_time(&rec);
		cache_record_release(&rec);
	}
	return t;
}

/* Walk id's stored bundle with x.  @return walk_member()'s end, -ENOENT
 * when no bundle is stored, -errno. */
static int
walk(struct expand *x)
{
	/* A stored bundle was bounded when it came: these only keep a
	 * damaged one from running away. */
	static const struct srcbundle_limits lim = { (uint64_t)1 << 40,
	    (uint64_t)1 << 24 };
	struct cache_key	 key = { CACHE_BUNDLE, x->id, x->idlen, NULL };
	struct cache_record	 rec;
	char			 why[SRCBUNDLE_WHY_MAX];
	int			 fd, rc;

	if ((rc = cache_get(x->c, &key, clock_wall_s(), &rec)) < 0)
		return rc == -ENODATA ? -ENOENT : rc;
	x->when = served_time(&rec);
	rc = cache_open_data(x->c, &rec, &fd);
	cache_record_release(&rec);
	if (rc < 0)
		return rc;
	if (x->mode != W_FORGET)
		x->when = latest_member(x->c, x->id, x->idlen, x->when);
	rc = srcbundle_read_fd(fd, &lim, walk_member, x, why);
	close(fd);
	metrics_bundle_expanded(x->put);
	return rc;
}

int
bundle_expand(struct cache *c, const unsigned char *id, size_t idlen,
    const char *path)
{
	struct expand	x = { c, id, idlen, W_ONE, path, NULL, NULL, 0, 0 };
	int		rc;

	if ((rc = walk(&x)) < 0)
		return rc;
	return rc == FOUND ? 0 : -ENOENT;
}

int
bundle_expand_all(struct cache *c, const unsigned char *id, size_t idlen,
    void (*each)(void *ctx, const struct cache_key *key), void *ctx)
{
	struct expand	x = { c, id, idlen, W_ALL, NULL, each, ctx, 0, 0 };
	int		rc;

	return (rc = walk(&x)) < 0 ? rc : 0;
}

int
bundle_forget(struct cache *c, const unsigned char *id, size_t idlen)
{
	struct expand	x = { c, id, idlen, W_FORGET, NULL, NULL, NULL, 0, 0 };
	int		rc;

	return (rc = walk(&x)) < 0 ? rc : 0;
}

int64_t
bundle_served_time(struct cache *c, const struct cache_key *key,
    const struct cache_record *rec)
{
	/* A record of before members kept their tar's time has the
	 * bundle's: clamped as it would be made today (a member without a
	 * time gets the build's).  One made since is within the bound. */
	return latest_member(c, key->id, key->idlen, served_time(rec));
}

/*
 * scan: the directory walker and the in-place indexer.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "common/elfinfo.h"
#include "common/webapi.h"
#include "log.h"
#include "metrics.h"
#include "scan.h"

struct scan {
	struct cache	*c;
	struct strlist	 dirs;		/* absolute, resolved */
	struct strlist	 roots;		/* absolute, resolved */
	pthread_t	 thread;
	int		 running;
	int		 stop;
	int		 triggered;
	uint64_t	 interval;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	pthread_mutex_t	 pass_mu;	/* one pass at a time */
	scan_new_fn	 on_dbg;	/* NULL: none */
	void		*on_dbg_ctx;
};

/* State of one pass, for the nftw() callback. */
struct pass {
	struct scan	*s;
	int		 force;
	int		 indexed;
	char		**seen;
	size_t		 nseen, cap;
};

static __thread struct pass *cur;

static void
ident(const struct stat *st, struct cache_file *f)
{
	f->dev = (uint64_t)st->st_dev;
	f->ino = (uint64_t)st->st_ino;
	f->size = (uint64_t)st->st_size;
	f->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 +
	    st->st_mtim.tv_nsec;
}

static int
resolve(const struct strlist *in, struct strlist *out, const char *what)
{
	char	*r;
	size_t	 i;

	if ((out->v = calloc(in->n + 1, sizeof(*out->v))) == NULL)
		return -ENOMEM;
	out->cap = in->n + 1;
	for (i = 0; i < in->n; i++) {
		if ((r = realpath(in->v[i], NULL)) == NULL) {
			/* Keep it: it may appear later; each pass retries. */
			log_warn("%s %s", what, in->v[i]);
			if ((r = strdup(in->v[i])) == NULL)
				return -ENOMEM;
		}
		out->v[out->n++] = r;
	}
	return 0;
}

int
scan_create(struct cache *c, const struct config *cfg, struct scan **out)
{
	struct scan	*s;
	int		 rc;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	s->c = c;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	pthread_mutex_init(&s->pass_mu, NULL);
	if ((rc = resolve(&cfg->scan_dirs, &s->dirs, "scan directory")) < 0 ||
	    (rc = resolve(&cfg->source_roots, &s->roots, "source root")) < 0) {
		scan_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void
scan_free(struct scan *s)
{
	if (s == NULL)
		return;
	if (s->running) {
		pthread_mutex_lock(&s->mu);
		s->stop = 1;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
	}
	strlist_free(&s->dirs);
	strlist_free(&s->roots);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->pass_mu);
	free(s);
}

/* Is path under one of the source roots? */
static int
under_root(const struct scan *s, const char *path)
{
	size_t i, n;

	for (i = 0; i < s->roots.n; i++) {
		n = strlen(s->roots.v[i]);
		if (strncmp(path, s->roots.v[i], n) == 0 &&
		    (path[n] == '/' || (n > 0 && s->roots.v[i][n - 1] == '/')))
			return 1;
	}
	return 0;
}

struct keyset {
	struct cache_key	*k;
	char			**extra;	/* owned strings of k[i].extra */
	size_t			 n, cap;
};

static int
keyset_add(struct keyset *ks, const struct cache_key *k, const char *extra)
{
	size_t capk = ks->cap, capx = ks->cap;

	/* Both arrays grow alike: one capacity stands for them. */
	if (array_grow(&ks->k, &capk, ks->n + 1, sizeof(*ks->k)) != 0 ||
	    array_grow(&ks->extra, &capx, ks->n + 1, sizeof(*ks->extra)) != 0)
		return -ENOMEM;
	ks->cap = capk;
	ks->k[ks->n] = *k;
	ks->extra[ks->n] = NULL;
	if (extra != NULL) {
		if ((ks->extra[ks->n] = strdup(extra)) == NULL)
			return -ENOMEM;
		ks->k[ks->n].extra = ks->extra[ks->n];
	}
	ks->n++;
	return 0;
}

static void
keyset_free(struct keyset *ks)
{
	size_t i;

	for (i = 0; i < ks->n; i++)
		free(ks->extra[i]);
	free(ks->extra);
	free(ks->k);
}

struct srcctx {
	struct scan		*s;
	struct keyset		*ks;
	const struct elfinfo	*ei;
};

/* One source file named in the DWARF: index it when it is under a
 * source root, also after resolving symlinks. */
static int
add_source(void *ctx, const char *name)
{
	struct srcctx		*sc = ctx;
	struct cache_record	 rec;
	struct cache_key	 key;
	struct stat		 st;
	char			*canon, *real;
	int			 rc = 0;

	if (name[0] != '/' || (canon = strdup(name)) == NULL)
		return 0;
	if (webapi_canon_path(canon, canon) < 0 || !under_root(sc->s, canon))
		goto out;
	if ((real = realpath(canon, NULL)) == NULL)
		goto out;
	if (under_root(sc->s, real) && stat(real, &st) == 0 &&
	    S_ISREG(st.st_mode)) {
		memset(&rec, 0, sizeof(rec));
		rec.flags = CACHE_F_EXTERNAL;
		rec.size = (uint64_t)st.st_size;
		rec.dev = (uint64_t)st.st_dev;
		rec.ino = (uint64_t)st.st_ino;
		rec.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
		    st.st_mtim.tv_nsec;
		rec.last_modified = st.st_mtim.tv_sec;
		rec.stored = clock_wall_s();
		rec.path = real;
		rec.origin = "scan";
		rec.xfile = canon;
		key.kind = CACHE_SOURCE;
		key.id = sc->ei->buildid;
		key.idlen = sc->ei->buildid_len;
		key.extra = canon;
		if ((rc = cache_put(sc->s->c, &key, &rec)) == 0)
			rc = keyset_add(sc->ks, &key, canon);
		else
			log_warnx("cannot index source %s: %s", real,
			    strerror(-rc));
		rc = rc == -ENOMEM ? rc : 0;
	}
	free(real);
out:
	free(canon);
	return rc;
}

/*
 * Is there a record for key already that is better than one for path?
 * An upload (pinned) also stays against a scanned file only as good.
 */
static int
keep_existing(struct scan *s, const struct cache_key *key, const char *path,
    uint32_t quality)
{
	struct cache_record	rec;
	unsigned		old, new;
	int			fd, keep;

	if (cache_get(s->c, key, clock_wall_s(), &rec) != 0)
		return 0;
	old = elfinfo_score(rec.quality);
	new = elfinfo_score(quality);
	keep = (old > new || (rec.flags & CACHE_F_PINNED && old >= new)) &&
	    !(rec.path != NULL && strcmp(rec.path, path) == 0);
	if (keep && cache_open_data(s->c, &rec, &fd) == 0)
		close(fd);
	else
		keep = 0;
	cache_record_release(&rec);
	return keep;
}

/* (Re)index one regular file; st is its lstat(). */
static int
index_file(struct scan *s, const char *path)
{
	static const enum cache_kind kinds[] = { CACHE_EXECUTABLE,
	    CACHE_DEBUGINFO };
	struct keyset		 ks = { NULL, NULL, 0, 0 };
	struct cache_record	 rec;
	struct cache_file	 f;
	struct cache_key	 key;
	struct elfinfo		 ei;
	struct srcctx		 sc;
	struct stat		 st;
	size_t			 i;
	int			 fd, rc, has, new_dbg = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) < 0) {
		log_warn("skipping %s", path);
		metrics_scan_file(METRICS_SCAN_SKIPPED);
		return 0;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	ident(&st, &f);
	rc = elfinfo_read(fd, &ei);
	if (rc < 0 || ei.buildid_len == 0 ||
	    !(ei.is_executable || ei.is_debuginfo)) {
		/* Remembered with no keys, so the next pass skips it until it
		 * changes, and this line is logged once per change. */
		log_info("skipping %s: %s", path, rc == -ENOEXEC ?
		    "not an ELF file, or truncated" : rc < 0 ? strerror(-rc) :
		    ei.buildid_len == 0 ? "no GNU build-id note" :
		    "neither code nor DWARF");
		metrics_scan_file(METRICS_SCAN_SKIPPED);
		rc = cache_file_set(s->c, path, &f, NULL, 0);
		close(fd);
		return rc;
	}

	memset(&rec, 0, sizeof(rec));
	rec.flags = CACHE_F_EXTERNAL;
	rec.quality = ei.quality;
	rec.size = f.size;
	rec.dev = f.dev;
	rec.ino = f.ino;
	rec.mtime_ns = f.mtime_ns;
	rec.last_modified = st.st_mtim.tv_sec;
	rec.stored = clock_wall_s();
	rec.path = path;
	rec.origin = "scan";
	rec.xfile = path;
	key.id = ei.buildid;
	key.idlen = ei.buildid_len;
	key.extra = NULL;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		has = kinds[i] == CACHE_EXECUTABLE ? ei.is_executable :
		    ei.is_debuginfo;
		key.kind = kinds[i];
		if (!has || keep_existing(s, &key, path, ei.quality))
			continue;
		if ((rc = cache_put(s->c, &key, &rec)) < 0 ||
		    (rc = keyset_add(&ks, &key, NULL)) < 0)
			goto out;
		new_dbg |= key.kind == CACHE_DEBUGINFO;
	}
	if (ei.is_debuginfo && s->roots.n > 0) {
		sc.s = s;
		sc.ks = &ks;
		sc.ei = &ei;
		if ((rc = elfinfo_sources(fd, add_source, &sc)) == -ENOMEM)
			goto out;
	}
	rc = cache_file_set(s->c, path, &f, ks.k, ks.n);
	log_debug("indexed %s (%zu keys)", path, ks.n);
	if (rc == 0 && new_dbg && s->on_dbg != NULL) {
		key.kind = CACHE_DEBUGINFO;
		s->on_dbg(s->on_dbg_ctx, &key);
	}
	metrics_scan_file(METRICS_SCAN_INDEXED);
out:
	if (rc < 0)
		log_warnx("cannot index %s: %s", path, strerror(-rc));
	keyset_free(&ks);
	close(fd);
	return rc < 0 ? rc : 1;
}

static int
walk(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	struct pass		*p = cur;
	struct cache_file	 old, now;

	if (flag == FTW_DNR) {
		log_warnx("skipping unreadable directory %s", path);
		return 0;
	}
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	if (array_grow(&p->seen, &p->cap, p->nseen + 1,
	    sizeof(*p->seen)) != 0)
		return -1;
	if ((p->seen[p->nseen] = strdup(path)) == NULL)
		return -1;
	p->nseen++;
	ident(st, &now);
	if (!p->force && cache_file_get(p->s->c, path, &old) == 0 &&
	    memcmp(&old, &now, sizeof(old)) == 0) {
		metrics_scan_file(METRICS_SCAN_UNCHANGED);
		return 0;
	}
	if (index_file(p->s, path) > 0)
		p->indexed++;
	return 0;
}

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
was_seen(void *ctx, const char *path)
{
	struct pass *p = ctx;

	/* No file seen: seen is NULL, which bsearch may not be given. */
	return p->nseen > 0 && bsearch(&path, p->seen, p->nseen,
	    sizeof(char *), cmpstr) != NULL;
}

static int
pass_once(struct scan *s, int force, int *forgotten)
{
	struct pass	p = { s, force, 0, NULL, 0, 0 };
	size_t		i;
	int		rc = 0;

	cur = &p;
	for (i = 0; i < s->dirs.n; i++)
		if (nftw(s->dirs.v[i], walk, 32, FTW_PHYS) != 0)
			log_warn("scanning %s", s->dirs.v[i]);
	cur = NULL;
	if (p.nseen > 1)
		qsort(p.seen, p.nseen, sizeof(char *), cmpstr);
	*forgotten = cache_file_sweep(s->c, "", was_seen, &p);
	if (*forgotten < 0) {
		rc = *forgotten;
		log_warnx("forgetting vanished files: %s", strerror(-rc));
		*forgotten = 0;
	}
	for (i = 0; i < (size_t)*forgotten; i++)
		metrics_scan_file(METRICS_SCAN_FORGOTTEN);
	for (i = 0; i < p.nseen; i++)
		free(p.seen[i]);
	free(p.seen);
	return rc < 0 ? rc : p.indexed;
}

int
scan_pass(struct scan *s, int force)
{
	int64_t	t0;
	int	rc, forgotten, n;

	pthread_mutex_lock(&s->pass_mu);
	t0 = clock_us();
	rc = pass_once(s, force, &forgotten);
	/* A vanished file may have been the one serving a key that another
	 * file also provides: read everything again so that one takes over. */
	if (rc >= 0 && forgotten > 0 && !force &&
	    (n = pass_once(s, 1, &forgotten)) >= 0)
		rc += n;
	metrics_scan_pass((double)(clock_us() - t0) / 1e6);
	pthread_mutex_unlock(&s->pass_mu);
	return rc;
}

static void *
run(void *arg)
{
	struct scan	*s = arg;
	struct timespec	 until;
	int		 n;

	for (;;) {
		pthread_mutex_lock(&s->mu);
		until = clock_deadline((int64_t)s->interval * 1000);
		while (!s->stop && !s->triggered) {
			if (s->interval == 0)
				pthread_cond_wait(&s->cv, &s->mu);
			else if (pthread_cond_timedwait(&s->cv, &s->mu,
			    &until) == ETIMEDOUT)
				break;
		}
		s->triggered = 0;
		n = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (n)
			return NULL;
		if ((n = scan_pass(s, 0)) > 0)
			log_info("scan: %d files indexed", n);
	}
}

int
scan_start(struct scan *s, uint64_t interval)
{
	int rc;

	s->interval = interval;
	if ((rc = pthread_create(&s->thread, NULL, run, s)) != 0)
		return -rc;
	s->running = 1;
	return 0;
}

void
scan_on_debuginfo(struct scan *s, scan_new_fn fn, void *ctx)
{
	s->on_dbg = fn;
	s->on_dbg_ctx = ctx;
}

void
scan_trigger(struct scan *s)
{
	pthread_mutex_lock(&s->mu);
	s->triggered = 1;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

int
scan_refresh(struct scan *s, const struct cache_key *key,
    const struct cache_record *stale)
{
	struct cache_record	rec;
	struct stat		st;

	metrics_stale();
	if (stale->path == NULL)
		return -ENOENT;
	if (stat(stale->path, &st) != 0 || !S_ISREG(st.st_mode))
		return -ENOENT;
	if (key->kind == CACHE_SOURCE) {
		/* The source changed in place: serve what is there now, as
		 * elfutils does, but only if it still resolves to a regular
		 * file under a source root (it may have become a symlink). */
		char *real = realpath(stale->path, NULL);
		int ok = real != NULL && strcmp(real, stale->path) == 0 &&
		    under_root(s, real) && lstat(real, &st) == 0 &&
		    S_ISREG(st.st_mode);

		free(real);
		if (!ok)
			return -ENOENT;
		rec = *stale;
		rec.mem = NULL;
		rec.size = (uint64_t)st.st_size;
		rec.dev = (uint64_t)st.st_dev;
		rec.ino = (uint64_t)st.st_ino;
		rec.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
		    st.st_mtim.tv_nsec;
		rec.last_modified = st.st_mtim.tv_sec;
		return cache_put(s->c, key, &rec);
	}
	/* An ELF file changed: read it again; its build-id may differ now,
	 * in which case key loses its record. */
	if (index_file(s, stale->path) < 0)
		return -EIO;
	return 0;
}

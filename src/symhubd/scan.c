/*
 * scan: the directory walker and the in-place indexer.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/strmap.h"
#include "common/elfinfo.h"
#include "common/kind.h"
#include "common/pkgarchive.h"
#include "common/webapi.h"
#include "log.h"
#include "metrics.h"
#include "scan.h"

/* Which files are packages, and how they are read (-R, -U, -Z). */
struct rule {
	char		*ext;		/* the name's ending */
	enum pkga_type	 type;
	char		*cmd;		/* PKGA_CMD's; NULL otherwise */
};

/* Where a member starts in its package (pkga_member_seek()); len 0:
 * read it from the package's start. */
struct mseek {
	unsigned char	 b[PKGA_SEEK_MAX];
	size_t		 len;
};

_Static_assert(PKGA_SEEK_MAX <= CACHE_SEEK_MAX,
    "a record holds a member's seek note");

/* An archive that holds sources (non-ELF members), as last indexed. */
struct arch {
	char			*path;
	struct cache_file	 f;
};

/* A debuginfo in an archive names a source: (build-id, path), chained by
 * path (sref_by_path gives the first, + 1). */
struct sref {
	unsigned char	 id[CACHE_ID_MAX];
	size_t		 idlen;
	size_t		 next;		/* index + 1 of the next; 0: none */
};

struct scan {
	struct cache	*c;
	struct strlist	 dirs;		/* absolute, resolved */
	struct strlist	 roots;		/* absolute, resolved */
	struct rule	*rules;
	size_t		 nrules;
	struct pkga_limits lim;
	/* Sources in archives are paired with the debuginfo (in any
	 * archive) that names them, whichever is indexed first. */
	pthread_mutex_t	 pair_mu;
	struct arch	*archs;
	size_t		 narchs, caparchs;
	struct strmap	 arch_by_path;	/* path -> index in archs */
	struct strmap	 sdef;		/* member path -> index in sdefs */
	struct sdefent {
		size_t		 arch;	/* index in archs */
		uint64_t	 size;	/* the member's */
		struct mseek	 seek;	/* the member's */
	}		*sdefs;
	size_t		 nsdefs, capsdefs;
	struct sref	*srefs;
	size_t		 nsrefs, capsrefs;
	struct strmap	 sref_by_path;	/* source path -> first index + 1 */
	pthread_t	 thread;
	int		 running;
	int		 stop;
	int		 triggered;
	uint64_t	 interval;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	pthread_mutex_t	 pass_mu;	/* one pass at a time */
	/* What the last pass found in each of dirs, for the status page
	 * and the log (a directory's error is logged when it changes). */
	struct scan_dirstat {
		uint64_t	 files, changed;
		int64_t		 last;		/* wall seconds; 0: never */
		int		 err;		/* errno of its walk; 0 */
	}		*dstat;		/* under mu */
	scan_new_fn	 on_dbg;	/* NULL: none */
	void		*on_dbg_ctx;
};

/* State of one pass, for the nftw() callback. */
struct pass {
	struct scan	*s;
	int		 force;
	int		 indexed;
	uint64_t	 files, changed;	/* in the directory walked now */
	char		**seen;
	size_t		 nseen, cap;
	/* Packages to read, after the walk, on several threads: reading
	 * one is mostly decompression, one core's work. */
	struct todo {
		const char	*path;	/* in seen */
		uint64_t	 size;	/* as the walk saw it */
	}		*todo;
	size_t		 ntodo, captodo, next;
	pthread_mutex_t	 mu;		/* next, indexed */
};

#define SCAN_PKG_THREADS_MAX	8

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

/* what: the name to warn under when a path does not resolve; NULL:
 * say nothing (each pass says it of a scan directory). */
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
			if (what != NULL)
				log_warn("%s %s", what, in->v[i]);
			if ((r = strdup(in->v[i])) == NULL)
				return -ENOMEM;
		}
		out->v[out->n++] = r;
	}
	return 0;
}

static int
add_rule(struct scan *s, const char *ext, size_t extlen, const char *cmd)
{
	struct rule	*r;
	size_t		 cap = s->nrules;

	if (extlen == 0)
		return -EINVAL;
	if (array_grow(&s->rules, &cap, s->nrules + 1, sizeof(*s->rules)) != 0)
		return -ENOMEM;
	r = &s->rules[s->nrules];
	memset(r, 0, sizeof(*r));
	/* elfutils' "cat" is the file itself, read by libarchive. */
	r->type = cmd == NULL || strcmp(cmd, "cat") == 0 ? PKGA_AUTO :
	    PKGA_CMD;
	if ((r->ext = strndup(ext, extlen)) == NULL ||
	    (r->type == PKGA_CMD && (r->cmd = strdup(cmd)) == NULL)) {
		free(r->ext);
		return -ENOMEM;
	}
	s->nrules++;
	return 0;
}

static int
make_rules(struct scan *s, const struct config *cfg)
{
	const char	*eq;
	size_t		 i;
	int		 rc = 0;

	if (cfg->scan_rpm)
		rc = add_rule(s, ".rpm", 4, NULL);
	if (rc == 0 && cfg->scan_deb && (rc = add_rule(s, ".deb", 4,
	    NULL)) == 0)
		rc = add_rule(s, ".ddeb", 5, NULL);
	for (i = 0; rc == 0 && i < cfg->scan_archives.n; i++) {
		const char *z = cfg->scan_archives.v[i];

		eq = strchr(z, '=');
		rc = add_rule(s, z, eq != NULL ? (size_t)(eq - z) : strlen(z),
		    eq != NULL ? eq + 1 : NULL);
		if (rc == -EINVAL)
			log_warnx("--scan-archive %s: no name ending before "
			    "'='", z);
	}
	return rc;
}

/* The rule path is read by, or NULL: not a package.  The last that
 * matches wins, as in elfutils. */
static const struct rule *
rule_for(const struct scan *s, const char *path)
{
	const struct rule	*r = NULL;
	size_t			 i, n = strlen(path), e;

	for (i = 0; i < s->nrules; i++) {
		e = strlen(s->rules[i].ext);
		if (n > e && strcmp(path + n - e, s->rules[i].ext) == 0)
			r = &s->rules[i];
	}
	return r;
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
	pthread_mutex_init(&s->pair_mu, NULL);
	if ((rc = resolve(&cfg->scan_dirs, &s->dirs, NULL)) < 0 ||
	    (s->dstat = calloc(cfg->scan_dirs.n + 1, sizeof(*s->dstat))) ==
	    NULL ||
	    (rc = resolve(&cfg->source_roots, &s->roots, "source root")) < 0 ||
	    (rc = make_rules(s, cfg)) < 0) {
		scan_free(s);
		return rc;
	}
	s->lim.member_max = cfg->archive_member_max;
	s->lim.ratio_max = cfg->archive_ratio;
	*out = s;
	return 0;
}

void
scan_free(struct scan *s)
{
	size_t i;

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
	free(s->dstat);
	strlist_free(&s->roots);
	for (i = 0; i < s->nrules; i++) {
		free(s->rules[i].ext);
		free(s->rules[i].cmd);
	}
	free(s->rules);
	for (i = 0; i < s->narchs; i++)
		free(s->archs[i].path);
	free(s->archs);
	free(s->srefs);
	free(s->sdefs);
	strmap_free(&s->arch_by_path);
	strmap_free(&s->sdef);
	strmap_free(&s->sref_by_path);
	pthread_mutex_destroy(&s->pair_mu);
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
	if (keep && rec.flags & CACHE_F_MEMBER)
		keep = cache_external_same(&rec, -1);
	else if (keep && cache_open_data(s->c, &rec, &fd) == 0)
		close(fd);
	else
		keep = 0;
	cache_record_release(&rec);
	return keep;
}

/* path opened for indexing, a regular file (with *st), or -1: skipped
 * (logged when it could not be opened). */
static int
open_regular(const char *path, struct stat *st)
{
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) < 0) {
		log_warn("skipping %s", path);
		metrics_scan_file(METRICS_SCAN_SKIPPED);
		return -1;
	}
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
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

	if ((fd = open_regular(path, &st)) < 0)
		return 0;
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


/*
 * Packages: their members are indexed as records that point into them
 * (CACHE_F_MEMBER), extracted when first asked for (scan_member_open()).
 */

/* A record to put once the whole archive was read, unchanged. */
struct pending {
	enum cache_kind	 kind;
	unsigned char	 id[CACHE_ID_MAX];
	size_t		 idlen;
	char		*member;	/* its name in the archive */
	uint64_t	 size;		/* its size */
	size_t		 arch;		/* SOURCE: index in archs; else -1 */
	uint32_t	 quality;
	struct mseek	 seek;
};

/* An ELF member read out of its package, waiting to be analysed. */
struct elfjob {
	char		*name;
	int		 fd;
	uint64_t	 size;
	struct mseek	 seek;
};

/* ELF members read ahead of the analysis: unpacking the next goes on
 * while the last is analysed (DWARF sources decompress sections), on
 * another thread.  At most this many wait, each in memory. */
#define ELFQ_MAX	2

struct actx {
	struct scan		*s;
	const char		*path;
	struct cache_file	 f;
	size_t			 self;		/* index in archs, or -1 */
	pthread_mutex_t		 mu;		/* p, np; the queue */
	struct pending		*p;
	size_t			 np, capp;
	unsigned		 refused;
	pthread_cond_t		 cv;
	struct elfjob		 q[ELFQ_MAX];
	size_t			 qhead, qn;
	int			 qdone;		/* no job will come */
	int			 qrc;		/* the analyser's first error */
	pthread_t		 analyser;
	int			 analysing;	/* its thread runs */
};

static int
pend(struct actx *a, enum cache_kind kind, const unsigned char *id,
    size_t idlen, const char *member, uint64_t size, size_t arch,
    uint32_t quality, const struct mseek *seek)
{
	struct pending	*p;
	int		 rc = -ENOMEM;

	pthread_mutex_lock(&a->mu);
	if (array_grow(&a->p, &a->capp, a->np + 1, sizeof(*a->p)) == 0) {
		p = &a->p[a->np];
		p->kind = kind;
		memcpy(p->id, id, idlen);
		p->idlen = idlen;
		p->size = size;
		p->arch = arch;
		p->quality = quality;
		p->seek = *seek;
		if ((p->member = strdup(member)) != NULL) {
			a->np++;
			rc = 0;
		}
	}
	pthread_mutex_unlock(&a->mu);
	return rc;
}

/* This archive, in archs (its identity as read now).  pair_mu held. */
static int
arch_self(struct actx *a)
{
	struct scan	*s = a->s;
	size_t		 i;

	if (a->self != (size_t)-1)
		return 0;
	if (strmap_get(&s->arch_by_path, a->path, &i)) {
		s->archs[i].f = a->f;
		a->self = i;
		return 0;
	}
	if (array_grow(&s->archs, &s->caparchs, s->narchs + 1,
	    sizeof(*s->archs)) != 0 ||
	    (s->archs[s->narchs].path = strdup(a->path)) == NULL)
		return -ENOMEM;
	if (strmap_put(&s->arch_by_path, a->path, s->narchs) != 0) {
		free(s->archs[s->narchs].path);
		return -ENOMEM;
	}
	s->archs[s->narchs].f = a->f;
	a->self = s->narchs++;
	return 0;
}

/* A non-ELF member: a source for every debuginfo that names it. */
static int
member_source(struct actx *a, const char *name, uint64_t size,
    const struct mseek *seek)
{
	struct scan	*s = a->s;
	size_t		 i;
	int		 rc = 0;

	pthread_mutex_lock(&s->pair_mu);
	if ((rc = arch_self(a)) == 0 && !strmap_get(&s->sdef, name, &i)) {
		i = s->nsdefs;
		if ((rc = array_grow(&s->sdefs, &s->capsdefs, i + 1,
		    sizeof(*s->sdefs))) == 0 &&
		    (rc = strmap_put(&s->sdef, name, i)) == 0)
			s->nsdefs++;
	}
	if (rc == 0) {
		s->sdefs[i].arch = a->self;
		s->sdefs[i].size = size;
		s->sdefs[i].seek = *seek;
		if (strmap_get(&s->sref_by_path, name, &i))
			for (; rc == 0 && i != 0; i = s->srefs[i - 1].next)
				rc = pend(a, CACHE_SOURCE, s->srefs[i - 1].id,
				    s->srefs[i - 1].idlen, name, size,
				    a->self, 0, seek);
	}
	pthread_mutex_unlock(&s->pair_mu);
	return rc;
}

struct srcref {
	struct actx		*a;
	const struct elfinfo	*ei;
};

/* A source a debuginfo in an archive names: remembered, and paired with
 * the archive that holds it, if one was seen. */
static int
member_sref(void *ctx, const char *name)
{
	struct srcref	*r = ctx;
	struct scan	*s = r->a->s;
	struct sref	*sr;
	char		*canon;
	size_t		 i, head;
	int		 rc;

	if (name[0] != '/' || (canon = strdup(name)) == NULL)
		return name[0] != '/' ? 0 : -ENOMEM;
	if (webapi_canon_path(canon, canon) < 0) {
		free(canon);
		return 0;
	}
	pthread_mutex_lock(&s->pair_mu);
	rc = array_grow(&s->srefs, &s->capsrefs, s->nsrefs + 1,
	    sizeof(*s->srefs));
	if (rc == 0) {
		/* Once a (build-id, path), however often it is read. */
		for (i = strmap_get(&s->sref_by_path, canon, &head) ? head : 0;
		    i != 0; i = s->srefs[i - 1].next)
			if (s->srefs[i - 1].idlen == r->ei->buildid_len &&
			    memcmp(s->srefs[i - 1].id, r->ei->buildid,
			    r->ei->buildid_len) == 0)
				break;
		if (i == 0) {
			sr = &s->srefs[s->nsrefs];
			memcpy(sr->id, r->ei->buildid, r->ei->buildid_len);
			sr->idlen = r->ei->buildid_len;
			sr->next = strmap_get(&s->sref_by_path, canon,
			    &head) ? head : 0;
			rc = strmap_put(&s->sref_by_path, canon,
			    ++s->nsrefs);
		}
	}
	if (rc == 0 && strmap_get(&s->sdef, canon, &i))
		rc = pend(r->a, CACHE_SOURCE, r->ei->buildid,
		    r->ei->buildid_len, canon, s->sdefs[i].size,
		    s->sdefs[i].arch, 0, &s->sdefs[i].seek);
	pthread_mutex_unlock(&s->pair_mu);
	free(canon);
	return rc;
}

/* What an ELF member provides: records, and the sources it names. */
static int
analyse(struct actx *a, const struct elfjob *j)
{
	struct elfinfo	ei;
	struct srcref	sr;
	int		rc;

	rc = elfinfo_read(j->fd, &ei);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0 || ei.buildid_len == 0 ||
	    !(ei.is_executable || ei.is_debuginfo))
		return 0;	/* an ELF member with nothing to serve */
	if (ei.is_executable && (rc = pend(a, CACHE_EXECUTABLE, ei.buildid,
	    ei.buildid_len, j->name, j->size, (size_t)-1, ei.quality,
	    &j->seek)) < 0)
		return rc;
	if (ei.is_debuginfo) {
		if ((rc = pend(a, CACHE_DEBUGINFO, ei.buildid, ei.buildid_len,
		    j->name, j->size, (size_t)-1, ei.quality, &j->seek)) < 0)
			return rc;
		sr.a = a;
		sr.ei = &ei;
		if ((rc = elfinfo_sources(j->fd, member_sref, &sr)) == -ENOMEM)
			return rc;
	}
	return 0;
}

static void *
analyser(void *arg)
{
	struct actx	*a = arg;
	struct elfjob	 j;
	int		 rc;

	for (;;) {
		pthread_mutex_lock(&a->mu);
		while (a->qn == 0 && !a->qdone)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->qn == 0) {
			pthread_mutex_unlock(&a->mu);
			return NULL;
		}
		j = a->q[a->qhead];
		a->qhead = (a->qhead + 1) % ELFQ_MAX;
		a->qn--;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		rc = analyse(a, &j);
		close(j.fd);
		free(j.name);
		if (rc < 0) {
			pthread_mutex_lock(&a->mu);
			if (a->qrc == 0)
				a->qrc = rc;
			pthread_mutex_unlock(&a->mu);
		}
	}
}

/* Hand j to the analyser (j is its then), or analyse it here when no
 * thread can be had.  @return 0, or an error of the analysis. */
static int
hand_over(struct actx *a, struct elfjob *j)
{
	int rc;

	if (!a->analysing &&
	    pthread_create(&a->analyser, NULL, analyser, a) == 0)
		a->analysing = 1;
	if (!a->analysing) {
		rc = analyse(a, j);
		close(j->fd);
		free(j->name);
		return rc;
	}
	pthread_mutex_lock(&a->mu);
	while (a->qn == ELFQ_MAX)
		pthread_cond_wait(&a->cv, &a->mu);
	a->q[(a->qhead + a->qn) % ELFQ_MAX] = *j;
	a->qn++;
	pthread_cond_broadcast(&a->cv);
	rc = a->qrc;
	pthread_mutex_unlock(&a->mu);
	return rc;
}

/* No more jobs: let the analyser finish them, and end. */
static int
analysed(struct actx *a)
{
	pthread_mutex_lock(&a->mu);
	a->qdone = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	if (a->analysing)
		pthread_join(a->analyser, NULL);
	a->analysing = 0;
	return a->qrc;
}

static int
on_member(void *ctx, const char *name, uint64_t size, struct pkga_member *m)
{
	struct actx	*a = ctx;
	struct elfjob	 j;
	unsigned char	 buf[65536];
	off_t		 off;
	ssize_t		 n;

	j.seek.len = pkga_member_seek(m, j.seek.b);
	if ((n = pkga_read(m, buf, sizeof(buf))) < 0)
		return (int)n;
	if (n < 4 || memcmp(buf, "\177ELF", 4) != 0)
		return member_source(a, name, size, &j.seek);
	/* In memory (it is read once, soon); a file where memfd is
	 * missing. */
	if ((j.fd = memfd_create("member", MFD_CLOEXEC)) < 0 &&
	    (j.fd = open(P_tmpdir, O_TMPFILE | O_RDWR | O_CLOEXEC,
	    0600)) < 0)
		return -errno;
	for (off = 0; n > 0; off += n, n = pkga_read(m, buf, sizeof(buf)))
		if (pwrite(j.fd, buf, (size_t)n, off) != n) {
			n = errno == ENOSPC ? -ENOSPC : -EIO;
			break;
		}
	if (n < 0 || (j.name = strdup(name)) == NULL) {
		close(j.fd);
		return n < 0 ? (int)n : -ENOMEM;
	}
	j.size = (uint64_t)off;
	return hand_over(a, &j);
}

static void
on_refused(void *ctx, const char *name, const char *why)
{
	struct actx *a = ctx;

	if (a->refused++ < 10)
		log_warnx("package %s: skipping member %s: %s", a->path, name,
		    why);
}

/* The key of the extracted copy of a member: "KIND:MEMBER". */
static int
member_key(struct cache_key *mk, const struct cache_key *key,
    const char *member, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s:%s", kind_name(key->kind), member);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	mk->kind = CACHE_MEMBER;
	mk->id = key->id;
	mk->idlen = key->idlen;
	mk->extra = buf;
	return 0;
}

/* Put what the walk found, now that the archive is known unchanged: the
 * records in one transaction (a package may hold thousands). */
static int
apply(struct actx *a, struct keyset *ks, int *new_dbg)
{
	struct scan		*s = a->s;
	struct cache_record	*recs = NULL, old;
	struct cache_key	*keys = NULL, key, mk;
	size_t			*kidx = NULL, capr = 0, capk = 0, capi = 0;
	char			**paths = NULL, mbuf[PATH_MAX + 16];
	size_t			 capp = 0, n = 0, i;
	int			 rc = 0;

	for (i = 0; rc == 0 && i < a->np; i++) {
		struct pending		*p = &a->p[i];
		struct arch		 ar = { (char *)a->path, a->f };
		struct cache_record	*rec;

		if (p->arch != (size_t)-1) {
			pthread_mutex_lock(&s->pair_mu);
			ar = s->archs[p->arch];
			ar.path = strdup(ar.path);
			pthread_mutex_unlock(&s->pair_mu);
		} else {
			ar.path = strdup(a->path);
		}
		if (ar.path == NULL ||
		    array_grow(&recs, &capr, n + 1, sizeof(*recs)) != 0 ||
		    array_grow(&kidx, &capi, n + 1, sizeof(*kidx)) != 0 ||
		    array_grow(&paths, &capp, n + 1, sizeof(*paths)) != 0) {
			free(ar.path);
			rc = -ENOMEM;
			break;
		}
		paths[n] = ar.path;
		key.kind = p->kind;
		key.id = p->id;
		key.idlen = p->idlen;
		key.extra = p->kind == CACHE_SOURCE ? p->member : NULL;
		rec = &recs[n];
		memset(rec, 0, sizeof(*rec));
		rec->flags = CACHE_F_EXTERNAL | CACHE_F_MEMBER;
		rec->quality = p->quality;
		rec->size = p->size;
		rec->parent = ar.f.size;
		rec->dev = ar.f.dev;
		rec->ino = ar.f.ino;
		rec->mtime_ns = ar.f.mtime_ns;
		rec->last_modified = ar.f.mtime_ns / 1000000000;
		rec->stored = clock_wall_s();
		rec->path = ar.path;
		rec->origin = "scan";
		rec->xfile = p->member;
		rec->xarchive = ar.path;
		memcpy(rec->seek, p->seek.b, p->seek.len);
		rec->seeklen = p->seek.len;
		n++;
		if (p->kind != CACHE_SOURCE &&
		    keep_existing(s, &key, a->path, p->quality)) {
			free(paths[--n]);
			continue;
		}
		/* A copy extracted from what the archive was is stale. */
		if ((rc = member_key(&mk, &key, p->member, mbuf,
		    sizeof(mbuf))) < 0)
			break;
		if (cache_get(s->c, &mk, clock_wall_s(), &old) == 0) {
			if (old.parent != cache_fingerprint(rec))
				cache_drop(s->c, &mk);
			cache_record_release(&old);
		}
		kidx[n - 1] = ks->n;
		/* Its extracted copy goes with this package, if it is its. */
		if ((rc = keyset_add(ks, &key, key.extra)) == 0 &&
		    strcmp(ar.path, a->path) == 0)
			rc = keyset_add(ks, &mk, mk.extra);
	}
	if (rc == 0 && n > 0 &&
	    array_grow(&keys, &capk, n, sizeof(*keys)) != 0)
		rc = -ENOMEM;
	if (rc == 0 && n > 0) {
		for (i = 0; i < n; i++)
			keys[i] = ks->k[kidx[i]];
		rc = cache_put_many(s->c, keys, recs, n);
	}
	for (i = 0; rc == 0 && i < n; i++) {
		if (keys[i].kind != CACHE_DEBUGINFO)
			continue;
		*new_dbg = 1;
		if (s->on_dbg != NULL)
			s->on_dbg(s->on_dbg_ctx, &keys[i]);
	}
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(recs);
	free(keys);
	free(kidx);
	return rc;
}

/* (Re)index one package.  @return 1 when indexed, 0 skipped, -errno. */
static int
index_archive(struct scan *s, const char *path, const struct rule *ru)
{
	struct keyset		 ks = { NULL, NULL, 0, 0 };
	struct actx		 a;
	struct stat		 st, now;
	struct cache_file	 f2;
	char			 why[PKGA_WHY_MAX];
	size_t			 i;
	int			 fd, rc, arc, new_dbg = 0;

	if ((fd = open_regular(path, &st)) < 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.s = s;
	a.path = path;
	a.self = (size_t)-1;
	pthread_mutex_init(&a.mu, NULL);
	pthread_cond_init(&a.cv, NULL);
	ident(&st, &a.f);
	rc = pkga_walk(fd, path, ru->type, ru->cmd, &s->lim, on_member,
	    on_refused, &a, why);
	arc = analysed(&a);
	if (rc >= 0 && arc < 0)
		rc = arc;
	if (a.refused > 10)
		log_warnx("package %s: %u members skipped in all", path,
		    a.refused);
	/* Rewritten while it was read: what was read is not what is there;
	 * nothing is put, and the next pass reads it again. */
	if (rc >= 0 && (fstat(fd, &now) != 0 || lstat(path, &st) != 0 ||
	    (ident(&now, &f2), memcmp(&f2, &a.f, sizeof(f2)) != 0) ||
	    (ident(&st, &f2), memcmp(&f2, &a.f, sizeof(f2)) != 0))) {
		log_warnx("package %s changed while it was read: read again "
		    "next pass", path);
		rc = 0;
		goto out;
	}
	if (rc < 0 && rc != -ENOMEM && rc != -ENOSPC) {
		/* Remembered with no keys: what it held before is dropped,
		 * and it is read again only once it changes. */
		log_warnx("skipping package %s: %s", path, why[0] != '\0' ?
		    why : strerror(-rc));
		metrics_scan_file(METRICS_SCAN_SKIPPED);
		rc = cache_file_set(s->c, path, &a.f, NULL, 0);
		goto out;
	}
	if (rc >= 0)
		rc = apply(&a, &ks, &new_dbg);
	if (rc >= 0)
		rc = cache_file_set(s->c, path, &a.f, ks.k, ks.n);
	if (rc >= 0) {
		log_debug("indexed package %s (%zu keys)", path, ks.n);
		metrics_scan_file(METRICS_SCAN_INDEXED);
		rc = 1;
	} else {
		log_warnx("cannot index package %s: %s", path, strerror(-rc));
	}
out:
	for (i = 0; i < a.np; i++)
		free(a.p[i].member);
	free(a.p);
	pthread_mutex_destroy(&a.mu);
	pthread_cond_destroy(&a.cv);
	keyset_free(&ks);
	close(fd);
	return rc;
}

static int
to_blob(void *ctx, const void *buf, size_t len)
{
	return cache_blob_write(ctx, buf, len);
}

/*
 * Extract rec's bytes from its package open on afd into *b: from where
 * the member starts, when its record says, else (or when the package
 * cannot be read so: a corrupt xz index) from the package's start, into
 * a new blob.  @return as pkga_extract().
 */
static int
extract(struct scan *s, const struct cache_record *rec, const struct rule *ru,
    int afd, struct cache_blob **b, uint64_t *size, char *why)
{
	uint64_t	unpacked = 0;
	int		rc;

	if (rec->seeklen > 0 && ru->type == PKGA_AUTO) {
		rc = pkga_extract_at(afd, rec->seek, rec->seeklen, rec->size,
		    to_blob, *b, &unpacked, why);
		if (rc == 0) {
			metrics_package_member(METRICS_PKG_SEEK, unpacked);
			log_debug("package %s: sought to %s (%" PRIu64
			    " bytes unpacked)", rec->path, rec->xfile,
			    unpacked);
			*size = rec->size;
			return 0;
		}
		if (rc == -ENOMEM || rc == -ENOSPC)
			return rc;
		log_warnx("package %s: cannot seek to %s (%s): reading the "
		    "package from its start", rec->path, rec->xfile, why);
		cache_blob_abort(*b);
		*b = NULL;
		if ((rc = cache_blob_create(s->c, b)) < 0)
			return rc;
	}
	rc = pkga_extract(afd, rec->path, ru->type, ru->cmd, &s->lim,
	    rec->xfile, to_blob, *b, size, why);
	if (rc == 0)
		metrics_package_member(METRICS_PKG_SEQUENTIAL, 0);
	return rc;
}

int
scan_member_open(struct scan *s, const struct cache_key *key,
    const struct cache_record *rec, int *fd)
{
	struct cache_record	 drec, got;
	struct cache_blob	*b = NULL;
	struct cache_key	 mk;
	struct elfinfo		 ei;
	const struct rule	*ru;
	char			 mbuf[PATH_MAX + 16], why[PKGA_WHY_MAX];
	uint64_t		 size;
	int			 afd, rc;

	*fd = -1;
	if (rec->path == NULL || rec->xfile == NULL ||
	    member_key(&mk, key, rec->xfile, mbuf, sizeof(mbuf)) < 0)
		return -ENOENT;
	/* Extracted before, from the archive as it is now. */
	if (cache_get(s->c, &mk, clock_wall_s(), &got) == 0) {
		rc = got.parent == cache_fingerprint(rec) ?
		    cache_open_data(s->c, &got, fd) : -ESTALE;
		if (rc == 0)	/* for eviction: the copy is in use */
			cache_touch(s->c, &mk, &got, clock_wall_s());
		cache_record_release(&got);
		if (rc == 0)
			return 0;
		cache_drop(s->c, &mk);
	}
	if ((ru = rule_for(s, rec->path)) == NULL)
		return -ESTALE;
	if ((rc = cache_open_external(rec, &afd)) < 0)
		return rc;
	if ((rc = cache_blob_create(s->c, &b)) < 0) {
		close(afd);
		return rc;
	}
	rc = extract(s, rec, ru, afd, &b, &size, why);
	/* Changed while read: not what was indexed. */
	if (rc == 0 && !cache_external_same(rec, afd))
		rc = -ESTALE;
	close(afd);
	if (rc == 0 && size != rec->size)
		rc = -ESTALE;
	/* An ELF member must still be the one its key names. */
	if (rc == 0 && key->kind != CACHE_SOURCE &&
	    (elfinfo_read(cache_blob_fd(b), &ei) < 0 ||
	    ei.buildid_len != key->idlen ||
	    memcmp(ei.buildid, key->id, key->idlen) != 0)) {
		log_warnx("package %s: member %s is not the file indexed",
		    rec->path, rec->xfile);
		rc = -ESTALE;
	}
	if (rc < 0) {
		cache_blob_abort(b);
		if (rc == -ESTALE || rc == -ENOMEM || rc == -ENOSPC)
			return rc;
		log_warnx("package %s: cannot extract %s: %s", rec->path,
		    rec->xfile, why[0] != '\0' ? why : strerror(-rc));
		return -EIO;
	}
	/* The descriptor serves even when the store cannot keep it. */
	if ((*fd = dup(cache_blob_fd(b))) < 0) {
		rc = -errno;
		cache_blob_abort(b);
		return rc;
	}
	memset(&drec, 0, sizeof(drec));
	drec.flags = CACHE_F_DERIVED;
	drec.parent = cache_fingerprint(rec);
	drec.quality = rec->quality;
	drec.last_modified = rec->last_modified;
	drec.stored = clock_wall_s();
	drec.origin = "scan";
	drec.xfile = rec->xfile;
	drec.xarchive = rec->xarchive;	/* dropped with its archive */
	if ((rc = cache_put_blob(s->c, b, &mk, &drec, NULL)) < 0)
		log_warnx("cannot keep %s of %s: %s", rec->xfile, rec->path,
		    strerror(-rc));
	log_debug("extracted %s from %s (%" PRIu64 " bytes)", rec->xfile,
	    rec->path, size);
	return 0;
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
	p->files++;
	ident(st, &now);
	if (!p->force && cache_file_get(p->s->c, path, &old) == 0 &&
	    memcmp(&old, &now, sizeof(old)) == 0) {
		metrics_scan_file(METRICS_SCAN_UNCHANGED);
		return 0;
	}
	p->changed++;
	if (rule_for(p->s, path) != NULL) {
		if (array_grow(&p->todo, &p->captodo, p->ntodo + 1,
		    sizeof(*p->todo)) != 0)
			return -1;
		p->todo[p->ntodo].path = p->seen[p->nseen - 1];
		p->todo[p->ntodo++].size = (uint64_t)st->st_size;
		return 0;
	}
	if (index_file(p->s, path) > 0)
		p->indexed++;
	return 0;
}

static void *
pkg_worker(void *arg)
{
	struct pass		*p = arg;
	const struct rule	*ru;
	const char		*path;
	int			 n;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		path = p->next < p->ntodo ? p->todo[p->next++].path : NULL;
		pthread_mutex_unlock(&p->mu);
		if (path == NULL)
			return NULL;
		if ((ru = rule_for(p->s, path)) == NULL)
			continue;
		n = index_archive(p->s, path, ru);
		pthread_mutex_lock(&p->mu);
		p->indexed += n > 0;
		pthread_mutex_unlock(&p->mu);
	}
}

static int
by_size_desc(const void *a, const void *b)
{
	const struct todo *x = a, *y = b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

/* Read the packages the walk found, one a CPU at once. */
static void
read_packages(struct pass *p)
{
	pthread_t	th[SCAN_PKG_THREADS_MAX];
	long		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t		n, i, started = 0;

	n = ncpu > 1 ? (size_t)ncpu : 1;
	if (n > SCAN_PKG_THREADS_MAX)
		n = SCAN_PKG_THREADS_MAX;
	if (n > p->ntodo)
		n = p->ntodo;
	/* Largest first: the longest one starts at once, the small ones
	 * fill in around it. */
	if (p->ntodo > 1)
		qsort(p->todo, p->ntodo, sizeof(*p->todo), by_size_desc);
	/* This thread is one of them. */
	for (i = 1; i < n; i++)
		if (pthread_create(&th[started], NULL, pkg_worker, p) == 0)
			started++;
	pkg_worker(p);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
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
	struct pass	p;
	size_t		i;
	int		rc = 0;

	memset(&p, 0, sizeof(p));
	p.s = s;
	p.force = force;
	pthread_mutex_init(&p.mu, NULL);
	cur = &p;
	for (i = 0; i < s->dirs.n; i++) {
		int err = 0, was;

		p.files = p.changed = 0;
		errno = 0;
		if (nftw(s->dirs.v[i], walk, 32, FTW_PHYS) != 0)
			err = errno != 0 ? errno : EIO;
		pthread_mutex_lock(&s->mu);
		was = s->dstat[i].err;
		s->dstat[i].files = p.files;
		s->dstat[i].changed = p.changed;
		s->dstat[i].last = clock_wall_s();
		s->dstat[i].err = err;
		pthread_mutex_unlock(&s->mu);
		/* Once per change: a directory still missing at the next
		 * pass is no news. */
		if (err != 0 && err != was)
			log_warnx("scan directory %s: %s (looked for again at "
			    "each pass)", s->dirs.v[i], strerror(err));
		else if (err == 0 && was != 0)
			log_info("scan directory %s: readable again",
			    s->dirs.v[i]);
	}
	cur = NULL;
	read_packages(&p);
	free(p.todo);
	pthread_mutex_destroy(&p.mu);
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

size_t
scan_dirs(struct scan *s, struct scan_dir_info *out, size_t max)
{
	size_t i;

	pthread_mutex_lock(&s->mu);
	for (i = 0; i < s->dirs.n && i < max; i++) {
		out[i].path = s->dirs.v[i];
		out[i].files = s->dstat[i].files;
		out[i].changed = s->dstat[i].changed;
		out[i].last = s->dstat[i].last;
		out[i].err = s->dstat[i].err;
	}
	pthread_mutex_unlock(&s->mu);
	return s->dirs.n;
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
	if (stale->flags & CACHE_F_MEMBER) {
		/* The package changed: read it again (its members may have
		 * other build-ids now, or be gone). */
		const struct rule *ru = rule_for(s, stale->path);

		if (ru == NULL || index_archive(s, stale->path, ru) < 0)
			return ru == NULL ? -ENOENT : -EIO;
		return 0;
	}
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

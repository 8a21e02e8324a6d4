/*
 * cmd_export: `symhub export STORE DIR`, what a store holds written as the
 * tree stock clients read through file:// (debuginfod-find, LLVM's
 * client) and any static web server can serve:
 *
 *   DIR/buildid/ID/debuginfo
 *   DIR/buildid/ID/executable
 *   DIR/buildid/ID/source/ABSOLUTE/PATH
 *   DIR/manifest.tsv   one line a file: id, kind, size, SHA-256, origin,
 *                      source path ("-" for the others)
 *
 * Incremental: a file whose manifest line and size match what the store
 * holds is not written again.  Every byte written is hashed on the way
 * and checked against the store's SHA-256 (blobs are named by it), so a
 * rotten blob is reported, not exported.  Files appear by rename, whole.
 *
 * Files indexed in place (scanned, or members of packages) have no
 * SHA-256 in the store: their copies carry the mtime of the file they
 * came from (a member's: its package's), and a copy of the record's size
 * and mtime whose file is still the one indexed is unchanged, decided
 * without reading a byte.  Members to write are put off until every
 * record was seen, then each package is read once, in archive order,
 * every member wanted from it written as it passes: reading a compressed
 * archive up to each member in turn made an export quadratic.
 *
 * The members of source bundles (symhub upload --sources) are exported
 * as sources too, each that no source record of the store wrote: the
 * record made from a bundle is evictable, the bundle is not.
 *
 * With --source-root, the sources a debuginfo names that lie under a
 * root are exported too, as symhubd --source-root serves them (the name
 * canonical and under a root, and so its real path, a regular file):
 * read from the debuginfo's exported copy once every record was
 * written, so that the tree carries them across an air gap.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/hex.h"
#include "base/strmap.h"
#include "cache/cache.h"
#include "cli.h"
#include "cmd_export.h"
#include "common/elfinfo.h"
#include "common/kind.h"
#include "common/pkgarchive.h"
#include "common/srcbundle.h"
#include "manifest.h"
#include "text.h"

/* One line of the manifest, old or new. */
struct mline {
	char		*id, *kind, *origin, *path;	/* path "-": none */
	uint64_t	 size;
	char		 sha[65];
	size_t		 seq;		/* a new line: its record's place */
	int		 seen;		/* written or unchanged this time */
};

/*
 * A package member to write, put off until its package is read.  rec is
 * the record's identity, its path and xfile pointing at pkg and member,
 * its other strings NULL.
 */
struct pending {
	char			*id, *src, *origin, *dest, *pkg, *member;
	const char		*kind;		/* static */
	struct cache_record	 rec;
	size_t			 seq;		/* the record's place in the store */
	size_t			 next;		/* the next one wanting the same
						 * member (SIZE_MAX: none) */
	int			 done;
};

struct export {
	struct cache	*c;
	const char	*dir;
	int		 kinds;		/* bits (1 << kind) to export */
	const char	*origin;	/* NULL: any */
	int		 private;	/* --private: private uploads too */
	const char	*buildid;	/* NULL: any */
	int64_t		 since;		/* stored at or after; 0: any */
	int		 quiet;
	char		**roots;	/* --source-root, real paths */
	size_t		 nroots;
	struct mline	*m;		/* the manifest: old lines, then new */
	size_t		 nm, capm;
	size_t		 nold;		/* lines of the old manifest */
	struct strmap	 index;		/* "id\tkind\tpath" -> index in m */
	struct pending	*p;		/* members to write */
	size_t		 np, capp;
	size_t		 seq;		/* records seen */
	uint64_t	 written, unchanged, failed, stale, bytes, badlines;
	uint64_t	 private_skipped;	/* left out: not --private */
};

/* The index key of a line: its identity, tabs between (no field has
 * one).  @return 0 or -ENAMETOOLONG. */
static int
mkey(char *buf, size_t len, const char *id, const char *kind,
    const char *path)
{
	int n = snprintf(buf, len, "%s\t%s\t%s", id, kind, path);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static struct mline *
mfind(struct export *x, const char *id, const char *kind, const char *path)
{
	char	key[MANIFEST_LINE_MAX];
	size_t	i;

	if (mkey(key, sizeof(key), id, kind, path) != 0 ||
	    !strmap_get(&x->index, key, &i))
		return NULL;
	return &x->m[i];
}

static struct mline *
madd(struct export *x, const char *id, const char *kind, const char *path,
    const char *origin, size_t seq)
{
	struct mline	*l;
	char		 key[MANIFEST_LINE_MAX];

	if (mkey(key, sizeof(key), id, kind, path) != 0 ||
	    array_grow(&x->m, &x->capm, x->nm + 1, sizeof(*x->m)) != 0)
		return NULL;
	l = &x->m[x->nm];
	memset(l, 0, sizeof(*l));
	l->seq = seq;
	if ((l->id = strdup(id)) == NULL || (l->kind = strdup(kind)) == NULL ||
	    (l->path = strdup(path)) == NULL ||
	    (l->origin = strdup(origin)) == NULL ||
	    strmap_put(&x->index, key, x->nm) != 0) {
		free(l->id);
		free(l->kind);
		free(l->path);
		free(l->origin);
		return NULL;
	}
	x->nm++;
	return l;
}

static int
load_line(void *ctx, const struct manifest_line *ml)
{
	struct export	*x = ctx;
	struct mline	*l;

	if ((l = mfind(x, ml->idhex, ml->kindname, ml->path)) == NULL &&
	    (l = madd(x, ml->idhex, ml->kindname, ml->path,
	    ml->origin, 0)) == NULL)
		return -ENOMEM;
	l->size = ml->size;
	memcpy(l->sha, ml->sha, sizeof(l->sha));
	return 0;
}

static void
load_bad(void *ctx, unsigned long lineno, const char *line, const char *why)
{
	struct export *x = ctx;

	(void)lineno;
	(void)line;
	(void)why;
	x->badlines++;		/* dropped: its file is written again */
}

/* The previous export's manifest, if any: what need not be written. */
static int
load_manifest(struct export *x)
{
	char	 path[PATH_MAX];
	FILE	*fp;
	int	 rc;

	snprintf(path, sizeof(path), "%s/%s", x->dir, MANIFEST_NAME);
	if ((fp = fopen(path, "r")) == NULL)
		return errno == ENOENT ? 0 : -errno;
	rc = manifest_read(fp, load_line, load_bad, x);
	fclose(fp);
	x->nold = x->nm;
	if (x->badlines > 0)
		fprintf(stderr, "symhub export: %" PRIu64 " line(s) of the "
		    "old %s not understood, dropped\n", x->badlines, path);
	return rc;
}

static int
byseq(const void *a, const void *b)
{
	const struct mline *la = a, *lb = b;

	return la->seq < lb->seq ? -1 : la->seq > lb->seq;
}

/* Write DIR/manifest.tsv: the old lines, then the new ones in the
 * store's order (members are written later than the rest, package by
 * package).  x->index is stale after it. */
static int
save_manifest(struct export *x)
{
	char	 path[PATH_MAX], tmp[PATH_MAX];
	FILE	*fp;
	size_t	 i;
	int	 rc = 0;

	snprintf(path, sizeof(path), "%s/%s", x->dir, MANIFEST_NAME);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", x->dir, MANIFEST_NAME,
	    (long)getpid());
	if ((fp = fopen(tmp, "w")) == NULL)
		return -errno;
	if (x->nm > x->nold)
		qsort(x->m + x->nold, x->nm - x->nold, sizeof(*x->m), byseq);
	fprintf(fp, "# symhub export 1: id, kind, size, sha256, origin, "
	    "source path\n");
	/* Lines of files no longer exported stay while the file does: an
	 * export adds, it never deletes. */
	for (i = 0; i < x->nm; i++)
		manifest_write(fp, x->m[i].id, x->m[i].kind, x->m[i].size,
		    x->m[i].sha, x->m[i].origin, x->m[i].path);
	if (fflush(fp) != 0 || fsync(fileno(fp)) != 0)
		rc = -errno;
	if (fclose(fp) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

struct fidctx {
	FILE		*fp;
	struct strmap	 ids;		/* build-ids in the manifest */
	struct strmap	 seen;		/* FileIDs written */
	uint64_t	 n;
};

static int
fid_write(struct fidctx *f, const char *fh, const char *ih)
{
	size_t v;

	if (!strmap_get(&f->ids, ih, &v) || strmap_get(&f->seen, fh, &v))
		return 0;
	if (strmap_put(&f->seen, fh, 0) != 0)
		return -ENOMEM;
	fprintf(f->fp, "%s\t%s\n", fh, ih);
	f->n++;
	return 0;
}

static int
fid_one(void *ctx, const unsigned char fid[CACHE_FILEID_LEN],
    const unsigned char *id, size_t idlen)
{
	char fh[2 * CACHE_FILEID_LEN + 1], ih[2 * CACHE_ID_MAX + 1];

	hex_encode(fid, CACHE_FILEID_LEN, fh);
	hex_encode(id, idlen, ih);
	return fid_write(ctx, fh, ih);
}

static void
fid_dropped(void *ctx, unsigned long lineno, const char *line,
    const char *why)
{
	(void)ctx;
	(void)lineno;
	(void)line;
	(void)why;
}

/*
 * DIR/fileids.tsv: the FileID map of every build-id in the manifest, the
 * store's first, then what an earlier export wrote (an export adds, it
 * never deletes).  @return 0 or -errno.
 */
static int
save_fileids(struct export *x)
{
	struct fidctx	 f;
	char		 path[PATH_MAX], tmp[PATH_MAX];
	size_t		 i;
	FILE		*old;
	int		 rc = 0;

	memset(&f, 0, sizeof(f));
	for (i = 0; rc == 0 && i < x->nm; i++)
		rc = strmap_put(&f.ids, x->m[i].id, 0);
	snprintf(path, sizeof(path), "%s/%s", x->dir, MANIFEST_FILEIDS);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", x->dir, MANIFEST_FILEIDS,
	    (long)getpid());
	if (rc == 0 && (f.fp = fopen(tmp, "w")) == NULL)
		rc = -errno;
	if (rc == 0) {
		fprintf(f.fp, "# symhub export 1: FileID, build-id\n");
		rc = cache_fileid_foreach(x->c, fid_one, &f);
	}
	if (rc == 0 && (old = fopen(path, "r")) != NULL) {
		/* Lines not ours are dropped. */
		rc = manifest_fileids_read(old, fid_one, fid_dropped, &f);
		fclose(old);
	}
	if (f.fp != NULL) {
		if (rc == 0 && (fflush(f.fp) != 0 || fsync(fileno(f.fp)) != 0))
			rc = -errno;
		if (fclose(f.fp) != 0 && rc == 0)
			rc = -errno;
		if (rc == 0 && rename(tmp, path) != 0)
			rc = -errno;
		if (rc != 0)
			unlink(tmp);
	}
	if (rc == 0 && f.n > 0 && !x->quiet)
		printf("%" PRIu64 " FileID mapping(s) in %s\n", f.n, path);
	strmap_free(&f.ids);
	strmap_free(&f.seen);
	return rc;
}

/*
 * Read fd from its start, hashing it, and write what was read to out
 * unless out is -1.  @return 0 with sha (hex) and *size set, or -errno.
 */
static int
hash_copy(int fd, int out, char sha[65], uint64_t *size)
{
	unsigned char	 buf[65536], md[32];
	EVP_MD_CTX	*ctx;
	ssize_t		 n = 0;
	off_t		 off = 0;
	int		 rc = 0;

	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		rc = -ENOMEM;
	while (rc == 0 && (n = pread(fd, buf, sizeof(buf), off)) > 0) {
		if (out >= 0 && write(out, buf, (size_t)n) != n)
			rc = errno ? -errno : -EIO;
		else if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
			rc = -ENOMEM;
		off += n;
	}
	if (rc == 0 && n < 0)
		rc = -errno;
	if (rc == 0 && EVP_DigestFinal_ex(ctx, md, NULL) != 1)
		rc = -ENOMEM;
	EVP_MD_CTX_free(ctx);
	if (rc == 0)
		hex_encode(md, sizeof(md), sha);
	*size = (uint64_t)off;
	return rc;
}

/* The times to give a copy: mtime_ns as its mtime, its atime left. */
static void
times_of(int64_t mtime_ns, struct timespec ts[2])
{
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_sec = mtime_ns / 1000000000;
	ts[1].tv_nsec = mtime_ns % 1000000000;
}

/*
 * Copy fd to path by way of a temporary file, hashing what is written,
 * the copy's mtime mtime_ns (-1: the time of writing).
 * @return 0 with sha (hex) set; -EBADMSG when want (hex, or NULL) does
 *         not match (nothing is left behind); -errno.
 */
static int
copy_out(int fd, const char *path, const char *want, int64_t mtime_ns,
    char sha[65], uint64_t *size)
{
	struct timespec	ts[2];
	char		tmp[PATH_MAX];
	int		out, rc;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if ((out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0)
		return -errno;
	rc = hash_copy(fd, out, sha, size);
	if (rc == 0 && mtime_ns >= 0) {
		times_of(mtime_ns, ts);
		if (futimens(out, ts) != 0)
			rc = -errno;
	}
	if (close(out) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && want != NULL && strcmp(want, sha) != 0)
		rc = -EBADMSG;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

/* Does the exported copy at path still have l's size? */
static int
copy_there(const char *path, const struct mline *l)
{
	struct stat st;

	return l != NULL && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size == l->size;
}

/*
 * Is the copy at path of rec (CACHE_F_EXTERNAL) unchanged, as far as the
 * record tells without reading a byte: l's size, which is rec's, and the
 * mtime of the file it was written from, which is still the one indexed?
 * (The identity the hub trusts to serve that file unread.)
 */
static int
copy_is(const char *path, const struct mline *l,
    const struct cache_record *rec)
{
	struct stat st;

	return l != NULL && l->size == rec->size && stat(path, &st) == 0 &&
	    S_ISREG(st.st_mode) && (uint64_t)st.st_size == l->size &&
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec ==
	    rec->mtime_ns && cache_external_same(rec, -1);
}

/* A copy found unchanged by its bytes (one an earlier symhub wrote) takes
 * its source's mtime, so that the next export need not read them.  A
 * failure costs only that reading. */
static void
stamp(const char *path, int64_t mtime_ns)
{
	struct timespec ts[2];

	times_of(mtime_ns, ts);
	(void)utimensat(AT_FDCWD, path, ts, 0);
}

/* A source path the manifest can carry and DIR can hold: absolute,
 * canonical, no control byte (as import requires). */
static int
safe_path(const char *p)
{
	char	buf[PATH_MAX];

	return p[0] == '/' && strlen(p) < sizeof(buf) &&
	    !text_has_control(p) &&
	    webapi_canon_path(p, buf) == 0 && strcmp(buf, p) == 0 &&
	    strcmp(p, "/") != 0;
}

/* The record's origin as the manifest can carry it and import takes it:
 * at most MANIFEST_ORIGIN_MAX bytes, '?' for each byte that is not
 * printable (no origin symhubd makes has one; a bucket's metadata
 * might). */
static void
origin_of(const struct cache_record *rec, char *out, size_t len)
{
	if (len > MANIFEST_ORIGIN_MAX + 1)
		len = MANIFEST_ORIGIN_MAX + 1;
	snprintf(out, len, "%s", rec->origin != NULL && *rec->origin != '\0' ?
	    rec->origin : "-");
	text_sanitize(out);	/* a cut UTF-8 sequence too */
}

/*
 * The store's data of rec, open.  A scanned source rewritten in place is
 * what is there now, as the hub serves it.  A scanned ELF file (or
 * package) that changed: the hub reads it again (its build-id may
 * differ), there is nothing to export (-ESTALE).  Not for a member.
 */
static int
open_data(struct export *x, const struct cache_key *key,
    const struct cache_record *rec, int *fd)
{
	struct stat	st;
	int		rc;

	rc = cache_open_data(x->c, rec, fd);
	if (rc == -ESTALE && key->kind == CACHE_SOURCE && rec->path != NULL &&
	    (*fd = open(rec->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
		if (fstat(*fd, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
		close(*fd);
	}
	return rc;
}

/* The line's origin is the store's (the same bytes may have come again
 * from elsewhere).  @return 0 or -ENOMEM. */
static int
set_origin(struct mline *l, const char *origin)
{
	char *o;

	if (strcmp(l->origin, origin) == 0)
		return 0;
	if ((o = strdup(origin)) == NULL)
		return -ENOMEM;
	free(l->origin);
	l->origin = o;
	return 0;
}

static int
unchanged(struct export *x, struct mline *l, const char *origin)
{
	x->unchanged++;
	l->seen = 1;
	return set_origin(l, origin);
}

static void
stale(struct export *x, const char *kind, const char *id, const char *src)
{
	if (!x->quiet)
		printf("skipped  %-10s %s  %s  changed since it was "
		    "indexed\n", kind, id, src);
	x->stale++;
}

static void
failed(struct export *x, const char *kind, const char *id, const char *src,
    int rc)
{
	fprintf(stderr, "failed   %-10s %s  %s  %s\n", kind, id, src,
	    rc == -EBADMSG ? "its bytes do not match their SHA-256 "
	    "(run symhub store verify)" : strerror(-rc));
	x->failed++;
}

/* A file written: its manifest line (l, or a new one at seq).
 * @return 0 or -ENOMEM. */
static int
wrote(struct export *x, struct mline *l, const char *id, const char *kind,
    const char *src, const char *origin, size_t seq, const char sha[65],
    uint64_t size)
{
	if (l == NULL && (l = madd(x, id, kind, src, origin, seq)) == NULL)
		return -ENOMEM;
	l->size = size;
	memcpy(l->sha, sha, 65);
	l->seen = 1;
	x->written++;
	x->bytes += size;
	if (!x->quiet)
		printf("written  %-10s %s  %s\n", kind, id, src);
	return set_origin(l, origin);
}

static void
pending_free(struct pending *p)
{
	free(p->id);
	free(p->src);
	free(p->origin);
	free(p->dest);
	free(p->pkg);
	free(p->member);
}

/* Put off writing member rec until its package is read.
 * @return 0 or -ENOMEM. */
static int
defer(struct export *x, const struct cache_record *rec, const char *id,
    const char *kind, const char *src, const char *dest, const char *origin)
{
	struct pending *p;

	if (array_grow(&x->p, &x->capp, x->np + 1, sizeof(*x->p)) != 0)
		return -ENOMEM;
	p = &x->p[x->np];
	memset(p, 0, sizeof(*p));
	if ((p->id = strdup(id)) == NULL || (p->src = strdup(src)) == NULL ||
	    (p->origin = strdup(origin)) == NULL ||
	    (p->dest = strdup(dest)) == NULL ||
	    (p->pkg = strdup(rec->path)) == NULL ||
	    (p->member = strdup(rec->xfile)) == NULL) {
		pending_free(p);
		return -ENOMEM;
	}
	p->kind = kind;
	p->rec = *rec;
	p->rec.path = p->pkg;
	p->rec.xfile = p->member;
	p->rec.origin = p->rec.xarchive = p->rec.ximasig = NULL;
	p->rec.mem = NULL;
	p->seq = x->seq;
	x->np++;
	return 0;
}

static int
one(void *ctx, const struct cache_key *key, const struct cache_record *rec)
{
	struct export	*x = ctx;
	struct mline	*l;
	struct stat	 st;
	const char	*kind = kind_name(key->kind), *src = "-", *want = NULL;
	char		 id[2 * CACHE_ID_MAX + 1], digest[65], sha[65];
	char		 path[PATH_MAX], origin[256];
	uint64_t	 size;
	int64_t		 mtime = -1;
	int		 fd, rc, n;

	if (!(x->kinds & (1 << key->kind)) || key->idlen == 0)
		return 0;
	hex_encode(key->id, key->idlen, id);
	if ((x->buildid != NULL && strcmp(x->buildid, id) != 0) ||
	    (x->origin != NULL &&
	    !manifest_origin_is(rec->origin, x->origin)) ||
	    (x->since > 0 && rec->stored < x->since))
		return 0;
	/* A tenant's private upload leaves the store only when asked. */
	if ((rec->flags & CACHE_F_PRIVATE) && !x->private) {
		x->private_skipped++;
		return 0;
	}
	x->seq++;
	if (key->kind == CACHE_SOURCE) {
		if (key->extra == NULL || !safe_path(key->extra)) {
			fprintf(stderr, "failed   source     %s  %s  not a "
			    "canonical absolute path without tab or "
			    "newline\n", id, key->extra ? key->extra : "?");
			x->failed++;
			return 0;
		}
		src = key->extra;
		n = snprintf(path, sizeof(path), "%s/buildid/%s/source%s",
		    x->dir, id, src);
	} else {
		n = snprintf(path, sizeof(path), "%s/buildid/%s/%s", x->dir,
		    id, kind);
	}
	if (n < 0 || (size_t)n >= sizeof(path)) {
		failed(x, kind, id, src, -ENAMETOOLONG);
		return 0;
	}
	origin_of(rec, origin, sizeof(origin));
	l = mfind(x, id, kind, src);
	/*
	 * Unchanged since the last export: the same hash and the same file
	 * there.  A blob's hash is its name, so nothing is read; a file in
	 * place is unchanged by its record (copy_is()), else hashed when
	 * the old copy could be it (the member of a package: later, when
	 * the package is read).
	 */
	if (!(rec->flags & CACHE_F_EXTERNAL)) {
		hex_encode(rec->digest, sizeof(rec->digest), digest);
		want = digest;
		if (copy_there(path, l) && l->size == rec->size &&
		    strcmp(l->sha, want) == 0)
			return unchanged(x, l, origin);
	} else if (copy_is(path, l, rec)) {
		return unchanged(x, l, origin);
	} else if (rec->flags & CACHE_F_MEMBER) {
		if (rec->path == NULL || rec->xfile == NULL) {
			stale(x, kind, id, src);
			return 0;
		}
		return defer(x, rec, id, kind, src, path, origin);
	}
	if ((rc = open_data(x, key, rec, &fd)) == -ESTALE) {
		stale(x, kind, id, src);
		return 0;
	}
	if (rc == 0 && want == NULL) {
		/* A copy carries its source's mtime (that of the file read
		 * now, for a source rewritten in place). */
		if (fstat(fd, &st) != 0)
			st.st_size = -1;
		else
			mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 +
			    st.st_mtim.tv_nsec;
		if (copy_there(path, l) && st.st_size >= 0 &&
		    (uint64_t)st.st_size == l->size &&
		    hash_copy(fd, -1, sha, &size) == 0 &&
		    strcmp(l->sha, sha) == 0) {
			close(fd);
			if (mtime >= 0)
				stamp(path, mtime);
			return unchanged(x, l, origin);
		}
	}
	if (rc == 0) {
		if ((rc = fs_mkdir_p(path, 1)) == 0)
			rc = copy_out(fd, path, want, mtime, sha, &size);
		close(fd);
	}
	if (rc != 0) {
		failed(x, kind, id, src, rc);
		return 0;
	}
	return wrote(x, l, id, kind, src, origin, x->seq, sha, size);
}

/* One package being read for the members wanted from it. */
struct pkgread {
	struct export	*x;
	struct pending	*p;		/* those of one package, by seq */
	struct strmap	 names;		/* member -> first in p wanting it */
	size_t		 left;		/* members not yet seen */
	int		 afd;		/* the package */
};

/*
 * Member bytes extracted into fd (got of them) for p: unchanged when the
 * copy there has the manifest's SHA-256 (one an earlier symhub wrote),
 * else written.  @return 0 or -ENOMEM.
 */
static int
give(struct export *x, struct pending *p, int fd, uint64_t got, int afd)
{
	struct mline	*l;
	char		 sha[65];
	uint64_t	 size;
	int		 rc;

	/* Not what was indexed, or the package rewritten while read. */
	if (got != p->rec.size || !cache_external_same(&p->rec, afd)) {
		stale(x, p->kind, p->id, p->src);
		return 0;
	}
	l = mfind(x, p->id, p->kind, p->src);
	if (copy_there(p->dest, l) && hash_copy(fd, -1, sha, &size) == 0 &&
	    strcmp(l->sha, sha) == 0) {
		stamp(p->dest, p->rec.mtime_ns);
		return unchanged(x, l, p->origin);
	}
	if ((rc = fs_mkdir_p(p->dest, 1)) == 0)
		rc = copy_out(fd, p->dest, NULL, p->rec.mtime_ns, sha, &size);
	if (rc != 0) {
		failed(x, p->kind, p->id, p->src, rc);
		return 0;
	}
	return wrote(x, l, p->id, p->kind, p->src, p->origin, p->seq, sha,
	    size);
}

/* A member the package could not give: its error, said as before the
 * packages were read once (the member's own line, then why). */
static void
not_given(struct export *x, struct pending *p, int rc, const char *why)
{
	if (rc == -ESTALE) {
		stale(x, p->kind, p->id, p->src);
		return;
	}
	fprintf(stderr, "symhub export: %s in %s: %s\n", p->member, p->pkg,
	    why[0] != '\0' ? why : rc >= 0 ? "no such member" :
	    strerror(-rc));
	failed(x, p->kind, p->id, p->src, rc == -ENOMEM || rc == -ENOSPC ?
	    rc : -EIO);
}

/* pkga_walk()'s fn: a member wanted is extracted once, into an unnamed
 * file under DIR, for every record that wants it. */
static int
member_fn(void *ctx, const char *name, uint64_t size, struct pkga_member *m)
{
	struct pkgread	*r = ctx;
	struct export	*x = r->x;
	unsigned char	 buf[65536];
	uint64_t	 got = 0;
	ssize_t		 n = 0;
	size_t		 i, j;
	int		 fd, rc = 0;

	(void)size;
	/* A name met again: the first was the one (as the hub reads it). */
	if (!strmap_get(&r->names, name, &i) || r->p[i].done)
		return 0;
	if ((fd = open(x->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) < 0)
		rc = -errno;
	while (rc == 0 && (n = pkga_read(m, buf, sizeof(buf))) > 0) {
		rc = fs_write_all(fd, buf, (size_t)n);
		got += (uint64_t)n;
	}
	if (n < 0) {
		/* The archive is corrupt (or a bomb): the walk ends. */
		close(fd);
		return (int)n;
	}
	for (j = i; j != SIZE_MAX; j = r->p[j].next) {
		r->p[j].done = 1;
		if (rc != 0)
			not_given(x, &r->p[j], rc, "");
		else if (give(x, &r->p[j], fd, got, r->afd) != 0)
			rc = -ENOMEM;
	}
	if (fd >= 0)
		close(fd);
	if (rc == -ENOMEM)
		return rc;
	return --r->left == 0 ? 1 : 0;
}

static void
refused_ignore(void *ctx, const char *name, const char *why)
{
	(void)ctx;
	(void)name;
	(void)why;
}

/*
 * Read the package of p[0..n) (one package, one identity) once, in
 * archive order, writing each member as it passes; stop after the last
 * one wanted.  The hub reads a package an -Z command unpacks through that
 * command; here libarchive reads it alone, which serves every format it
 * knows.  @return 0 or -ENOMEM.
 */
static int
read_package(struct export *x, struct pending *p, size_t n)
{
	struct pkga_limits	 lim = { 0, PKGA_RATIO_DEFAULT };
	struct pkgread		 r;
	char			 why[PKGA_WHY_MAX];
	size_t			 i, first;
	int			 rc;

	memset(&r, 0, sizeof(r));
	r.x = x;
	r.p = p;
	why[0] = '\0';
	/* Chains of the records wanting one member, in the store's order
	 * (a member can be the debuginfo and the executable of one id, a
	 * source of many). */
	rc = 0;
	for (i = n; rc == 0 && i-- > 0; ) {
		p[i].next = SIZE_MAX;
		if (strmap_get(&r.names, p[i].member, &first))
			p[i].next = first;
		else
			r.left++;
		rc = strmap_put(&r.names, p[i].member, i);
	}
	if (rc == 0 && (rc = cache_open_external(&p[0].rec, &r.afd)) == 0) {
		rc = pkga_walk(r.afd, p[0].pkg, PKGA_AUTO, NULL, &lim,
		    member_fn, refused_ignore, &r, why);
		close(r.afd);
	} else if (rc != -ENOMEM && rc != -ESTALE) {
		/* The package cannot be opened: said once, not per member. */
		fprintf(stderr, "symhub export: %s: %s\n", p[0].pkg,
		    strerror(-rc));
		for (i = 0; i < n; i++) {
			failed(x, p[i].kind, p[i].id, p[i].src, rc);
			p[i].done = 1;
		}
		rc = 0;
	}
	for (i = 0; i < n && rc != -ENOMEM; i++)
		if (!p[i].done)
			not_given(x, &p[i], rc, why);
	strmap_free(&r.names);
	return rc == -ENOMEM ? rc : 0;
}

static int
cmp64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* By package (its path, then its identity), then in the store's order. */
static int
bypackage(const void *a, const void *b)
{
	const struct pending	*pa = a, *pb = b;
	int			 c;

	if ((c = strcmp(pa->pkg, pb->pkg)) != 0 ||
	    (c = cmp64(pa->rec.dev, pb->rec.dev)) != 0 ||
	    (c = cmp64(pa->rec.ino, pb->rec.ino)) != 0 ||
	    (c = cmp64((uint64_t)pa->rec.mtime_ns,
	    (uint64_t)pb->rec.mtime_ns)) != 0 ||
	    (c = cmp64(pa->rec.parent, pb->rec.parent)) != 0)
		return c;
	return cmp64(pa->seq, pb->seq);
}

static int
same_package(const struct pending *a, const struct pending *b)
{
	return strcmp(a->pkg, b->pkg) == 0 && a->rec.dev == b->rec.dev &&
	    a->rec.ino == b->rec.ino && a->rec.mtime_ns == b->rec.mtime_ns &&
	    a->rec.parent == b->rec.parent;
}

/* The members put off, package by package.  @return 0 or -ENOMEM. */
static int
write_members(struct export *x)
{
	size_t	i, j;
	int	rc = 0;

	if (x->np > 0)
		qsort(x->p, x->np, sizeof(*x->p), bypackage);
	for (i = 0; rc == 0 && i < x->np; i = j) {
		for (j = i + 1; j < x->np && same_package(&x->p[i], &x->p[j]);
		    j++)
			;
		rc = read_package(x, &x->p[i], j - i);
	}
	return rc;
}

/* Is path under one of the roots (as symhubd's under_root())? */
static int
under_root(const struct export *x, const char *path)
{
	size_t	i, n;

	for (i = 0; i < x->nroots; i++) {
		n = strlen(x->roots[i]);
		if (strncmp(path, x->roots[i], n) == 0 &&
		    (path[n] == '/' || (n > 0 && x->roots[i][n - 1] == '/')))
			return 1;
	}
	return 0;
}

struct rootsrc {
	struct export	*x;
	const char	*id;
};

/* A source a debuginfo names: exported when under a root.  @return 0 or
 * -ENOMEM. */
static int
root_source(void *ctx, const char *name)
{
	struct rootsrc	*rs = ctx;
	struct export	*x = rs->x;
	struct mline	*l;
	struct stat	 st;
	char		 canon[PATH_MAX], path[PATH_MAX], sha[65];
	char		*real = NULL;
	uint64_t	 size;
	int64_t		 mtime;
	int		 fd = -1, n, rc = 0;

	if (name[0] != '/' || strlen(name) >= sizeof(canon) ||
	    webapi_canon_path(name, canon) < 0 || !safe_path(canon) ||
	    !under_root(x, canon))
		return 0;
	l = mfind(x, rs->id, "source", canon);
	if (l != NULL && l->seen)
		return 0;	/* the store's, or named twice */
	if ((real = realpath(canon, NULL)) == NULL || !under_root(x, real) ||
	    (fd = open(real, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	n = snprintf(path, sizeof(path), "%s/buildid/%s/source%s", x->dir,
	    rs->id, canon);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		failed(x, "source", rs->id, canon, -ENAMETOOLONG);
		goto out;
	}
	mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (copy_there(path, l) && (uint64_t)st.st_size == l->size &&
	    hash_copy(fd, -1, sha, &size) == 0 && strcmp(l->sha, sha) == 0) {
		stamp(path, mtime);
		rc = unchanged(x, l, "scan");
		goto out;
	}
	if (lseek(fd, 0, SEEK_SET) != 0 ||
	    (rc = fs_mkdir_p(path, 1)) != 0 ||
	    (rc = copy_out(fd, path, NULL, mtime, sha, &size)) != 0) {
		failed(x, "source", rs->id, canon, rc != 0 ? rc : -errno);
		rc = 0;
		goto out;
	}
	rc = wrote(x, l, rs->id, "source", canon, "scan", ++x->seq, sha,
	    size);
out:
	if (fd >= 0)
		close(fd);
	free(real);
	return rc == -ENOMEM ? rc : 0;
}

/*
 * The sources under the roots of every debuginfo exported this time,
 * read from its copy in DIR.  @return 0 or -ENOMEM.
 */
static int
write_root_sources(struct export *x)
{
	struct rootsrc	 rs;
	char		 path[PATH_MAX], id[2 * CACHE_ID_MAX + 1];
	size_t		 i, n = x->nm;
	int		 fd, rc = 0;

	for (i = 0; rc != -ENOMEM && i < n; i++) {
		if (!x->m[i].seen || strcmp(x->m[i].kind, "debuginfo") != 0)
			continue;
		/* x->m may move as sources are added. */
		snprintf(id, sizeof(id), "%s", x->m[i].id);
		snprintf(path, sizeof(path), "%s/buildid/%s/debuginfo", x->dir,
		    id);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			failed(x, "debuginfo", id, "-", -errno);
			continue;
		}
		rs.x = x;
		rs.id = id;
		rc = elfinfo_sources(fd, root_source, &rs);
		close(fd);
		if (rc < 0 && rc != -ENOMEM) {
			fprintf(stderr, "symhub export: %s: the sources it "
			    "names: %s\n", path, strerror(-rc));
			x->failed++;
		}
	}
	return rc == -ENOMEM ? rc : 0;
}

struct bundlesrc {
	struct export	*x;
	const char	*id, *origin;
	int64_t		 mtime;		/* ns: the bundle's */
};

/* A member of a bundle: exported unless a record of the store was.
 * @return 0 or -ENOMEM. */
static int
bundle_source(void *ctx, const char *name, int64_t mtime, const void *data,
    size_t len)
{
	struct bundlesrc *bs = ctx;
	struct export	*x = bs->x;
	struct mline	*l;
	char		 path[PATH_MAX], sha[65];
	uint64_t	 size;
	int64_t		 ns;
	int		 fd, n, rc = 0;

	if (!safe_path(name))
		return 0;
	/* The file's own mtime, as the hub serves it (never later than
	 * the bundle: a debugger warns of a source newer than its build). */
	ns = mtime > 0 && mtime * 1000000000 < bs->mtime ?
	    mtime * 1000000000 : bs->mtime;
	l = mfind(x, bs->id, "source", name);
	if (l != NULL && l->seen)
		return 0;	/* the store's record was written */
	n = snprintf(path, sizeof(path), "%s/buildid/%s/source%s", x->dir,
	    bs->id, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		failed(x, "source", bs->id, name, -ENAMETOOLONG);
		return 0;
	}
	if ((fd = memfd_create("symhub-export", MFD_CLOEXEC)) < 0 ||
	    (len > 0 && write(fd, data, len) != (ssize_t)len)) {
		rc = -errno;
		failed(x, "source", bs->id, name, rc);
		rc = 0;
		goto out;
	}
	if (copy_there(path, l) && (uint64_t)len == l->size &&
	    hash_copy(fd, -1, sha, &size) == 0 && strcmp(l->sha, sha) == 0) {
		stamp(path, ns);
		rc = unchanged(x, l, bs->origin);
		goto out;
	}
	if ((rc = fs_mkdir_p(path, 1)) != 0 ||
	    (rc = copy_out(fd, path, NULL, ns, sha, &size)) != 0) {
		failed(x, "source", bs->id, name, rc);
		rc = 0;
		goto out;
	}
	rc = wrote(x, l, bs->id, "source", name, bs->origin, ++x->seq, sha,
	    size);
out:
	if (fd >= 0)
		close(fd);
	return rc == -ENOMEM ? rc : 0;
}

static int
one_bundle(void *ctx, const struct cache_key *key,
    const struct cache_record *rec)
{
	/* The store took it bounded; these keep a damaged one in check. */
	static const struct srcbundle_limits lim = { (uint64_t)1 << 40,
	    (uint64_t)1 << 24 };
	struct export	*x = ctx;
	struct bundlesrc bs;
	char		 id[2 * CACHE_ID_MAX + 1], why[SRCBUNDLE_WHY_MAX];
	int		 fd, rc;

	hex_encode(key->id, key->idlen, id);
	if ((x->buildid != NULL && strcmp(x->buildid, id) != 0) ||
	    (x->origin != NULL &&
	    !manifest_origin_is(rec->origin, x->origin)) ||
	    (x->since > 0 && rec->stored < x->since))
		return 0;
	if ((rc = cache_open_data(x->c, rec, &fd)) < 0) {
		failed(x, "sources", id, "-", rc);
		return 0;
	}
	bs.x = x;
	bs.id = id;
	bs.origin = rec->origin != NULL ? rec->origin : "bundle";
	bs.mtime = rec->stored * 1000000000;
	rc = srcbundle_read_fd(fd, &lim, bundle_source, &bs, why);
	close(fd);
	if (rc < 0 && rc != -ENOMEM) {
		fprintf(stderr, "failed   %-10s %s  -  %s\n", "sources", id,
		    why[0] != '\0' ? why : strerror(-rc));
		x->failed++;
		rc = 0;
	}
	return rc;
}

static const char help[] =
"usage: symhub export [OPTION...] STORE DIR\n"
"Write what the store STORE holds (a symhubd --store; it may be running)\n"
"into DIR as DIR/buildid/ID/{debuginfo,executable,source/PATH} and\n"
"DIR/manifest.tsv (and the FileID map, DIR/fileids.tsv), the tree\n"
"debuginfod clients read with\n"
"DEBUGINFOD_URLS=file://DIR.  Again into the same DIR, only what changed\n"
"is written.\n"
"\n"
"  -k, --kind KIND      debuginfo, executable or source (repeatable;\n"
"                       default: all three)\n"
"      --origin ORIGIN  only what came from ORIGIN (scan, upload, or an\n"
"                       upstream's name)\n"
"  -b, --build-id ID    only this build-id\n"
"      --max-age SECS   only what was stored in the last SECS seconds\n"
"      --source-root DIR  also the sources each exported debuginfo names\n"
"                       under DIR, as symhubd --source-root serves them\n"
"                       (repeatable)\n"
"      --private        also the private uploads (symhubd(8), ACCESS),\n"
"                       left out otherwise\n"
"  -q, --quiet          print only failures and the summary\n"
"  -h, --help           this text\n"
"\n"
"Exit status: 0 when everything selected was exported, 1 when something\n"
"could not be (a rotten blob, a write error), 2 for usage.\n";

/* A --source-root, by its real path (as symhubd resolves its roots).
 * @return 0, or the exit status. */
static int
add_root(struct export *x, const char *dir)
{
	char	*real, **v;

	if ((real = realpath(dir, NULL)) == NULL) {
		fprintf(stderr, "symhub export: --source-root %s: %s\n", dir,
		    strerror(errno));
		return 2;
	}
	if ((v = reallocarray(x->roots, x->nroots + 1, sizeof(*v))) == NULL) {
		free(real);
		return 1;
	}
	x->roots = v;
	x->roots[x->nroots++] = real;
	return 0;
}

int
cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kind", required_argument, NULL, 'k' },
		{ "origin", required_argument, NULL, 'O' },
		{ "build-id", required_argument, NULL, 'b' },
		{ "max-age", required_argument, NULL, 'A' },
		{ "source-root", required_argument, NULL, 'R' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "private", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static char		 prog[] = "symhub export";
	struct cache_options	 opt = { 0, 0, 1, 0 };
	struct export		 x;
	enum cache_kind		 k;
	uint64_t		 skipped = 0;
	char			*end;
	long long		 age;
	size_t			 i;
	int			 ch, rc, st;

	memset(&x, 0, sizeof(x));
	argv[0] = prog;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "k:b:qh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'k':
			if (kind_parse(optarg, strlen(optarg), &k) < 0 ||
			    (k != CACHE_DEBUGINFO && k != CACHE_EXECUTABLE &&
			    k != CACHE_SOURCE)) {
				fprintf(stderr, "symhub export: --kind is "
				    "debuginfo, executable or source\n");
				return 2;
			}
			x.kinds |= 1 << k;
			break;
		case 'O':
			x.origin = optarg;
			break;
		case 'b':
			x.buildid = optarg;
			break;
		case 'A':
			errno = 0;
			age = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end || age <= 0) {
				fprintf(stderr, "symhub export: --max-age "
				    "wants seconds\n");
				return 2;
			}
			x.since = clock_wall_s() - age;
			break;
		case 'R':
			if ((rc = add_root(&x, optarg)) != 0)
				return rc;
			break;
		case 'q':
			x.quiet = 1;
			break;
		case 'P':
			x.private = 1;
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		default:
			fputs(help, stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fputs(help, stderr);
		return 2;
	}
	if (x.kinds == 0)
		x.kinds = 1 << CACHE_DEBUGINFO | 1 << CACHE_EXECUTABLE |
		    1 << CACHE_SOURCE;
	x.dir = argv[optind + 1];
	if (x.nroots > 0 && elfinfo_init() < 0) {
		fprintf(stderr, "symhub export: libelf is too old\n");
		return 1;
	}
	/* No store, no export directory: a mistyped path makes nothing. */
	if ((rc = cache_present(argv[optind])) < 0 ||
	    (rc = cache_open(argv[optind], &opt, &x.c)) < 0) {
		cli_store_error("symhub export", argv[optind], rc,
		    "index/data.mdb");
		return 1;
	}
	if (mkdir(x.dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "symhub export: %s: %s\n", x.dir,
		    strerror(errno));
		cache_close(x.c);
		return 1;
	}
	if ((rc = load_manifest(&x)) == 0)
		rc = cache_foreach(x.c, one, &x, &skipped);
	if (rc == 0)
		rc = write_members(&x);
	if (rc == 0 && (x.kinds & 1 << CACHE_SOURCE))
		rc = cache_foreach_kind(x.c, CACHE_BUNDLE, one_bundle, &x);
	if (rc == 0 && x.nroots > 0 && (x.kinds & 1 << CACHE_SOURCE))
		rc = write_root_sources(&x);
	if (rc == 0)
		rc = save_manifest(&x);
	if (rc == 0)
		rc = save_fileids(&x);
	if (rc < 0)
		fprintf(stderr, "symhub export: %s\n", strerror(-rc));
	if (skipped > 0)
		fprintf(stderr, "symhub export: %" PRIu64 " source(s) whose "
		    "path the store lost (run symhub store verify)\n",
		    skipped);
	if (x.stale > 0)
		printf("%" PRIu64 " changed since indexed, skipped\n",
		    x.stale);
	if (x.private_skipped > 0)
		printf("%" PRIu64 " private, left out (--private)\n",
		    x.private_skipped);
	printf("%" PRIu64 " written (%" PRIu64 " bytes), %" PRIu64
	    " unchanged, %" PRIu64 " failed\n", x.written, x.bytes,
	    x.unchanged, x.failed);
	st = rc < 0 || x.failed > 0 || skipped > 0 ? 1 : 0;
	cache_close(x.c);
	for (i = 0; i < x.nm; i++) {
		free(x.m[i].id);
		free(x.m[i].kind);
		free(x.m[i].origin);
		free(x.m[i].path);
	}
	free(x.m);
	for (i = 0; i < x.np; i++)
		pending_free(&x.p[i]);
	free(x.p);
	for (i = 0; i < x.nroots; i++)
		free(x.roots[i]);
	free(x.roots);
	strmap_free(&x.index);
	return st;
}

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
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "common/kind.h"
#include "common/pkgarchive.h"
#include "manifest.h"
#include "text.h"

/* One line of the manifest, old or new. */
struct mline {
	char		*id, *kind, *origin, *path;	/* path "-": none */
	uint64_t	 size;
	char		 sha[65];
};

struct export {
	struct cache	*c;
	const char	*dir;
	int		 kinds;		/* bits (1 << kind) to export */
	const char	*origin;	/* NULL: any */
	const char	*buildid;	/* NULL: any */
	int64_t		 since;		/* stored at or after; 0: any */
	int		 quiet;
	struct mline	*m;		/* the manifest: old lines, then new */
	size_t		 nm, capm;
	struct strmap	 index;		/* "id\tkind\tpath" -> index in m */
	uint64_t	 written, unchanged, failed, stale, bytes, badlines;
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
    const char *origin)
{
	struct mline	*l;
	char		 key[MANIFEST_LINE_MAX];

	if (mkey(key, sizeof(key), id, kind, path) != 0 ||
	    array_grow(&x->m, &x->capm, x->nm + 1, sizeof(*x->m)) != 0)
		return NULL;
	l = &x->m[x->nm];
	memset(l, 0, sizeof(*l));
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
	    ml->origin)) == NULL)
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
	if (x->badlines > 0)
		fprintf(stderr, "symhub export: %" PRIu64 " line(s) of the "
		    "old %s not understood, dropped\n", x->badlines, path);
	return rc;
}

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

/*
 * Copy fd to path by way of a temporary file, hashing what is written.
 * @return 0 with sha (hex) set; -EBADMSG when want (hex, or NULL) does
 *         not match (nothing is left behind); -errno.
 */
static int
copy_out(int fd, const char *path, const char *want, char sha[65],
    uint64_t *size)
{
	char	tmp[PATH_MAX];
	int	out, rc;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if ((out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0)
		return -errno;
	rc = hash_copy(fd, out, sha, size);
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

static int
to_fd(void *ctx, const void *buf, size_t len)
{
	const int *fd = ctx;

	if (write(*fd, buf, len) != (ssize_t)len)
		return errno == ENOSPC ? -ENOSPC : -EIO;
	return 0;
}

/*
 * A member of a package (CACHE_F_MEMBER), extracted into an unnamed file
 * under DIR, if the package is still what was indexed.  The hub reads
 * packages an -Z command unpacks through that command; here libarchive
 * reads them alone, which serves every format it knows.
 */
static int
open_member(struct export *x, const struct cache_record *rec, int *fd)
{
	struct pkga_limits	 lim = { 0, PKGA_RATIO_DEFAULT };
	char			 why[PKGA_WHY_MAX];
	uint64_t		 size;
	int			 afd, rc;

	if (rec->path == NULL || rec->xfile == NULL)
		return -ESTALE;
	if ((rc = cache_open_external(rec, &afd)) < 0)
		return rc;
	if ((*fd = open(x->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) < 0) {
		rc = -errno;
		close(afd);
		return rc;
	}
	rc = pkga_extract(afd, rec->path, PKGA_AUTO, NULL, &lim, rec->xfile,
	    to_fd, fd, &size, why);
	if (rc == 0 && !cache_external_same(rec, afd))
		rc = -ESTALE;	/* rewritten while read */
	close(afd);
	if (rc == 0 && size != rec->size)
		rc = -ESTALE;
	if (rc < 0) {
		if (rc != -ESTALE)
			fprintf(stderr, "symhub export: %s in %s: %s\n",
			    rec->xfile, rec->path, why[0] != '\0' ? why :
			    strerror(-rc));
		close(*fd);
		*fd = -1;
		return rc == -ESTALE || rc == -ENOMEM || rc == -ENOSPC ? rc :
		    -EIO;
	}
	return 0;
}

/*
 * The store's data of rec, open.  A scanned source rewritten in place is
 * what is there now, as the hub serves it.  A scanned ELF file (or
 * package) that changed: the hub reads it again (its build-id may
 * differ), there is nothing to export (-ESTALE).
 */
static int
open_data(struct export *x, const struct cache_key *key,
    const struct cache_record *rec, int *fd)
{
	struct stat	st;
	int		rc;

	if (rec->flags & CACHE_F_MEMBER)
		return open_member(x, rec, fd);
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
	return set_origin(l, origin);
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
	int		 fd, rc, n;

	if (!(x->kinds & (1 << key->kind)) || key->idlen == 0)
		return 0;
	hex_encode(key->id, key->idlen, id);
	if ((x->buildid != NULL && strcmp(x->buildid, id) != 0) ||
	    (x->origin != NULL &&
	    !manifest_origin_is(rec->origin, x->origin)) ||
	    (x->since > 0 && rec->stored < x->since))
		return 0;
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
		fprintf(stderr, "failed   %-10s %s  %s  %s\n", kind, id, src,
		    strerror(ENAMETOOLONG));
		x->failed++;
		return 0;
	}
	origin_of(rec, origin, sizeof(origin));
	l = mfind(x, id, kind, src);
	/*
	 * Unchanged since the last export: the same hash and the same file
	 * there.  A blob's hash is its name, so nothing is read; a scanned
	 * file is hashed only when the old copy could be it.
	 */
	if (!(rec->flags & CACHE_F_EXTERNAL)) {
		hex_encode(rec->digest, sizeof(rec->digest), digest);
		want = digest;
		if (copy_there(path, l) && l->size == rec->size &&
		    strcmp(l->sha, want) == 0)
			return unchanged(x, l, origin);
	}
	if ((rc = open_data(x, key, rec, &fd)) == -ESTALE) {
		if (!x->quiet)
			printf("skipped  %-10s %s  %s  changed since it was "
			    "indexed\n", kind, id, src);
		x->stale++;
		return 0;
	}
	if (rc == 0 && want == NULL && copy_there(path, l) &&
	    fstat(fd, &st) == 0 && (uint64_t)st.st_size == l->size &&
	    hash_copy(fd, -1, sha, &size) == 0 && strcmp(l->sha, sha) == 0) {
		close(fd);
		return unchanged(x, l, origin);
	}
	if (rc == 0) {
		if ((rc = fs_mkdir_p(path, 1)) == 0)
			rc = copy_out(fd, path, want, sha, &size);
		close(fd);
	}
	if (rc != 0) {
		fprintf(stderr, "failed   %-10s %s  %s  %s\n", kind, id, src,
		    rc == -EBADMSG ? "its bytes do not match their SHA-256 "
		    "(run symhub store verify)" : strerror(-rc));
		x->failed++;
		return 0;
	}
	if (l == NULL && (l = madd(x, id, kind, src, origin)) == NULL)
		return -ENOMEM;
	l->size = size;
	memcpy(l->sha, sha, sizeof(sha));
	x->written++;
	x->bytes += size;
	if (!x->quiet)
		printf("written  %-10s %s  %s\n", kind, id, src);
	return set_origin(l, origin);
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
"  -q, --quiet          print only failures and the summary\n"
"  -h, --help           this text\n"
"\n"
"Exit status: 0 when everything selected was exported, 1 when something\n"
"could not be (a rotten blob, a write error), 2 for usage.\n";

int
cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kind", required_argument, NULL, 'k' },
		{ "origin", required_argument, NULL, 'O' },
		{ "build-id", required_argument, NULL, 'b' },
		{ "max-age", required_argument, NULL, 'A' },
		{ "quiet", no_argument, NULL, 'q' },
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
		case 'q':
			x.quiet = 1;
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
	strmap_free(&x.index);
	return st;
}

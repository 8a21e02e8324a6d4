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
#include "base/hex.h"
#include "cache/cache.h"
#include "cmd_export.h"
#include "common/kind.h"
#include "common/webapi.h"

#define MANIFEST	"manifest.tsv"

/* One line of the manifest, old or new. */
struct mline {
	char		*id, *kind, *origin, *path;	/* path "-": none */
	uint64_t	 size;
	char		 sha[65];
	int		 seen;				/* in this export */
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
	size_t		*tab;		/* open addressing: line index + 1 */
	size_t		 tcap;		/* a power of 2, > 2 * nm */
	uint64_t	 written, unchanged, failed, stale, bytes;
};

static int
mkdirs(char *path)
{
	char *p;

	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return 0;
}

/* FNV-1a over the three strings of a line's identity. */
static size_t
mhash(const char *id, const char *kind, const char *path)
{
	const char	*s[3] = { id, kind, path };
	uint64_t	 h = 0xcbf29ce484222325ULL;
	size_t		 i;

	for (i = 0; i < 3; i++) {
		for (; *s[i] != '\0'; s[i]++)
			h = (h ^ (unsigned char)*s[i]) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL;
	}
	return (size_t)h;
}

/* The slot of (id, kind, path) in x->tab: its line's, or an empty one. */
static size_t
mslot(const struct export *x, const char *id, const char *kind,
    const char *path)
{
	size_t i = mhash(id, kind, path) & (x->tcap - 1);

	while (x->tab[i] != 0) {
		const struct mline *l = &x->m[x->tab[i] - 1];

		if (strcmp(l->id, id) == 0 && strcmp(l->kind, kind) == 0 &&
		    strcmp(l->path, path) == 0)
			break;
		i = (i + 1) & (x->tcap - 1);
	}
	return i;
}

static struct mline *
mfind(struct export *x, const char *id, const char *kind, const char *path)
{
	size_t i;

	if (x->tcap == 0)
		return NULL;
	i = mslot(x, id, kind, path);
	return x->tab[i] != 0 ? &x->m[x->tab[i] - 1] : NULL;
}

/* Room in the index for one more line.  @return 0 or -ENOMEM. */
static int
mroom(struct export *x)
{
	size_t	*old = x->tab, oldcap = x->tcap, i, ncap;

	if (2 * (x->nm + 1) < x->tcap)
		return 0;
	ncap = x->tcap ? 2 * x->tcap : 1024;
	if ((x->tab = calloc(ncap, sizeof(*x->tab))) == NULL) {
		x->tab = old;
		return -ENOMEM;
	}
	x->tcap = ncap;
	for (i = 0; i < oldcap; i++)
		if (old[i] != 0) {
			const struct mline *l = &x->m[old[i] - 1];

			x->tab[mslot(x, l->id, l->kind, l->path)] = old[i];
		}
	free(old);
	return 0;
}

static struct mline *
madd(struct export *x, const char *id, const char *kind, const char *path)
{
	struct mline *l;

	if (mroom(x) != 0 ||
	    array_grow(&x->m, &x->capm, x->nm + 1, sizeof(*x->m)) != 0)
		return NULL;
	l = &x->m[x->nm];
	memset(l, 0, sizeof(*l));
	if ((l->id = strdup(id)) == NULL || (l->kind = strdup(kind)) == NULL ||
	    (l->path = strdup(path)) == NULL ||
	    (l->origin = strdup("-")) == NULL) {
		free(l->id);
		free(l->kind);
		free(l->path);
		return NULL;
	}
	x->tab[mslot(x, id, kind, path)] = ++x->nm;
	return l;
}

/* The previous export's manifest, if any: what need not be written. */
static int
load_manifest(struct export *x)
{
	char		 path[PATH_MAX], *line = NULL, *f[6], *s;
	struct mline	*l = NULL;
	size_t		 cap = 0;
	FILE		*fp;
	int		 i;

	snprintf(path, sizeof(path), "%s/%s", x->dir, MANIFEST);
	if ((fp = fopen(path, "r")) == NULL)
		return errno == ENOENT ? 0 : -errno;
	while (getline(&line, &cap, fp) > 0) {
		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (i = 0, s = line; i < 6 && s != NULL; i++)
			f[i] = strsep(&s, "\t");
		if (i < 6 || strlen(f[3]) != 64)
			continue;	/* not ours: written again */
		if ((l = madd(x, f[0], f[1], f[5])) == NULL)
			break;
		l->size = strtoull(f[2], NULL, 10);
		memcpy(l->sha, f[3], 65);
		free(l->origin);
		l->origin = strdup(f[4]);
	}
	free(line);
	fclose(fp);
	return 0;
}

static int
save_manifest(struct export *x)
{
	char	 path[PATH_MAX], tmp[PATH_MAX];
	FILE	*fp;
	size_t	 i;
	int	 rc = 0;

	snprintf(path, sizeof(path), "%s/%s", x->dir, MANIFEST);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", x->dir, MANIFEST,
	    (long)getpid());
	if ((fp = fopen(tmp, "w")) == NULL)
		return -errno;
	fprintf(fp, "# symhub export 1: id, kind, size, sha256, origin, "
	    "source path\n");
	for (i = 0; i < x->nm; i++) {
		struct mline *l = &x->m[i];

		/* Lines of files no longer exported stay while the file
		 * does: an export adds, it never deletes. */
		fprintf(fp, "%s\t%s\t%" PRIu64 "\t%s\t%s\t%s\n", l->id,
		    l->kind, l->size, l->sha, l->origin ? l->origin : "-",
		    l->path);
	}
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

/*
 * Copy fd to path by way of a temporary file, hashing what is written.
 * @return 0 with sha (hex) set; -EBADMSG when want (hex, or NULL) does
 *         not match (nothing is left behind); -errno.
 */
static int
copy_out(int fd, const char *path, const char *want, char sha[65],
    uint64_t *size)
{
	unsigned char	 buf[65536], md[32];
	char		 tmp[PATH_MAX];
	EVP_MD_CTX	*ctx;
	ssize_t		 n;
	off_t		 off = 0;
	int		 out, rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if ((out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0)
		return -errno;
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		rc = -ENOMEM;
	while (rc == 0 && (n = pread(fd, buf, sizeof(buf), off)) > 0) {
		if (write(out, buf, (size_t)n) != n)
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
	if (close(out) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0) {
		hex_encode(md, sizeof(md), sha);
		if (want != NULL && strcmp(want, sha) != 0)
			rc = -EBADMSG;
	}
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	*size = (uint64_t)off;
	return rc;
}

/* "upload" selects "upload" and "upload:NAME" (uploads by NAME's token). */
static int
origin_is(const char *origin, const char *want)
{
	size_t n = strlen(want);

	return origin != NULL && strncmp(origin, want, n) == 0 &&
	    (origin[n] == '\0' || origin[n] == ':');
}

/* The SHA-256 of fd's bytes, in hex.  @return 0 or -errno. */
static int
hash_fd(int fd, char sha[65])
{
	unsigned char	 buf[65536], md[32];
	EVP_MD_CTX	*ctx;
	ssize_t		 n;
	off_t		 off = 0;
	int		 rc = 0;

	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		rc = -ENOMEM;
	while (rc == 0 && (n = pread(fd, buf, sizeof(buf), off)) > 0) {
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
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
	return rc;
}

/* A source path safe to put under DIR: absolute and canonical. */
static int
safe_path(const char *p)
{
	char	buf[PATH_MAX];

	return p[0] == '/' && strlen(p) < sizeof(buf) &&
	    webapi_canon_path(p, buf) == 0 && strcmp(buf, p) == 0 &&
	    strcmp(p, "/") != 0;
}

static int
one(void *ctx, const struct cache_key *key, const struct cache_record *rec)
{
	struct export	*x = ctx;
	struct mline	*l = NULL;
	struct stat	 st;
	const char	*kind = kind_name(key->kind), *src = "-";
	char		 id[2 * CACHE_ID_MAX + 1], want[65], sha[65];
	char		 path[PATH_MAX];
	uint64_t	 size;
	int		 fd, rc, n, blob;

	if (!(x->kinds & (1 << key->kind)) || key->idlen == 0)
		return 0;
	hex_encode(key->id, key->idlen, id);
	if ((x->buildid != NULL && strcmp(x->buildid, id) != 0) ||
	    (x->origin != NULL && !origin_is(rec->origin, x->origin)) ||
	    (x->since > 0 && rec->stored < x->since))
		return 0;
	if (key->kind == CACHE_SOURCE) {
		if (key->extra == NULL || !safe_path(key->extra)) {
			fprintf(stderr, "failed   source     %s  %s  not a "
			    "canonical absolute path\n", id,
			    key->extra ? key->extra : "?");
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
	if (n < 0 || (size_t)n >= sizeof(path))
		return 0;
	blob = !(rec->flags & CACHE_F_EXTERNAL);
	if (blob)
		hex_encode(rec->digest, sizeof(rec->digest), want);
	rc = cache_open_data(x->c, rec, &fd);
	/* A scanned source rewritten in place: what is there now, as the
	 * hub serves it.  A scanned ELF file that changed: the hub reads it
	 * again (its build-id may differ), there is nothing to export. */
	if (rc == -ESTALE && key->kind == CACHE_SOURCE && rec->path != NULL &&
	    (fd = open(rec->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			rc = 0;
		else
			close(fd);
	}
	if (rc == -ESTALE) {
		if (!x->quiet)
			printf("skipped  %-10s %s  %s  changed since it was "
			    "indexed\n", kind, id, src);
		x->stale++;
		return 0;
	}
	if (rc == 0 && !blob && (rc = hash_fd(fd, want)) < 0)
		close(fd);
	/* Unchanged since the last export: the same hash (a blob's is its
	 * name; a scanned file's was just read) and the same file there. */
	if (rc == 0 && (l = mfind(x, id, kind, src)) != NULL &&
	    stat(path, &st) == 0 && (uint64_t)st.st_size == l->size &&
	    strcmp(l->sha, want) == 0) {
		close(fd);
		l->seen = 1;
		x->unchanged++;
		return 0;
	}
	if (rc == 0) {
		if ((rc = mkdirs(path)) == 0)
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
	if (l == NULL && (l = madd(x, id, kind, src)) == NULL)
		return -ENOMEM;
	l->size = size;
	memcpy(l->sha, sha, sizeof(sha));
	free(l->origin);
	l->origin = strdup(rec->origin != NULL ? rec->origin : "-");
	l->seen = 1;
	x->written++;
	x->bytes += size;
	if (!x->quiet)
		printf("written  %-10s %s  %s\n", kind, id, src);
	return 0;
}

static const char help[] =
"usage: symhub export [OPTION...] STORE DIR\n"
"Write what the store STORE holds (a symhubd --store; it may be running)\n"
"into DIR as DIR/buildid/ID/{debuginfo,executable,source/PATH} and\n"
"DIR/manifest.tsv, the tree debuginfod clients read with\n"
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
	if (mkdir(x.dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "symhub export: %s: %s\n", x.dir,
		    strerror(errno));
		return 1;
	}
	if ((rc = cache_open(argv[optind], &opt, &x.c)) < 0) {
		fprintf(stderr, "symhub export: store %s: %s\n", argv[optind],
		    strerror(-rc));
		return 1;
	}
	if ((rc = load_manifest(&x)) == 0)
		rc = cache_foreach(x.c, one, &x, &skipped);
	if (rc == 0)
		rc = save_manifest(&x);
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
	free(x.tab);
	return st;
}

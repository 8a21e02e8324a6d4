/*
 * cmd_import: `symhub import DIR STORE`, a tree written by `symhub export`
 * (DIR/buildid/ID/{debuginfo,executable,source/PATH} and its
 * manifest.tsv) loaded into a store, its hub running or not.
 *
 * Nothing is stored that was not verified: each file must have the size
 * and SHA-256 its manifest line gives, and a debuginfo or executable must
 * be ELF, carry the build-id it is filed under and be fit for its kind
 * (the checks uploads pass).  What the store has already is left alone.
 * Origins are kept; files that came from uploads stay pinned, as they
 * exist nowhere else.
 *
 * The tree is foreign input too: every file is opened below DIR one
 * component at a time, no symbolic link followed (export makes none),
 * and only a regular file is opened at all, so that a FIFO or a device
 * in its place can neither block the import nor be read.  What the tree
 * says is printed escaped (text_put).
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

#include "base/clock.h"
#include "base/hex.h"
#include "cache/cache.h"
#include "cmd_import.h"
#include "common/elfinfo.h"
#include "common/kind.h"
#include "manifest.h"
#include "text.h"

struct import {
	struct cache	*c;
	const char	*dir;
	int		 dirfd;		/* DIR, which everything is opened
					 * below */
	int		 quiet;
	uint64_t	 imported, present, refused, bytes, fileids;
};

static void
refuse(struct import *x, const struct manifest_line *l, const char *why)
{
	fprintf(stderr, "refused  %-10s %s  ", l->kindname, l->idhex);
	text_put(stderr, l->path);
	fprintf(stderr, "  %s\n", why);
	x->refused++;
}

/* What a file that is not a regular one is, for a message. */
static const char *
not_regular(mode_t mode)
{
	if (S_ISLNK(mode))
		return "a symbolic link (not followed)";
	if (S_ISFIFO(mode))
		return "a FIFO, not a regular file";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device, not a regular file";
	if (S_ISSOCK(mode))
		return "a socket, not a regular file";
	if (S_ISDIR(mode))
		return "a directory, not a regular file";
	return "not a regular file";
}

/*
 * Open rel (its components separated by '/', leading ones ignored) below
 * dirfd for reading: every component but the last a directory, the last
 * a regular file, none a symbolic link and none "." or "..".  Each is
 * looked at (fstatat without following) before it is opened, and the
 * file opened with O_NONBLOCK and checked again, so that nothing that
 * could block or act on being opened is.
 * @return the fd, with *st; or -1 with *why (static, or strerror's).
 */
static int
open_below(int dirfd, const char *rel, struct stat *st, const char **why)
{
	struct stat	 sb;
	char		 buf[PATH_MAX], *s, *comp;
	int		 fd = dirfd, nfd = -1, last;

	if (strlen(rel) >= sizeof(buf)) {
		*why = "path too long";
		return -1;
	}
	memcpy(buf, rel, strlen(rel) + 1);
	s = buf + strspn(buf, "/");
	while ((comp = strsep(&s, "/")) != NULL) {
		last = s == NULL;
		nfd = -1;
		if (*comp == '\0' || strcmp(comp, ".") == 0 ||
		    strcmp(comp, "..") == 0) {
			*why = "a path with an empty, . or .. component";
			break;
		}
		if (fstatat(fd, comp, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
			*why = strerror(errno);
			break;
		}
		if (last ? !S_ISREG(sb.st_mode) : !S_ISDIR(sb.st_mode)) {
			*why = last || S_ISLNK(sb.st_mode) ?
			    not_regular(sb.st_mode) : strerror(ENOTDIR);
			break;
		}
		if ((nfd = openat(fd, comp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		    O_NOCTTY | (last ? O_NONBLOCK : O_DIRECTORY))) < 0) {
			*why = strerror(errno);
			break;
		}
		if (fstat(nfd, st) != 0 || st->st_dev != sb.st_dev ||
		    st->st_ino != sb.st_ino) {
			*why = "changed while it was opened";
			close(nfd);
			nfd = -1;
			break;
		}
		if (fd != dirfd)
			close(fd);
		fd = nfd;
		if (last)
			return fd;
	}
	if (fd != dirfd)
		close(fd);
	return -1;
}

/* Stream fd into a blob, checking size and SHA-256 against the manifest.
 * @return 0 with *out; -EBADMSG when they differ; -errno. */
static int
take(struct import *x, int fd, uint64_t size, const char *sha,
    struct cache_blob **out)
{
	unsigned char	 buf[65536], md[32];
	char		 got[65];
	struct cache_blob *b;
	ssize_t		 n;
	off_t		 off = 0;
	int		 rc;

	*out = NULL;
	if ((rc = cache_blob_create(x->c, &b)) < 0)
		return rc;
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		if ((rc = cache_blob_write(b, buf, (size_t)n)) < 0) {
			cache_blob_abort(b);
			return rc;
		}
		off += n;
	}
	if (n < 0) {
		rc = -errno;
		cache_blob_abort(b);
		return rc;
	}
	if ((rc = cache_blob_digest(b, md)) < 0) {
		cache_blob_abort(b);
		return rc;
	}
	hex_encode(md, sizeof(md), got);
	if ((uint64_t)off != size || strcmp(got, sha) != 0) {
		cache_blob_abort(b);
		return -EBADMSG;
	}
	*out = b;
	return 0;
}

/* One manifest line, parsed and checked by manifest_parse. */
static int
one(void *ctx, const struct manifest_line *l)
{
	struct import		*x = ctx;
	struct cache_record	 rec, have;
	struct cache_blob	*b = NULL;
	struct cache_key	 key;
	struct elfinfo		 ei;
	struct stat		 st;
	char			 path[PATH_MAX];
	const char		*why;
	int			 fd, rc, n;

	key.kind = l->kind;
	key.id = l->id;
	key.idlen = l->idlen;
	key.extra = l->kind == CACHE_SOURCE ? l->path : NULL;
	if (l->kind == CACHE_SOURCE)
		n = snprintf(path, sizeof(path), "buildid/%s/source%s",
		    l->idhex, l->path);
	else
		n = snprintf(path, sizeof(path), "buildid/%s/%s", l->idhex,
		    l->kindname);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		refuse(x, l, "path too long");
		return 0;
	}
	if (cache_get(x->c, &key, clock_wall_s(), &have) == 0) {
		cache_record_release(&have);
		x->present++;
		return 0;
	}
	if ((fd = open_below(x->dirfd, path, &st, &why)) < 0) {
		refuse(x, l, why);
		return 0;
	}
	if ((uint64_t)st.st_size != l->size) {
		/* Not read at all: it could be anything, of any size. */
		close(fd);
		refuse(x, l, "its size or SHA-256 differs from the manifest's");
		return 0;
	}
	rc = take(x, fd, l->size, l->sha, &b);
	close(fd);
	if (rc == -EBADMSG) {
		refuse(x, l, "its size or SHA-256 differs from the manifest's");
		return 0;
	}
	if (rc < 0)
		return rc;	/* the store's trouble: stop */
	memset(&rec, 0, sizeof(rec));
	if (l->kind != CACHE_SOURCE) {
		/* The checks of an upload: the file is what it is filed as. */
		why = NULL;
		if (elfinfo_read(cache_blob_fd(b), &ei) < 0)
			why = "not an ELF file";
		else if (ei.buildid_len != l->idlen ||
		    memcmp(ei.buildid, l->id, l->idlen) != 0)
			why = "its build-id is not the one it is filed under";
		else
			why = elfinfo_unfit(&ei, l->kind == CACHE_DEBUGINFO);
		if (why != NULL) {
			cache_blob_abort(b);
			refuse(x, l, why);
			return 0;
		}
		rec.quality = ei.quality;
	}
	rec.size = l->size;
	rec.stored = clock_wall_s();
	rec.origin = l->origin;
	if (manifest_origin_is(l->origin, "upload"))
		rec.flags |= CACHE_F_PINNED;	/* nowhere else */
	if ((rc = cache_put_blob(x->c, b, &key, &rec, NULL)) < 0)
		return rc;
	x->imported++;
	x->bytes += l->size;
	if (!x->quiet) {
		printf("imported %-10s %s  ", l->kindname, l->idhex);
		text_put(stdout, l->path);
		putchar('\n');
	}
	return 0;
}

/* A line manifest_parse refused. */
static void
bad_line(void *ctx, unsigned long lineno, const char *line, const char *why)
{
	struct import *x = ctx;

	fprintf(stderr, "refused  line %lu of the manifest: %s", lineno, why);
	if (line != NULL) {
		fputs(": ", stderr);
		text_put(stderr, line);
	}
	fputc('\n', stderr);
	x->refused++;
}

/* Does the store hold a debuginfo or an executable of id? */
static int
has_id(struct import *x, const unsigned char *id, size_t idlen)
{
	static const enum cache_kind kinds[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct cache_record	rec;
	struct cache_key	key = { CACHE_DEBUGINFO, id, idlen, NULL };
	size_t			i;

	for (i = 0; i < 2; i++) {
		key.kind = kinds[i];
		if (cache_get(x->c, &key, clock_wall_s(), &rec) == 0) {
			cache_record_release(&rec);
			return 1;
		}
	}
	return 0;
}

/* A FileID mapping of DIR/fileids.tsv: mapped when the store holds
 * that build-id's files and no other mapping for the FileID. */
static int
fileid_one(void *ctx, const unsigned char fid[16], const unsigned char *id,
    size_t idlen)
{
	struct import	*x = ctx;
	unsigned char	 have[CACHE_ID_MAX];
	size_t		 havelen;
	int		 rc;

	if (cache_fileid_get(x->c, fid, have, &havelen) == 0) {
		if (havelen != idlen || memcmp(have, id, idlen) != 0) {
			fprintf(stderr, "refused  a line of %s: the FileID "
			    "maps to another build-id here\n",
			    MANIFEST_FILEIDS);
			x->refused++;
		}
		return 0;
	}
	if (!has_id(x, id, idlen))
		return 0;	/* its files were refused */
	if ((rc = cache_fileid_put(x->c, fid, id, idlen)) == 0)
		x->fileids++;
	return rc;
}

static void
fileid_bad(void *ctx, unsigned long lineno, const char *line, const char *why)
{
	struct import *x = ctx;

	(void)line;
	fprintf(stderr, "refused  line %lu of %s: %s\n", lineno,
	    MANIFEST_FILEIDS, why);
	x->refused++;
}

/* One of DIR's lists, opened as every file of the tree is.
 * @return the stream, or NULL with *why. */
static FILE *
open_list(struct import *x, const char *name, const char **why)
{
	struct stat	 st;
	FILE		*fp;
	int		 fd;

	if ((fd = open_below(x->dirfd, name, &st, why)) < 0)
		return NULL;
	if ((fp = fdopen(fd, "r")) == NULL) {
		*why = strerror(errno);
		close(fd);
	}
	return fp;	/* owns fd */
}

/* DIR/fileids.tsv, if any.  @return 0, or the store's -errno. */
static int
import_fileids(struct import *x)
{
	struct stat	 st;
	const char	*why;
	FILE		*fp;
	int		 rc;

	if (fstatat(x->dirfd, MANIFEST_FILEIDS, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;	/* an export of nothing uploaded */
	if ((fp = open_list(x, MANIFEST_FILEIDS, &why)) == NULL) {
		fprintf(stderr, "refused  %s: %s\n", MANIFEST_FILEIDS, why);
		x->refused++;
		return 0;
	}
	rc = manifest_fileids_read(fp, fileid_one, fileid_bad, x);
	fclose(fp);
	return rc;
}

static const char help[] =
"usage: symhub import [-q] DIR STORE\n"
"Load a tree written by symhub export (DIR/buildid/ID/... and\n"
"DIR/manifest.tsv) into the store STORE (a symhubd --store; the hub may be\n"
"running).  Every file must match its manifest line (size, SHA-256) and,\n"
"for a debuginfo or executable, be ELF with the build-id it is filed\n"
"under; what the store has already is left alone; origins are kept.\n"
"\n"
"  -q, --quiet   print only what was refused, and the summary\n"
"  -h, --help    this text\n"
"\n"
"Exit status: 0 when nothing was refused, 1 when something was (or the\n"
"store could not take it), 2 for usage.\n";

int
cmd_import(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static char		 prog[] = "symhub import";
	struct cache_options	 opt = { 0, 0, 0, 1 };
	struct import		 x;
	const char		*why;
	FILE			*fp;
	int			 ch, rc = 0;

	memset(&x, 0, sizeof(x));
	argv[0] = prog;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (ch) {
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
	x.dir = argv[optind];
	/* DIR itself is the user's word, and followed. */
	if ((x.dirfd = open(x.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "symhub import: %s: %s\n", x.dir,
		    strerror(errno));
		return 1;
	}
	if ((fp = open_list(&x, MANIFEST_NAME, &why)) == NULL) {
		fprintf(stderr, "symhub import: %s/%s: %s\n", x.dir,
		    MANIFEST_NAME, why);
		close(x.dirfd);
		return 1;
	}
	if (elfinfo_init() < 0 ||
	    (rc = cache_open(argv[optind + 1], &opt, &x.c)) < 0) {
		fprintf(stderr, "symhub import: store %s: %s\n",
		    argv[optind + 1], rc < 0 ? strerror(-rc) : "libelf");
		fclose(fp);
		close(x.dirfd);
		return 1;
	}
	rc = manifest_read(fp, one, bad_line, &x);
	if (rc == 0)
		rc = import_fileids(&x);
	fclose(fp);
	if (rc < 0)
		fprintf(stderr, "symhub import: the store: %s\n",
		    strerror(-rc));
	if (x.fileids > 0)
		printf("%" PRIu64 " FileID mapping(s) imported\n", x.fileids);
	printf("%" PRIu64 " imported (%" PRIu64 " bytes), %" PRIu64
	    " already there, %" PRIu64 " refused\n", x.imported, x.bytes,
	    x.present, x.refused);
	cache_close(x.c);
	close(x.dirfd);
	return rc < 0 || x.refused > 0 ? 1 : 0;
}

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
#include "common/webapi.h"

struct import {
	struct cache	*c;
	const char	*dir;
	int		 quiet;
	uint64_t	 imported, present, refused, bytes;
};

static void
refuse(struct import *x, const char *id, const char *kind, const char *path,
    const char *why)
{
	fprintf(stderr, "refused  %-10s %s  %s  %s\n", kind, id, path, why);
	x->refused++;
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

/* One manifest line: id, kind, size, sha256, origin, source path. */
static int
one(struct import *x, char *f[6])
{
	struct cache_record	 rec, have;
	struct cache_blob	*b = NULL;
	struct cache_key	 key;
	struct elfinfo		 ei;
	unsigned char		 id[WEBAPI_ID_HEX_MAX / 2];
	char			 path[PATH_MAX], canon[PATH_MAX];
	const char		*why;
	enum cache_kind		 kind;
	uint64_t		 size;
	int			 idlen, fd, rc, n;

	idlen = webapi_parse_hexid(f[0], strlen(f[0]), id);
	if (idlen <= 0 || kind_parse(f[1], strlen(f[1]), &kind) < 0 ||
	    (kind != CACHE_DEBUGINFO && kind != CACHE_EXECUTABLE &&
	    kind != CACHE_SOURCE) || strlen(f[3]) != 64) {
		refuse(x, f[0], f[1], f[5], "not a manifest line of symhub "
		    "export");
		return 0;
	}
	size = strtoull(f[2], NULL, 10);
	key.kind = kind;
	key.id = id;
	key.idlen = (size_t)idlen;
	key.extra = NULL;
	if (kind == CACHE_SOURCE) {
		/* Canonical and absolute, or it could name a file outside DIR
		 * (and the hub would never be asked for it anyway). */
		if (f[5][0] != '/' || strlen(f[5]) >= sizeof(canon) ||
		    webapi_canon_path(f[5], canon) != 0 ||
		    strcmp(canon, f[5]) != 0) {
			refuse(x, f[0], f[1], f[5], "not a canonical absolute "
			    "path");
			return 0;
		}
		key.extra = f[5];
		n = snprintf(path, sizeof(path), "%s/buildid/%s/source%s",
		    x->dir, f[0], f[5]);
	} else {
		n = snprintf(path, sizeof(path), "%s/buildid/%s/%s", x->dir,
		    f[0], f[1]);
	}
	if (n < 0 || (size_t)n >= sizeof(path)) {
		refuse(x, f[0], f[1], f[5], "path too long");
		return 0;
	}
	if (cache_get(x->c, &key, clock_wall_s(), &have) == 0) {
		cache_record_release(&have);
		x->present++;
		return 0;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		refuse(x, f[0], f[1], f[5], strerror(errno));
		return 0;
	}
	rc = take(x, fd, size, f[3], &b);
	close(fd);
	if (rc == -EBADMSG) {
		refuse(x, f[0], f[1], f[5], "its size or SHA-256 differs from "
		    "the manifest's");
		return 0;
	}
	if (rc < 0)
		return rc;	/* the store's trouble: stop */
	memset(&rec, 0, sizeof(rec));
	if (kind != CACHE_SOURCE) {
		/* The checks of an upload: the file is what it is filed as. */
		why = NULL;
		if (elfinfo_read(cache_blob_fd(b), &ei) < 0)
			why = "not an ELF file";
		else if (ei.buildid_len != (size_t)idlen ||
		    memcmp(ei.buildid, id, (size_t)idlen) != 0)
			why = "its build-id is not the one it is filed under";
		else
			why = elfinfo_unfit(&ei, kind == CACHE_DEBUGINFO);
		if (why != NULL) {
			cache_blob_abort(b);
			refuse(x, f[0], f[1], f[5], why);
			return 0;
		}
		rec.quality = ei.quality;
	}
	rec.size = size;
	rec.stored = clock_wall_s();
	rec.origin = f[4];
	if (strncmp(f[4], "upload", 6) == 0)
		rec.flags |= CACHE_F_PINNED;	/* nowhere else */
	if ((rc = cache_put_blob(x->c, b, &key, &rec, NULL)) < 0)
		return rc;
	x->imported++;
	x->bytes += size;
	if (!x->quiet)
		printf("imported %-10s %s  %s\n", f[1], f[0], f[5]);
	return 0;
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
	char			 path[PATH_MAX], *line = NULL, *f[6], *s;
	size_t			 cap = 0;
	FILE			*fp;
	int			 ch, i, rc = 0;

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
	snprintf(path, sizeof(path), "%s/manifest.tsv", x.dir);
	if ((fp = fopen(path, "r")) == NULL) {
		fprintf(stderr, "symhub import: %s: %s\n", path,
		    strerror(errno));
		return 1;
	}
	if (elfinfo_init() < 0 ||
	    (rc = cache_open(argv[optind + 1], &opt, &x.c)) < 0) {
		fprintf(stderr, "symhub import: store %s: %s\n",
		    argv[optind + 1], rc < 0 ? strerror(-rc) : "libelf");
		fclose(fp);
		return 1;
	}
	while (rc == 0 && getline(&line, &cap, fp) > 0) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (i = 0, s = line; i < 6 && s != NULL; i++)
			f[i] = strsep(&s, "\t");
		if (i < 6 || s != NULL) {
			refuse(&x, "-", "-", "-", "a manifest line without its "
			    "6 fields");
			continue;
		}
		rc = one(&x, f);
	}
	free(line);
	fclose(fp);
	if (rc < 0)
		fprintf(stderr, "symhub import: the store: %s\n",
		    strerror(-rc));
	printf("%" PRIu64 " imported (%" PRIu64 " bytes), %" PRIu64
	    " already there, %" PRIu64 " refused\n", x.imported, x.bytes,
	    x.present, x.refused);
	cache_close(x.c);
	return rc < 0 || x.refused > 0 ? 1 : 0;
}

/*
 * manifest: see manifest.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "common/kind.h"
#include "manifest.h"
#include "text.h"

/* Decimal digits only, no sign, no blanks, no overflow. */
static int
parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '\0' || strlen(s) > 19)
		return -EINVAL;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

int
manifest_parse(char *line, struct manifest_line *out, const char **why)
{
	unsigned char	 sha[32];
	char		*f[6], *s = line, canon[PATH_MAX];
	int		 i, n;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < 6 && s != NULL; i++)
		f[i] = strsep(&s, "\t");
	if (i < 6 || s != NULL) {
		*why = "not 6 fields separated by tabs";
		return -EINVAL;
	}
	if ((n = webapi_parse_hexid(f[0], strlen(f[0]), out->id)) <= 0) {
		*why = "not a build-id";
		return -EINVAL;
	}
	out->idlen = (size_t)n;
	if (kind_parse(f[1], strlen(f[1]), &out->kind) < 0 ||
	    (out->kind != CACHE_DEBUGINFO && out->kind != CACHE_EXECUTABLE &&
	    out->kind != CACHE_SOURCE)) {
		*why = "not a kind: debuginfo, executable or source";
		return -EINVAL;
	}
	if (parse_size(f[2], &out->size) < 0) {
		*why = "not a size";
		return -EINVAL;
	}
	if (strlen(f[3]) != 64 || hex_decode(f[3], 64, sha) != 32) {
		*why = "not a SHA-256";
		return -EINVAL;
	}
	memcpy(out->sha, f[3], 65);
	if (*f[4] == '\0') {
		*why = "no origin";
		return -EINVAL;
	}
	/* The origin goes into the store, /metadata answers and terminals:
	 * what symhubd makes is printable, and so must this be. */
	if (strlen(f[4]) > MANIFEST_ORIGIN_MAX) {
		*why = "an origin longer than 255 bytes";
		return -EINVAL;
	}
	if (!text_printable(f[4])) {
		*why = "an origin with a control byte or invalid UTF-8";
		return -EINVAL;
	}
	if (out->kind == CACHE_SOURCE) {
		/* Canonical and absolute, or it could name a file outside
		 * the tree (and no hub would be asked for it anyway).  Other
		 * bytes than controls are a file system's business: a
		 * source path need not be UTF-8. */
		if (text_has_control(f[5])) {
			*why = "a source path with a control byte";
			return -EINVAL;
		}
		if (f[5][0] != '/' || strlen(f[5]) >= sizeof(canon) ||
		    webapi_canon_path(f[5], canon) != 0 ||
		    strcmp(canon, f[5]) != 0 || strcmp(f[5], "/") == 0) {
			*why = "a source path that is not canonical and "
			    "absolute";
			return -EINVAL;
		}
	} else if (strcmp(f[5], "-") != 0) {
		*why = "a path for a kind that has none";
		return -EINVAL;
	}
	out->idhex = f[0];
	out->kindname = f[1];
	out->origin = f[4];
	out->path = f[5];
	return 0;
}

/*
 * The lines of fp, at most MANIFEST_LINE_MAX bytes each, without their
 * newline; comments and empty lines passed over.  A longer one (never
 * held whole) and one with a NUL byte (which would hide the rest of the
 * line from the parser) are given to fn as NULL with why.
 * @return 0, or fn's first non-zero result.
 */
static int
lines(FILE *fp, int (*fn)(void *ctx, unsigned long lineno, char *line,
    const char *why), void *ctx)
{
	char		buf[MANIFEST_LINE_MAX + 1];
	unsigned long	lineno = 0;
	size_t		n = 0;
	int		rc = 0, c, over = 0, nul = 0;

	for (;;) {
		if ((c = getc(fp)) != EOF && c != '\n') {
			if (n < MANIFEST_LINE_MAX)
				buf[n++] = (char)c;
			else
				over = 1;
			nul |= c == '\0';
			continue;
		}
		if (c == EOF && n == 0 && !over)
			break;
		lineno++;
		buf[n] = '\0';
		if (over)
			rc = fn(ctx, lineno, NULL, "a line longer than any "
			    "manifest line");
		else if (nul)
			rc = fn(ctx, lineno, NULL, "a NUL byte in the line");
		else if (n > 0 && buf[0] != '#')
			rc = fn(ctx, lineno, buf, NULL);
		if (rc != 0 || c == EOF)
			break;
		n = 0;
		over = nul = 0;
	}
	return rc;
}

struct readctx {
	int	(*fn)(void *, const struct manifest_line *);
	int	(*fidfn)(void *, const unsigned char *, const unsigned char *,
		    size_t);
	void	(*bad)(void *, unsigned long, const char *, const char *);
	void	*ctx;
};

static int
manifest_one(void *ctx, unsigned long lineno, char *line, const char *why)
{
	struct readctx		*r = ctx;
	struct manifest_line	 l;
	char			 raw[MANIFEST_LINE_MAX + 1];

	if (line == NULL) {
		r->bad(r->ctx, lineno, NULL, why);
		return 0;
	}
	snprintf(raw, sizeof(raw), "%s", line);	/* parsing cuts line up */
	if (manifest_parse(line, &l, &why) < 0) {
		r->bad(r->ctx, lineno, raw, why);
		return 0;
	}
	return r->fn(r->ctx, &l);
}

int
manifest_read(FILE *fp, int (*fn)(void *ctx, const struct manifest_line *l),
    void (*bad)(void *ctx, unsigned long lineno, const char *line,
    const char *why), void *ctx)
{
	struct readctx r = { fn, NULL, bad, ctx };

	return lines(fp, manifest_one, &r);
}

static int
fileid_one(void *ctx, unsigned long lineno, char *line, const char *why)
{
	struct readctx	*r = ctx;
	unsigned char	 fid[16], id[WEBAPI_ID_HEX_MAX / 2];
	size_t		 idlen;

	if (line == NULL) {
		r->bad(r->ctx, lineno, NULL, why);
		return 0;
	}
	if (manifest_fileid_parse(line, fid, id, &idlen) < 0) {
		r->bad(r->ctx, lineno, line, "not a FileID and a build-id");
		return 0;
	}
	return r->fidfn(r->ctx, fid, id, idlen);
}

int
manifest_fileids_read(FILE *fp, int (*fn)(void *ctx,
    const unsigned char fid[16], const unsigned char *id, size_t idlen),
    void (*bad)(void *ctx, unsigned long lineno, const char *line,
    const char *why), void *ctx)
{
	struct readctx r = { NULL, fn, bad, ctx };

	return lines(fp, fileid_one, &r);
}

void
manifest_write(FILE *fp, const char *idhex, const char *kindname,
    uint64_t size, const char *sha, const char *origin, const char *path)
{
	fprintf(fp, "%s\t%s\t%" PRIu64 "\t%s\t%s\t%s\n", idhex, kindname,
	    size, sha, origin, path);
}

int
manifest_origin_is(const char *origin, const char *family)
{
	size_t n = strlen(family);

	return origin != NULL && strncmp(origin, family, n) == 0 &&
	    (origin[n] == '\0' || origin[n] == ':');
}

int
manifest_fileid_parse(const char *line, unsigned char fid[16],
    unsigned char *id, size_t *idlen)
{
	const char	*tab = strchr(line, '\t');
	int		 n;

	if (tab == NULL || tab - line != 32 ||
	    hex_decode(line, 32, fid) != 16 ||
	    (n = webapi_parse_hexid(tab + 1, strlen(tab + 1), id)) <= 0)
		return -EINVAL;
	*idlen = (size_t)n;
	return 0;
}

/* Fuzz the export manifest reader: manifest_read() and
 * manifest_fileids_read() over any bytes (as `symhub import` reads a tree
 * it does not trust), and manifest_parse() on the whole input as one
 * line.  The promises checked on every line taken: the id and SHA-256
 * lowercase hex, the size digits, the origin printable UTF-8 of 1 to 255
 * bytes, the path "-" or absolute without a control byte or a climbing
 * component. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "symhub/manifest.h"
#include "symhub/text.h"

static void
lowerhex(const char *s, size_t len)
{
	if (strlen(s) != len || strspn(s, "0123456789abcdef") != len)
		abort();
}

static int
line(void *ctx, const struct manifest_line *l)
{
	size_t *n = ctx;

	/* Touch what a caller uses: every field is a string. */
	*n += strlen(l->idhex) + strlen(l->kindname) + strlen(l->origin) +
	    strlen(l->path) + strlen(l->sha) + l->idlen;
	(void)manifest_origin_is(l->origin, "upload");
	lowerhex(l->idhex, 2 * l->idlen);
	lowerhex(l->sha, 64);
	if (l->origin[0] == '\0' || strlen(l->origin) > MANIFEST_ORIGIN_MAX ||
	    !text_printable(l->origin))
		abort();
	if (strcmp(l->path, "-") != 0 && (l->path[0] != '/' ||
	    text_has_control(l->path) || strstr(l->path, "/../") != NULL ||
	    strstr(l->path, "/./") != NULL || strstr(l->path, "//") != NULL))
		abort();
	return 0;
}

static void
bad(void *ctx, unsigned long lineno, const char *raw, const char *why)
{
	size_t *n = ctx;

	*n += lineno + strlen(why) + (raw != NULL ? strlen(raw) : 0);
}

static int
fileid(void *ctx, const unsigned char fid[16], const unsigned char *id,
    size_t idlen)
{
	size_t *n = ctx;

	*n += fid[0] + id[idlen - 1];
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct manifest_line	 l;
	const char		*why;
	size_t			 n = 0;
	char			*s;
	FILE			*fp;

	if (size > 0 && (fp = fmemopen((void *)data, size, "r")) != NULL) {
		(void)manifest_read(fp, line, bad, &n);
		fclose(fp);
	}
	if (size > 0 && (fp = fmemopen((void *)data, size, "r")) != NULL) {
		(void)manifest_fileids_read(fp, fileid, bad, &n);
		fclose(fp);
	}
	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (manifest_parse(s, &l, &why) == 0)
		(void)line(&n, &l);
	free(s);
	return 0;
}

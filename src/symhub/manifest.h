/*
 * manifest: the lines of DIR/manifest.tsv that `symhub export` writes and
 * `symhub import` trusts nothing of until checked.  One line a file:
 *
 *   ID \t KIND \t SIZE \t SHA256 \t ORIGIN \t PATH
 *
 * ID lowercase hex; KIND debuginfo, executable or source; SIZE decimal;
 * SHA256 64 lowercase hex digits; ORIGIN printable UTF-8 (text.h: no
 * control byte, so no tab), 1 to MANIFEST_ORIGIN_MAX bytes; PATH the
 * canonical absolute source path for a source, without a control byte,
 * "-" for the others.  Lines starting with '#' are comments.  A line is
 * at most MANIFEST_LINE_MAX bytes, without a NUL.
 */
#ifndef SYMHUB_MANIFEST_H
#define SYMHUB_MANIFEST_H

#include <stdint.h>
#include <stdio.h>

#include "cache/cache.h"
#include "common/webapi.h"

#define MANIFEST_NAME		"manifest.tsv"
#define MANIFEST_LINE_MAX	8192
#define MANIFEST_ORIGIN_MAX	255

struct manifest_line {
	/* Pointers into the parsed line, NUL-terminated. */
	const char	*idhex, *kindname, *origin, *path;
	enum cache_kind	 kind;
	unsigned char	 id[WEBAPI_ID_HEX_MAX / 2];
	size_t		 idlen;
	uint64_t	 size;
	char		 sha[65];
};

/*
 * Parse line (NUL-terminated, without its newline) in place: its tabs
 * become NULs.
 * @return 0 with out filled; -EINVAL with *why (static) for anything else.
 */
int	manifest_parse(char *line, struct manifest_line *out,
	    const char **why);

/*
 * Read fp to its end: fn for each line that parses, bad for each that
 * does not, with its number (from 1), the line as read (NULL for one
 * over MANIFEST_LINE_MAX, whose rest is skipped, never held in memory,
 * and for one with a NUL byte) and why.  The line is raw bytes: escape
 * it before printing it.  Comments and empty lines are passed over.  What fn and bad
 * are given is valid during the call only.
 * @return 0, or fn's first non-zero result.
 */
int	manifest_read(FILE *fp,
	    int (*fn)(void *ctx, const struct manifest_line *l),
	    void (*bad)(void *ctx, unsigned long lineno, const char *line,
	    const char *why), void *ctx);

/* Write one line (a trailing newline included). */
void	manifest_write(FILE *fp, const char *idhex, const char *kindname,
	    uint64_t size, const char *sha, const char *origin,
	    const char *path);

/*
 * DIR/fileids.tsv: the FileID map (doc/protocol.md, "Keys") of what was
 * exported, one line a mapping: FILEID (32 hex digits) \t BUILDID (hex).
 */
#define MANIFEST_FILEIDS	"fileids.tsv"

/* Parse one such line (NUL-terminated, without its newline).
 * @return 0 with fid, id and *idlen set, or -EINVAL. */
int	manifest_fileid_parse(const char *line, unsigned char fid[16],
	    unsigned char *id, size_t *idlen);

/* manifest_read() for a fileids.tsv: fn for each mapping, bad for each
 * line that is none. */
int	manifest_fileids_read(FILE *fp, int (*fn)(void *ctx,
	    const unsigned char fid[16], const unsigned char *id,
	    size_t idlen),
	    void (*bad)(void *ctx, unsigned long lineno, const char *line,
	    const char *why), void *ctx);

/* Is origin of the family `family`: "upload" is "upload" and
 * "upload:NAME" (uploads by NAME's token). */
int	manifest_origin_is(const char *origin, const char *family);

#endif

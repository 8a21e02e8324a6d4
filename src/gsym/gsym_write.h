/*
 * gsym_write: builds a GSYM v1 file from function ranges, line rows and
 * inline trees (doc/gsym.md), the way LLVM's GsymCreator does:
 * sorted, duplicates and overlaps resolved, line tables in LLVM's
 * encoding.  The output is deterministic: the same calls in the same order
 * give the same bytes.  Which of several functions of one range is kept
 * depends on the order of the calls only between functions of one name
 * (doc/gsym.md, "Aliases: which name an address gets").
 *
 * Functions are encoded into a compact form as they are added, so the
 * builder holds a few bytes per line row, not a model of the whole
 * program.  Strings and files are interned; the string table written
 * holds only what the functions kept reference (no dead strings).
 *
 * Library-like: returns 0 or a negative errno and never logs.  Not
 * thread-safe.
 */
#ifndef SYMHUB_GSYM_WRITE_H
#define SYMHUB_GSYM_WRITE_H

#include <stddef.h>
#include <stdint.h>

struct gsym_builder;	/* opaque */

/* A line row: file is an id from gsym_builder_file() (never 0). */
struct gsym_row {
	uint64_t	addr;
	uint32_t	file;
	uint32_t	line;
};

/*
 * A node of an inline tree.  The top node is the function itself (its
 * name, one range: the function's; call_file and call_line 0).  Ranges
 * are [start, end) pairs; a child's must lie inside its parent's.
 */
struct gsym_inline {
	const uint64_t		*ranges;	/* nranges x {start, end} */
	size_t			 nranges;
	uint32_t		 name;		/* string id */
	uint32_t		 call_file;	/* file id, or 0 */
	uint32_t		 call_line;
	const struct gsym_inline *children;
	size_t			 nchildren;
};

/* @return 0 or -ENOMEM. */
int	gsym_builder_create(struct gsym_builder **out);
/* Accepts NULL. */
void	gsym_builder_free(struct gsym_builder *b);

/* Byte order of the output: 0 little-endian (default), 1 big-endian. */
void	gsym_builder_set_big_endian(struct gsym_builder *b, int big);
/* The header's BaseAddress (default: the lowest function start). */
void	gsym_builder_set_base(struct gsym_builder *b, uint64_t base);
/* The UUID (for ELF, the GNU build-id); at most 20 bytes are kept. */
void	gsym_builder_set_uuid(struct gsym_builder *b, const void *uuid,
	    size_t len);
/* Add an executable address range (LLVM's valid text ranges). */
int	gsym_builder_add_text(struct gsym_builder *b, uint64_t start,
	    uint64_t end);
/* 1 when addr lies in a text range added. */
int	gsym_builder_is_text(const struct gsym_builder *b, uint64_t addr);

/*
 * Intern a string.  With copy 0 the bytes are not copied: they must stay
 * valid until the builder is freed.
 * @return its id (0 is the empty string), or UINT32_MAX on ENOMEM.
 */
uint32_t gsym_builder_str(struct gsym_builder *b, const char *s, size_t len,
	    int copy);
/* Intern a file by its full path, split as LLVM does (directory = all
 * before the last '/', base = the rest).  Copies the bytes.
 * @return its id (>= 1), or 0 on ENOMEM. */
uint32_t gsym_builder_file(struct gsym_builder *b, const char *path);

/*
 * Add a function [start, end) named name (a string id != 0), with nrows
 * line rows (addresses ascending, the first at start; may be 0) and an
 * inline tree (NULL for none).
 * @return 0; -EINVAL for bad arguments; -ENOMEM.
 */
int	gsym_builder_add(struct gsym_builder *b, uint64_t start, uint64_t end,
	    uint32_t name, const struct gsym_row *rows, size_t nrows,
	    const struct gsym_inline *inl);

/* Functions added so far. */
size_t	gsym_builder_count(const struct gsym_builder *b);

/*
 * The start addresses of the functions added so far, sorted ascending,
 * in a new array the caller frees (NULL when there are none).
 * @return 0 with *out and *n, or -ENOMEM (then *out is NULL).
 */
int	gsym_builder_starts(const struct gsym_builder *b, uint64_t **out,
	    size_t *n);

/*
 * Where written bytes go, in order, in one or more calls (elfinfo's sink
 * has the same shape).  A non-zero return stops the writing and is
 * returned.
 */
typedef int (*gsym_sink_fn)(void *ctx, const void *buf, size_t len);

/* A sink that write()s to the descriptor *(int *)ctx.
 * @return 0 or -errno. */
int	gsym_fd_sink(void *ctx, const void *buf, size_t len);

/*
 * Sort, prune and write the GSYM to sink.  Call it once.
 * @param nfuncs  NULL, or the number of records written.
 * @return bytes written; -ENODATA with no functions; -EFBIG past 4 GiB;
 *         -ENOMEM; or sink's value.
 */
int64_t	gsym_builder_write(struct gsym_builder *b, gsym_sink_fn sink,
	    void *ctx, size_t *nfuncs);

/*
 * Insert [start, end) into r, n sorted {start, end} pairs with room for
 * one more, as LLVM's AddressRanges::insert does: an empty range is
 * ignored, overlapping ones are merged, ranges that only touch stay
 * apart.  @return the new number of pairs.
 */
size_t	gsym_ranges_insert(uint64_t *r, size_t n, uint64_t start,
	    uint64_t end);

/*
 * LLVM's line-table encoding of rows (file values used as they are),
 * relative to function start base, into out (at most cap bytes).  Pure,
 * for tests.
 * @return the length, or -ENOSPC when cap is too small.
 */
int	gsym_encode_lines(const struct gsym_row *rows, size_t nrows,
	    uint64_t base, unsigned char *out, size_t cap);

#endif

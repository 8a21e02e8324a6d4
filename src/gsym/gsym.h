/*
 * gsym: reader of LLVM's GSYM v1 symbolization format (doc/gsym.md).
 *
 * A GSYM file is mapped (or borrowed from the caller's memory) and every
 * offset and length in it is checked against its size before use, so a
 * hostile or truncated file gives -EBADMSG, never a crash.  Files of either
 * byte order are read.  Version 2 is rejected (-EPROTONOSUPPORT).
 *
 * Library-like: returns 0 or a negative errno and never logs.  A struct
 * gsym is immutable once opened: any number of threads may look up in it
 * at once.
 *
 * The writer is gsym_write.h; the DWARF converter gsym_dwarf.h.
 */
#ifndef SYMHUB_GSYM_H
#define SYMHUB_GSYM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GSYM_MAGIC		0x4753594du
#define GSYM_VERSION		1
#define GSYM_HEADER_SIZE	48
#define GSYM_UUID_MAX		20

/* Chunk types of a function record. */
#define GSYM_INFO_END		0
#define GSYM_INFO_LINES		1
#define GSYM_INFO_INLINE	2

/* Line table opcodes. */
#define GSYM_LT_END		0x00
#define GSYM_LT_SET_FILE	0x01
#define GSYM_LT_ADVANCE_PC	0x02
#define GSYM_LT_ADVANCE_LINE	0x03
#define GSYM_LT_FIRST_SPECIAL	0x04

/* Most frames one lookup returns (an inline chain deeper than this is a
 * corrupt file: -EBADMSG). */
#define GSYM_FRAMES_MAX		128

struct gsym;		/* opaque: an open GSYM file */
struct gsym_func;	/* opaque: one decoded function record */

struct gsym_header {
	uint32_t	magic;
	uint16_t	version;
	uint8_t		addr_off_size;
	uint8_t		uuid_size;
	uint64_t	base_address;
	uint32_t	num_addresses;
	uint32_t	strtab_offset;
	uint32_t	strtab_size;
	unsigned char	uuid[GSYM_UUID_MAX];
};

/* One source location of a lookup.  Strings point into the GSYM file:
 * valid while it stays open. */
struct gsym_frame {
	const char	*name;		/* function, or inlined function */
	uint64_t	 offset;	/* address - start of name's range */
	const char	*dir;		/* "" when none */
	const char	*base;		/* NULL: no file and line known */
	uint32_t	 line;
	int		 inlined;	/* every frame but the last */
};

/* Longest error message a lookup leaves in gsym_result.error. */
#define GSYM_ERROR_MAX		96

struct gsym_result {
	uint64_t		addr;		/* the address looked up */
	uint64_t		start;		/* of the function's range */
	uint32_t		size;		/* of it (0: a symbol without size) */
	size_t			nframes;	/* >= 1 on success */
	struct gsym_frame	frames[GSYM_FRAMES_MAX]; /* innermost first */
	/* On -EBADMSG: what is wrong, in llvm-gsymutil-19's words where it
	 * has some ("failed to extract file[7]"); "" otherwise. */
	char			error[GSYM_ERROR_MAX];
};

/*
 * Open the GSYM file at path (mapped read-only; the descriptor is closed
 * before return).
 * @param out  the reader, freed with gsym_free(); NULL on failure.
 * @return 0; -EBADMSG not a GSYM file, or one whose header, tables or
 *         string table do not fit in it; -EPROTONOSUPPORT a version other
 *         than 1; -errno from open/mmap.
 */
int	gsym_open(const char *path, struct gsym **out);

/* gsym_open() on an open descriptor, which stays the caller's. */
int	gsym_open_fd(int fd, struct gsym **out);

/* gsym_open() on len bytes at buf, which are not copied: they must stay
 * valid and unchanged until gsym_free(). */
int	gsym_open_mem(const void *buf, size_t len, struct gsym **out);

/*
 * Decode and check the 48-byte header at buf (len bytes available), in
 * either byte order, without looking at the rest of the file.
 * @param out  filled in host byte order; on -EPROTONOSUPPORT only
 *             magic and version are set (the version is the one found).
 * @return 0; -EBADMSG fewer than 48 bytes, bad magic, an AddrOffSize not
 *         in {1, 2, 4, 8} or a UUID size over 20; -EPROTONOSUPPORT a
 *         version other than 1 (found from the first 6 bytes).
 */
int	gsym_read_header(const void *buf, size_t len, struct gsym_header *out);

/* Unmap and free.  Accepts NULL. */
void	gsym_free(struct gsym *g);

/* The header, in host byte order. */
const struct gsym_header *gsym_header(const struct gsym *g);

/* 1 when the file's byte order is not the host's. */
int	gsym_swapped(const struct gsym *g);

/*
 * Look addr up as llvm-gsymutil-19 does (doc/gsym.md, "Lookup").
 * @return 0 with res filled; -ENOENT when addr is in no function ("is not
 *         in GSYM"); -EBADMSG when the record found is corrupt.
 */
int	gsym_lookup(const struct gsym *g, uint64_t addr,
	    struct gsym_result *res);

/*
 * The two halves of gsym_lookup(), for a caller that keeps decoded records
 * of hot functions: gsym_find() picks the record, gsym_decode() decodes
 * it once, gsym_func_lookup() answers any number of addresses from it.
 */

/* @return 0 with *index set (0 .. num_addresses-1); -ENOENT; -EBADMSG. */
int	gsym_find(const struct gsym *g, uint64_t addr, uint32_t *index);

/* Decode record index.  *out is freed with gsym_func_free(); it refers
 * into g and must not outlive it.
 * @return 0; -EBADMSG; -ENOMEM; -EINVAL for an index out of range. */
int	gsym_decode(const struct gsym *g, uint32_t index,
	    struct gsym_func **out);

/* Bytes of memory f holds (for a cache's budget). */
size_t	gsym_func_size(const struct gsym_func *f);

/* Accepts NULL. */
void	gsym_func_free(struct gsym_func *f);

/* @return 0; -ENOENT when addr is outside f's range (below its start, or
 *         past its end when its size is not 0); -EBADMSG as gsym_lookup(). */
int	gsym_func_lookup(const struct gsym *g, const struct gsym_func *f,
	    uint64_t addr, struct gsym_result *res);

/*
 * Print one lookup as `llvm-gsymutil-19 FILE --address=ADDR` prints it
 * (after its "Looking up addresses in" line): res when rc is 0, else
 * "0x%016x: error: ..." with LLVM's wording for rc (res->error when it
 * has one; res may be NULL when rc is not 0).
 */
void	gsym_print_result(FILE *fp, uint64_t addr, int rc,
	    const struct gsym_result *res);

/*
 * Print the whole file in the layout of `llvm-gsymutil-19 FILE`: header,
 * address table, address info offsets, files, string table, then each
 * function with its line table and inline tree.
 * @return 0, or -EBADMSG at the first corrupt record (what was printed
 *         so far stays printed).  As llvm-gsymutil does, a corrupt record
 *         is printed as "FunctionInfo @ 0x...: FunctionInfo:<error>" and
 *         the dump goes on with the next one; the result is still
 *         -EBADMSG.  A record with a chunk type other than 0, 1, 2 is
 *         reported the same way (LLVM 19's dump fails on it; lookups
 *         skip such chunks).
 */
int	gsym_dump(FILE *fp, const struct gsym *g);

#endif

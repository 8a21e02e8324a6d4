/*
 * dwline: the header of a DWARF line program, versions 2 to 5: its
 * directory and file tables, and where its opcodes are.  One reader for
 * the GSYM converter (which runs the program) and elfinfo (which lists
 * the files).  Every read is bounded by the unit; a table is at most as
 * long as the header's bytes.
 */
#ifndef SYMHUB_DWLINE_H
#define SYMHUB_DWLINE_H

#include <stddef.h>
#include <stdint.h>

struct dwline_sect {
	const unsigned char	*p;	/* NULL: absent */
	size_t			 len;
};

/* The sections a line program reads, decompressed. */
struct dwline_sects {
	struct dwline_sect	line, line_str, str;
	int			big;		/* byte order of the file */
};

/* DW_LNCT_LLVM_source: clang -gembed-source's text of the file, in
 * version 5 tables (not in libdw's dwarf.h). */
#define DWLINE_LNCT_LLVM_SOURCE	0x2001

struct dwline_file {
	const char	*name;
	uint64_t	 dir;		/* index: from 0 in version 5, else
					 * from 1 (0: the unit's directory) */
	/* The file's text embedded in the table (DWLINE_LNCT_LLVM_SOURCE),
	 * NUL-terminated in its section; NULL when the table carries none
	 * for it (LLVM writes "" for a file it has no text of). */
	const char	*source;
};

struct dwline {
	int		 version;
	unsigned	 minlen, line_range, opbase;
	int		 line_base;
	unsigned char	 oplen[256];	/* operands of standard opcodes */
	const char	**dirs;		/* strings in the sections */
	size_t		 ndirs, capdirs;
	struct dwline_file *files;
	size_t		 nfiles, capfiles;
	const unsigned char *prog, *end;	/* the opcodes */
	uint64_t	 next;		/* offset of the unit after this one */
};

/*
 * Read the header of the line program at off in s->line into t (whose
 * arrays are reused; a zeroed struct dwline is ready).
 * @return 0; -EINVAL for a header that cannot be read (out of bounds,
 *         version not 2 to 5, a form it does not take: strx needs the
 *         unit's str_offsets_base); -ENOMEM.
 */
int	dwline_header(const struct dwline_sects *s, uint64_t off,
	    struct dwline *t);

/* The string at off in s, or NULL. */
const char	*dwline_str(const struct dwline_sect *s, uint64_t off);

/* Free t's arrays.  Accepts a zeroed t. */
void	dwline_free(struct dwline *t);

#endif

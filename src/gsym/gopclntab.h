/*
 * gopclntab: reads the function table of a Go program's .gopclntab
 * section (Go 1.16 and later; doc/gsym.md, "Go: .gopclntab"): for each
 * function its entry, its end, its name and its pc -> file:line rows, the
 * innermost position at each pc, as `go tool addr2line` reports it.
 *
 * Pure: it reads only the bytes handed to it, allocates nothing, never
 * logs, and returns 0 or a negative errno.  Every read is checked against
 * the section's size.  The work of all the calls on one table together
 * (steps of its pc-value tables, bytes of names scanned) is bounded by
 * GOPCLNTAB_WORK_PER_BYTE times the section's size: a sound table needs a
 * fraction of one unit a byte (0.13 for a Go 1.19 hello world).
 */
#ifndef SYMHUB_GOPCLNTAB_H
#define SYMHUB_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

#define GOPCLNTAB_WORK_PER_BYTE	16

/* The header's magic number, by the Go release that introduced it. */
#define GOPCLNTAB_MAGIC_116	0xfffffffaU
#define GOPCLNTAB_MAGIC_118	0xfffffff0U
#define GOPCLNTAB_MAGIC_120	0xfffffff1U

struct gopclntab {
	const unsigned char	*p;		/* the section's bytes */
	size_t			 len;
	int			 big;		/* byte order */
	unsigned		 version;	/* 116, 118 or 120 */
	unsigned		 quantum;	/* pc unit: 1, 2 or 4 */
	unsigned		 ptrsize;	/* 4 or 8 */
	uint64_t		 text;		/* base of entry offsets (118+) */
	uint32_t		 nfunc;
	/* Where the tables start in p (runtime's pcHeader offsets). */
	size_t			 funcname, cu, filetab, pctab, functab;
	uint64_t		 work;		/* units left */
};

struct gopclntab_func {
	uint64_t	 entry;
	uint64_t	 end;		/* where its line table ends */
	const char	*name;		/* NUL-terminated, in the section */
	size_t		 namelen;
};

/* A row: pcs from addr on (to the next row or the function's end) are
 * at file:line.  file is NUL-terminated, in the section, or NULL when
 * the table gives none (then line may be negative too). */
struct gopclntab_row {
	uint64_t	 addr;
	const char	*file;
	int32_t		 line;
};

/* @return 0 to go on; anything else stops the walk and is returned. */
typedef int (*gopclntab_row_fn)(void *ctx, const struct gopclntab_row *row);

/*
 * Read the header of the table in the len bytes at p (which must stay
 * valid while t is used) into t.
 * @param text  the address of runtime.text, for a Go 1.18+ table whose
 *              header holds 0 there (the word is relocated at run time
 *              in a position-independent executable); else ignored.
 * @return 0; -ENOEXEC when p is no Go 1.16+ table (Go 1.2's magic
 *         0xfffffffb included); -EINVAL when its header points outside
 *         the section.
 */
int	gopclntab_open(const void *p, size_t len, uint64_t text,
	    struct gopclntab *t);

/*
 * Function i (< t->nfunc) into f, handing its rows to fn in address
 * order, each row covering at least one byte, the first at f->entry.
 * A function without a line table gets no rows and ends where the next
 * one starts.  Rows stop at the next function's entry whatever the table
 * says.
 * @return 0; -EINVAL when this function's record is corrupt (the others
 *         may still be read); -ENOEXEC when the table's work budget is
 *         spent (no further call will succeed); or fn's value.  On
 *         failure rows already handed to fn stay handed.
 */
int	gopclntab_func(struct gopclntab *t, uint32_t i,
	    struct gopclntab_func *f, gopclntab_row_fn fn, void *ctx);

#endif

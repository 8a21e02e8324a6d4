/*
 * gsym_dwarf: converts an ELF file's DWARF (versions 4 and 5, compressed
 * sections, a separate .debug file) and .symtab into GSYM v1, as
 * llvm-gsymutil --convert does (doc/gsym.md, "Converting from
 * DWARF"), deterministically.  A Go program's .gopclntab gives the
 * functions DWARF lacks, with their lines (doc/gsym.md, "Go:
 * .gopclntab"): all of them when it was built with -ldflags=-w.
 *
 * Library-like: returns 0 or a negative errno and never logs.  Call
 * elfinfo_init() (or elf_version()) once before the first use.
 */
#ifndef SYMHUB_GSYM_DWARF_H
#define SYMHUB_GSYM_DWARF_H

#include <stddef.h>
#include <stdint.h>

#include "gsym_write.h"

#define GSYM_THREADS_MAX	4

struct gsym_convert_stats {
	size_t	dwarf_funcs;	/* function ranges read from DWARF */
	size_t	symtab_funcs;	/* STT_FUNC symbols in executable sections */
	size_t	go_funcs;	/* functions from .gopclntab that DWARF
				 * lacks */
	size_t	funcs;		/* records written, after pruning */
	uint64_t bytes;		/* size of the GSYM written */
};

struct gsym_convert_opts {
	unsigned	 threads;	/* how many threads walk the DWARF
					 * (units are shared out, the output
					 * is the same bytes whatever the
					 * number); 0: one an online CPU; at
					 * most GSYM_THREADS_MAX */
	const int	*cancel;	/* NULL, or a flag another thread may
					 * set (__atomic_store_n) to end the
					 * conversion early with -ECANCELED;
					 * it is read as it runs, so it must
					 * outlive the call */
};

/*
 * Convert the ELF file open on fd and hand the GSYM to sink (gsym_fd_sink
 * to write it to a descriptor).  fd is not closed.
 *
 * Time and memory are bounded by the input's size, whatever its bytes:
 * a walk of DIEs that does not move forward (a corrupt abbreviation or
 * DW_AT_sibling) or meets more DIEs than its unit has room for ends the
 * conversion with -ENOEXEC.
 * @param opts  NULL for the defaults (threads 0, no cancel flag).
 * @param st  NULL, or filled on success.
 * @return 0; -ENOEXEC when fd is not ELF, its DWARF is corrupt, or its
 *         .gopclntab passes its work budget (gopclntab.h);
 *         -ENODATA when it has nothing to convert (no function in DWARF,
 *         .gopclntab or .symtab, e.g. a stripped C binary); -EFBIG when the GSYM would
 *         pass 4 GiB; -ECANCELED when *opts->cancel was set; -ENOMEM; or
 *         sink's value.
 */
int	gsym_dwarf_convert_opts(int fd, const struct gsym_convert_opts *opts,
	    gsym_sink_fn sink, void *ctx, struct gsym_convert_stats *st);

/* gsym_dwarf_convert_opts() with threads and no cancel flag. */
int	gsym_dwarf_convert(int fd, unsigned threads, gsym_sink_fn sink,
	    void *ctx, struct gsym_convert_stats *st);

#endif

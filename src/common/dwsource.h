/*
 * dwsource: a source file as the debuginfo itself knows it.  Finds the
 * file a request names among the files the line tables name, and the
 * file's text when the table embeds it (clang -gdwarf-5 -gembed-source:
 * DW_LNCT_LLVM_source, which libdw 0.188's dwarf_getsrcfiles() does not
 * give: it is read here with dwline's bounded reader).
 *
 * Matching (doc/protocol.md, "Sources from the debuginfo"): every path
 * the tables name is made whole as libdw does (the file's directory, then
 * the unit's compilation directory when still relative) and canonical as
 * webapi_canon_path() makes a request's; a path that stays relative (a
 * Debian build's "./libio", -fdebug-prefix-map=$PWD=.) is rooted at "/".
 * A unit's own files under a relative compilation directory are also
 * known as libdw's callers spell them, with that directory twice
 * ("./libio/./libio/ioputs.c"): either spelling finds the file, recorded
 * under the first.  The request matches a path equal to it; failing
 * that, the paths that end in it at a "/" (a relative request:
 * "libio/ioputs.c").  Several
 * different such paths are an ambiguity, not a guess.  Only the names of
 * the one debuginfo are searched, never the file system.
 *
 * Pure: no I/O, no logging; the ELF is read by elfinfo_line_sections().
 */
#ifndef SYMHUB_DWSOURCE_H
#define SYMHUB_DWSOURCE_H

#include <stddef.h>

#include "base/buf.h"
#include "base/strmap.h"
#include "dwline.h"

/*
 * The files the tables name, kept to match the next requests against
 * without reading the tables again: per file a flag byte ('1': its text
 * is embedded), its path, NUL, its other spelling ("" for none), NUL.
 */
struct dwsource_names {
	struct buf	 b;
	size_t		 n;
	int		 over;		/* past DWSOURCE_NAMES_MAX: partial */
};

/* Bytes a list of names may take (a build of 100,000 files fits). */
#define DWSOURCE_NAMES_MAX	(16u << 20)

struct dwsource {
	const char	*want;		/* canonical, absolute: the caller's */
	/* NULL, or where every file seen is added (the caller's). */
	struct dwsource_names *names;
	size_t		 seen;		/* files seen */
	int		 embedded;	/* the match's text is embedded (text
					 * is NULL after dwsource_match()) */
	/* The match: the DWARF's path, canonical (malloc'd; NULL: none). */
	char		*path;
	int		 exact;		/* path, or its other spelling, is
					 * want */
	/* Its embedded text: points into the sections, valid while they
	 * are (NULL: none embedded). */
	const char	*text;
	size_t		 textlen;
	/* Another path that ends in want (malloc'd): ambiguous unless an
	 * exact match comes. */
	char		*other;
	struct strmap	 listed;	/* names' paths -> flag offset */
	struct buf	 key;		/* scratch for its key */
	char		*tmp, *tmp2;	/* scratch for a path */
	size_t		 tmpsz, tmp2sz;
};

/*
 * Look for want (canonical and absolute, as webapi_parse() gives a
 * source path; kept by the caller while d is used) in every line table
 * of s, version 5 only (the others embed nothing).
 * @return 0 (d->path set, and d->text when embedded); -ENOENT when no
 *         table names it; -ENOTUNIQ when no path equals it and several
 *         end in it (d->path and d->other two of them); -ENOTSUP when a
 *         table is not version 5 (ask dwsource_name() with libdw's
 *         names); -EINVAL for a table that cannot be read; -ENOMEM.
 *         Free d with dwsource_free() in every case.
 */
int	dwsource_find(struct dwsource *d, const struct dwline_sects *s,
	    const char *want);

/*
 * Match one whole path (elfinfo_sources()'s, for tables dwsource_find()
 * does not read) against d->want: the same rules, with no text.
 * @return 0 to go on; -ENOMEM.
 */
int	dwsource_name(struct dwsource *d, const char *path);

/*
 * A rooted canonical path that begins with one directory sequence twice
 * ("/libio/libio/ioputs.c", from the compilation directory put in front
 * twice): the length of that sequence (the path without it begins
 * there), else 0.
 */
size_t	dwsource_doubled(const char *canon);

/*
 * Match d->want against a list of names from an earlier find: the same
 * rules, with d->embedded saying whether the match's text is embedded
 * (find it again to read it).  @return as dwsource_find() (never
 * -ENOTSUP or -EINVAL).
 */
int	dwsource_match(struct dwsource *d, const struct dwsource_names *nl);

/* Free nl's bytes and zero it.  Accepts a zeroed nl. */
void	dwsource_names_free(struct dwsource_names *nl);

/* The result of the matches so far: as dwsource_find(). */
int	dwsource_result(const struct dwsource *d);

/* Free d's strings and zero it (want and names stay, names emptied).
 * Accepts a zeroed d. */
void	dwsource_free(struct dwsource *d);

#endif

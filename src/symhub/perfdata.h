/*
 * perfdata: the build-ids a perf.data profile names, read without perf.
 *
 * Three places hold them, in the order they are looked at:
 *  - the build-id table (the HEADER_BUILD_ID feature section) that
 *    `perf record` writes for every module that took a sample, the
 *    default;
 *  - PERF_RECORD_HEADER_BUILD_ID events, in a profile written to a pipe;
 *  - PERF_RECORD_MMAP2 events that carry a build-id (`perf record
 *    --buildid-mmap`), which name every module mapped, hit or not.
 * The events are read only when there is no table.  Events inside
 * PERF_RECORD_COMPRESSED records (`perf record -z`) are not unpacked;
 * they are counted so that the caller can say why nothing was found.
 *
 * The layout is tools/perf/Documentation/perf.data-file-format.txt in the
 * Linux tree; doc/perf.md has what this reader relies on.  Both byte
 * orders are read.  Every offset and size is checked against the file
 * before use; a profile being appended to is read as far as it goes.
 */
#ifndef SYMHUB_PERFDATA_H
#define SYMHUB_PERFDATA_H

#include <stddef.h>
#include <stdio.h>

#define PERFDATA_BUILDID_MAX	20	/* perf's BUILD_ID_SIZE */

struct perfdata_module {
	unsigned char	 id[PERFDATA_BUILDID_MAX];
	size_t		 idlen;		/* 1 to PERFDATA_BUILDID_MAX */
	const char	*name;		/* as recorded: a path, "[vdso]",
					 * "[kernel.kallsyms]"; valid during
					 * the callback only */
	int		 kernel;	/* recorded in kernel mode (the kernel,
					 * its modules, a guest's kernel) */
};

struct perfdata_info {
	int		 pipe;		/* written to a pipe (no header
					 * sections) */
	unsigned long	 records;	/* build-id records read, zero ids
					 * and duplicates included */
	unsigned long	 compressed;	/* PERF_RECORD_COMPRESSED events seen */
};

/*
 * Call each() for every build-id the profile read from fd names, in file
 * order; the same build-id may come more than once (one per process that
 * mapped it).  An all-zero build-id is not passed on.
 * @param info  filled in also on failure (how far it got).
 * @param why   on -ENOEXEC, set to a static phrase saying what is wrong.
 * @return 0; each()'s first non-zero result; -ENOEXEC not a perf.data
 *         file, or one whose header, table or events are corrupt (what was
 *         passed to each() before the damage was sound);
 *         -EPROTONOSUPPORT the old "PERFFILE" format (perf before 2010);
 *         -EIO a read failed; -ENOMEM.
 */
int	perfdata_buildids(int fd,
	    int (*each)(void *ctx, const struct perfdata_module *m),
	    void *ctx, struct perfdata_info *info, const char **why);

/*
 * Can a module's name (the path perf recorded) name a directory below
 * perf's build-id cache?  perf files a module at DIR/NAME/ID, so NAME must
 * be absolute, with no empty, "." or ".." component ("/..", "/./..",
 * "/a/../../x" would lead out of DIR), no component over 255 bytes
 * (NAME_MAX), at most PERFDATA_NAME_MAX bytes, and not under DIR/.build-id
 * (perf's index of links).  The kernel records names resolved, so a
 * profile perf wrote never fails this.  Other bytes are allowed; the
 * caller escapes them when it prints the name.
 * @return NULL when it can; else a static phrase saying why not.
 */
#define PERFDATA_NAME_MAX	2048
const char *perfdata_name_check(const char *name);

/*
 * The buildid.dir setting of one perf config file (git-config syntax, as
 * perf reads it: "[buildid]" then "dir = PATH"; sections and keys in any
 * case, values quoted or not, "#" and ";" comments).  The last one in the
 * file wins.  Lines over 4 KiB are skipped.
 * @return 1 with out set; 0 when the file does not set it;
 *         -ENAMETOOLONG when the value does not fit out.
 */
int	perfdata_config_buildid_dir(FILE *fp, char *out, size_t outlen);

#endif

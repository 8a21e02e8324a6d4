/*
 * scan: index ELF files under the scan directories in place, as
 * `debuginfod -F` does.  Executables and shared objects become
 * "executable" records, files with DWARF "debuginfo" records, and, for
 * source files under a --source-root, "source" records.  Files are
 * referenced, not copied; a rescan skips files whose identity (device,
 * inode, size, mtime) is unchanged and forgets files that vanished.
 *
 * Packages (-R, -U, -Z, as `debuginfod -R -U -Z`): their ELF members are
 * indexed the same way, as records pointing into the package
 * (CACHE_F_MEMBER), extracted on demand; their other members are sources
 * for any debuginfo, in any package, whose DWARF names them.
 */
#ifndef SYMHUB_SCAN_H
#define SYMHUB_SCAN_H

#include <stdint.h>

#include "cache/cache.h"
#include "config.h"

struct scan;

/*
 * @param c    the store; must outlive the scanner.
 * @param cfg  scan_dirs and source_roots are copied (made absolute).
 * @return 0 and *out, or -errno.
 */
int	scan_create(struct cache *c, const struct config *cfg,
	    struct scan **out);

/* Stop the thread if running and free.  Accepts NULL. */
void	scan_free(struct scan *s);

/*
 * One pass over every scan directory.  force: re-read unchanged files.
 * @return number of files (re)indexed, or -errno.
 */
int	scan_pass(struct scan *s, int force);

/* Start the background thread: a pass every interval seconds (0: only
 * when triggered), the first one interval seconds from now.
 * @return 0 or -errno. */
int	scan_start(struct scan *s, uint64_t interval);

/* Called on the scanning thread for each debuginfo newly indexed (new or
 * changed file), with its key; set before the first pass.  NULL: none. */
typedef void (*scan_new_fn)(void *ctx, const struct cache_key *key);
void	scan_on_debuginfo(struct scan *s, scan_new_fn fn, void *ctx);

/* What the last pass found under one scan directory. */
struct scan_dir_info {
	const char	*path;		/* absolute; valid while s is */
	uint64_t	 files;		/* regular files under it, ELF or not */
	uint64_t	 changed;	/* of those, read: new or changed */
	int64_t		 last;		/* the pass's end, wall s; 0: none yet */
	int		 err;		/* errno of its walk (ENOENT); 0 */
};

/*
 * Copy the state of up to max scan directories, in their order.
 * @return how many there are (may exceed max).
 */
size_t	scan_dirs(struct scan *s, struct scan_dir_info *out, size_t max);

/* Ask the thread for a pass as soon as it is idle (SIGHUP). */
void	scan_trigger(struct scan *s);

/*
 * A record for key referring to a scanned file could not be served
 * (-ESTALE): re-index what it refers to now.
 * @return 0 when key may have a fresh record (look it up again);
 *         -ENOENT when the file is gone or no longer one to serve (the
 *         caller drops the record: records.h); -EIO.
 */
int	scan_refresh(struct scan *s, const struct cache_key *key,
	    const struct cache_record *stale);

/*
 * Open the bytes of rec, a member of a package (CACHE_F_MEMBER): its copy
 * extracted before, if it was from the package as it is now, or else
 * extracted now (into the store as a derived CACHE_MEMBER entry, tied to
 * the package: dropped when it changes or vanishes), an ELF member
 * checked to be the one key names.
 * @return 0 with *fd; -ESTALE when the package changed or vanished;
 *         -EIO when it cannot be read (logged); -ENOENT; -errno.
 */
int	scan_member_open(struct scan *s, const struct cache_key *key,
	    const struct cache_record *rec, int *fd);

#endif

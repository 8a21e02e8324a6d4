/*
 * srcbundle: a source bundle, the source files of one build sent with its
 * debuginfo (symhub upload --sources, PUT /buildid/ID/sources).
 *
 * On the wire and in the store it is a POSIX (pax) tar, compressed with
 * zstd (gzip where libarchive lacks zstd), one regular member per source
 * file, named by the file's absolute path without its leading '/'
 * ("home/ci/app/main.c" for /home/ci/app/main.c).  The reader takes tar
 * compressed with zstd, gzip or xz, or not at all, and nothing else: no
 * other archive format, and none of libarchive's filters that run an
 * external program.
 *
 * The reader refuses the whole bundle for a member that is not a plain
 * file under a relative, canonical name: an absolute name, a ".." or "."
 * segment, "//", a symbolic or hard link, a device; directories are
 * passed over.  Whether the DWARF names a member is the caller's to
 * decide (it has the debuginfo).  No I/O besides the descriptors given,
 * no logging.
 */
#ifndef SYMHUB_SRCBUNDLE_H
#define SYMHUB_SRCBUNDLE_H

#include <stddef.h>
#include <stdint.h>

#define SRCBUNDLE_WHY_MAX	256

/* Bounds of what the reader unpacks. */
struct srcbundle_limits {
	uint64_t	bytes_max;	/* unpacked bytes of all members */
	uint64_t	members_max;	/* members (directories included) */
};

/*
 * Called by srcbundle_read() for each member, in archive order.
 * @param path  the member's absolute path ("/home/ci/app/main.c"),
 *              canonical; valid during the call.
 * @param mtime its modification time, seconds since the epoch, as the
 *              tar says; 0 when it says none (or one before 1970).
 * @param data  its bytes (len of them), valid during the call.
 * @return 0 to go on; anything else ends the walk and is returned.
 */
typedef int (*srcbundle_fn)(void *ctx, const char *path, int64_t mtime,
    const void *data, size_t len);

/*
 * Read the bundle of len bytes at buf and call fn for each member.
 * @param why  receives one line when the bundle is refused.
 * @return 0; -EBADMSG a corrupt or not-tar bundle; -EPERM a member
 *         refused (why names it); -EFBIG more unpacked bytes than
 *         lim->bytes_max; -E2BIG more members than lim->members_max;
 *         -ENOMEM; or fn's value.
 */
int	srcbundle_read_mem(const void *buf, size_t len,
	    const struct srcbundle_limits *lim, srcbundle_fn fn, void *ctx,
	    char why[SRCBUNDLE_WHY_MAX]);

/* srcbundle_read_mem() of the file open on fd, from its start. */
int	srcbundle_read_fd(int fd, const struct srcbundle_limits *lim,
	    srcbundle_fn fn, void *ctx, char why[SRCBUNDLE_WHY_MAX]);

/*
 * Is path (absolute) a name a bundle may hold?  Canonical, no "." or ".."
 * segment, not "/" alone.  @return 1 or 0.
 */
int	srcbundle_name_ok(const char *path);

struct srcbundle_writer;

/*
 * Start writing a bundle; each block written goes to out(ctx, buf, len),
 * which returns 0 or -errno.  Members carry the file's modification time
 * (a debugger compares it with the executable's) and no owners or modes
 * of the builder's: the same files, unchanged, make the same bytes.
 * @return 0 with *w (finish with srcbundle_write_close()); -ENOMEM; -EIO.
 */
int	srcbundle_write_open(int (*out)(void *ctx, const void *buf,
	    size_t len), void *ctx, struct srcbundle_writer **w);

/* Add the file path (absolute, srcbundle_name_ok()) with len bytes at
 * data, modified at mtime (seconds since the epoch; 0 for none).
 * @return 0, -EINVAL for a name refused, -EIO, or out's -errno. */
int	srcbundle_write_add(struct srcbundle_writer *w, const char *path,
	    int64_t mtime, const void *data, size_t len);

/* Finish (close) and free w; abort: discard whatever is unwritten.
 * Accepts NULL.  @return 0, -EIO, or out's -errno. */
int	srcbundle_write_close(struct srcbundle_writer *w, int abort);

#endif

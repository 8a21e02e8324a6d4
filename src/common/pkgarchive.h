/*
 * pkgarchive: the members of the packages and archives distros ship
 * debug files in, read with libarchive (never by hand, never unpacked to
 * disk by their own names):
 *
 * - PKGA_AUTO: whatever libarchive recognises in the file itself (rpm,
 *   tar with gzip, xz, zstd or bzip2, zip, cpio), and Debian's .deb and
 *   .ddeb (an ar archive whose data.tar.* member is read in turn);
 * - PKGA_CMD: the output of a command given the file's path (elfutils'
 *   -Z EXT=CMD: `CMD 'PATH'` run by /bin/sh), read as PKGA_AUTO.
 *
 * Member names are given as elfutils gives them in X-DEBUGINFOD-FILE:
 * absolute, a leading "./" dropped ("./usr/bin/x" and "usr/bin/x" are
 * "/usr/bin/x").  A name that is absolute in the archive, or has a ".."
 * component, is refused (reported, never given).
 *
 * Decompression bombs: a member larger than limits.member_max is refused,
 * and the walk stops when the bytes unpacked pass limits.ratio_max times
 * the archive's size (plus 1 MiB).  No logging: the caller reports.
 */
#ifndef SYMHUB_PKGARCHIVE_H
#define SYMHUB_PKGARCHIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum pkga_type {
	PKGA_AUTO = 0,
	PKGA_CMD
};

struct pkga_limits {
	uint64_t	member_max;	/* bytes of one member; 0: none */
	uint64_t	ratio_max;	/* unpacked / packed; 0: none */
};

#define PKGA_RATIO_DEFAULT	1000
#define PKGA_WHY_MAX		160	/* bytes of a reason, with its NUL */

struct pkga_member;	/* opaque: the member being visited */

/*
 * Called for each regular-file member, in archive order.  name is the
 * canonical name (above); size the member's size from its header.  fn may
 * read the member's bytes with pkga_read() (all, some or none).
 * @return 0 to go on, > 0 to stop the walk (pkga_walk() returns it), or
 *         a negative errno to stop with that error.
 */
typedef int (*pkga_member_fn)(void *ctx, const char *name, uint64_t size,
    struct pkga_member *m);

/* A member refused (its name, as in the archive; why, static). */
typedef void (*pkga_refused_fn)(void *ctx, const char *name,
    const char *why);

/*
 * Read up to len bytes of the member being visited.
 * @return bytes read (0 at its end), or -EBADMSG for a corrupt member.
 */
ssize_t	pkga_read(struct pkga_member *m, void *buf, size_t len);

/*
 * Walk the members of the archive open on fd (read from its current
 * offset; path names it, for PKGA_CMD's command and for messages).
 * @param cmd   PKGA_CMD's command; NULL otherwise.
 * @param why   on failure, the reason (PKGA_WHY_MAX bytes).
 * @return 0 after the last member; fn's positive result; -EBADMSG for an
 *         archive libarchive cannot read (corrupt, truncated, unknown
 *         format); -EFBIG when the bomb bound was passed; -ECHILD when
 *         the command failed; -ENOMEM; fn's negative result.
 */
int	pkga_walk(int fd, const char *path, enum pkga_type type,
	    const char *cmd, const struct pkga_limits *limits,
	    pkga_member_fn fn, pkga_refused_fn refused, void *ctx,
	    char *why);

/*
 * The canonical name of member name (above), into out (size len).
 * @return 0, or -EINVAL (absolute, "..", empty) with *why set, or
 *         -ENAMETOOLONG.
 */
int	pkga_member_name(const char *name, char *out, size_t len,
	    const char **why);

/* Where pkga_extract() puts bytes.  @return 0 or -errno (which stops
 * the extraction and is returned). */
typedef int (*pkga_sink_fn)(void *ctx, const void *buf, size_t len);

/*
 * Give the bytes of the member named name (canonical) of the archive open
 * on fd to sink, in order.
 * @return 0 with *size set; -ENOENT when there is no such member; the
 *         errors of pkga_walk(); sink's error.
 */
int	pkga_extract(int fd, const char *path, enum pkga_type type,
	    const char *cmd, const struct pkga_limits *limits,
	    const char *name, pkga_sink_fn sink, void *sctx, uint64_t *size,
	    char *why);

/*
 * Seeking (xzseek.h): in a package whose tar or cpio is compressed with
 * xz in several blocks (a .deb's data.tar.xz, an rpm's payload, a
 * .tar.xz), where each member starts can be noted while it is walked,
 * and the member extracted later from there: its block decoded, not all
 * that comes before it.  The note is opaque bytes, to keep with the
 * member's record; it is checked when used (the member's header must be
 * where it says), and a package that cannot be read so is read from its
 * start.
 */
#define PKGA_SEEK_MAX	32	/* bytes of a note */

/*
 * Where the member being visited starts, into out (PKGA_SEEK_MAX bytes).
 * @return the note's length, or 0 when the member cannot be sought to
 *         (not multi-block xz, a command's output, a sparse member, an
 *         archive whose xz index is unreadable).
 */
size_t	pkga_member_seek(struct pkga_member *m, unsigned char *out);

/*
 * Give the bytes of a member to sink, from where seek (seeklen bytes from
 * pkga_member_seek(), the archive unchanged since) says it starts.
 * @param size      the member's size, as walked.
 * @param unpacked  on return, the bytes decompressed to get them.
 * @return 0; -EBADMSG with why when the archive cannot be read so (a bad
 *         note, a corrupt xz index or block, no such header there: read
 *         it with pkga_extract() then; sink has had nothing unless the
 *         block was corrupt in the member's bytes); -ENOMEM; -errno of a
 *         read; sink's error.
 */
int	pkga_extract_at(int fd, const unsigned char *seek, size_t seeklen,
	    uint64_t size, pkga_sink_fn sink, void *sctx, uint64_t *unpacked,
	    char *why);

#endif

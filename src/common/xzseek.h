/*
 * xzseek: random access into an .xz stream of several blocks, through the
 * index at its end (liblzma), as elfutils 0.192 reads kernel packages:
 * the block that holds an offset of the uncompressed stream is found in
 * the index and decoded from its start, so a read near the end costs one
 * block, not the whole stream.  Debian's, Fedora's and Ubuntu's packages
 * are compressed by several threads, hence in blocks.
 *
 * No logging: the caller reports.
 */
#ifndef SYMHUB_XZSEEK_H
#define SYMHUB_XZSEEK_H

#include <stddef.h>
#include <stdint.h>

struct xzseek;

/*
 * Read the index of the .xz stream that ends at offset end of the file
 * open on fd (the last stream there, without stream padding after it).
 * fd is read with pread() only and stays the caller's.
 * @return 0 with *out (xzseek_free() it); -EBADMSG with *why (static)
 *         when there is no index to trust (not xz, truncated, corrupt);
 *         -ENOMEM; -errno of a read.
 */
int	xzseek_open(int fd, uint64_t end, struct xzseek **out,
	    const char **why);

/* Accepts NULL. */
void	xzseek_free(struct xzseek *x);

/* Where the stream starts in the file. */
uint64_t xzseek_start(const struct xzseek *x);
/* Its blocks, and the bytes it decompresses to. */
uint64_t xzseek_blocks(const struct xzseek *x);
uint64_t xzseek_size(const struct xzseek *x);

/* Where xzseek_read() gives bytes: @return 0, or -errno to stop. */
typedef int (*xzseek_fn)(void *ctx, const void *buf, size_t len);

/*
 * Give bytes [off, off + len) of the uncompressed stream to fn, in order,
 * decoding from the start of the block that holds off.
 * @param unpacked  the bytes decoded (those before off too) are added to
 *                  it.
 * @return 0; -EBADMSG with *why for a range past the stream's end or a
 *         corrupt block (the block's own check is verified only when it
 *         is decoded to its end); -ENOMEM; -errno of a read; fn's error.
 */
int	xzseek_read(struct xzseek *x, uint64_t off, uint64_t len,
	    xzseek_fn fn, void *ctx, uint64_t *unpacked, const char **why);

#endif

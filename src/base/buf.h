/*
 * buf: a growable byte buffer, and the growth of arrays.
 *
 * A zeroed struct buf is empty and ready.  The first failure is sticky:
 * err becomes -ENOMEM, later calls do nothing and return it, so a writer
 * of many pieces checks once at the end.  A user may set err to an error
 * of its own (-EFBIG past a limit of its format) to the same effect.
 */
#ifndef SYMHUB_BUF_H
#define SYMHUB_BUF_H

#include <stddef.h>
#include <string.h>

struct buf {
	unsigned char	*p;	/* owned; NULL while empty */
	size_t		 len;	/* bytes in use */
	size_t		 cap;	/* bytes allocated */
	int		 err;	/* 0, or the first failure (sticky) */
};

/* Room for n more bytes.  @return 0 or -ENOMEM. */
int	buf_reserve(struct buf *b, size_t n);

/* buf_add() when the bytes do not fit, or b has failed. */
int	buf_add_grow(struct buf *b, const void *p, size_t n);

/* Append n bytes.  @return 0 or -ENOMEM.  Inline: JSON writers append
 * a few bytes at a time, and the call cost more than the copy. */
static inline int
buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->err == 0 && n > 0 && n <= b->cap - b->len) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
		return 0;
	}
	return buf_add_grow(b, p, n);
}

/* Append a NUL-terminated string, without its NUL. */
int	buf_puts(struct buf *b, const char *s);

/* Append formatted text (no NUL is kept after it).  @return 0 or -ENOMEM
 * (-EINVAL for a format vsnprintf refuses). */
int	buf_printf(struct buf *b, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* Release the bytes and zero b.  Accepts a zeroed b. */
void	buf_free(struct buf *b);

/*
 * Make the array *pp of elsize-byte elements hold at least need of them,
 * doubling its capacity *cap (from 16), so that n appends cost O(n).
 * pp is the address of the array's pointer (of any element type).
 * @return 0; -ENOMEM (the array and *cap are unchanged).
 */
int	array_grow(void *pp, size_t *cap, size_t need, size_t elsize);

#endif

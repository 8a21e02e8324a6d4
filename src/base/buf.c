/*
 * buf: see buf.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

int
array_grow(void *pp, size_t *cap, size_t need, size_t elsize)
{
	void	*p, *np;
	size_t	 ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elsize)
		return -ENOMEM;
	/* Through memcpy: *pp is a pointer of some other type. */
	memcpy(&p, pp, sizeof(p));
	if ((np = realloc(p, ncap * elsize)) == NULL)
		return -ENOMEM;
	memcpy(pp, &np, sizeof(np));
	*cap = ncap;
	return 0;
}

int
buf_reserve(struct buf *b, size_t n)
{
	size_t need;

	if (b->err)
		return b->err;
	if (n > SIZE_MAX - b->len)
		return b->err = -ENOMEM;
	need = b->len + n;
	/* Bytes, not elements: start at a page rather than at 16. */
	if (b->cap == 0 && need < 4096)
		need = 4096;
	if (array_grow(&b->p, &b->cap, need, 1) != 0)
		return b->err = -ENOMEM;
	return 0;
}

int
buf_add_grow(struct buf *b, const void *p, size_t n)
{
	int rc;

	if (n == 0)
		return b->err;
	if ((rc = buf_reserve(b, n)) != 0)
		return rc;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

int
buf_puts(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list	ap;
	int	n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return b->err ? b->err : -EINVAL;
	/* One more for the NUL vsnprintf writes; it is not counted in len. */
	if ((rc = buf_reserve(b, (size_t)n + 1)) != 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void
buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/*
 * rd: a bounds-checked reader of bytes in memory, for the binary parsers
 * (DWARF, perf.data).
 * A read past the end sets bad (and yields 0 or NULL) instead of reading
 * on: check bad once after a run of reads.  Header only.
 */
#ifndef SYMHUB_RD_H
#define SYMHUB_RD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct rd {
	const unsigned char	*p, *end;
	int			 bad;
	int			 big;		/* byte order of the file */
};

/* An n-byte (1..8) unsigned integer in the file's byte order; ULEB128,
 * SLEB128; a NUL-terminated string in place (or NULL); a skip.  Inline:
 * the GSYM converter calls them for every byte of a line program. */
static inline uint64_t
rd_fixed(struct rd *r, size_t n)
{
	uint64_t v = 0;
	size_t i;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		r->p = r->end;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * (r->big ? n - 1 - i : i));
	r->p += n;
	return v;
}

static inline uint64_t
rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		unsigned char c = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static inline int64_t
rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		unsigned char c = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80)) {
			if (shift < 64 && (c & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	r->bad = 1;
	return 0;
}

static inline const char *
rd_cstr(struct rd *r)
{
	const unsigned char *nul;
	const char *s;

	if (r->bad || (nul = memchr(r->p, 0, (size_t)(r->end - r->p))) ==
	    NULL) {
		r->bad = 1;
		r->p = r->end;
		return NULL;
	}
	s = (const char *)r->p;
	r->p = nul + 1;
	return s;
}

static inline void
rd_skip(struct rd *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->end - r->p) < n) {
		r->bad = 1;
		r->p = r->end;
		return;
	}
	r->p += n;
}

#endif

/* Fuzz the pprof profile reader of POST /symbolize/pprof (pprof.h): any
 * bytes, gzip-compressed or not, through pprof_read(); a profile it takes
 * is filled in from made-up frames (an inline chain, a mangled name, a
 * frame without a file), written, and must then read back: whatever the
 * hub answers, the hub itself takes again, as one whole gzip member.
 * Bytes not gzip'd are also given gzip'd, in blocks ending at odd bits,
 * whose answer (some of its blocks the input's) must inflate to the
 * same bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <zlib.h>

#include "fuzz.h"
#include "symhubd/pprof.h"

static int
lookup(void *ctx, size_t mod, uint64_t off, struct gsym_result *res)
{
	size_t	n = *(size_t *)ctx;

	if (mod >= n)
		abort();
	if (off % 7 == 0)
		return -ENOENT;
	if (off % 11 == 0)
		return -ENODEV;
	memset(res, 0, sizeof(*res));
	res->nframes = 1 + off % 3;
	res->frames[0].name = "_ZN2ns5innerEi";
	res->frames[0].dir = "/src";
	res->frames[0].base = "a.cc";
	res->frames[0].line = (uint32_t)off;
	res->frames[0].inlined = res->nframes > 1;
	res->frames[1].name = "middle";
	res->frames[1].dir = "";
	res->frames[1].base = "b.c";
	res->frames[1].line = 7;
	res->frames[1].inlined = res->nframes > 2;
	res->frames[2].name = "outer";
	res->frames[2].dir = "";
	res->frames[2].base = NULL;
	return 0;
}

/* The answer to a profile (fuzzing's lookup), inflated: 0 with out
 * set, or -1 (refused). */
static int
answer(const uint8_t *data, size_t size, unsigned char **plain,
    size_t *plainlen, size_t *zlen)
{
	struct pprof_limits		 lim = { 4u << 20, 100000, 1, 0 };
	const struct pprof_module	*mods;
	struct libdeflate_decompressor	*d;
	struct pprof			*p = NULL, *again = NULL;
	struct pprof_stats		 st;
	const char			*why;
	void				*out = NULL;
	size_t				 n, outlen, cap;
	int				 rc = -1;

	*plain = NULL;
	if (pprof_read(data, size, &lim, &p, &why) != 0) {
		if (why == NULL || p != NULL)
			abort();
		return -1;
	}
	n = pprof_modules(p, &mods);
	if (pprof_symbolize(p, lookup, &n, &st) != 0 ||
	    pprof_write(p, SIZE_MAX, &out, &outlen) != 0)
		goto out;
	lim.max_bytes = 64u << 20;
	lim.max_locations = SIZE_MAX;
	if (pprof_read(out, outlen, &lim, &again, &why) != 0) {
		fprintf(stderr, "the answer reads back: %s\n", why);
		abort();
	}
	if (pprof_nlocations(again) != pprof_nlocations(p))
		abort();
	/* its gzip member whole, its CRC and ISIZE right (the answer adds
	 * at most a few hundred bytes a location, of a few bytes each) */
	cap = 256 * size + 65536;
	if ((*plain = malloc(cap)) == NULL ||
	    (d = libdeflate_alloc_decompressor()) == NULL)
		abort();
	if (libdeflate_gzip_decompress(d, out, outlen, *plain, cap,
	    plainlen) != LIBDEFLATE_SUCCESS) {
		fprintf(stderr, "the answer is not one whole gzip member\n");
		abort();
	}
	libdeflate_free_decompressor(d);
	*zlen = outlen;
	rc = 0;
out:
	free(out);
	pprof_free(again);
	pprof_free(p);
	return rc;
}

/* data gzip'd by zlib, a deflate block ended wherever a byte of the
 * input says (Z_BLOCK: at any bit), for the answer's copied blocks. */
static unsigned char *
gzip_blocks(const uint8_t *data, size_t size, size_t *len)
{
	z_stream	 z;
	unsigned char	*out;
	size_t		 cap = 2 * size + 4096, i, at = 0;

	memset(&z, 0, sizeof(z));
	if ((out = malloc(cap)) == NULL ||
	    deflateInit2(&z, 1 + size % 9, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	z.next_out = out;
	z.avail_out = (uInt)cap;
	for (i = 0; i <= size; i++) {
		if (i < size && data[i] != 0x22 && data[i] != 0x1a)
			continue;
		/* before each location and mapping: a block ends */
		z.next_in = (unsigned char *)(uintptr_t)data + at;
		z.avail_in = (uInt)(i - at);
		if (deflate(&z, i < size ? Z_BLOCK : Z_FINISH) ==
		    Z_STREAM_ERROR)
			abort();
		at = i;
	}
	*len = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char	*a = NULL, *b = NULL, *gz = NULL;
	size_t		 alen, blen, zlen, gzlen;
	int		 ra, rb;

	ra = answer(data, size, &a, &alen, &zlen);
	/* The same profile gzip'd, its blocks copied to the answer as they
	 * came when they may: the same answer, inflated. */
	if (size < 2 || data[0] != 0x1f || data[1] != 0x8b) {
		gz = gzip_blocks(data, size, &gzlen);
		rb = answer(gz, gzlen, &b, &blen, &zlen);
		if (ra != rb || (ra == 0 && (alen != blen ||
		    memcmp(a, b, alen) != 0))) {
			fprintf(stderr, "gzip'd, the answer differs\n");
			abort();
		}
	}
	free(a);
	free(b);
	free(gz);
	return 0;
}

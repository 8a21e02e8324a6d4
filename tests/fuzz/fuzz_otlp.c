/* Fuzz the OTLP profiles reader of POST /symbolize/otlp (otlp.h): any
 * bytes, gzip-compressed or not, through otlp_read(); a message it takes
 * is filled in from made-up frames (an inline chain, a mangled name, a
 * frame without a file), written (gzip-compressed or not, by the last
 * byte), and must then read back with as many locations: whatever the
 * hub answers, the hub itself takes again. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "symhubd/otlp.h"

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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_limits		 lim = { 4u << 20, 100000, 0, 0 };
	const struct otlp_module	*mods;
	struct otlp			*o = NULL, *again = NULL;
	struct pprof_stats		 st;
	const char			*why;
	void				*out = NULL;
	size_t				 n, i, outlen;
	int				 gz = size > 0 && data[size - 1] == 'z';

	if (otlp_read(data, size, 0, &lim, &o, &why) != 0) {
		if (why == NULL || o != NULL)
			abort();
		return 0;
	}
	n = otlp_modules(o, &mods);
	for (i = 0; i < n; i++)
		if (mods[i].gnu.idlen == 0 && mods[i].fileid.idlen == 0)
			abort();
	if (otlp_symbolize(o, lookup, &n, &st) == 0 &&
	    otlp_write(o, gz, SIZE_MAX, &out, &outlen) == 0) {
		lim.max_bytes = 64u << 20;
		lim.max_locations = SIZE_MAX;
		if (otlp_read(out, outlen, gz, &lim, &again, &why) != 0) {
			fprintf(stderr, "the answer reads back: %s\n", why);
			abort();
		}
		if (otlp_nlocations(again) != otlp_nlocations(o))
			abort();
	}
	free(out);
	otlp_free(again);
	otlp_free(o);
	return 0;
}

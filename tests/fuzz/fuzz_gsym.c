/* Fuzz the GSYM reader: open any bytes as a GSYM file, then look up a few
 * addresses (through the decoder and the lookup path) and dump it all. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "gsym/gsym.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE			*null;
	const struct gsym_header	*h;
	struct gsym_result		 res;
	struct gsym			*g;
	uint64_t			 addr;
	int				 i;

	if (null == NULL && (null = fopen("/dev/null", "w")) == NULL)
		abort();
	if (gsym_open_mem(data, size, &g) != 0)
		return 0;
	h = gsym_header(g);
	for (i = 0; i < 8; i++) {
		addr = h->base_address + (uint64_t)i * 0x41;
		gsym_print_result(null, addr, gsym_lookup(g, addr, &res), &res);
	}
	(void)gsym_dump(null, g);
	gsym_free(g);
	return 0;
}

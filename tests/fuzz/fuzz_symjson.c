/* Fuzz the /symbolize request body: hex lines or a JSON array. */
#include <stdlib.h>

#include "fuzz.h"
#include "symhubd/symjson.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t	*addrs = NULL;
	const char	*why;

	(void)symjson_parse((const char *)data, size, 100000, &addrs, &why);
	free(addrs);
	return 0;
}

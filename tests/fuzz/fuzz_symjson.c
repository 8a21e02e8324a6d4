/* Fuzz the /symbolize request bodies: hex lines or a JSON array for one
 * module, the JSON object of POST /symbolize for many, Tecken's. */
#include <stdlib.h>

#include "fuzz.h"
#include "symhubd/symjson.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symjson_batch	 b;
	uint64_t		*addrs = NULL;
	const char		*why;

	(void)symjson_parse((const char *)data, size, 100000, &addrs, &why);
	free(addrs);
	struct symjson_tecken	 t;

	if (symjson_parse_batch((const char *)data, size, 100000, 1000, &b,
	    &why) >= 0)
		symjson_batch_free(&b);
	if (symjson_parse_tecken((const char *)data, size, 100000, 1000, &t,
	    &why) >= 0)
		symjson_tecken_free(&t);
	return 0;
}

/* Fuzz an upstream's /metadata answer as metajson_merge() takes it apart,
 * twice into one answer (the second time every entry is a duplicate),
 * then the answer written, which must be JSON that a strict parser,
 * checking UTF-8, takes whole (an entry of the input's own bytes added
 * too: a file name may be any bytes). */
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "fuzz.h"
#include "symhubd/metajson.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct metajson	*j;
	char		*out = NULL;
	size_t		 len, before;
	long		 n1, n2;
	int		 complete;

	if (metajson_create(&j) != 0)
		return 0;
	n1 = metajson_merge(j, (const char *)data, size, &complete);
	before = metajson_count(j);
	n2 = metajson_merge(j, (const char *)data, size, &complete);
	/* The same entries again add nothing. */
	if ((n1 >= 0 && (size_t)n1 != before) || (n2 > 0 && n1 >= 0) ||
	    metajson_count(j) != before)
		abort();
	if (size < 4096) {
		char name[4096 + 1];

		memcpy(name, data, size);
		name[size] = '\0';
		if (metajson_add(j, "debuginfo", "ab", name, name) < 0) {
			metajson_free(j);
			return 0;
		}
	}
	if (metajson_finish(j, complete, &out, &len) == 0) {
		yajl_handle h;

		if (out == NULL || (h = yajl_alloc(NULL, NULL, NULL)) == NULL)
			abort();
		if (yajl_parse(h, (const unsigned char *)out, len) !=
		    yajl_status_ok || yajl_complete_parse(h) != yajl_status_ok)
			abort();	/* not JSON */
		yajl_free(h);
	}
	free(out);
	return 0;
}

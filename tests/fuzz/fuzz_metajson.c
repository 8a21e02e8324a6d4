/* Fuzz an upstream's /metadata answer as metajson_merge() takes it apart,
 * twice into one answer (the second time every entry is a duplicate),
 * then the answer written. */
#include <stdlib.h>

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
	if (metajson_finish(j, complete, &out, &len) == 0 && out == NULL)
		abort();
	free(out);
	return 0;
}

/* Fuzz the bucket's event names (src/symhubd/event.c): any bytes, as a
 * name an S3 listing may hold (whoever may write to the bucket names
 * them).  A name event_parse() takes must come back byte for byte from
 * event_name(), and parse again to the same event. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "symhubd/event.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		name[EVENT_NAME_MAX + 64], again[EVENT_NAME_MAX + 1];
	struct event	e, f;
	size_t		n = size < sizeof(name) - 1 ? size : sizeof(name) - 1;

	memcpy(name, data, n);
	name[n] = '\0';
	if (event_parse(name, &e) != 0)
		return 0;
	if (event_name(&e, again, sizeof(again)) < 0 ||
	    strcmp(again, name) != 0 || event_parse(again, &f) != 0 ||
	    memcmp(&e, &f, sizeof(e)) != 0)
		abort();
	return 0;
}

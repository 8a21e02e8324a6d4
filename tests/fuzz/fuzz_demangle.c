/* Fuzz demangle() (libiberty's reader behind ?demangle=1) on any name a
 * GSYM may hold: a file anyone may upload names its functions. */
#include <stdlib.h>
#include <string.h>

#include "common/demangle.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name, *d;

	if ((name = malloc(size + 1)) == NULL)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	d = demangle(name);
	if (d != NULL && *d == '\0' && *name != '\0')
		abort();	/* a name demangles to something */
	free(d);
	free(name);
	return 0;
}

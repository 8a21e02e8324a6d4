/*
 * kind: see kind.h.
 */
#include <errno.h>
#include <string.h>

#include "kind.h"

static const char *const names[] = {
	[CACHE_DEBUGINFO] = "debuginfo",
	[CACHE_EXECUTABLE] = "executable",
	[CACHE_SOURCE] = "source",
	[CACHE_SECTION] = "section",
	[CACHE_GSYM] = "gsym",
	[CACHE_BUNDLE] = "sources",
};

const char *
kind_name(enum cache_kind k)
{
	if ((size_t)k >= sizeof(names) / sizeof(names[0]) || names[k] == NULL)
		return "?";
	return names[k];
}

int
kind_parse(const char *s, size_t len, enum cache_kind *out)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i] != NULL && strlen(names[i]) == len &&
		    memcmp(s, names[i], len) == 0) {
			*out = (enum cache_kind)i;
			return 0;
		}
	return -EINVAL;
}

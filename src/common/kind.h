/*
 * kind: the one spelling of each artifact kind, as the protocol's URLs,
 * the configuration, the logs and the CLI write it.  The values are the
 * store's (enum cache_kind, base/artifact.h): they are on disk.
 */
#ifndef SYMHUB_KIND_H
#define SYMHUB_KIND_H

#include <stddef.h>

#include "base/artifact.h"

/* "debuginfo", "executable", "source", "section" or "gsym"; "?" for a
 * value out of range.  The string is static. */
const char	*kind_name(enum cache_kind k);

/*
 * The kind whose name is the len bytes at s (not NUL-terminated).
 * @return 0 with *out set; -EINVAL for any other text.
 */
int		 kind_parse(const char *s, size_t len, enum cache_kind *out);

#endif

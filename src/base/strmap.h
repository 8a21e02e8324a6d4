/*
 * strmap: a set of strings, each with a number, found in one probe
 * (open addressing, FNV-1a).  For the CLI's bookkeeping of many files
 * (ids asked once, manifest lines) where a linear search would make the
 * work quadratic.  A zeroed struct strmap is empty and ready.
 */
#ifndef SYMHUB_STRMAP_H
#define SYMHUB_STRMAP_H

#include <stddef.h>

struct strmap {
	char		**keys;		/* owned copies; NULL: a free slot */
	size_t		 *vals;
	size_t		  cap;		/* a power of 2, or 0 */
	size_t		  n;
};

/* The number stored with key.  @return 1 with *val set, or 0. */
int	strmap_get(const struct strmap *m, const char *key, size_t *val);

/* Store val with key (replacing an earlier one).  key is copied.
 * @return 0 or -ENOMEM. */
int	strmap_put(struct strmap *m, const char *key, size_t val);

/* Release everything and zero m.  Accepts a zeroed m. */
void	strmap_free(struct strmap *m);

#endif

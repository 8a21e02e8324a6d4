/*
 * strmap: see strmap.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

static size_t
hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return (size_t)h;
}

/* key's slot: where it is, or the free one where it would go. */
static size_t
slot(char *const *keys, size_t cap, const char *key)
{
	size_t i = hash(key) & (cap - 1);

	while (keys[i] != NULL && strcmp(keys[i], key) != 0)
		i = (i + 1) & (cap - 1);
	return i;
}

int
strmap_get(const struct strmap *m, const char *key, size_t *val)
{
	size_t i;

	if (m->cap == 0)
		return 0;
	i = slot(m->keys, m->cap, key);
	if (m->keys[i] == NULL)
		return 0;
	*val = m->vals[i];
	return 1;
}

/* Twice the room, every key moved.  @return 0 or -ENOMEM. */
static int
grow(struct strmap *m)
{
	size_t	 ncap = m->cap ? 2 * m->cap : 64, i, j;
	char	**nk;
	size_t	*nv;

	if ((nk = calloc(ncap, sizeof(*nk))) == NULL ||
	    (nv = calloc(ncap, sizeof(*nv))) == NULL) {
		free(nk);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (m->keys[i] == NULL)
			continue;
		j = slot(nk, ncap, m->keys[i]);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

int
strmap_put(struct strmap *m, const char *key, size_t val)
{
	size_t i;

	/* At most half full: probes stay short. */
	if (2 * (m->n + 1) > m->cap && grow(m) != 0)
		return -ENOMEM;
	i = slot(m->keys, m->cap, key);
	if (m->keys[i] == NULL) {
		if ((m->keys[i] = strdup(key)) == NULL)
			return -ENOMEM;
		m->n++;
	}
	m->vals[i] = val;
	return 0;
}

void
strmap_free(struct strmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

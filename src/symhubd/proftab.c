/*
 * proftab: a profile's strings and functions added once (proftab.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/demangle.h"
#include "proftab.h"

/* The markers of a name's two strings: compared by address. */
const char	proftab_demangled[] = "d", proftab_asis[] = "n";

static size_t
hash(const void *a, const void *b, const void *c)
{
	uint64_t h = (uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ULL;

	h ^= (uint64_t)(uintptr_t)b * 0xc2b2ae3d27d4eb4fULL;
	h ^= (uint64_t)(uintptr_t)c * 0x165667b19e3779f9ULL;
	return (size_t)(h ^ (h >> 29));
}

int
proftab_find(struct proftab *t, const void *a, const void *b,
    const void *c, struct proftab_ent **e)
{
	struct proftab_ent	*n, *x;
	size_t			 k, i;

	/* At most half full: a probe ends soon. */
	if (t->used * 2 >= t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 4096;

		if ((n = calloc(cap, sizeof(*n))) == NULL)
			return -ENOMEM;
		for (i = 0; i < t->cap; i++) {
			x = &t->t[i];
			if (x->v == 0)
				continue;
			k = hash(x->k[0], x->k[1], x->k[2]) & (cap - 1);
			while (n[k].v != 0)
				k = (k + 1) & (cap - 1);
			n[k] = *x;
		}
		free(t->t);
		t->t = n;
		t->cap = cap;
	}
	k = hash(a, b, c) & (t->cap - 1);
	for (x = &t->t[k]; x->v != 0; x = &t->t[k]) {
		if (x->k[0] == a && x->k[1] == b && x->k[2] == c)
			break;
		k = (k + 1) & (t->cap - 1);
	}
	*e = x;
	return 0;
}

void
proftab_set(struct proftab *t, struct proftab_ent *e, const void *a,
    const void *b, const void *c, int64_t v)
{
	e->k[0] = a;
	e->k[1] = b;
	e->k[2] = c;
	e->v = v;
	t->used++;
}

void
proftab_free(struct proftab *t)
{
	free(t->t);
	memset(t, 0, sizeof(*t));
}

char *
proftab_text(struct arena *ar, const char *a, const char *b)
{
	char	*s, *dm;
	size_t	 la, lb;

	if (b == proftab_demangled && (dm = demangle(a)) != NULL) {
		s = arena_strndup(ar, dm, strlen(dm));
		free(dm);
		return s;
	}
	if (b == proftab_demangled || b == proftab_asis)
		return arena_strndup(ar, a, strlen(a));
	if (*a == '\0')
		return arena_strndup(ar, b, strlen(b));
	la = strlen(a);
	lb = strlen(b);
	if ((s = arena_alloc(ar, la + lb + 2)) != NULL) {
		memcpy(s, a, la);
		s[la] = '/';
		memcpy(s + la + 1, b, lb + 1);
	}
	return s;
}

int
proftab_varint(const unsigned char *b, size_t len, size_t *i, uint64_t *v)
{
	unsigned	sh;

	*v = 0;
	for (sh = 0; sh < 64 && *i < len; sh += 7) {
		unsigned char c = b[(*i)++];

		*v |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

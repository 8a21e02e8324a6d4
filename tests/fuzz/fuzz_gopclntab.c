/* Fuzz the .gopclntab reader: any bytes as the section, every function
 * read with its rows, twice (with and without a runtime.text for a table
 * whose header leaves it 0).  What the reader promises is checked: rows
 * in the function, ascending, the first at its entry; names and files
 * NUL-terminated inside the section. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gsym/gopclntab.h"

struct seen {
	const struct gopclntab	*t;
	uint64_t		 first, last;
	size_t			 n;
};

static void
inside(const struct gopclntab *t, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (p < t->p || p >= t->p + t->len ||
	    memchr(p, 0, (size_t)(t->p + t->len - p)) == NULL)
		abort();
}

static int
row(void *ctx, const struct gopclntab_row *r)
{
	struct seen *s = ctx;

	if (s->n == 0)
		s->first = r->addr;
	else if (r->addr <= s->last)
		abort();
	if (r->file != NULL)
		inside(s->t, r->file);
	s->last = r->addr;
	s->n++;
	return 0;
}

static void
read_all(const uint8_t *data, size_t size, uint64_t text)
{
	struct gopclntab t;
	struct gopclntab_func f;
	uint32_t i;
	int rc;

	if (gopclntab_open(data, size, text, &t) != 0)
		return;
	for (i = 0; i < t.nfunc; i++) {
		struct seen s = { &t, 0, 0, 0 };

		rc = gopclntab_func(&t, i, &f, row, &s);
		if (rc == -ENOEXEC)
			break;
		if (rc != 0)
			continue;
		inside(&t, f.name);
		if (f.end < f.entry || strlen(f.name) != f.namelen ||
		    (s.n > 0 && (s.first != f.entry || s.last >= f.end)))
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_all(data, size, 0);
	read_all(data, size, 0x401000);
	return 0;
}

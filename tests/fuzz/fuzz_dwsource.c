/* Fuzz the reader of sources embedded in line tables (src/common/
 * dwsource.c over dwline.c): any bytes as a .debug_line and its
 * .debug_line_str.  The first byte chooses the byte order and which
 * path is asked for, the next two the length of .debug_line; the rest
 * is .debug_line then .debug_line_str (also read as .debug_str).  What
 * a find returns must hold: a match is rooted and ends in the last
 * component of the path asked for, its text lies inside a section and
 * ends there, an ambiguity names two different paths and no exact one;
 * and the libdw path (dwsource_name()) must take every name without a
 * fault, and give no text.  dwsource_doubled() on every match: what it
 * cuts is repeated.  The list of names a find keeps must give the same
 * answer (dwsource_match()) as the find. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/dwsource.h"
#include "fuzz.h"

static const char *const wants[] = {
	"/main.c", "/src/main.c", "/a/b/c.h", "/libio/ioputs.c",
	"/build/src/main.c", "/usr/include/stdio.h", "/.", "/c.h"
};

static int
inside(const struct dwline_sect *s, const char *p, size_t len)
{
	return s->p != NULL && (const unsigned char *)p >= s->p &&
	    (const unsigned char *)p + len < s->p + s->len &&
	    p[len] == '\0';
}

/* The last component of the path asked for: both spellings of a file
 * end in it. */
static const char *
base(const char *p)
{
	return strrchr(p, '/');
}

static void
check(const struct dwsource *d, const struct dwline_sects *s, int rc)
{
	size_t plen, wlen = strlen(base(d->want)), l;

	if (rc == 0 || rc == -ENOTUNIQ) {
		if (d->path == NULL || (plen = strlen(d->path)) < wlen ||
		    strcmp(d->path + plen - wlen, base(d->want)) != 0 ||
		    d->path[0] != '/')
			abort();
		if ((l = dwsource_doubled(d->path)) > 0 &&
		    strncmp(d->path, d->path + l, l) != 0)
			abort();
		if (d->text != NULL && !inside(&s->line, d->text, d->textlen) &&
		    !inside(&s->line_str, d->text, d->textlen))
			abort();
	}
	if (rc == -ENOTUNIQ && (d->other == NULL || d->exact ||
	    strcmp(d->other, d->path) == 0))
		abort();
	if (rc != 0 && rc != -ENOENT && rc != -ENOTUNIQ && rc != -ENOTSUP &&
	    rc != -EINVAL && rc != -ENOMEM)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwline_sects	 s;
	struct dwsource_names	 nl;
	struct dwsource		 d;
	size_t			 llen;
	int			 rc;

	if (size < 3)
		return 0;
	memset(&s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	memset(&nl, 0, sizeof(nl));
	llen = (size_t)data[1] | (size_t)data[2] << 8;
	if (llen > size - 3)
		llen = size - 3;
	s.big = data[0] & 1;
	s.line.p = data + 3;
	s.line.len = llen;
	s.line_str.p = data + 3 + llen;
	s.line_str.len = size - 3 - llen;
	s.str = s.line_str;
	d.names = &nl;
	rc = dwsource_find(&d, &s, wants[(data[0] >> 1) & 7]);
	check(&d, &s, rc);
	/* The names kept must give the same answer without the tables. */
	if ((rc == 0 || rc == -ENOENT || rc == -ENOTUNIQ) && !nl.over) {
		struct dwsource m;

		memset(&m, 0, sizeof(m));
		m.want = d.want;
		if (dwsource_match(&m, &nl) != rc || m.text != NULL ||
		    m.embedded != (d.text != NULL) ||
		    (rc != -ENOENT && strcmp(m.path, d.path) != 0))
			abort();
		dwsource_free(&m);
	}
	d.names = NULL;
	dwsource_free(&d);
	dwsource_names_free(&nl);
	/* The same bytes as names libdw would give, one per NUL. */
	d.want = wants[(data[0] >> 1) & 7];
	if (size > 3) {
		char *names = malloc(size - 2), *p;

		if (names == NULL)
			return 0;
		memcpy(names, data + 3, size - 3);
		names[size - 3] = '\0';
		for (p = names; p < names + (size - 3); p += strlen(p) + 1)
			if (dwsource_name(&d, p) < 0)
				break;
		rc = dwsource_result(&d);
		if (rc == 0 && d.text != NULL)
			abort();
		free(names);
	}
	dwsource_free(&d);
	return 0;
}

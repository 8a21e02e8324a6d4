/*
 * symjson_write: the answers of /symbolize and /symbolicate/v5.  An
 * answer for 10,000 addresses is about 1.7 MB of a few thousand distinct
 * names and paths repeated: a json-c object a result cost a malloc and a
 * free a field, most of the time of a batch.  So each distinct string is
 * escaped once, into an arena found again by the string's address, and
 * the rest is copied.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/hex.h"
#include "base/utf8.h"
#include "common/demangle.h"
#include "symjson.h"

/* One escaped string: a name (b NULL) or a path dir + "/" + base. */
struct esc {
	const char	*a, *b;		/* NULL a: a free slot */
	size_t		 off, len;	/* in the arena, quotes included */
};

struct symjson {
	struct buf	 out;		/* the answer */
	struct buf	 arena;		/* escaped strings */
	struct buf	 tmp;		/* a path being joined */
	struct esc	*tab;		/* open addressing, cap a power of 2 */
	size_t		 cap, used;
	size_t		 nresults;
	size_t		 drained;	/* of out, handed over already */
	unsigned	 flags;		/* SYMJSON_* */
};

/* The second key of a demangled name in the table of escaped strings. */
static const char demangled[] = "";

#define PUTS(b, lit)	buf_add((b), (lit), sizeof(lit) - 1)

static int
put_u64(struct buf *b, uint64_t v)
{
	char	 d[20], *e = d + sizeof(d), *s = e;

	do
		*--s = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	return buf_add(b, s, (size_t)(e - s));
}

static int
put_hex(struct buf *b, uint64_t v)
{
	char	 d[18], *e = d + sizeof(d), *s = e;

	do
		*--s = hex_digits[v & 15];
	while ((v >>= 4) != 0);
	*--s = 'x';
	*--s = '0';
	return buf_add(b, s, (size_t)(e - s));
}

static size_t
esc_hash(const char *a, const char *b)
{
	uint64_t	h = (uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ULL;

	h ^= (uint64_t)(uintptr_t)b * 0xc2b2ae3d27d4eb4fULL;
	return (size_t)(h ^ (h >> 29));
}

static int
esc_grow(struct symjson *j)
{
	struct esc	*t, *o = j->tab;
	size_t		 cap = j->cap ? 2 * j->cap : 1024, i, k;

	if ((t = calloc(cap, sizeof(*t))) == NULL)
		return -ENOMEM;
	for (i = 0; i < j->cap; i++) {
		if (o[i].a == NULL)
			continue;
		k = esc_hash(o[i].a, o[i].b) & (cap - 1);
		while (t[k].a != NULL)
			k = (k + 1) & (cap - 1);
		t[k] = o[i];
	}
	free(o);
	j->tab = t;
	j->cap = cap;
	return 0;
}

/*
 * The escaped strings are a cache, not the answer: past this many bytes
 * they are forgotten and escaped again when met, so that an answer of
 * many distinct names (a GSYM of millions of functions) costs a bounded
 * working set, however long it runs.
 */
#define ARENA_MAX	(8u << 20)
#define ESC_MAX		(ARENA_MAX / 64)	/* strings: a table of 8 MiB */

static void
esc_forget(struct symjson *j)
{
	memset(j->tab, 0, j->cap * sizeof(*j->tab));
	j->used = 0;
	j->arena.len = 0;
}

/* Append the JSON string of a (b NULL), of a demangled (b demangled), or
 * of a + "/" + b (a "" for b alone), escaping it only the first time. */
static int
put_string(struct symjson *j, const char *a, const char *b)
{
	struct esc	*e;
	const char	*s = a;
	char		*d = NULL;
	size_t		 k, len, la, off;
	int		 rc;

	if (j->arena.len > ARENA_MAX || j->used >= ESC_MAX)
		esc_forget(j);
	if (2 * (j->used + 1) > j->cap && esc_grow(j) != 0)
		return -ENOMEM;
	k = esc_hash(a, b) & (j->cap - 1);
	for (e = &j->tab[k]; e->a != NULL; e = &j->tab[k]) {
		if (e->a == a && e->b == b)
			return buf_add(&j->out, j->arena.p + e->off, e->len);
		k = (k + 1) & (j->cap - 1);
	}
	len = strlen(a);
	if (b == demangled) {
		/* Demangled once per name, as it is escaped once. */
		if ((d = demangle(a)) != NULL) {
			s = d;
			len = strlen(d);
		}
	} else if (b != NULL) {
		la = len;
		j->tmp.len = 0;
		if (la > 0 && (buf_add(&j->tmp, a, la) != 0 ||
		    PUTS(&j->tmp, "/") != 0))
			return -ENOMEM;
		if (buf_add(&j->tmp, b, strlen(b)) != 0)
			return -ENOMEM;
		s = (const char *)j->tmp.p;
		len = j->tmp.len;
	}
	off = j->arena.len;
	rc = PUTS(&j->arena, "\"");
	rc |= utf8_json(&j->arena, s, len);
	rc |= PUTS(&j->arena, "\"");
	free(d);
	if (rc != 0)
		return -ENOMEM;
	/* Known from now on, its bytes in the arena. */
	e->a = a;
	e->b = b;
	e->off = off;
	e->len = j->arena.len - off;
	j->used++;
	return buf_add(&j->out, j->arena.p + off, e->len);
}

int
symjson_open(size_t naddrs, unsigned flags, struct symjson **out)
{
	struct symjson	*j;
	size_t		 guess;

	*out = NULL;
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -ENOMEM;
	j->flags = flags;
	/* About 170 bytes a result; at most 16 MiB before the first. */
	guess = naddrs < (16u << 20) / 192 ? naddrs * 192 : 16u << 20;
	if (esc_grow(j) != 0 || buf_reserve(&j->out, guess + 256) != 0) {
		symjson_free(j);
		return -ENOMEM;
	}
	*out = j;
	return 0;
}

int
symjson_create(const char *idhex, size_t naddrs, unsigned flags,
    struct symjson **out)
{
	struct symjson	*j;

	if (symjson_open(naddrs, flags, &j) != 0)
		return -ENOMEM;
	if (PUTS(&j->out, "{\"buildid\":\"") != 0 ||
	    buf_add(&j->out, idhex, strlen(idhex)) != 0 ||
	    PUTS(&j->out, "\",\"results\":[") != 0) {
		symjson_free(j);
		return -ENOMEM;
	}
	*out = j;
	return 0;
}

int
symjson_text(struct symjson *j, const char *text)
{
	return buf_add(&j->out, text, strlen(text)) == 0 ? 0 : -ENOMEM;
}

int
symjson_string(struct symjson *j, const char *str)
{
	int	rc = PUTS(&j->out, "\"");

	rc |= utf8_json(&j->out, str, strlen(str));
	rc |= PUTS(&j->out, "\"");
	return rc == 0 ? 0 : -ENOMEM;
}

int
symjson_hex(struct symjson *j, uint64_t v)
{
	int	r = PUTS(&j->out, "\"");

	r |= put_hex(&j->out, v);
	r |= PUTS(&j->out, "\"");
	return r == 0 ? 0 : -ENOMEM;
}

void
symjson_list(struct symjson *j)
{
	j->nresults = 0;
}

int
symjson_result(struct symjson *j, uint64_t addr, const uint64_t *offset,
    int rc, const struct gsym_result *res)
{
	struct buf	*o = &j->out;
	size_t		 i;
	int		 r = 0;

	if (j->nresults++ > 0)
		r |= PUTS(o, ",");
	if (offset != NULL) {
		r |= PUTS(o, "{\"file_offset\":\"");
		r |= put_hex(o, *offset);
		r |= PUTS(o, "\",");
	} else {
		r |= PUTS(o, "{");
	}
	if (rc == -ERANGE || rc == -ENOEXEC) {
		r |= PUTS(o, "\"frames\":[],\"error\":\"");
		if (rc == -ERANGE) {
			r |= PUTS(o, "offset ");
			r |= put_hex(o, offset != NULL ? *offset : addr);
			r |= PUTS(o, " is in no loadable segment\"}");
		} else {
			r |= PUTS(o, "file offsets need the module's "
			    "executable, which is neither here nor "
			    "upstream\"}");
		}
		return r == 0 ? 0 : -ENOMEM;
	}
	r |= PUTS(o, "\"address\":\"");
	r |= put_hex(o, addr);
	if (rc != 0) {
		r |= PUTS(o, "\",\"frames\":[],\"error\":\"");
		if (rc == -ENOENT) {
			r |= PUTS(o, "address ");
			r |= put_hex(o, addr);
			r |= PUTS(o, " is not in GSYM\"}");
		} else {
			r |= PUTS(o, "corrupt record\"}");
		}
		return r == 0 ? 0 : -ENOMEM;
	}
	r |= PUTS(o, "\",\"frames\":[");
	for (i = 0; i < res->nframes && r == 0; i++) {
		const struct gsym_frame	*f = &res->frames[i];

		if (i > 0)
			r |= PUTS(o, ",");
		r |= PUTS(o, "{\"function\":");
		r |= put_string(j, f->name, (j->flags & SYMJSON_DEMANGLE) ?
		    demangled : NULL);
		r |= PUTS(o, ",\"start\":\"");
		r |= put_hex(o, addr - f->offset);
		r |= PUTS(o, "\",\"offset\":");
		r |= put_u64(o, f->offset);
		if (f->base != NULL) {
			r |= PUTS(o, ",\"file\":");
			r |= put_string(j, f->dir, f->base);
			r |= PUTS(o, ",\"line\":");
			r |= put_u64(o, f->line);
		}
		if (f->inlined)
			r |= PUTS(o, ",\"inlined\":true}");
		else
			r |= PUTS(o, ",\"inlined\":false}");
	}
	r |= PUTS(o, "]}");
	return r == 0 ? 0 : -ENOMEM;
}

int
symjson_tecken_frame(struct symjson *j, size_t index, uint64_t offset,
    const char *module, int rc, const struct gsym_result *res)
{
	struct buf		*o = &j->out;
	const struct gsym_frame	*f;
	size_t			 i;
	int			 r = 0;

	if (j->nresults++ > 0)
		r |= PUTS(o, ",");
	r |= PUTS(o, "{\"frame\":");
	r |= put_u64(o, index);
	r |= PUTS(o, ",\"module_offset\":\"");
	r |= put_hex(o, offset);
	r |= PUTS(o, "\",\"module\":");
	r |= put_string(j, module, NULL);
	if (rc != 0 || res->nframes == 0)
		return r | PUTS(o, "}") ? -ENOMEM : 0;
	f = &res->frames[res->nframes - 1];
	r |= PUTS(o, ",\"function\":");
	r |= put_string(j, f->name, (j->flags & SYMJSON_DEMANGLE) ?
	    demangled : NULL);
	r |= PUTS(o, ",\"function_offset\":\"");
	r |= put_hex(o, res->addr - res->start);
	r |= PUTS(o, "\"");
	if (res->size > 0) {
		r |= PUTS(o, ",\"function_size\":\"");
		r |= put_hex(o, res->size);
		r |= PUTS(o, "\"");
	}
	if (f->base != NULL) {
		r |= PUTS(o, ",\"file\":");
		r |= put_string(j, f->dir, f->base);
		if (f->line > 0) {	/* samply leaves a line 0 out */
			r |= PUTS(o, ",\"line\":");
			r |= put_u64(o, f->line);
		}
	}
	if (res->nframes > 1) {
		r |= PUTS(o, ",\"inlines\":[");
		for (i = 0; i + 1 < res->nframes && r == 0; i++) {
			f = &res->frames[i];
			if (i > 0)
				r |= PUTS(o, ",");
			r |= PUTS(o, "{\"function\":");
			r |= put_string(j, f->name,
			    (j->flags & SYMJSON_DEMANGLE) ? demangled : NULL);
			if (f->base != NULL) {
				r |= PUTS(o, ",\"file\":");
				r |= put_string(j, f->dir, f->base);
				if (f->line > 0) {
					r |= PUTS(o, ",\"line\":");
					r |= put_u64(o, f->line);
				}
			}
			r |= PUTS(o, "}");
		}
		r |= PUTS(o, "]");
	}
	r |= PUTS(o, "}");
	return r == 0 ? 0 : -ENOMEM;
}

int
symjson_add(struct symjson *j, uint64_t addr, int rc,
    const struct gsym_result *res)
{
	return symjson_result(j, addr, NULL, rc, res);
}

int
symjson_finish(struct symjson *j, char **buf, size_t *len)
{
	int	rc;

	if ((rc = PUTS(&j->out, "]}")) != 0) {
		*buf = NULL;
		*len = 0;
		symjson_free(j);
		return -ENOMEM;
	}
	return symjson_take(j, buf, len);
}

size_t
symjson_pending(const struct symjson *j)
{
	return j->out.len - j->drained;
}

size_t
symjson_drain(struct symjson *j, void *dst, size_t max)
{
	size_t	n = symjson_pending(j);

	if (n > max)
		n = max;
	memcpy(dst, j->out.p + j->drained, n);
	j->drained += n;
	/* What is left goes to the front once most of the buffer is sent,
	 * so the buffer is reused and each byte moved at most once. */
	if (j->drained == j->out.len) {
		j->out.len = j->drained = 0;
	} else if (j->drained > j->out.len / 2) {
		memmove(j->out.p, j->out.p + j->drained,
		    j->out.len - j->drained);
		j->out.len -= j->drained;
		j->drained = 0;
	}
	return n;
}

int
symjson_take(struct symjson *j, char **buf, size_t *len)
{
	*buf = (char *)j->out.p;
	*len = j->out.len;
	j->out.p = NULL;	/* now the caller's */
	symjson_free(j);
	return 0;
}

void
symjson_free(struct symjson *j)
{
	if (j == NULL)
		return;
	buf_free(&j->out);
	buf_free(&j->arena);
	buf_free(&j->tmp);
	free(j->tab);
	free(j);
}

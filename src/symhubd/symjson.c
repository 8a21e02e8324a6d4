/*
 * symjson: the JSON of /symbolize.  An answer for 10,000 addresses is
 * about 1.7 MB of a few thousand distinct names and paths repeated: a
 * json-c object a result cost a malloc and a free a field, most of the
 * time of a batch.  So json-c escapes each distinct string once, into an
 * arena found again by the string's address, and the rest is copied.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/buf.h"
#include "base/hex.h"
#include "common/demangle.h"
#include "symjson.h"

long
symjson_parse(const char *body, size_t len, uint64_t max, uint64_t **out,
    const char **why)
{
	uint64_t	*a = NULL;
	size_t		 n = 0, cap = 0, i = 0;
	long		 rc = -EINVAL;
	json_object	*arr = NULL;

	*out = NULL;
	while (i < len && (body[i] == ' ' || body[i] == '\t' ||
	    body[i] == '\r' || body[i] == '\n'))
		i++;
	if (i < len && body[i] == '[') {
		json_tokener	*tok = json_tokener_new();
		size_t		 k, cnt;

		if (tok == NULL)
			goto nomem;
		if (len <= INT32_MAX)
			arr = json_tokener_parse_ex(tok, body, (int)len);
		/* Only blanks may follow the array. */
		k = arr != NULL ? json_tokener_get_parse_end(tok) : len;
		while (k < len && (body[k] == ' ' || body[k] == '\t' ||
		    body[k] == '\r' || body[k] == '\n'))
			k++;
		json_tokener_free(tok);
		if (arr == NULL || k != len ||
		    !json_object_is_type(arr, json_type_array)) {
			*why = "malformed JSON: expected an array of addresses";
			goto bad;
		}
		cnt = json_object_array_length(arr);
		if (cnt > max) {
			*why = "too many addresses";
			rc = -E2BIG;
			goto bad;
		}
		if (cnt > 0 && (a = malloc(cnt * sizeof(*a))) == NULL)
			goto nomem;
		for (k = 0; k < cnt; k++) {
			json_object	*e = json_object_array_get_idx(arr, k);
			const char	*s;
			char		*end;

			if (json_object_is_type(e, json_type_int)) {
				if (json_object_get_int64(e) < 0) {
					*why = "negative address";
					goto bad;
				}
				a[n++] = json_object_get_uint64(e);
			} else if (json_object_is_type(e, json_type_string)) {
				s = json_object_get_string(e);
				if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
					s += 2;
				errno = 0;
				a[n++] = strtoull(s, &end, 16);
				if (*s == '\0' || *end != '\0' || errno != 0 ||
				    *s == '-' || *s == '+' || *s == ' ') {
					*why = "malformed address in the array";
					goto bad;
				}
			} else {
				*why = "addresses must be numbers or hex strings";
				goto bad;
			}
		}
		json_object_put(arr);
		*out = a;
		return (long)n;
	}
	while (i < len) {
		size_t	 e = i, k;
		char	 tmp[40], *end;

		while (e < len && body[e] != '\n')
			e++;
		k = e;
		while (k > i && (body[k - 1] == '\r' || body[k - 1] == ' ' ||
		    body[k - 1] == '\t'))
			k--;
		while (i < k && (body[i] == ' ' || body[i] == '\t'))
			i++;
		if (k > i) {
			const char *s = body + i;
			size_t l = k - i;

			if (l >= 2 && s[0] == '0' && (s[1] == 'x' ||
			    s[1] == 'X')) {
				s += 2;
				l -= 2;
			}
			if (l == 0 || l > 16) {
				*why = "malformed address line";
				goto bad;
			}
			memcpy(tmp, s, l);
			tmp[l] = '\0';
			errno = 0;
			if (array_grow(&a, &cap, n + 1, sizeof(*a)) != 0)
				goto nomem;
			a[n] = strtoull(tmp, &end, 16);
			if (*end != '\0' || errno != 0 || tmp[0] == '-' ||
			    tmp[0] == '+') {
				*why = "malformed address line";
				goto bad;
			}
			if (++n > max) {
				*why = "too many addresses";
				rc = -E2BIG;
				goto bad;
			}
		}
		i = e + 1;
	}
	*out = a;
	return (long)n;
nomem:
	*why = "out of memory";
	rc = -ENOMEM;
bad:
	json_object_put(arr);
	free(a);
	return rc;
}


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
	json_object	*str;		/* reused for every escape */
	size_t		 nresults;
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

/* Append the JSON string of a (b NULL), of a demangled (b demangled), or
 * of a + "/" + b (a "" for b alone), escaping it only the first time. */
static int
put_string(struct symjson *j, const char *a, const char *b)
{
	struct esc	*e;
	const char	*js, *s = a;
	char		*d = NULL;
	size_t		 k, len, la;

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
	if (len > INT32_MAX ||
	    json_object_set_string_len(j->str, s, (int)len) == 0 ||
	    (js = json_object_to_json_string_length(j->str,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
	    &len)) == NULL) {
		free(d);
		return -ENOMEM;
	}
	free(d);
	e->a = a;
	e->b = b;
	e->off = j->arena.len;
	e->len = len;
	j->used++;
	if (buf_add(&j->arena, js, len) != 0)
		return -ENOMEM;
	return buf_add(&j->out, js, len);
}

int
symjson_create(const char *idhex, size_t naddrs, unsigned flags,
    struct symjson **out)
{
	struct symjson	*j;
	size_t		 guess;

	*out = NULL;
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -ENOMEM;
	j->flags = flags;
	/* About 170 bytes a result; at most 16 MiB before the first. */
	guess = naddrs < (16u << 20) / 192 ? naddrs * 192 : 16u << 20;
	if ((j->str = json_object_new_string("")) == NULL ||
	    esc_grow(j) != 0 || buf_reserve(&j->out, guess + 256) != 0 ||
	    PUTS(&j->out, "{\"buildid\":\"") != 0 ||
	    buf_add(&j->out, idhex, strlen(idhex)) != 0 ||
	    PUTS(&j->out, "\",\"results\":[") != 0) {
		symjson_free(j);
		return -ENOMEM;
	}
	*out = j;
	return 0;
}

int
symjson_add(struct symjson *j, uint64_t addr, int rc,
    const struct gsym_result *res)
{
	struct buf	*o = &j->out;
	size_t		 i;
	int		 r = 0;

	if (j->nresults++ > 0)
		r |= PUTS(o, ",");
	r |= PUTS(o, "{\"address\":\"");
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
		r |= PUTS(o, ",\"offset\":");
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
symjson_finish(struct symjson *j, char **buf, size_t *len)
{
	int	rc;

	*buf = NULL;
	*len = 0;
	if ((rc = PUTS(&j->out, "]}")) == 0) {
		*buf = (char *)j->out.p;
		*len = j->out.len;
		j->out.p = NULL;	/* now the caller's */
	}
	symjson_free(j);
	return rc;
}

void
symjson_free(struct symjson *j)
{
	if (j == NULL)
		return;
	json_object_put(j->str);
	buf_free(&j->out);
	buf_free(&j->arena);
	buf_free(&j->tmp);
	free(j->tab);
	free(j);
}

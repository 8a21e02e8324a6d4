/*
 * symjson_api: the requests of the Firefox Profiler's /source/v1 and
 * /asm/v1 (samply's API.md), one flat object each, read with yajl's
 * callbacks as the other requests are (symjson_read.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "base/hex.h"
#include "symjson.h"

/* Keys that are read; a value of any other key is skipped whole. */
enum akey { A_OTHER, A_DEBUGNAME, A_DEBUGID, A_NAME, A_CODEID, A_OFFSET,
	A_FILE, A_START, A_SIZE, A_UNTIL };

static const struct {
	const char	*name;
	enum akey	 key;
} akeys[] = {
	{ "debugName", A_DEBUGNAME }, { "debugId", A_DEBUGID },
	{ "name", A_NAME }, { "codeId", A_CODEID },
	{ "moduleOffset", A_OFFSET }, { "file", A_FILE },
	{ "startAddress", A_START }, { "size", A_SIZE },
	{ "continueUntilFunctionEnd", A_UNTIL }
};

/* Nesting under an unread key deeper than this is refused. */
#define ADEPTH_MAX	64

struct aread {
	struct symjson_api	*out;
	unsigned		 depth;		/* 1: the top object */
	enum akey		 key;
	unsigned		 seen;		/* 1 << enum akey */
	int			 err;
	const char		*why;
};

static int
afail(struct aread *a, int err, const char *why)
{
	if (a->err == 0) {
		a->err = err;
		a->why = why;
	}
	return 0;	/* yajl stops */
}

/* A value met: at the top's key, or inside a skipped one. */
static int
avalue(struct aread *a)
{
	if (a->depth == 0)
		return afail(a, -EINVAL, "the request is not a JSON object");
	return 1;
}

/* An address or size: "0x1f" (samply's), "1f", or a JSON integer. */
static int
ahex(struct aread *a, const char *s, size_t len, uint64_t *v)
{
	size_t	i;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	if (len == 0 || len > 16)
		return afail(a, -EINVAL, "an address or size is not a hex "
		    "number of at most 64 bits (\"0x1f\")");
	*v = 0;
	for (i = 0; i < len; i++) {
		int d = hex_value(s[i] >= 'A' && s[i] <= 'F' ?
		    s[i] - 'A' + 'a' : s[i]);

		if (d < 0)
			return afail(a, -EINVAL, "an address or size is not a "
			    "hex number of at most 64 bits (\"0x1f\")");
		*v = *v << 4 | (uint64_t)d;
	}
	return 1;
}

static uint64_t *
anumber_of(struct aread *a)
{
	switch (a->key) {
	case A_OFFSET:
		return &a->out->module_offset;
	case A_START:
		return &a->out->start;
	case A_SIZE:
		return &a->out->size;
	default:
		return NULL;
	}
}

/* A string of at most max bytes, without NUL, copied. */
static int
astring(struct aread *a, const char *s, size_t len, size_t max, char **to)
{
	if (len > max || memchr(s, '\0', len) != NULL)
		return afail(a, -EINVAL, a->key == A_FILE ? "\"file\" is over "
		    "4096 bytes or holds a NUL" : "a name or id is over 255 "
		    "bytes or holds a NUL");
	free(*to);
	if ((*to = malloc(len + 1)) == NULL)
		return afail(a, -ENOMEM, "out of memory");
	memcpy(*to, s, len);
	(*to)[len] = '\0';
	return 1;
}

static int
a_string(void *ctx, const unsigned char *v, size_t len)
{
	struct aread		*a = ctx;
	struct symjson_api	*o = a->out;
	const char		*s = (const char *)v;
	uint64_t		*n;
	unsigned char		 id[SYMJSON_CODE_ID_MAX];

	if (!avalue(a))
		return 0;
	if (a->depth > 1)
		return 1;
	if ((n = anumber_of(a)) != NULL)
		return ahex(a, s, len, n);
	switch (a->key) {
	case A_DEBUGNAME:
		return astring(a, s, len, 255, &o->debug_name);
	case A_NAME:
		return astring(a, s, len, 255, &o->name);
	case A_FILE:
		return astring(a, s, len, SYMJSON_FILE_MAX, &o->file);
	case A_DEBUGID: {
		char	id0[41];	/* the reader wants it NUL-ended */

		if (len >= sizeof(id0))
			return afail(a, -EINVAL, "\"debugId\" is not a "
			    "Breakpad id (33 to 40 hex digits)");
		memcpy(id0, s, len);
		id0[len] = '\0';
		if (symjson_breakpad_prefix(id0, len, o->debug_id) != 0)
			return afail(a, -EINVAL, "\"debugId\" is not a "
			    "Breakpad id (33 to 40 hex digits)");
		o->has_debug_id = 1;
		return 1;
	}
	case A_CODEID:
		/* An ELF code id is the build-id; samply passes over one it
		 * cannot read (a Mach-O UUID, a PE stamp), and so do we. */
		if (len % 2 == 0 && len / 2 <= sizeof(id) && len > 0) {
			char	lower[2 * SYMJSON_CODE_ID_MAX];
			size_t	i;

			for (i = 0; i < len; i++)
				lower[i] = (char)(s[i] >= 'A' && s[i] <= 'F' ?
				    s[i] - 'A' + 'a' : s[i]);
			if (hex_decode(lower, len, id) == (int)(len / 2)) {
				memcpy(o->code_id, id, len / 2);
				o->code_idlen = len / 2;
			}
		}
		return 1;
	case A_UNTIL:
		return afail(a, -EINVAL, "\"continueUntilFunctionEnd\" is "
		    "not a boolean");
	default:
		return 1;
	}
}

static int
a_integer(void *ctx, long long v)
{
	struct aread	*a = ctx;
	uint64_t	*n;

	if (!avalue(a))
		return 0;
	if (a->depth > 1)
		return 1;
	if ((n = anumber_of(a)) != NULL) {
		if (v < 0)
			return afail(a, -EINVAL, "an address or size is "
			    "negative");
		*n = (uint64_t)v;
		return 1;
	}
	if (a->key != A_OTHER)
		return afail(a, -EINVAL, "a name or id is a number");
	return 1;
}

static int
a_double(void *ctx, double v)
{
	struct aread *a = ctx;

	(void)v;
	if (!avalue(a))
		return 0;
	if (a->depth == 1 && a->key != A_OTHER)
		return afail(a, -EINVAL, "an address, size, name or id is "
		    "not an integer or a string");
	return 1;
}

static int
a_boolean(void *ctx, int v)
{
	struct aread *a = ctx;

	if (!avalue(a))
		return 0;
	if (a->depth > 1)
		return 1;
	if (a->key == A_UNTIL) {
		a->out->until_end = v;
		return 1;
	}
	if (a->key != A_OTHER)
		return afail(a, -EINVAL, "an address, size, name or id is a "
		    "boolean");
	return 1;
}

static int
a_null(void *ctx)
{
	struct aread *a = ctx;

	if (!avalue(a))
		return 0;
	/* samply's optional fields may be null: as if absent. */
	if (a->depth == 1)
		a->seen &= ~(1u << a->key);
	return 1;
}

static int
a_start(struct aread *a)
{
	if (a->depth == 0 && a->err == 0) {
		a->depth = 1;
		return 1;
	}
	if (a->depth == 1 && a->key != A_OTHER)
		return afail(a, -EINVAL, "an address, size, name or id is an "
		    "object or an array");
	if (a->depth >= ADEPTH_MAX)
		return afail(a, -EINVAL, "nested too deeply");
	a->depth++;
	return 1;
}

static int
a_start_map(void *ctx)
{
	return a_start(ctx);
}

static int
a_start_array(void *ctx)
{
	struct aread *a = ctx;

	if (a->depth == 0)
		return afail(a, -EINVAL, "the request is not a JSON object");
	return a_start(a);
}

static int
a_end(void *ctx)
{
	struct aread *a = ctx;

	a->depth--;
	return 1;
}

static int
a_map_key(void *ctx, const unsigned char *k, size_t len)
{
	struct aread	*a = ctx;
	size_t		 i;

	if (a->depth > 1)
		return 1;
	a->key = A_OTHER;
	for (i = 0; i < sizeof(akeys) / sizeof(akeys[0]); i++)
		if (strlen(akeys[i].name) == len &&
		    memcmp(akeys[i].name, k, len) == 0) {
			a->key = akeys[i].key;
			break;
		}
	if (a->key != A_OTHER && (a->seen & 1u << a->key) != 0)
		return afail(a, -EINVAL, "a key is given twice");
	a->seen |= 1u << a->key;
	return 1;
}

static const yajl_callbacks acallbacks = {
	a_null, a_boolean, a_integer, a_double, NULL, a_string,
	a_start_map, a_map_key, a_end, a_start_array, a_end
};

int
symjson_parse_api(const char *body, size_t len, int asm_v1,
    struct symjson_api *out, const char **why)
{
	struct aread	a;
	yajl_handle	h;
	yajl_status	st;

	memset(out, 0, sizeof(*out));
	memset(&a, 0, sizeof(a));
	a.out = out;
	if ((h = yajl_alloc(&acallbacks, NULL, &a)) == NULL) {
		*why = "out of memory";
		return -ENOMEM;
	}
	/* yajl checks that strings are UTF-8, as for /symbolize. */
	st = yajl_parse(h, (const unsigned char *)body, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	yajl_free(h);
	if (a.err == 0 && st != yajl_status_ok)
		afail(&a, -EINVAL, "malformed JSON: expected one object");
	if (a.err == 0 && !out->has_debug_id && out->code_idlen == 0)
		afail(&a, -EINVAL, "no module: give \"debugId\" (a Breakpad "
		    "id) or \"codeId\" (the build-id)");
	if (a.err == 0 && !asm_v1 && (a.seen & 1u << A_FILE) == 0)
		afail(&a, -EINVAL, "no \"file\"");
	if (a.err == 0 && asm_v1 && ((a.seen & 1u << A_START) == 0 ||
	    (a.seen & 1u << A_SIZE) == 0))
		afail(&a, -EINVAL, "no \"startAddress\" or \"size\"");
	out->has_offset = (a.seen & 1u << A_OFFSET) != 0;
	if (a.err != 0) {
		*why = a.why;
		symjson_api_free(out);
		return a.err;
	}
	return 0;
}

void
symjson_api_free(struct symjson_api *q)
{
	free(q->debug_name);
	free(q->name);
	free(q->file);
	memset(q, 0, sizeof(*q));
}

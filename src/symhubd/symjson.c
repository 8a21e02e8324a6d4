/*
 * symjson: the JSON of /symbolize.  An answer for 10,000 addresses is
 * about 1.7 MB of a few thousand distinct names and paths repeated: a
 * json-c object a result cost a malloc and a free a field, most of the
 * time of a batch.  So json-c escapes each distinct string once, into an
 * arena found again by the string's address, and the rest is copied.
 *
 * Requests of many addresses (symjson_parse(), symjson_parse_batch())
 * are read with yajl's callbacks instead: json-c builds an object, two
 * mallocs, an address (a 1 MB request of 100,000 took 14-20 ms to parse,
 * 5.5 ms with yajl).  The Tecken requests keep json-c's tree.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <yajl/yajl_parse.h>

#include "base/buf.h"
#include "base/hex.h"
#include "common/demangle.h"
#include "common/webapi.h"
#include "symjson.h"

/* Parse len bytes of JSON, of which only blanks may follow the value.
 * @return the value (json_object_put() it), or NULL. */
static json_object *
parse_whole(const char *body, size_t len)
{
	json_tokener	*tok;
	json_object	*v = NULL;
	size_t		 k;

	if (len > INT32_MAX || (tok = json_tokener_new()) == NULL)
		return NULL;
	v = json_tokener_parse_ex(tok, body, (int)len);
	k = v != NULL ? json_tokener_get_parse_end(tok) : len;
	while (k < len && (body[k] == ' ' || body[k] == '\t' ||
	    body[k] == '\r' || body[k] == '\n'))
		k++;
	json_tokener_free(tok);
	if (k != len) {
		json_object_put(v);
		return NULL;
	}
	return v;
}

/* ---- requests of many addresses, read with yajl ---- */

/* The value of a hex digit of either case, or -1. */
static int
hexval(char c)
{
	return hex_value(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
}


/* What the container at a depth is. */
enum jrole {
	J_TOP,		/* the batch's object */
	J_MODULES,	/* its "modules" */
	J_MODULE,	/* one of them */
	J_ADDRS,	/* an array of addresses */
	J_SKIP		/* a value of a key nothing reads */
};

/* Keys that are read. */
enum jkey { K_OTHER, K_MODULES, K_DEADLINE, K_DEMANGLE, K_BUILDID,
	K_FILEID, K_ADDRESSES, K_OFFSETS };

/* Nesting deeper than this is refused (json-c's default is 32). */
#define JDEPTH_MAX	64

/* A module's keys met so far. */
#define M_BUILDID	0x1
#define M_FILEID	0x2
#define M_ADDRESSES	0x4
#define M_OFFSETS	0x8

struct jread {
	int			 batch;	/* else a bare array of addresses */
	uint64_t		 max_addrs;
	size_t			 max_mods;
	enum jrole		 role[JDEPTH_MAX + 1];
	unsigned		 depth;
	enum jkey		 key;	/* the last key of the innermost map */
	long			 err;	/* 0, -EINVAL, -E2BIG, -ENOMEM */
	const char		*why;
	uint64_t		*a;	/* every address */
	size_t			 na, capa;
	struct symjson_module	*m;
	size_t			 nm, capm;
	size_t			*first;	/* [module]: its first address */
	size_t			 capfirst;
	unsigned		 mkeys;	/* of the module being read: M_* */
	int			 modules;	/* "modules" met */
	int64_t			 deadline_ms;
	int			 demangle;
};

static void
jread_init(struct jread *j, int batch, uint64_t max_addrs, size_t max_mods)
{
	memset(j, 0, sizeof(*j));
	j->batch = batch;
	j->max_addrs = max_addrs;
	j->max_mods = max_mods;
	j->deadline_ms = -1;
}

/* Stop the parse with err and a message for the client.  @return 0. */
static int
jfail(struct jread *j, long err, const char *why)
{
	j->err = err;
	j->why = why;
	return 0;
}

static int
jpush(struct jread *j, enum jrole r)
{
	if (j->depth >= JDEPTH_MAX)
		return jfail(j, -EINVAL, "malformed JSON: nested too deep");
	j->role[++j->depth] = r;
	j->key = K_OTHER;
	return 1;
}

/* A number of JSON as an unsigned decimal: digits only.  @return 0 or
 * -1 (a sign, a fraction, an exponent, past 2^64 - 1). */
static int
jnum_u64(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';

		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

/* A hex string ("0x1f", "1f"), at most 64 bits.  @return 0 or -1. */
static int
jhex_u64(const unsigned char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		int d = hexval((char)s[i]);

		if (d < 0 || (x >> 60) != 0)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return 0;
}

static int
jaddr(struct jread *j, uint64_t v)
{
	if (j->na >= j->max_addrs)
		return jfail(j, -E2BIG, "too many addresses");
	if (j->na == j->capa && array_grow(&j->a, &j->capa, j->na + 1,
	    sizeof(*j->a)) != 0)
		return jfail(j, -ENOMEM, "out of memory");
	j->a[j->na++] = v;
	return 1;
}

/* A module's id: lowercase hex, at most WEBAPI_ID_HEX_MAX characters. */
static int
jid(struct jread *j, const unsigned char *s, size_t len, int fileid)
{
	struct symjson_module *m = &j->m[j->nm - 1];
	int n;

	if (len > WEBAPI_ID_HEX_MAX || memchr(s, 0, len) != NULL)
		return jfail(j, -EINVAL, "a module's id must be lowercase "
		    "hex, at most 128 characters");
	memcpy(m->idhex, s, len);
	m->idhex[len] = '\0';
	if ((n = webapi_parse_hexid(m->idhex, len, m->id)) <= 0)
		return jfail(j, -EINVAL, "a module's id must be lowercase "
		    "hex, at most 128 characters");
	m->idlen = (size_t)n;
	m->by_fileid = fileid;
	j->mkeys |= fileid ? M_FILEID : M_BUILDID;
	return 1;
}

/* Kinds of values, for jvalue(). */
enum jkind { V_NULL, V_BOOL, V_NUM, V_STR, V_MAP, V_ARRAY };

/* A value met (a container: its start), where the reader stands. */
static int
jvalue(struct jread *j, enum jkind k, const char *s, size_t len, int b)
{
	uint64_t v;

	if (j->depth == 0) {
		if (j->batch && k == V_MAP)
			return jpush(j, J_TOP);
		if (!j->batch && k == V_ARRAY)
			return jpush(j, J_ADDRS);
		return jfail(j, -EINVAL, j->batch ? "malformed JSON: "
		    "expected an object with \"modules\"" : "malformed JSON: "
		    "expected an array of addresses");
	}
	/* A key whose value is null is absent, as json-c has it. */
	if (k == V_NULL && j->key != K_OTHER) {
		switch (j->key) {
		case K_MODULES:
			j->modules = 0;
			j->nm = j->na = 0;
			break;
		case K_DEADLINE:
			j->deadline_ms = -1;
			break;
		case K_DEMANGLE:
			j->demangle = 0;
			break;
		case K_BUILDID:
			j->mkeys &= ~(unsigned)M_BUILDID;
			break;
		case K_FILEID:
			j->mkeys &= ~(unsigned)M_FILEID;
			break;
		case K_ADDRESSES:
		case K_OFFSETS:
			if (j->mkeys & (j->key == K_OFFSETS ? M_OFFSETS :
			    M_ADDRESSES))
				j->na = j->first[j->nm - 1];
			j->mkeys &= ~(unsigned)(j->key == K_OFFSETS ?
			    M_OFFSETS : M_ADDRESSES);
			break;
		default:
			break;
		}
		return 1;
	}
	switch (j->role[j->depth]) {
	case J_SKIP:
		break;
	case J_TOP:
		switch (j->key) {
		case K_MODULES:
			if (k != V_ARRAY)
				return jfail(j, -EINVAL, "malformed JSON: "
				    "expected an object with \"modules\"");
			j->modules = 1;		/* the last one counts */
			j->nm = j->na = 0;
			return jpush(j, J_MODULES);
		case K_DEADLINE:
			if (k != V_NUM || jnum_u64(s, len, &v) < 0 ||
			    v > INT64_MAX)
				return jfail(j, -EINVAL, "\"deadline_ms\" must "
				    "be a number of milliseconds");
			j->deadline_ms = (int64_t)v;
			return 1;
		case K_DEMANGLE:
			if (k != V_BOOL)
				return jfail(j, -EINVAL, "\"demangle\" must be "
				    "true or false");
			j->demangle = b;
			return 1;
		default:
			break;
		}
		break;
	case J_MODULES:
		if (k != V_MAP)
			return jfail(j, -EINVAL, "each module must be an "
			    "object");
		if (j->nm >= j->max_mods)
			return jfail(j, -E2BIG, "too many modules");
		if ((j->nm == j->capm && array_grow(&j->m, &j->capm,
		    j->nm + 1, sizeof(*j->m)) != 0) || array_grow(&j->first,
		    &j->capfirst, j->nm + 1, sizeof(*j->first)) != 0)
			return jfail(j, -ENOMEM, "out of memory");
		memset(&j->m[j->nm], 0, sizeof(j->m[j->nm]));
		j->first[j->nm++] = j->na;
		j->mkeys = 0;
		return jpush(j, J_MODULE);
	case J_MODULE:
		switch (j->key) {
		case K_BUILDID:
		case K_FILEID:
			if (k != V_STR)
				return jfail(j, -EINVAL, "a module's id must be "
				    "lowercase hex, at most 128 characters");
			return jid(j, (const unsigned char *)s, len,
			    j->key == K_FILEID);
		case K_ADDRESSES:
		case K_OFFSETS:
			if (k != V_ARRAY)
				return jfail(j, -EINVAL, "\"addresses\" and "
				    "\"offsets\" must be arrays");
			/* A key given twice: the last value counts. */
			j->na = j->first[j->nm - 1];
			j->mkeys |= j->key == K_OFFSETS ? M_OFFSETS :
			    M_ADDRESSES;
			j->m[j->nm - 1].offsets = j->key == K_OFFSETS;
			return jpush(j, J_ADDRS);
		default:
			break;
		}
		break;
	case J_ADDRS:
		if (k == V_NUM) {
			if (len > 0 && s[0] == '-')
				return jfail(j, -EINVAL, "negative address");
			if (memchr(s, '.', len) || memchr(s, 'e', len) ||
			    memchr(s, 'E', len))
				return jfail(j, -EINVAL, "addresses must be "
				    "numbers or hex strings");
			if (jnum_u64(s, len, &v) < 0)
				return jfail(j, -EINVAL, "malformed address "
				    "in the array");
			return jaddr(j, v);
		}
		if (k == V_STR) {
			if (jhex_u64((const unsigned char *)s, len, &v) < 0)
				return jfail(j, -EINVAL, "malformed address "
				    "in the array");
			return jaddr(j, v);
		}
		return jfail(j, -EINVAL, "addresses must be numbers or hex "
		    "strings");
	}
	/* A value nothing reads: skipped, with what it holds. */
	if (k == V_MAP || k == V_ARRAY)
		return jpush(j, J_SKIP);
	return 1;
}

/* The end of the innermost container. */
static int
jend(struct jread *j)
{
	enum jrole r = j->role[j->depth--];

	j->key = K_OTHER;
	if (r != J_MODULE)
		return 1;
	if (!(j->mkeys & (M_BUILDID | M_FILEID)) ||
	    (j->mkeys & (M_BUILDID | M_FILEID)) == (M_BUILDID | M_FILEID))
		return jfail(j, -EINVAL, "each module needs one of "
		    "\"buildid\" and \"fileid\"");
	if (j->m[j->nm - 1].by_fileid && j->m[j->nm - 1].idlen != 16)
		return jfail(j, -EINVAL, "a FileID is 32 hex characters");
	if (!(j->mkeys & (M_ADDRESSES | M_OFFSETS)) ||
	    (j->mkeys & (M_ADDRESSES | M_OFFSETS)) ==
	    (M_ADDRESSES | M_OFFSETS))
		return jfail(j, -EINVAL, "each module needs one of "
		    "\"addresses\" and \"offsets\"");
	j->m[j->nm - 1].naddrs = j->na - j->first[j->nm - 1];
	return 1;
}

static int
cb_null(void *ctx)
{
	return jvalue(ctx, V_NULL, NULL, 0, 0);
}

static int
cb_bool(void *ctx, int b)
{
	return jvalue(ctx, V_BOOL, NULL, 0, b != 0);
}

static int
cb_number(void *ctx, const char *s, size_t len)
{
	return jvalue(ctx, V_NUM, s, len, 0);
}

static int
cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return jvalue(ctx, V_STR, (const char *)s, len, 0);
}

static int
cb_start_map(void *ctx)
{
	return jvalue(ctx, V_MAP, NULL, 0, 0);
}

static int
cb_start_array(void *ctx)
{
	return jvalue(ctx, V_ARRAY, NULL, 0, 0);
}

static int
cb_end(void *ctx)
{
	return jend(ctx);
}

static int
cb_key(void *ctx, const unsigned char *s, size_t len)
{
	struct jread *j = ctx;
	static const struct {
		const char	*name;
		enum jkey	 key;
		enum jrole	 in;
	} keys[] = {
		{ "modules", K_MODULES, J_TOP },
		{ "deadline_ms", K_DEADLINE, J_TOP },
		{ "demangle", K_DEMANGLE, J_TOP },
		{ "buildid", K_BUILDID, J_MODULE },
		{ "fileid", K_FILEID, J_MODULE },
		{ "addresses", K_ADDRESSES, J_MODULE },
		{ "offsets", K_OFFSETS, J_MODULE },
	};
	size_t i;

	j->key = K_OTHER;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].in == j->role[j->depth] &&
		    strlen(keys[i].name) == len &&
		    memcmp(keys[i].name, s, len) == 0)
			j->key = keys[i].key;
	return 1;
}

static const yajl_callbacks jcallbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end
};

/* Read body into j.  @return 0; or j->err with j->why, j's arrays
 * freed. */
static long
jread_run(struct jread *j, const char *body, size_t len)
{
	yajl_handle h;
	yajl_status st;

	if ((h = yajl_alloc(&jcallbacks, NULL, j)) == NULL) {
		j->err = -ENOMEM;
		j->why = "out of memory";
		return j->err;
	}
	st = yajl_parse(h, (const unsigned char *)body, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	yajl_free(h);
	if (j->err == 0 && (st != yajl_status_ok ||
	    (j->batch && !j->modules))) {
		j->err = -EINVAL;
		j->why = j->batch ? "malformed JSON: expected an object with "
		    "\"modules\"" : "malformed JSON: expected an array of "
		    "addresses";
	}
	if (j->err != 0) {
		free(j->a);
		free(j->m);
		free(j->first);
		j->a = NULL;
		j->m = NULL;
		j->first = NULL;
		return j->err;
	}
	return 0;
}

long
symjson_parse(const char *body, size_t len, uint64_t max, uint64_t **out,
    const char **why)
{
	uint64_t	*a = NULL;
	size_t		 n = 0, cap = 0, i = 0;
	long		 rc = -EINVAL;

	*out = NULL;
	while (i < len && (body[i] == ' ' || body[i] == '\t' ||
	    body[i] == '\r' || body[i] == '\n'))
		i++;
	if (i < len && body[i] == '[') {
		struct jread j;

		jread_init(&j, 0, max, 0);
		if ((rc = jread_run(&j, body, len)) < 0) {
			*why = j.why;
			return rc;
		}
		*out = j.a;
		return (long)j.na;
	}
	while (i < len) {
		size_t	 e = i, k;

		while (e < len && body[e] != '\n')
			e++;
		k = e;
		while (k > i && (body[k - 1] == '\r' || body[k - 1] == ' ' ||
		    body[k - 1] == '\t'))
			k--;
		while (i < k && (body[i] == ' ' || body[i] == '\t'))
			i++;
		if (k > i) {
			if (array_grow(&a, &cap, n + 1, sizeof(*a)) != 0)
				goto nomem;
			if (jhex_u64((const unsigned char *)body + i, k - i,
			    &a[n]) < 0) {
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
	free(a);
	return rc;
}


/* Look a key of obj up: NULL when absent. */
static json_object *
member(json_object *obj, const char *key)
{
	json_object	*v;

	return json_object_object_get_ex(obj, key, &v) ? v : NULL;
}

long
symjson_parse_batch(const char *body, size_t len, uint64_t max_addrs,
    size_t max_modules, struct symjson_batch *out, const char **why)
{
	struct jread	j;
	size_t		i;
	long		rc;

	memset(out, 0, sizeof(*out));
	jread_init(&j, 1, max_addrs, max_modules);
	if ((rc = jread_run(&j, body, len)) < 0) {
		*why = j.why;
		return rc;
	}
	out->mods = j.m;
	out->nmods = j.nm;
	out->addrs = j.a;
	out->naddrs = j.na;
	out->deadline_ms = j.deadline_ms;
	out->demangle = j.demangle;
	for (i = 0; i < j.nm; i++)
		out->mods[i].addrs = j.a + j.first[i];
	free(j.first);
	return (long)j.nm;
}

void
symjson_batch_free(struct symjson_batch *b)
{
	free(b->mods);
	free(b->addrs);
	b->mods = NULL;
	b->addrs = NULL;
	b->nmods = b->naddrs = 0;
}

/* ---- Tecken ---- */

/* A Breakpad id's GUID: the build-id's bytes 0-3, 4-5 and 6-7 each
 * reversed (a little-endian GUID), 8-15 as they are. */
static const unsigned char guid_order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9,
    10, 11, 12, 13, 14, 15 };

/* A Breakpad id to the build-id bytes it holds.  @return 0; -EINVAL. */
static int
breakpad_prefix(const char *s, size_t len, unsigned char out[16])
{
	unsigned char	g[16];
	size_t		i;

	/* The GUID's 32 digits, then an age of 1 to 8. */
	if (len < 33 || len > 40 || strlen(s) != len)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (hexval(s[i]) < 0)
			return -EINVAL;
	for (i = 0; i < 16; i++)
		g[i] = (unsigned char)(hexval(s[2 * i]) << 4 |
		    hexval(s[2 * i + 1]));
	for (i = 0; i < 16; i++)
		out[i] = g[guid_order[i]];
	return 0;
}

void
symjson_breakpad_id(const unsigned char *id, size_t idlen, char out[34])
{
	static const char digits[] = "0123456789ABCDEF";
	unsigned char	p[16] = { 0 };
	size_t		i;

	memcpy(p, id, idlen < 16 ? idlen : 16);
	for (i = 0; i < 16; i++) {
		out[2 * i] = digits[p[guid_order[i]] >> 4];
		out[2 * i + 1] = digits[p[guid_order[i]] & 15];
	}
	out[32] = '0';
	out[33] = '\0';
}

/* The modules met so far, by their 16 bytes: an open-addressing table
 * of indexes + 1 (0: free), hcap a power of 2 over twice their bound. */
static size_t
mod_slot(const unsigned char p[16], size_t hcap)
{
	uint64_t	h;

	memcpy(&h, p, sizeof(h));	/* a build-id's bytes are a hash */
	return (size_t)(h ^ (h >> 31)) & (hcap - 1);
}

/* The index of the module with prefix p, or t->nmods. */
static size_t
mod_find(const struct symjson_tecken *t, const size_t *hash, size_t hcap,
    const unsigned char p[16])
{
	size_t	k;

	for (k = mod_slot(p, hcap); hash[k] != 0; k = (k + 1) & (hcap - 1))
		if (memcmp(t->mods[hash[k] - 1].id, p, 16) == 0)
			return hash[k] - 1;
	return t->nmods;
}

static void
mod_add(const struct symjson_tecken *t, size_t *hash, size_t hcap, size_t i)
{
	size_t	k;

	for (k = mod_slot(t->mods[i].id, hcap); hash[k] != 0;
	    k = (k + 1) & (hcap - 1))
		;
	hash[k] = i + 1;
}

/* Read one job.  @return 0; -EINVAL, -E2BIG, -ENOMEM with *why. */
static int
read_job(json_object *o, struct symjson_tecken *t, struct symjson_tjob *job,
    size_t *hash, size_t hcap, uint64_t max_frames, size_t max_modules,
    const char **why)
{
	json_object	*map, *stacks;
	size_t		 i, k, n, f;

	if (!json_object_is_type(o, json_type_object) ||
	    (map = member(o, "memoryMap")) == NULL ||
	    (stacks = member(o, "stacks")) == NULL ||
	    !json_object_is_type(map, json_type_array) ||
	    !json_object_is_type(stacks, json_type_array)) {
		*why = "a job needs the arrays \"memoryMap\" and \"stacks\"";
		return -EINVAL;
	}
	job->nlibs = json_object_array_length(map);
	/* Each entry is looked for among the modules met: a bound on that
	 * work, as on the modules. */
	if (job->nlibs > max_modules) {
		*why = "too many modules";
		return -E2BIG;
	}
	if (job->nlibs > 0 && (job->libs = calloc(job->nlibs,
	    sizeof(*job->libs))) == NULL)
		goto nomem;
	for (i = 0; i < job->nlibs; i++) {
		json_object	*e = json_object_array_get_idx(map, i), *nm, *id;
		unsigned char	 prefix[16];

		if (!json_object_is_type(e, json_type_array) ||
		    json_object_array_length(e) != 2 ||
		    !json_object_is_type(nm = json_object_array_get_idx(e, 0),
		    json_type_string) ||
		    !json_object_is_type(id = json_object_array_get_idx(e, 1),
		    json_type_string) ||
		    breakpad_prefix(json_object_get_string(id),
		    (size_t)json_object_get_string_len(id), prefix) != 0) {
			*why = "a memoryMap entry is [debugName, breakpadId], "
			    "the id 33 to 40 hex digits";
			return -EINVAL;
		}
		job->libs[i].name = json_object_get_string(nm);
		job->libs[i].key = json_object_get_string(id);
		k = mod_find(t, hash, hcap, prefix);
		if (k == t->nmods) {
			if (t->nmods == max_modules) {
				*why = "too many modules";
				return -E2BIG;
			}
			memcpy(t->mods[k].id, prefix, 16);
			t->mods[k].idlen = 16;
			mod_add(t, hash, hcap, k);
			snprintf(t->mods[k].idhex, sizeof(t->mods[k].idhex),
			    "%s", job->libs[i].key);
			t->nmods++;
		}
		job->libs[i].mod = k;
	}
	job->nstacks = json_object_array_length(stacks);
	for (i = 0, n = 0; i < job->nstacks; i++) {
		json_object *st = json_object_array_get_idx(stacks, i);

		if (!json_object_is_type(st, json_type_array)) {
			*why = "each stack must be an array of frames";
			return -EINVAL;
		}
		n += json_object_array_length(st);
	}
	if (n > max_frames || t->nframes + n > max_frames) {
		*why = "too many addresses";
		return -E2BIG;
	}
	t->nframes += n;
	if ((job->stacks = calloc(job->nstacks + 1,
	    sizeof(*job->stacks))) == NULL ||
	    (n > 0 && (job->frames = calloc(n, sizeof(*job->frames))) == NULL))
		goto nomem;
	for (i = 0, f = 0; i < job->nstacks; i++) {
		json_object *st = json_object_array_get_idx(stacks, i);

		job->stacks[i] = f;
		for (k = 0; k < json_object_array_length(st); k++, f++) {
			json_object *fr = json_object_array_get_idx(st, k);
			json_object *mi, *ad;

			if (!json_object_is_type(fr, json_type_array) ||
			    json_object_array_length(fr) != 2 ||
			    !json_object_is_type(mi =
			    json_object_array_get_idx(fr, 0), json_type_int) ||
			    !json_object_is_type(ad =
			    json_object_array_get_idx(fr, 1), json_type_int) ||
			    json_object_get_int64(ad) < 0) {
				*why = "a frame is [moduleIndex, address]";
				return -EINVAL;
			}
			if (json_object_get_int64(mi) < 0 ||
			    (uint64_t)json_object_get_int64(mi) >= job->nlibs) {
				*why = "a frame's module index is beyond the "
				    "memoryMap";
				return -EINVAL;
			}
			job->frames[f].lib = (uint32_t)json_object_get_int64(mi);
			job->frames[f].addr = json_object_get_uint64(ad);
		}
	}
	job->stacks[job->nstacks] = f;
	return 0;
nomem:
	*why = "out of memory";
	return -ENOMEM;
}

long
symjson_parse_tecken(const char *body, size_t len, uint64_t max_frames,
    size_t max_modules, struct symjson_tecken *out, const char **why)
{
	json_object	*doc, *jobs;
	size_t		 i, nlibs = 0, hcap, *hash = NULL;
	long		 rc = -EINVAL;
	int		 one;

	memset(out, 0, sizeof(*out));
	*why = "malformed JSON: expected an object with \"jobs\", or one job";
	if ((doc = parse_whole(body, len)) == NULL ||
	    !json_object_is_type(doc, json_type_object)) {
		json_object_put(doc);
		return -EINVAL;
	}
	out->doc = doc;
	jobs = member(doc, "jobs");
	one = jobs == NULL;
	if (!one && !json_object_is_type(jobs, json_type_array))
		goto out;
	out->njobs = one ? 1 : json_object_array_length(jobs);
	/* At most as many modules as memoryMap entries. */
	for (i = 0; i < out->njobs; i++) {
		json_object *j = one ? doc : json_object_array_get_idx(jobs, i);
		json_object *m = json_object_is_type(j, json_type_object) ?
		    member(j, "memoryMap") : NULL;

		if (m != NULL && json_object_is_type(m, json_type_array))
			nlibs += json_object_array_length(m);
	}
	if (nlibs > max_modules)
		nlibs = max_modules;
	for (hcap = 16; hcap < 2 * nlibs; hcap *= 2)
		;
	rc = -ENOMEM;
	if ((out->njobs > 0 && (out->jobs = calloc(out->njobs,
	    sizeof(*out->jobs))) == NULL) ||
	    (nlibs > 0 && (out->mods = calloc(nlibs,
	    sizeof(*out->mods))) == NULL) ||
	    (hash = calloc(hcap, sizeof(*hash))) == NULL)
		goto out;
	for (i = 0; i < out->njobs; i++) {
		json_object *j = one ? doc : json_object_array_get_idx(jobs, i);

		if ((rc = read_job(j, out, &out->jobs[i], hash, hcap,
		    max_frames, nlibs, why)) != 0)
			goto out;
	}
	rc = (long)out->nmods;
out:
	free(hash);
	if (rc < 0)
		symjson_tecken_free(out);
	return rc;
}

void
symjson_tecken_free(struct symjson_tecken *t)
{
	size_t	i;

	for (i = 0; t->jobs != NULL && i < t->njobs; i++) {
		free(t->jobs[i].libs);
		free(t->jobs[i].stacks);
		free(t->jobs[i].frames);
	}
	free(t->jobs);
	free(t->mods);
	json_object_put(t->doc);
	memset(t, 0, sizeof(*t));
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
	if (buf_add(&j->arena, js, len) != 0)
		return -ENOMEM;
	/* Known from now on, its bytes in the arena. */
	e->a = a;
	e->b = b;
	e->off = j->arena.len - len;
	e->len = len;
	j->used++;
	return buf_add(&j->out, js, len);
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
	if ((j->str = json_object_new_string("")) == NULL ||
	    esc_grow(j) != 0 || buf_reserve(&j->out, guess + 256) != 0) {
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
	const char	*js;
	size_t		 len = strlen(str);

	if (len > INT32_MAX ||
	    json_object_set_string_len(j->str, str, (int)len) == 0 ||
	    (js = json_object_to_json_string_length(j->str,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
	    &len)) == NULL)
		return -ENOMEM;
	return buf_add(&j->out, js, len) == 0 ? 0 : -ENOMEM;
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
	/* What is left goes to the front: the buffer is reused, never
	 * grown past a step's worth. */
	memmove(j->out.p, j->out.p + j->drained, j->out.len - j->drained);
	j->out.len -= j->drained;
	j->drained = 0;
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
	json_object_put(j->str);
	buf_free(&j->out);
	buf_free(&j->arena);
	buf_free(&j->tmp);
	free(j->tab);
	free(j);
}

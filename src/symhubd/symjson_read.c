/*
 * symjson_read: the requests of /symbolize and /symbolicate/v5, read
 * with yajl's callbacks: json-c builds an object, two mallocs, an
 * address (a 1 MB request of 100,000 took 14-20 ms to parse, 5.5 ms
 * with yajl), some 400 bytes a Tecken frame.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "base/buf.h"
#include "base/hex.h"
#include "common/webapi.h"
#include "symjson.h"

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

int
symjson_breakpad_prefix(const char *s, size_t len, unsigned char out[16])
{
	return breakpad_prefix(s, len, out);
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

/*
 * A Tecken request, read with yajl's callbacks as the batches are: a
 * json-c tree cost some 400 bytes a frame, 20 times the frame's text.
 * Jobs are kept as they are read; the modules are gathered at the end,
 * from the jobs that count (a top-level "jobs" wins over a job at the
 * top, and of a key given twice the last value counts, as json-c had it).
 */
enum trole {
	T_TOP,		/* the request's object */
	T_JOBS,		/* "jobs" */
	T_JOB,		/* one of them */
	T_MAP,		/* a job's "memoryMap" */
	T_ENTRY,	/* one entry: [debugName, breakpadId] */
	T_STACKS,	/* a job's "stacks" */
	T_STACK,	/* one stack */
	T_FRAME,	/* one frame: [moduleIndex, address] */
	T_SKIP		/* a value nothing reads */
};

enum tkey { TK_OTHER, TK_JOBS, TK_MAP, TK_STACKS };

/* A job's arrays' capacities, and what of it was met. */
struct tjcap {
	size_t		 libs, stacks, frames;
	int		 map, stks;	/* "memoryMap", "stacks" met */
	size_t		 nframes;	/* of its stacks */
};

struct tread {
	uint64_t		 max_frames;
	size_t			 max_mods;
	enum trole		 role[JDEPTH_MAX + 1];
	unsigned		 depth;
	enum tkey		 key;
	long			 err;
	const char		*why;
	int			 jobs;		/* "jobs" met (not null) */
	struct symjson_tjob	 top;		/* the top object as a job */
	struct tjcap		 topcap;
	struct symjson_tjob	*job;		/* being read: top or the
						 * last of jobs */
	struct tjcap		*cap;		/* its capacities */
	struct tjcap		 jobcap;
	struct symjson_tecken	*t;		/* jobs, njobs, nframes */
	size_t			 capjobs;
	uint64_t		 items;		/* frames, stacks and memoryMap
						 * entries read, dropped or not */
	unsigned		 n;		/* items of an entry or frame */
	uint64_t		 v[2];		/* a frame's numbers */
	struct buf		 str;		/* names and ids, NULs after */
};

static void
tjob_free(struct symjson_tjob *job)
{
	free(job->libs);
	free(job->stacks);
	free(job->frames);
	memset(job, 0, sizeof(*job));
}

static int
tfail(struct tread *r, long err, const char *why)
{
	r->err = err;
	r->why = why;
	return 0;
}

static int
tpush(struct tread *r, enum trole role)
{
	if (r->depth >= JDEPTH_MAX)
		return tfail(r, -EINVAL, "malformed JSON: nested too deep");
	r->role[++r->depth] = role;
	r->key = TK_OTHER;
	return 1;
}

/*
 * Frames, stacks and memoryMap entries together are at most twice
 * max_frames and max_modules more (room for a stack a frame): each costs
 * memory (16 to 40 bytes) whether or not it counts in the end, so that a
 * request of many small jobs or empty stacks cannot make the reader
 * allocate many times its own size.  @return 1, or 0 (r->err set).
 */
static int
titem(struct tread *r)
{
	if (++r->items > 2 * r->max_frames + r->max_mods)
		return tfail(r, -E2BIG, "too many frames, stacks and "
		    "memoryMap entries");
	return 1;
}

/* A job's arrays to their size (they grew by doubling).  A failure
 * keeps the larger array. */
static void
tjob_fit(struct symjson_tjob *job, size_t nframes)
{
	void	*p;

	if (job->nlibs > 0 && (p = realloc(job->libs,
	    job->nlibs * sizeof(*job->libs))) != NULL)
		job->libs = p;
	if (job->stacks != NULL && (p = realloc(job->stacks,
	    (job->nstacks + 1) * sizeof(*job->stacks))) != NULL)
		job->stacks = p;
	if (nframes > 0 && (p = realloc(job->frames,
	    nframes * sizeof(*job->frames))) != NULL)
		job->frames = p;
}

static const char tjob_why[] = "a job needs the arrays \"memoryMap\" and "
    "\"stacks\"";
static const char tentry_why[] = "a memoryMap entry is [debugName, "
    "breakpadId], the id 33 to 40 hex digits";
static const char tframe_why[] = "a frame is [moduleIndex, address]";

/* A debugName is a file's name (NAME_MAX): every frame of the answer
 * repeats it, so a long one would multiply the request many times. */
#define TNAME_MAX	255

/* Forget a job's memoryMap or its stacks (a key given again). */
static void
tjob_drop_map(struct tread *r)
{
	r->job->nlibs = 0;
	r->cap->map = 0;
}

static void
tjob_drop_stacks(struct tread *r)
{
	r->t->nframes -= r->cap->nframes;
	r->cap->nframes = 0;
	r->job->nstacks = 0;
	r->cap->stks = 0;
}

/* Forget the jobs of a "jobs" array (given again, or null). */
static void
tjobs_drop(struct tread *r)
{
	size_t i;

	for (i = 0; i < r->t->njobs; i++) {
		struct symjson_tjob *job = &r->t->jobs[i];

		if (job->stacks != NULL)
			r->t->nframes -= job->stacks[job->nstacks];
		tjob_free(job);
	}
	r->t->njobs = 0;
	r->jobs = 0;
}

/* The start of a job's object: at the top, or in "jobs". */
static int
tjob_start(struct tread *r)
{
	struct symjson_tecken *t = r->t;

	if (t->njobs >= r->max_mods)
		return tfail(r, -E2BIG, "too many jobs");
	if (t->njobs == r->capjobs && array_grow(&t->jobs, &r->capjobs,
	    t->njobs + 1, sizeof(*t->jobs)) != 0)
		return tfail(r, -ENOMEM, "out of memory");
	r->job = &t->jobs[t->njobs++];
	memset(r->job, 0, sizeof(*r->job));
	memset(&r->jobcap, 0, sizeof(r->jobcap));
	r->cap = &r->jobcap;
	return tpush(r, T_JOB);
}

/* A string of an entry, kept: its offset in r->str. */
static int
tstring(struct tread *r, const char *s, size_t len, size_t *off)
{
	*off = r->str.len;
	if (buf_add(&r->str, s, len) != 0 || buf_add(&r->str, "", 1) != 0)
		return tfail(r, -ENOMEM, "out of memory");
	return 1;
}

static int
tvalue(struct tread *r, enum jkind k, const char *s, size_t len)
{
	struct symjson_tjob	*job = r->job;
	struct symjson_tlib	*lib;
	unsigned char		 prefix[16];
	size_t			 off;

	if (r->depth == 0) {
		if (k != V_MAP)
			return tfail(r, -EINVAL, "malformed JSON: expected an "
			    "object with \"jobs\", or one job");
		r->job = &r->top;
		r->cap = &r->topcap;
		return tpush(r, T_TOP);
	}
	switch (r->role[r->depth]) {
	case T_SKIP:
		break;
	case T_TOP:
	case T_JOB:
		if (r->key == TK_JOBS) {	/* only at the top */
			tjobs_drop(r);
			if (k == V_NULL)
				return 1;
			if (k != V_ARRAY)
				return tfail(r, -EINVAL, "malformed JSON: "
				    "expected an object with \"jobs\", or one "
				    "job");
			r->jobs = 1;
			return tpush(r, T_JOBS);
		}
		if (r->key == TK_MAP) {
			tjob_drop_map(r);
			if (k == V_NULL)
				return 1;
			if (k != V_ARRAY)
				return tfail(r, -EINVAL, tjob_why);
			r->cap->map = 1;
			return tpush(r, T_MAP);
		}
		if (r->key == TK_STACKS) {
			tjob_drop_stacks(r);
			if (k == V_NULL)
				return 1;
			if (k != V_ARRAY)
				return tfail(r, -EINVAL, tjob_why);
			r->cap->stks = 1;
			return tpush(r, T_STACKS);
		}
		break;
	case T_JOBS:
		if (k != V_MAP)
			return tfail(r, -EINVAL, tjob_why);
		return tjob_start(r);
	case T_MAP:
		if (k != V_ARRAY)
			return tfail(r, -EINVAL, tentry_why);
		/* Each entry is looked for among the modules met: a bound
		 * on that work, as on the modules. */
		if (job->nlibs >= r->max_mods)
			return tfail(r, -E2BIG, "too many modules");
		if (!titem(r))
			return 0;
		if (job->nlibs == r->cap->libs && array_grow(&job->libs,
		    &r->cap->libs, job->nlibs + 1, sizeof(*job->libs)) != 0)
			return tfail(r, -ENOMEM, "out of memory");
		memset(&job->libs[job->nlibs++], 0, sizeof(*job->libs));
		r->n = 0;
		return tpush(r, T_ENTRY);
	case T_ENTRY:
		lib = &job->libs[job->nlibs - 1];
		if (k != V_STR || r->n >= 2)
			return tfail(r, -EINVAL, tentry_why);
		if (r->n++ == 0) {
			if (memchr(s, '\0', len) != NULL)
				return tfail(r, -EINVAL, tentry_why);
			if (len > TNAME_MAX)
				return tfail(r, -EINVAL, "a memoryMap "
				    "debugName is a file's name, at most 255 "
				    "bytes");
			if (!tstring(r, s, len, &off))
				return 0;
			lib->name_off = off;
			return 1;
		}
		if (len > 40 || memchr(s, '\0', len) != NULL)
			return tfail(r, -EINVAL, tentry_why);
		if (!tstring(r, s, len, &off))
			return 0;
		lib->key_off = off;
		if (breakpad_prefix((const char *)r->str.p + off, len,
		    prefix) != 0)
			return tfail(r, -EINVAL, tentry_why);
		return 1;
	case T_STACKS:
		if (k != V_ARRAY)
			return tfail(r, -EINVAL, "each stack must be an array "
			    "of frames");
		if (!titem(r))
			return 0;
		if (job->nstacks + 2 > r->cap->stacks &&
		    array_grow(&job->stacks, &r->cap->stacks,
		    job->nstacks + 2, sizeof(*job->stacks)) != 0)
			return tfail(r, -ENOMEM, "out of memory");
		job->stacks[job->nstacks++] = r->cap->nframes;
		job->stacks[job->nstacks] = r->cap->nframes;
		return tpush(r, T_STACK);
	case T_STACK:
		if (k != V_ARRAY)
			return tfail(r, -EINVAL, tframe_why);
		if (r->t->nframes >= r->max_frames || !titem(r))
			return r->err == 0 ? tfail(r, -E2BIG,
			    "too many addresses") : 0;
		r->n = 0;
		return tpush(r, T_FRAME);
	case T_FRAME:
		/* Digits only: a sign, a fraction, an exponent or 2^64 and
		 * beyond is no address (nor a module's index). */
		if (k != V_NUM || r->n >= 2)
			return tfail(r, -EINVAL, tframe_why);
		if (jnum_u64(s, len, &r->v[r->n]) < 0)
			return tfail(r, -EINVAL, r->n == 1 && len > 0 &&
			    s[0] != '-' && !memchr(s, '.', len) &&
			    !memchr(s, 'e', len) && !memchr(s, 'E', len) ?
			    "a frame's address is beyond 64 bits" :
			    tframe_why);
		r->n++;
		return 1;
	}
	if (k == V_MAP || k == V_ARRAY)
		return tpush(r, T_SKIP);
	return 1;
}

static int
tend(struct tread *r)
{
	struct symjson_tjob	*job = r->job;
	enum trole		 role = r->role[r->depth--];
	size_t			 f;

	r->key = TK_OTHER;
	switch (role) {
	case T_ENTRY:
		if (r->n != 2)
			return tfail(r, -EINVAL, tentry_why);
		break;
	case T_FRAME:
		if (r->n != 2)
			return tfail(r, -EINVAL, tframe_why);
		if (r->v[0] > UINT32_MAX)
			return tfail(r, -EINVAL, "a frame's module index is "
			    "beyond the memoryMap");
		f = r->cap->nframes;
		if (f == r->cap->frames && array_grow(&job->frames,
		    &r->cap->frames, f + 1, sizeof(*job->frames)) != 0)
			return tfail(r, -ENOMEM, "out of memory");
		job->frames[f].lib = (uint32_t)r->v[0];
		job->frames[f].addr = r->v[1];
		r->cap->nframes++;
		r->t->nframes++;
		job->stacks[job->nstacks] = r->cap->nframes;
		break;
	case T_JOB:
		if (!r->cap->map || !r->cap->stks)
			return tfail(r, -EINVAL, tjob_why);
		tjob_fit(job, r->cap->nframes);
		r->job = &r->top;
		r->cap = &r->topcap;
		break;
	default:
		break;
	}
	return 1;
}

static int
tcb_null(void *ctx)
{
	return tvalue(ctx, V_NULL, NULL, 0);
}

static int
tcb_bool(void *ctx, int b)
{
	(void)b;
	return tvalue(ctx, V_BOOL, NULL, 0);
}

static int
tcb_number(void *ctx, const char *s, size_t len)
{
	return tvalue(ctx, V_NUM, s, len);
}

static int
tcb_string(void *ctx, const unsigned char *s, size_t len)
{
	return tvalue(ctx, V_STR, (const char *)s, len);
}

static int
tcb_start_map(void *ctx)
{
	return tvalue(ctx, V_MAP, NULL, 0);
}

static int
tcb_start_array(void *ctx)
{
	return tvalue(ctx, V_ARRAY, NULL, 0);
}

static int
tcb_end(void *ctx)
{
	return tend(ctx);
}

static int
tcb_key(void *ctx, const unsigned char *s, size_t len)
{
	struct tread	*r = ctx;
	enum trole	 in = r->role[r->depth];

	r->key = TK_OTHER;
	if (in == T_TOP && len == 4 && memcmp(s, "jobs", 4) == 0)
		r->key = TK_JOBS;
	else if ((in == T_TOP || in == T_JOB) && len == 9 &&
	    memcmp(s, "memoryMap", 9) == 0)
		r->key = TK_MAP;
	else if ((in == T_TOP || in == T_JOB) && len == 6 &&
	    memcmp(s, "stacks", 6) == 0)
		r->key = TK_STACKS;
	return 1;
}

static const yajl_callbacks tcallbacks = {
	tcb_null, tcb_bool, NULL, NULL, tcb_number, tcb_string,
	tcb_start_map, tcb_key, tcb_end, tcb_start_array, tcb_end
};

/* Check the frames' module indexes, point the names into the strings,
 * and gather the modules by their 16 bytes.  @return 0 or r->err. */
static long
tfinish(struct tread *r, size_t *hash, size_t hcap, size_t nlibs)
{
	struct symjson_tecken	*t = r->t;
	size_t			 i, l, f, k;

	if (nlibs > 0 && (t->mods = calloc(nlibs, sizeof(*t->mods))) == NULL)
	{
		tfail(r, -ENOMEM, "out of memory");
		return r->err;
	}
	for (i = 0; i < t->njobs && r->err == 0; i++) {
		struct symjson_tjob *job = &t->jobs[i];

		for (f = 0; f < job->stacks[job->nstacks]; f++)
			if (job->frames[f].lib >= job->nlibs) {
				tfail(r, -EINVAL, "a frame's module index is "
				    "beyond the memoryMap");
				break;
			}
		for (l = 0; l < job->nlibs && r->err == 0; l++) {
			struct symjson_tlib	*lib = &job->libs[l];
			unsigned char		 prefix[16];

			lib->name = (const char *)r->str.p + lib->name_off;
			lib->key = (const char *)r->str.p + lib->key_off;
			(void)breakpad_prefix(lib->key, strlen(lib->key),
			    prefix);
			k = mod_find(t, hash, hcap, prefix);
			if (k == t->nmods && t->nmods == nlibs) {
				tfail(r, -E2BIG, "too many modules");
				break;
			}
			if (k == t->nmods) {
				memcpy(t->mods[k].id, prefix, 16);
				t->mods[k].idlen = 16;
				mod_add(t, hash, hcap, k);
				snprintf(t->mods[k].idhex,
				    sizeof(t->mods[k].idhex), "%s", lib->key);
				t->nmods++;
			}
			lib->mod = k;
		}
	}
	return r->err;
}

long
symjson_parse_tecken(const char *body, size_t len, uint64_t max_frames,
    size_t max_modules, struct symjson_tecken *out, const char **why)
{
	struct tread	 r;
	yajl_handle	 h;
	yajl_status	 st;
	size_t		 i, nlibs = 0, hcap, *hash = NULL;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	r.max_frames = max_frames;
	r.max_mods = max_modules;
	r.t = out;
	r.job = &r.top;
	r.cap = &r.topcap;
	if ((h = yajl_alloc(&tcallbacks, NULL, &r)) == NULL) {
		tfail(&r, -ENOMEM, "out of memory");
		goto out;
	}
	/* yajl checks that strings are UTF-8, as for /symbolize. */
	st = yajl_parse(h, (const unsigned char *)body, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	yajl_free(h);
	if (r.err == 0 && st != yajl_status_ok)
		tfail(&r, -EINVAL, "malformed JSON: expected an object with "
		    "\"jobs\", or one job");
	if (r.err != 0)
		goto out;
	if (!r.jobs) {
		/* The top is the one job. */
		if (!r.topcap.map || !r.topcap.stks) {
			tfail(&r, -EINVAL, tjob_why);
			goto out;
		}
		tjobs_drop(&r);
		if (array_grow(&out->jobs, &r.capjobs, 1,
		    sizeof(*out->jobs)) != 0) {
			tfail(&r, -ENOMEM, "out of memory");
			goto out;
		}
		tjob_fit(&r.top, r.topcap.nframes);
		out->jobs[0] = r.top;
		memset(&r.top, 0, sizeof(r.top));
		out->njobs = 1;
		out->nframes = r.topcap.nframes;
	} else {
		out->nframes -= r.topcap.nframes;
	}
	for (i = 0; i < out->njobs; i++) {
		struct symjson_tjob *job = &out->jobs[i];

		nlibs += job->nlibs;
		/* An empty job has no stack offsets. */
		if (job->stacks == NULL && (job->stacks = calloc(1,
		    sizeof(*job->stacks))) == NULL) {
			tfail(&r, -ENOMEM, "out of memory");
			goto out;
		}
	}
	/* At most as many modules as memoryMap entries. */
	if (nlibs > max_modules)
		nlibs = max_modules;
	for (hcap = 16; hcap < 2 * nlibs; hcap *= 2)
		;
	if ((hash = calloc(hcap, sizeof(*hash))) == NULL) {
		tfail(&r, -ENOMEM, "out of memory");
		goto out;
	}
	if (tfinish(&r, hash, hcap, nlibs) != 0)
		goto out;
	out->strings = (char *)r.str.p;
	r.str.p = NULL;
out:
	free(hash);
	tjob_free(&r.top);
	buf_free(&r.str);
	if (r.err != 0) {
		*why = r.why;
		symjson_tecken_free(out);
		return r.err;
	}
	return (long)out->nmods;
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
	free(t->strings);
	memset(t, 0, sizeof(*t));
}

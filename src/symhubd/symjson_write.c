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

/* ---- the answers of POST /symbolize and /symbolicate/v5 ---- */

struct symjson_answer {
	const struct symjson_batch	*in;	/* /symbolize, or */
	const struct symjson_tecken	*tk;	/* /symbolicate/v5 */
	const struct symjson_state	*st;
	symjson_lookup_fn		 lookup;
	void				*ctx;
	size_t			 mod;		/* next module, or job */
	size_t			 addr;		/* its next address; SIZE_MAX:
						 * its head is not written */
	/* Tecken: the job's next stack, and frame in it. */
	size_t			 stack, frame;
	int			 in_stack;	/* its "[" written */
	unsigned char		*used;		/* the job's libs that its
						 * frames use; NULL: the job's
						 * head is not written */
	struct gsym_result	 res;
};

/* A module's part of the answer up to its results. */
static int
module_head(struct symjson *j, const struct symjson_module *m,
    const struct symjson_state *st)
{
	char	 hex[WEBAPI_ID_HEX_MAX + 1];
	int	 rc = 0;

	rc |= symjson_text(j, m->by_fileid ? "{\"fileid\":" : "{\"buildid\":");
	rc |= symjson_string(j, m->idhex);
	if (m->by_fileid && st->bidlen > 0 &&
	    st->bidlen <= WEBAPI_ID_HEX_MAX / 2) {
		hex_encode(st->bid, st->bidlen, hex);
		rc |= symjson_text(j, ",\"buildid\":");
		rc |= symjson_string(j, hex);
	}
	rc |= symjson_text(j, ",\"status\":");
	rc |= symjson_string(j, st->status);
	if (st->ready) {
		rc |= symjson_text(j, ",\"how\":");
		rc |= symjson_string(j, st->how);
	} else {
		rc |= symjson_text(j, ",\"error\":");
		rc |= symjson_string(j, st->why ? st->why : "unknown");
	}
	rc |= symjson_text(j, ",\"results\":[");
	symjson_list(j);
	return rc == 0 ? 0 : -ENOMEM;
}

/* Bytes written per step at most (and one result more): a result of 128
 * inlined frames with long names can be large. */
#define STREAM_BYTES	(64 * 1024)

/* The results of module a->mod's addresses *k to end, or until
 * STREAM_BYTES are pending; *k moves past those written. */
static int
module_results(struct symjson_answer *a, struct symjson *j,
    const struct symjson_module *m, const struct symjson_state *st,
    size_t *kp, size_t end)
{
	size_t	k = *kp;
	int	rc = 0;

	for (; st->ready && k < end && rc == 0 &&
	    (k == *kp || symjson_pending(j) < STREAM_BYTES); k++) {
		uint64_t	addr = m->addrs[k];
		int		lrc;

		lrc = a->lookup(a->ctx, a->mod, m->offsets ?
		    SYMJSON_AT_OFFSET : SYMJSON_AT_ADDR, &addr, &a->res);
		rc |= symjson_result(j, addr, m->offsets ? &m->addrs[k] :
		    NULL, lrc, &a->res);
	}
	*kp = k;
	return rc == 0 ? 0 : -ENOMEM;
}

/* Results written per step: enough to fill a send buffer or two. */
#define STREAM_STEP	256

/* Write the next piece of a /symbolize answer. */
static int
batch_step(struct symjson_answer *a, struct symjson *j, int *done)
{
	const struct symjson_module	*m;
	const struct symjson_state	*st;
	size_t				 end;

	if (a->mod == a->in->nmods) {
		*done = 1;
		return symjson_text(j, "]}");
	}
	m = &a->in->mods[a->mod];
	st = &a->st[a->mod];
	if (a->addr == SIZE_MAX) {
		a->addr = 0;
		return symjson_text(j, a->mod > 0 ? "," : "") |
		    module_head(j, m, st) ? -ENOMEM : 0;
	}
	end = !st->ready ? a->addr :
	    m->naddrs - a->addr > STREAM_STEP ? a->addr + STREAM_STEP :
	    m->naddrs;
	if (end > a->addr)
		return module_results(a, j, m, st, &a->addr, end);
	a->mod++;
	a->addr = SIZE_MAX;
	return symjson_text(j, "]}");
}

/* "DEBUGNAME/BREAKPADID", a key of found_modules and module_errors. */
static int
tecken_key(struct symjson *j, const struct symjson_tlib *lib, int first)
{
	char	*k;
	int	 rc;

	if (asprintf(&k, "%s/%s", lib->name, lib->key) < 0)
		return -ENOMEM;
	rc = symjson_text(j, first ? "" : ",");
	rc |= symjson_string(j, k);
	free(k);
	return rc == 0 ? 0 : -ENOMEM;
}

/* Is lib l of job named like an earlier one that its frames use?  Its
 * key is written once. */
static int
dup_lib(const struct symjson_tjob *job, const unsigned char *used, size_t l)
{
	size_t	k;

	for (k = 0; k < l; k++)
		if (used[k] && strcmp(job->libs[k].name, job->libs[l].name) == 0 &&
		    strcmp(job->libs[k].key, job->libs[l].key) == 0)
			return 1;
	return 0;
}

/* The end of a Tecken job: which of the modules its frames use were
 * found, and why the others were not. */
static int
tecken_modules(struct symjson *j, const struct symjson_state *sts,
    const struct symjson_tjob *job, const unsigned char *used)
{
	size_t	l;
	int	first, errs = 0, rc = 0;

	rc |= symjson_text(j, "],\"found_modules\":{");
	for (l = 0, first = 1; l < job->nlibs && rc == 0; l++) {
		const struct symjson_state *st = &sts[job->libs[l].mod];

		if (!used[l] || dup_lib(job, used, l))
			continue;
		rc |= tecken_key(j, &job->libs[l], first);
		first = 0;
		rc |= symjson_text(j, st->placed ? ":true" : ":false");
		errs |= !st->placed;
	}
	rc |= symjson_text(j, "}");
	if (errs) {
		rc |= symjson_text(j, ",\"module_errors\":{");
		for (l = 0, first = 1; l < job->nlibs && rc == 0; l++) {
			const struct symjson_state *st =
			    &sts[job->libs[l].mod];
			int ready = st->ready;

			if (!used[l] || st->placed || dup_lib(job, used, l))
				continue;
			rc |= tecken_key(j, &job->libs[l], first);
			first = 0;
			rc |= symjson_text(j, ":[{\"name\":");
			rc |= symjson_string(j, ready ? "no_program_headers" :
			    st->status);
			rc |= symjson_text(j, ",\"message\":");
			rc |= symjson_string(j, ready ? "no file of the module "
			    "here has program headers to place its relative "
			    "addresses" : st->why ? st->why : "unknown");
			rc |= symjson_text(j, "}]");
		}
		rc |= symjson_text(j, "}");
	}
	rc |= symjson_text(j, "}");
	return rc == 0 ? 0 : -ENOMEM;
}

/* Write the next piece of a Tecken answer: per job, its stacks frame by
 * frame, then which modules were found. */
static int
tecken_step(struct symjson_answer *a, struct symjson *j, int *done)
{
	const struct symjson_tjob	*job;
	size_t				 end, first;
	int				 rc = 0;

	if (a->mod == a->tk->njobs) {
		*done = 1;
		return symjson_text(j, "]}");
	}
	job = &a->tk->jobs[a->mod];
	if (a->used == NULL) {
		if ((a->used = calloc(job->nlibs + 1, 1)) == NULL)
			return -ENOMEM;
		a->stack = 0;
		a->in_stack = 0;
		return symjson_text(j, a->mod == 0 ? "{\"results\":[" "{\"stacks\":[" :
		    ",{\"stacks\":[");
	}
	if (a->stack == job->nstacks) {
		rc = tecken_modules(j, a->st, job, a->used);
		free(a->used);
		a->used = NULL;
		a->mod++;
		return rc;
	}
	if (!a->in_stack) {
		a->in_stack = 1;
		a->frame = job->stacks[a->stack];
		symjson_list(j);
		return symjson_text(j, a->stack > 0 ? ",[" : "[");
	}
	end = job->stacks[a->stack + 1];
	if (end - a->frame > STREAM_STEP)
		end = a->frame + STREAM_STEP;
	for (first = a->frame; a->frame < end && rc == 0 &&
	    (a->frame == first || symjson_pending(j) < STREAM_BYTES);
	    a->frame++) {
		const struct symjson_tframe *fr = &job->frames[a->frame];
		size_t mod = job->libs[fr->lib].mod;
		uint64_t addr = fr->addr;
		int lrc = -ENOENT;

		a->used[fr->lib] = 1;
		if (a->st[mod].placed)
			lrc = a->lookup(a->ctx, mod, SYMJSON_AT_RELATIVE,
			    &addr, &a->res);
		rc |= symjson_tecken_frame(j, a->frame - job->stacks[a->stack],
		    fr->addr, job->libs[fr->lib].name, lrc, &a->res);
	}
	if (a->frame == job->stacks[a->stack + 1]) {
		rc |= symjson_text(j, "]");
		a->in_stack = 0;
		a->stack++;
	}
	return rc == 0 ? 0 : -ENOMEM;
}

/* An answer, its first bytes (head) written to j. */
static int
answer_create(struct symjson *j, const char *head,
    const struct symjson_state *st, symjson_lookup_fn lookup, void *ctx,
    struct symjson_answer **out)
{
	struct symjson_answer *a;

	*out = NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return -ENOMEM;
	if (symjson_text(j, head) != 0) {
		free(a);
		return -ENOMEM;
	}
	a->st = st;
	a->lookup = lookup;
	a->ctx = ctx;
	a->addr = SIZE_MAX;
	*out = a;
	return 0;
}

int
symjson_answer_batch(struct symjson *j, const struct symjson_batch *in,
    const struct symjson_state *st, symjson_lookup_fn lookup, void *ctx,
    struct symjson_answer **out)
{
	if (answer_create(j, "{\"modules\":[", st, lookup, ctx, out) != 0)
		return -ENOMEM;
	(*out)->in = in;
	return 0;
}

int
symjson_answer_tecken(struct symjson *j, const struct symjson_tecken *tk,
    const struct symjson_state *st, symjson_lookup_fn lookup, void *ctx,
    struct symjson_answer **out)
{
	/* A Tecken request with no job still answers {"results":[]}; the
	 * first job's head opens the list otherwise. */
	if (answer_create(j, tk->njobs == 0 ? "{\"results\":[" : "", st,
	    lookup, ctx, out) != 0)
		return -ENOMEM;
	(*out)->tk = tk;
	return 0;
}

int
symjson_answer_step(struct symjson_answer *a, struct symjson *j, int *done)
{
	return a->tk != NULL ? tecken_step(a, j, done) :
	    batch_step(a, j, done);
}

void
symjson_answer_free(struct symjson_answer *a)
{
	if (a == NULL)
		return;
	free(a->used);
	free(a);
}

/*
 * A Tecken frame is at least {"frame":0,"module_offset":"0x0",
 * "module":"NAME"}; a /symbolize module, its head.
 */
uint64_t
symjson_answer_least(const struct symjson_batch *in,
    const struct symjson_tecken *tk)
{
	uint64_t	n = 0;
	size_t		i, f;

	/* A module not ready writes no results: its head only. */
	n += 64 * in->nmods;
	for (i = 0; i < tk->njobs; i++) {
		const struct symjson_tjob *job = &tk->jobs[i];

		for (f = 0; f < job->stacks[job->nstacks]; f++)
			n += 45 + strlen(job->libs[job->frames[f].lib].name);
	}
	return n;
}

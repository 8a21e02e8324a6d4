/*
 * gsym_write: the GSYM v1 writer.  See gsym_write.h and doc/gsym.md.
 *
 * A function is kept as a compact intermediate record (ULEB/SLEB rows and
 * inline nodes naming interned ids) in one arena.  Writing sorts and
 * prunes them as LLVM 19's GsymCreator::finalize does, but in a total
 * order (func_cmp(): the rule for aliases), then gives strings and files
 * their final offsets in order of first use by the functions kept, so
 * nothing dead is written.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "gsym.h"
#include "gsym_write.h"

struct str {
	const char	*s;
	uint32_t	 len;
	uint32_t	 final;		/* offset in the table, or UINT32_MAX */
};

struct file {
	uint32_t	dir, base;	/* string ids */
	uint32_t	final;		/* index in the table, or UINT32_MAX */
};

struct func {
	uint64_t	start, end;
	uint64_t	off;		/* of the intermediate record */
	uint32_t	len;
	uint32_t	seq;		/* order of addition */
	uint32_t	name;
	uint32_t	ninl;		/* inlined nodes below the top */
	uint8_t		has_lines, has_inline;
};

struct gsym_builder {
	struct str	*strs;
	size_t		 nstrs, capstrs;
	uint32_t	*strhash;	/* open addressing: id + 1, 0 empty */
	size_t		 strhcap;
	struct file	*files;
	size_t		 nfiles, capfiles;
	uint32_t	*filehash;
	size_t		 filehcap;
	char		**chunks;	/* copied string bytes */
	size_t		 nchunks, capchunks;
	char		*chunkpos;
	size_t		 chunkleft;
	struct func	*funcs;
	size_t		 nfuncs, capfuncs;
	struct buf	 arena;		/* intermediate records */
	uint64_t	*text;		/* sorted {start, end} pairs */
	size_t		 ntext, captext;	/* ranges; elements */
	int		 big;
	int		 have_base;
	uint64_t	 base;
	uint32_t	 nodes;		/* put_inline's count */
	unsigned char	 uuid[GSYM_UUID_MAX];
	size_t		 uuidlen;
};

/* ---- bytes ---- */

static void
buf_u8(struct buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;

	buf_add(b, &c, 1);
}

static void
buf_uleb(struct buf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	buf_add(b, tmp, n);
}

static void
buf_sleb(struct buf *b, int64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;
	int more;

	do {
		unsigned char c = v & 0x7f;

		v >>= 7;	/* arithmetic on every compiler we build with */
		more = !((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40)));
		tmp[n++] = more ? (c | 0x80) : c;
	} while (more);
	buf_add(b, tmp, n);
}

static void
buf_fixed(struct buf *b, uint64_t v, size_t size, int big)
{
	unsigned char tmp[8];
	size_t i;

	for (i = 0; i < size; i++) {
		unsigned shift = (unsigned)(big ? (size - 1 - i) : i) * 8;

		tmp[i] = (unsigned char)(v >> shift);
	}
	buf_add(b, tmp, size);
}

static void
buf_align(struct buf *b, size_t a)
{
	static const unsigned char zero[8];

	if (b->len % a)
		buf_add(b, zero, a - b->len % a);
}

/* Intermediate records are our own, so reading them needs no checks. */
static uint64_t
get_uleb(const unsigned char **pp)
{
	const unsigned char *p = *pp;
	uint64_t v = 0;
	unsigned shift = 0;

	do {
		if (shift < 64)
			v |= (uint64_t)(*p & 0x7f) << shift;
		shift += 7;
	} while (*p++ & 0x80);
	*pp = p;
	return v;
}

static int64_t
get_sleb(const unsigned char **pp)
{
	const unsigned char *p = *pp;
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char c;

	do {
		c = *p++;
		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while (c & 0x80);
	if (shift < 64 && (c & 0x40))
		v |= ~(uint64_t)0 << shift;
	*pp = p;
	return (int64_t)v;
}

/* ---- interning ---- */

static uint64_t
hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

static uint64_t
hash_u64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ull;
	return v ^ (v >> 33);
}

#define CHUNK	65536

static const char *
copy_bytes(struct gsym_builder *b, const char *s, size_t len)
{
	char *p;
	size_t want = len + 1;

	if (want > b->chunkleft) {
		size_t sz = want > CHUNK ? want : CHUNK;

		if (array_grow(&b->chunks, &b->capchunks, b->nchunks + 1,
		    sizeof(*b->chunks)) != 0)
			return NULL;
		if ((p = malloc(sz)) == NULL)
			return NULL;
		b->chunks[b->nchunks++] = p;
		b->chunkpos = p;
		b->chunkleft = sz;
	}
	p = b->chunkpos;
	memcpy(p, s, len);
	p[len] = '\0';
	b->chunkpos += want;
	b->chunkleft -= want;
	return p;
}

static int
grow_hash(uint32_t **tab, size_t *cap, size_t n,
    uint64_t (*hashof)(const struct gsym_builder *, uint32_t),
    const struct gsym_builder *b)
{
	uint32_t *nt;
	size_t ncap, i;

	if ((n + 1) * 2 <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 1024;
	if ((nt = calloc(ncap, sizeof(*nt))) == NULL)
		return -ENOMEM;
	for (i = 0; i < *cap; i++) {
		size_t j;

		if ((*tab)[i] == 0)
			continue;
		j = hashof(b, (*tab)[i] - 1) & (ncap - 1);
		while (nt[j])
			j = (j + 1) & (ncap - 1);
		nt[j] = (*tab)[i];
	}
	free(*tab);
	*tab = nt;
	*cap = ncap;
	return 0;
}

static uint64_t
str_hashof(const struct gsym_builder *b, uint32_t id)
{
	return hash_bytes(b->strs[id].s, b->strs[id].len);
}

static uint64_t
file_key(uint32_t dir, uint32_t base)
{
	return (uint64_t)dir << 32 | base;
}

static uint64_t
file_hashof(const struct gsym_builder *b, uint32_t id)
{
	return hash_u64(file_key(b->files[id].dir, b->files[id].base));
}

uint32_t
gsym_builder_str(struct gsym_builder *b, const char *s, size_t len, int copy)
{
	size_t j;
	uint32_t id;

	if (len > UINT32_MAX - 1)
		return UINT32_MAX;
	if (grow_hash(&b->strhash, &b->strhcap, b->nstrs, str_hashof, b) < 0)
		return UINT32_MAX;
	j = hash_bytes(s, len) & (b->strhcap - 1);
	while (b->strhash[j]) {
		const struct str *e = &b->strs[b->strhash[j] - 1];

		if (e->len == len && memcmp(e->s, s, len) == 0)
			return b->strhash[j] - 1;
		j = (j + 1) & (b->strhcap - 1);
	}
	if (array_grow(&b->strs, &b->capstrs, b->nstrs + 1,
	    sizeof(*b->strs)) != 0)
		return UINT32_MAX;
	if (b->nstrs >= UINT32_MAX - 1)
		return UINT32_MAX;
	if (copy && (s = copy_bytes(b, s, len)) == NULL)
		return UINT32_MAX;
	id = (uint32_t)b->nstrs++;
	b->strs[id].s = s;
	b->strs[id].len = (uint32_t)len;
	b->strs[id].final = UINT32_MAX;
	b->strhash[j] = id + 1;
	return id;
}

uint32_t
gsym_builder_file(struct gsym_builder *b, const char *path)
{
	const char *slash = strrchr(path, '/');
	uint32_t dir, base, id;
	size_t j;

	if (slash == NULL) {
		dir = 0;
		base = gsym_builder_str(b, path, strlen(path), 1);
	} else {
		/* LLVM's parent_path keeps a lone root "/". */
		size_t dlen = slash == path ? 1 : (size_t)(slash - path);

		dir = gsym_builder_str(b, path, dlen, 1);
		base = gsym_builder_str(b, slash + 1, strlen(slash + 1), 1);
	}
	if (dir == UINT32_MAX || base == UINT32_MAX)
		return 0;
	if (grow_hash(&b->filehash, &b->filehcap, b->nfiles, file_hashof,
	    b) < 0)
		return 0;
	j = hash_u64(file_key(dir, base)) & (b->filehcap - 1);
	while (b->filehash[j]) {
		const struct file *f = &b->files[b->filehash[j] - 1];

		if (f->dir == dir && f->base == base)
			return b->filehash[j] - 1;
		j = (j + 1) & (b->filehcap - 1);
	}
	if (array_grow(&b->files, &b->capfiles, b->nfiles + 1,
	    sizeof(*b->files)) != 0)
		return 0;
	id = (uint32_t)b->nfiles++;
	b->files[id].dir = dir;
	b->files[id].base = base;
	b->files[id].final = UINT32_MAX;
	b->filehash[j] = id + 1;
	return id;
}

/* ---- the builder ---- */

int
gsym_builder_create(struct gsym_builder **out)
{
	struct gsym_builder *b;

	*out = NULL;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return -ENOMEM;
	b->capfiles = 256;
	if ((b->files = calloc(b->capfiles, sizeof(*b->files))) == NULL)
		goto fail;
	/* String 0 is "", file 0 is {0, 0}. */
	if (gsym_builder_str(b, "", 0, 0) != 0)
		goto fail;
	b->nfiles = 1;
	b->files[0].final = UINT32_MAX;
	*out = b;
	return 0;
fail:
	gsym_builder_free(b);
	return -ENOMEM;
}

void
gsym_builder_free(struct gsym_builder *b)
{
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < b->nchunks; i++)
		free(b->chunks[i]);
	free(b->chunks);
	free(b->strs);
	free(b->strhash);
	free(b->files);
	free(b->filehash);
	free(b->funcs);
	buf_free(&b->arena);
	free(b->text);
	free(b);
}

void
gsym_builder_set_big_endian(struct gsym_builder *b, int big)
{
	b->big = big != 0;
}

void
gsym_builder_set_base(struct gsym_builder *b, uint64_t base)
{
	b->have_base = 1;
	b->base = base;
}

void
gsym_builder_set_uuid(struct gsym_builder *b, const void *uuid, size_t len)
{
	if (len > GSYM_UUID_MAX)
		len = GSYM_UUID_MAX;
	memset(b->uuid, 0, sizeof(b->uuid));
	memcpy(b->uuid, uuid, len);
	b->uuidlen = len;
}

size_t
gsym_ranges_insert(uint64_t *r, size_t n, uint64_t start, uint64_t end)
{
	size_t it = 0, it2;

	if (start >= end)
		return n;
	while (it < n && !(start < r[2 * it] ||
	    (start == r[2 * it] && end < r[2 * it + 1])))
		it++;	/* upper_bound */
	it2 = it;
	while (it2 < n && r[2 * it2] < end)
		it2++;
	if (it != it2) {
		if (r[2 * (it2 - 1) + 1] > end)
			end = r[2 * (it2 - 1) + 1];
		memmove(&r[2 * it], &r[2 * it2], (n - it2) * 2 * sizeof(*r));
		n -= it2 - it;
	}
	if (it > 0 && start < r[2 * (it - 1) + 1]) {
		if (end > r[2 * (it - 1) + 1])
			r[2 * (it - 1) + 1] = end;
		return n;
	}
	memmove(&r[2 * (it + 1)], &r[2 * it], (n - it) * 2 * sizeof(*r));
	r[2 * it] = start;
	r[2 * it + 1] = end;
	return n + 1;
}

int
gsym_builder_add_text(struct gsym_builder *b, uint64_t start, uint64_t end)
{
	/* {start, end} pairs: twice the elements. */
	if (array_grow(&b->text, &b->captext, 2 * (b->ntext + 1),
	    sizeof(*b->text)) != 0)
		return -ENOMEM;
	b->ntext = gsym_ranges_insert(b->text, b->ntext, start, end);
	return 0;
}

/* Index of the text range holding addr, or -1. */
static long
text_find(const struct gsym_builder *b, uint64_t addr)
{
	size_t lo = 0, hi = b->ntext;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < b->text[2 * mid])
			hi = mid;
		else if (addr >= b->text[2 * mid + 1])
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

int
gsym_builder_is_text(const struct gsym_builder *b, uint64_t addr)
{
	return text_find(b, addr) >= 0;
}

size_t
gsym_builder_count(const struct gsym_builder *b)
{
	return b->nfuncs;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
gsym_builder_starts(const struct gsym_builder *b, uint64_t **out, size_t *n)
{
	size_t i;

	*out = NULL;
	*n = 0;
	if (b->nfuncs == 0)
		return 0;
	if ((*out = malloc(b->nfuncs * sizeof(**out))) == NULL)
		return -ENOMEM;
	for (i = 0; i < b->nfuncs; i++)
		(*out)[i] = b->funcs[i].start;
	qsort(*out, b->nfuncs, sizeof(**out), cmp_u64);
	*n = b->nfuncs;
	return 0;
}

static int
ranges_contain(const uint64_t *r, size_t n, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[2 * i] <= start && end <= r[2 * i + 1])
			return 1;
	return 0;
}

/* Write an inline node in the intermediate form; its ranges are made
 * into LLVM's sorted, merged set first. */
static int
put_inline(struct gsym_builder *b, const struct gsym_inline *n,
    uint64_t base, const uint64_t *pr, size_t npr, unsigned depth)
{
	uint64_t stackr[16], *r = stackr;
	size_t nr = 0, i;
	int rc = 0;

	if (depth > 1024 || n->nranges == 0)
		return -EINVAL;
	if (n->nranges > 8 &&
	    (r = malloc(n->nranges * 2 * sizeof(*r))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n->nranges; i++)
		nr = gsym_ranges_insert(r, nr, n->ranges[2 * i],
		    n->ranges[2 * i + 1]);
	if (nr == 0 || r[0] < base) {
		rc = -EINVAL;
		goto out;
	}
	for (i = 0; pr != NULL && i < nr; i++)
		if (!ranges_contain(pr, npr, r[2 * i], r[2 * i + 1])) {
			rc = -EINVAL;
			goto out;
		}
	buf_uleb(&b->arena, nr);
	for (i = 0; i < nr; i++) {
		buf_uleb(&b->arena, r[2 * i] - base);
		buf_uleb(&b->arena, r[2 * i + 1] - r[2 * i]);
	}
	buf_uleb(&b->arena, n->name);
	buf_uleb(&b->arena, n->call_file);
	buf_uleb(&b->arena, n->call_line);
	buf_uleb(&b->arena, n->nchildren);
	b->nodes++;
	for (i = 0; i < n->nchildren && rc == 0; i++)
		rc = put_inline(b, &n->children[i], r[0], r, nr, depth + 1);
out:
	if (r != stackr)
		free(r);
	return rc;
}

int
gsym_builder_add(struct gsym_builder *b, uint64_t start, uint64_t end,
    uint32_t name, const struct gsym_row *rows, size_t nrows,
    const struct gsym_inline *inl)
{
	struct func *f;
	size_t i, mark = b->arena.len;
	uint64_t prev_addr = start;
	int64_t prev_line = 0;
	int rc;

	if (end < start || name == 0 || name >= b->nstrs ||
	    end - start > UINT32_MAX)
		return -EINVAL;
	for (i = 0; i < nrows; i++)
		if (rows[i].addr < prev_addr || rows[i].file == 0 ||
		    rows[i].file >= b->nfiles)
			return -EINVAL;
		else
			prev_addr = rows[i].addr;
	if (array_grow(&b->funcs, &b->capfuncs, b->nfuncs + 1,
	    sizeof(*b->funcs)) != 0)
		return -ENOMEM;
	if (b->nfuncs >= UINT32_MAX)
		return -EFBIG;
	buf_uleb(&b->arena, nrows);
	prev_addr = start;
	for (i = 0; i < nrows; i++) {
		buf_uleb(&b->arena, rows[i].addr - prev_addr);
		buf_uleb(&b->arena, rows[i].file);
		buf_sleb(&b->arena, (int64_t)rows[i].line - prev_line);
		prev_addr = rows[i].addr;
		prev_line = rows[i].line;
	}
	buf_u8(&b->arena, inl != NULL);
	if (inl != NULL) {
		uint64_t top[2] = { start, end };

		b->nodes = 0;
		if ((rc = put_inline(b, inl, start, top, 1, 0)) < 0) {
			b->arena.len = mark;
			return rc;
		}
	}
	if (b->arena.err) {
		b->arena.len = mark;
		rc = b->arena.err;
		b->arena.err = 0;
		return rc;
	}
	if (b->arena.len - mark > UINT32_MAX) {
		b->arena.len = mark;
		return -EFBIG;
	}
	f = &b->funcs[b->nfuncs];
	f->start = start;
	f->end = end;
	f->off = mark;
	f->len = (uint32_t)(b->arena.len - mark);
	f->seq = (uint32_t)b->nfuncs;
	f->name = name;
	f->has_lines = nrows > 0;
	f->has_inline = inl != NULL;
	f->ninl = inl != NULL ? b->nodes - 1 : 0;
	b->nfuncs++;
	return 0;
}

/* ---- ordering: which function an address gets ---- */

/*
 * The rule for aliases (doc/gsym.md, "Aliases: which name an address
 * gets").  Functions sort by this total order, and of those with the
 * same [start, end) prune() keeps the last, the greatest:
 *   1. start, then end, ascending;
 *   2. without an inline tree before with one, then fewer inlined nodes
 *      before more;
 *   3. without line rows before with them, then fewer rows before more,
 *      then by the rows' addresses, at the first that differs;
 *   4. by name bytes, ascending (memcmp; a prefix before its extensions):
 *      of equals so far, the greatest name is kept;
 *   5. by order of addition, descending: of equals still, the first added
 *      is kept.
 * 1-3 are LLVM's operator< on FunctionInfo (which compares the line
 * tables only when the inline trees are equal: where it does not, its
 * answer for two trees of as many nodes is "neither", so ordering them
 * by rows refines it without contradicting it).  LLVM stops there and
 * its std::sort leaves the functions it calls equal -- aliases: one
 * range, several names -- in an order that depends on the whole array,
 * and on the order its threads added them; 4 and 5 make the order total,
 * so that which alias is kept depends on the aliases alone, and any
 * correct sort gives the same bytes.
 */
static int
func_cmp(const void *a, const void *c, void *ctx)
{
	const struct gsym_builder *b = ctx;
	const struct func *x = a, *y = c;
	const struct str *sx, *sy;
	const unsigned char *px, *py;
	uint64_t nx, ny, i, ax, ay;
	int r;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->has_inline != y->has_inline)
		return x->has_inline < y->has_inline ? -1 : 1;
	if (x->ninl != y->ninl)
		return x->ninl < y->ninl ? -1 : 1;
	if (x->has_lines != y->has_lines)
		return x->has_lines < y->has_lines ? -1 : 1;
	px = b->arena.p + x->off;
	py = b->arena.p + y->off;
	nx = get_uleb(&px);
	ny = get_uleb(&py);
	if (nx != ny)
		return nx < ny ? -1 : 1;
	ax = x->start;
	ay = y->start;
	for (i = 0; i < nx; i++) {
		ax += get_uleb(&px); (void)get_uleb(&px); (void)get_sleb(&px);
		ay += get_uleb(&py); (void)get_uleb(&py); (void)get_sleb(&py);
		if (ax != ay)
			return ax < ay ? -1 : 1;
	}
	if (x->name != y->name) {
		sx = &b->strs[x->name];
		sy = &b->strs[y->name];
		r = memcmp(sx->s, sy->s, sx->len < sy->len ? sx->len : sy->len);
		if (r != 0)
			return r < 0 ? -1 : 1;
		if (sx->len != sy->len)
			return sx->len < sy->len ? -1 : 1;
	}
	if (x->seq != y->seq)
		return x->seq > y->seq ? -1 : 1;
	return 0;
}

/* LLVM 19's GsymCreator::finalize: sort (func_cmp), then keep the
 * greatest of equal ranges, both of overlapping ones, and drop a size-0
 * symbol at the start of the next range.  @return the number kept. */
static size_t
prune(struct gsym_builder *b)
{
	size_t i, n = 0;

	qsort_r(b->funcs, b->nfuncs, sizeof(*b->funcs), func_cmp, b);
	for (i = 0; i < b->nfuncs; i++) {
		struct func *prev = n ? &b->funcs[n - 1] : NULL;
		struct func *cur = &b->funcs[i];
		int equal, overlap;

		if (prev == NULL) {
			b->funcs[n++] = *cur;
			continue;
		}
		equal = prev->start == cur->start && prev->end == cur->end;
		overlap = prev->start < cur->end && cur->start < prev->end;
		if (equal)
			*prev = *cur;
		else if (overlap)
			b->funcs[n++] = *cur;
		else if (prev->end == prev->start && cur->start <= prev->start &&
		    prev->start < cur->end)
			*prev = *cur;
		else
			b->funcs[n++] = *cur;
	}
	b->nfuncs = n;
	if (n > 0 && b->funcs[n - 1].start == b->funcs[n - 1].end) {
		long t = text_find(b, b->funcs[n - 1].start);

		if (t >= 0 && b->text[2 * t + 1] - b->funcs[n - 1].start <=
		    UINT32_MAX)
			b->funcs[n - 1].end = b->text[2 * t + 1];
	}
	return n;
}

/* ---- final encoding ---- */

struct out {
	struct buf	 strtab;
	struct buf	 filetab;	/* {dir, base} offsets, host order */
	uint32_t	 nfiles_out;
	struct buf	 recs;
	struct gsym_row	*rows;
	size_t		 caprows;
};

static uint32_t
final_str(struct gsym_builder *b, struct out *o, uint32_t id)
{
	struct str *s = &b->strs[id];

	if (s->final == UINT32_MAX) {
		if (o->strtab.len > UINT32_MAX - s->len - 1) {
			o->strtab.err = -EFBIG;
			return 0;
		}
		s->final = (uint32_t)o->strtab.len;
		buf_add(&o->strtab, s->s, s->len);
		buf_u8(&o->strtab, 0);
	}
	return s->final;
}

static uint32_t
final_file(struct gsym_builder *b, struct out *o, uint32_t id)
{
	struct file *f = &b->files[id];

	if (f->final == UINT32_MAX) {
		uint32_t v[2];

		v[0] = final_str(b, o, f->dir);
		v[1] = final_str(b, o, f->base);
		f->final = o->nfiles_out++;
		buf_add(&o->filetab, v, sizeof(v));
	}
	return f->final;
}

/* Copy one intermediate inline node (and its subtree) to the final
 * form, with final string offsets and file indices. */
static void
emit_inline(struct gsym_builder *b, struct out *o, const unsigned char **pp)
{
	uint64_t nr, i, nchildren;
	uint32_t name, file, line;

	nr = get_uleb(pp);
	buf_uleb(&o->recs, nr);
	for (i = 0; i < 2 * nr; i++)
		buf_uleb(&o->recs, get_uleb(pp));
	name = (uint32_t)get_uleb(pp);
	file = (uint32_t)get_uleb(pp);
	line = (uint32_t)get_uleb(pp);
	nchildren = get_uleb(pp);
	buf_u8(&o->recs, nchildren > 0);
	buf_fixed(&o->recs, final_str(b, o, name), 4, b->big);
	buf_uleb(&o->recs, final_file(b, o, file));
	buf_uleb(&o->recs, line);
	for (i = 0; i < nchildren; i++)
		emit_inline(b, o, pp);
	if (nchildren > 0)
		buf_uleb(&o->recs, 0);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Line deltas counted directly in [-HIST, HIST]; the others are sorted. */
#define HIST	256

/*
 * LLVM's choice of the line range of a table whose deltas span more than
 * maxrange: of the windows [v, v + maxrange] that start at a delta v, the
 * one holding the most deltas (the first on ties); *min is its v, *max
 * the greatest delta in it.  LLVM sorts the deltas; a table has far fewer
 * distinct ones, so the near ones are counted and only the far ones
 * sorted (d is reordered).  @return 0 or -ENOMEM.
 */
static int
line_window(int64_t *d, size_t nd, int64_t maxrange, int64_t *min,
    int64_t *max)
{
	uint32_t hist[2 * HIST + 1];
	int64_t *v = NULL;		/* distinct deltas, ascending */
	size_t *c = NULL;		/* and how many of each */
	size_t nv = 0, nfar = 0, i, j, k, cnt, best = 0;

	memset(hist, 0, sizeof(hist));
	for (i = 0; i < nd; i++) {
		if (d[i] >= -HIST && d[i] <= HIST)
			hist[d[i] + HIST]++;
		else
			d[nfar++] = d[i];
	}
	qsort(d, nfar, sizeof(*d), cmp_i64);
	if ((v = malloc((nfar + 2 * HIST + 1) * sizeof(*v))) == NULL ||
	    (c = malloc((nfar + 2 * HIST + 1) * sizeof(*c))) == NULL) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < nfar && d[i] < -HIST; i = j) {
		for (j = i; j < nfar && d[j] == d[i]; j++)
			;
		v[nv] = d[i];
		c[nv++] = j - i;
	}
	for (k = 0; k < 2 * HIST + 1; k++)
		if (hist[k]) {
			v[nv] = (int64_t)k - HIST;
			c[nv++] = hist[k];
		}
	for (; i < nfar; i = j) {
		for (j = i; j < nfar && d[j] == d[i]; j++)
			;
		v[nv] = d[i];
		c[nv++] = j - i;
	}
	/* A window over the distinct deltas: [i, j), cnt deltas. */
	for (i = 0, j = 0, cnt = 0; i < nv; i++) {
		while (j < nv && v[j] - v[i] <= maxrange)
			cnt += c[j++];
		if (cnt > best) {
			best = cnt;
			*min = v[i];
			*max = v[j - 1];
		}
		cnt -= c[i];
	}
	free(v);
	free(c);
	return 0;
}

/* LLVM's LineTable::encode (doc/gsym.md, "Line table"). */
static int
encode_lines(struct buf *o, const struct gsym_row *rows, size_t nrows,
    uint64_t base)
{
	int64_t min = INT64_MAX, max = INT64_MIN;
	const int64_t maxrange = 14;
	int64_t *d = NULL;
	size_t i, nd = 0;
	uint64_t paddr = base;
	uint32_t pfile = 1, pline;

	if (nrows == 0)
		return -EINVAL;
	if (nrows == 1) {
		min = max = 0;
	} else {
		if ((d = malloc((nrows - 1) * sizeof(*d))) == NULL)
			return -ENOMEM;
		for (i = 1; i < nrows; i++) {
			d[nd] = (int64_t)rows[i].line - (int64_t)rows[i - 1].line;
			if (d[nd] < min)
				min = d[nd];
			if (d[nd] > max)
				max = d[nd];
			nd++;
		}
	}
	if (max - min > maxrange &&
	    line_window(d, nd, maxrange, &min, &max) < 0) {
		free(d);
		return -ENOMEM;
	}
	free(d);
	if (min == max && min > 0 && min < maxrange)
		min = 0;
	pline = rows[0].line;
	buf_sleb(o, min);
	buf_sleb(o, max);
	buf_uleb(o, pline);
	for (i = 0; i < nrows; i++) {
		uint64_t ad = rows[i].addr - paddr;
		int64_t ld = (int64_t)rows[i].line - (int64_t)pline;
		int64_t range = max - min + 1;

		if (rows[i].file != pfile) {
			buf_u8(o, GSYM_LT_SET_FILE);
			buf_uleb(o, rows[i].file);
		}
		if (ld >= min && ld <= max && ad <= 255 &&
		    (ld - min) + (int64_t)ad * range + GSYM_LT_FIRST_SPECIAL
		    <= 255) {
			buf_u8(o, (unsigned)((ld - min) + (int64_t)ad * range +
			    GSYM_LT_FIRST_SPECIAL));
		} else {
			if (ld != 0) {
				buf_u8(o, GSYM_LT_ADVANCE_LINE);
				buf_sleb(o, ld);
			}
			buf_u8(o, GSYM_LT_ADVANCE_PC);
			buf_uleb(o, ad);
		}
		paddr = rows[i].addr;
		pfile = rows[i].file;
		pline = rows[i].line;
	}
	buf_u8(o, GSYM_LT_END);
	return o->err;
}

int
gsym_encode_lines(const struct gsym_row *rows, size_t nrows, uint64_t base,
    unsigned char *out, size_t cap)
{
	struct buf b = { 0 };
	int rc;

	if ((rc = encode_lines(&b, rows, nrows, base)) == 0) {
		if (b.len > cap || b.len > INT32_MAX)
			rc = -ENOSPC;
		else {
			memcpy(out, b.p, b.len);
			rc = (int)b.len;
		}
	}
	buf_free(&b);
	return rc;
}

/* Set the u32 chunk length just before mark to the bytes after it. */
static void
patch_len(struct out *o, size_t mark, int big)
{
	uint64_t len = o->recs.len - mark;
	size_t i;

	if (o->recs.err)
		return;
	if (len > UINT32_MAX) {
		o->recs.err = -EFBIG;
		return;
	}
	for (i = 0; i < 4; i++)
		o->recs.p[mark - 4 + i] = (unsigned char)(len >>
		    (8 * (big ? 3 - i : i)));
}

/* Encode function f's final record into o->recs (4-aligned). */
static int
emit_func(struct gsym_builder *b, struct out *o, const struct func *f)
{
	const unsigned char *p = b->arena.p + f->off;
	uint64_t n = get_uleb(&p), i, addr = f->start;
	int64_t line = 0;
	size_t mark;
	int rc;

	buf_align(&o->recs, 4);
	buf_fixed(&o->recs, f->end - f->start, 4, b->big);
	buf_fixed(&o->recs, final_str(b, o, f->name), 4, b->big);
	if (n > 0) {
		if (array_grow(&o->rows, &o->caprows, n,
		    sizeof(*o->rows)) != 0)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			addr += get_uleb(&p);
			o->rows[i].addr = addr;
			o->rows[i].file = final_file(b, o,
			    (uint32_t)get_uleb(&p));
			line += get_sleb(&p);
			o->rows[i].line = (uint32_t)line;
		}
		buf_fixed(&o->recs, GSYM_INFO_LINES, 4, b->big);
		buf_fixed(&o->recs, 0, 4, b->big);
		mark = o->recs.len;
		if ((rc = encode_lines(&o->recs, o->rows, n, f->start)) < 0)
			return rc;
		patch_len(o, mark, b->big);
	}
	if (*p++) {
		buf_fixed(&o->recs, GSYM_INFO_INLINE, 4, b->big);
		buf_fixed(&o->recs, 0, 4, b->big);
		mark = o->recs.len;
		emit_inline(b, o, &p);
		patch_len(o, mark, b->big);
	}
	buf_fixed(&o->recs, GSYM_INFO_END, 4, b->big);
	buf_fixed(&o->recs, 0, 4, b->big);
	if (o->strtab.err)
		return o->strtab.err;
	return o->recs.err;
}

int
gsym_fd_sink(void *ctx, const void *p, size_t len)
{
	const unsigned char *c = p;
	int fd = *(const int *)ctx;

	while (len > 0) {
		ssize_t n = write(fd, c, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

static void
count_inline(const unsigned char **pp, uint64_t *uses)
{
	uint64_t nr, i, nchildren;

	nr = get_uleb(pp);
	for (i = 0; i < 2 * nr; i++)
		(void)get_uleb(pp);
	(void)get_uleb(pp);			/* name */
	uses[get_uleb(pp)]++;			/* call file */
	(void)get_uleb(pp);			/* call line */
	nchildren = get_uleb(pp);
	for (i = 0; i < nchildren; i++)
		count_inline(pp, uses);
}

static int
cmp_use(const void *a, const void *c, void *ctx)
{
	const uint64_t *sort_uses = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)c;

	if (sort_uses[x] != sort_uses[y])
		return sort_uses[x] > sort_uses[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Number the files the kept functions use, most referenced first (set-file
 * opcodes and call sites), so that the common ones take one-byte ULEBs.
 * LLVM numbers them in order of discovery; readers do not care.
 */
static int
number_files(struct gsym_builder *b, struct out *o, size_t n)
{
	uint64_t *uses = calloc(b->nfiles, sizeof(*uses));
	uint32_t *order = NULL;
	size_t i, k, nused = 0;

	if (uses == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const unsigned char *p = b->arena.p + b->funcs[i].off;
		uint64_t nrows = get_uleb(&p), prev = UINT64_MAX;

		for (k = 0; k < nrows; k++) {
			uint64_t file;

			(void)get_uleb(&p);
			file = get_uleb(&p);
			(void)get_sleb(&p);
			if (file != prev)
				uses[file]++;
			prev = file;
		}
		if (*p++)
			count_inline(&p, uses);
	}
	uses[0] = 0;
	if ((order = malloc(b->nfiles * sizeof(*order))) == NULL) {
		free(uses);
		return -ENOMEM;
	}
	for (i = 1; i < b->nfiles; i++)
		if (uses[i])
			order[nused++] = (uint32_t)i;
	qsort_r(order, nused, sizeof(*order), cmp_use, uses);
	for (i = 0; i < nused; i++)
		(void)final_file(b, o, order[i]);
	free(order);
	free(uses);
	return o->filetab.err;
}

int64_t
gsym_builder_write(struct gsym_builder *b, gsym_sink_fn sink, void *ctx,
    size_t *nfuncs)
{
	struct out o = { 0 };
	struct buf head = { 0 };
	uint32_t *recoff = NULL;
	uint64_t base, maxoff, recbase;
	size_t n, i, asize, strtab_off;
	int64_t rc;

	if (nfuncs)
		*nfuncs = 0;
	if (b->nfuncs == 0)
		return -ENODATA;
	n = prune(b);
	base = b->have_base ? b->base : b->funcs[0].start;
	if (b->funcs[0].start < base)
		base = b->funcs[0].start;
	maxoff = b->funcs[n - 1].start - base;
	asize = maxoff <= 0xff ? 1 : maxoff <= 0xffff ? 2 :
	    maxoff <= 0xffffffffu ? 4 : 8;
	if ((recoff = malloc(n * sizeof(*recoff))) == NULL)
		return -ENOMEM;
	(void)final_str(b, &o, 0);
	(void)final_file(b, &o, 0);
	if ((rc = number_files(b, &o, n)) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		buf_align(&o.recs, 4);
		if (o.recs.len > UINT32_MAX) {
			rc = -EFBIG;
			goto out;
		}
		recoff[i] = (uint32_t)o.recs.len;
		if ((rc = emit_func(b, &o, &b->funcs[i])) < 0)
			goto out;
	}
	if ((rc = o.filetab.err) < 0 || (rc = o.strtab.err) < 0)
		goto out;

	/* Header and tables. */
	buf_fixed(&head, GSYM_MAGIC, 4, b->big);
	buf_fixed(&head, GSYM_VERSION, 2, b->big);
	buf_u8(&head, (unsigned)asize);
	buf_u8(&head, (unsigned)b->uuidlen);
	buf_fixed(&head, base, 8, b->big);
	buf_fixed(&head, n, 4, b->big);
	buf_fixed(&head, 0, 4, b->big);		/* strtab offset, below */
	buf_fixed(&head, o.strtab.len, 4, b->big);
	buf_add(&head, b->uuid, sizeof(b->uuid));
	buf_align(&head, asize);
	for (i = 0; i < n; i++)
		buf_fixed(&head, b->funcs[i].start - base, asize, b->big);
	buf_align(&head, 4);
	size_t offtab = head.len;
	for (i = 0; i < n; i++)
		buf_fixed(&head, 0, 4, b->big);
	buf_align(&head, 4);
	buf_fixed(&head, o.nfiles_out, 4, b->big);
	for (i = 0; i < 2 * (size_t)o.nfiles_out; i++)
		buf_fixed(&head, ((const uint32_t *)o.filetab.p)[i], 4,
		    b->big);
	strtab_off = head.len;
	buf_add(&head, o.strtab.p, o.strtab.len);
	buf_align(&head, 4);
	if ((rc = head.err) < 0)
		goto out;
	recbase = head.len;
	if (strtab_off > UINT32_MAX || o.strtab.len > UINT32_MAX ||
	    recbase + o.recs.len > (uint64_t)UINT32_MAX + 1) {
		rc = -EFBIG;
		goto out;
	}
	for (i = 0; i < 4; i++)
		head.p[20 + i] = (unsigned char)(strtab_off >>
		    (8 * (b->big ? 3 - i : i)));
	for (i = 0; i < n; i++) {
		uint64_t v = recbase + recoff[i];
		size_t k;

		for (k = 0; k < 4; k++)
			head.p[offtab + 4 * i + k] = (unsigned char)(v >>
			    (8 * (b->big ? 3 - k : k)));
	}
	if ((rc = sink(ctx, head.p, head.len)) != 0 ||
	    (rc = sink(ctx, o.recs.p, o.recs.len)) != 0)
		goto out;
	rc = (int64_t)(head.len + o.recs.len);
	if (nfuncs)
		*nfuncs = n;
out:
	free(recoff);
	free(head.p);
	buf_free(&o.strtab);
	buf_free(&o.filetab);
	buf_free(&o.recs);
	free(o.rows);
	return rc;
}

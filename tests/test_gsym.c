/*
 * test_gsym: the GSYM reader against images built here by a small
 * encoder of its own (both byte orders, every AddrOffSize): lookups as
 * llvm-gsymutil-19 prints them (function starts, middles, gaps, runs of
 * equal starts, size-0 symbols, inline chains, file and line-table
 * errors), version 2 rejection, truncation at every length and 1,000
 * random corruptions, each fully exercised (open, lookups through both
 * paths, decode, dump): under ASan/UBSan no crash is the assertion, and
 * the two lookup paths must always agree.
 *
 * The converter's cancel flag: a conversion of this test's own binary
 * ends with -ECANCELED, without output, when the flag is set.
 *
 * test_gsym FILE runs the corruption test on a real GSYM file instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elfinfo.h"
#include "gsym/gsym.h"
#include "gsym/gsym_dwarf.h"
#include "tap.h"

/* ---- A byte buffer of either byte order ---- */

struct bb {
	unsigned char	*p;
	size_t		 len;
	size_t		 cap;
	int		 be;
};

static void
bb_need(struct bb *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	while (b->len + n > b->cap)
		b->cap = b->cap ? b->cap * 2 : 256;
	if ((b->p = realloc(b->p, b->cap)) == NULL)
		abort();
}

static void
put8(struct bb *b, unsigned v)
{
	bb_need(b, 1);
	b->p[b->len++] = (unsigned char)v;
}

static void
putn(struct bb *b, uint64_t v, int size)
{
	int i;

	bb_need(b, (size_t)size);
	for (i = 0; i < size; i++)
		b->p[b->len + (size_t)i] = (unsigned char)(v >>
		    (8 * (b->be ? size - 1 - i : i)));
	b->len += (size_t)size;
}

static void
patch32(struct bb *b, size_t off, uint32_t v)
{
	size_t len = b->len;

	b->len = off;
	putn(b, v, 4);
	b->len = len;
}

static void
uleb(struct bb *b, uint64_t v)
{
	do {
		put8(b, (v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v != 0);
}

static void
sleb(struct bb *b, int64_t v)
{
	int more;
	unsigned char byte;

	do {
		byte = v & 0x7f;
		v >>= 7;
		more = !((v == 0 && !(byte & 0x40)) ||
		    (v == -1 && (byte & 0x40)));
		put8(b, byte | (more ? 0x80 : 0));
	} while (more);
}

static void
align(struct bb *b, size_t a)
{
	while (b->len % a)
		put8(b, 0);
}

/* ---- The model of a GSYM file ---- */

struct trow {
	uint64_t	addr;
	uint32_t	file;
	uint32_t	line;
};

struct tinl {
	uint64_t		 r[3][2];	/* [start, end) */
	int			 nr;
	const char		*name;
	uint32_t		 call_file;
	uint32_t		 call_line;
	const struct tinl	*kids;
	int			 nkids;
};

struct tfunc {
	uint64_t		 start;
	uint32_t		 size;
	const char		*name;
	const struct trow	*rows;		/* NULL: no line table */
	int			 nrows;
	const unsigned char	*raw_lt;	/* a line table as is */
	size_t			 raw_lt_len;
	const struct tinl	*inl;		/* NULL: no inline info */
	uint32_t		 extra;		/* a chunk of this type too */
	uint32_t		 name_off;	/* nonzero: instead of name */
};

struct tfile {
	const char	*dir;
	const char	*base;
};

struct tspec {
	uint64_t		 base;
	int			 aos;
	int			 be;
	uint16_t		 version;
	const struct tfile	*files;
	int			 nfiles;
	const struct tfunc	*funcs;
	int			 nfuncs;
};

struct strtab {
	char	buf[8192];
	size_t	len;
};

static uint32_t
str_add(struct strtab *t, const char *s)
{
	size_t i = 0, n = strlen(s) + 1;

	if (*s == '\0')
		return 0;
	while (i < t->len) {
		if (strcmp(t->buf + i, s) == 0)
			return (uint32_t)i;
		i += strlen(t->buf + i) + 1;
	}
	if (t->len + n > sizeof(t->buf))
		abort();
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	return (uint32_t)i;
}

/* Encode rows as LLVM does, in a simple form: deltas in a window of 15
 * become special opcodes, the rest AdvanceLine + AdvancePC. */
static void
enc_lines(struct bb *b, uint64_t start, const struct trow *rows, int n)
{
	int64_t min = INT64_MAX, max = INT64_MIN, ld, op;
	uint64_t ad, paddr = start;
	uint32_t pfile = 1, pline = rows[0].line;
	int i;

	for (i = 1; i < n; i++) {
		ld = (int64_t)rows[i].line - (int64_t)rows[i - 1].line;
		if (ld < min)
			min = ld;
		if (ld > max)
			max = ld;
	}
	if (n == 1)
		min = max = 0;
	if (max - min > 14)
		max = min + 14;
	if (min == max && min > 0 && min < 14)
		min = 0;
	sleb(b, min);
	sleb(b, max);
	uleb(b, rows[0].line);
	for (i = 0; i < n; i++) {
		if (rows[i].file != pfile) {
			put8(b, GSYM_LT_SET_FILE);
			uleb(b, rows[i].file);
		}
		ld = (int64_t)rows[i].line - (int64_t)pline;
		ad = rows[i].addr - paddr;
		op = (ld - min) + (int64_t)ad * (max - min + 1) + 4;
		if (ld >= min && ld <= max && op <= 255)
			put8(b, (unsigned)op);
		else {
			if (ld != 0) {
				put8(b, GSYM_LT_ADVANCE_LINE);
				sleb(b, ld);
			}
			put8(b, GSYM_LT_ADVANCE_PC);
			uleb(b, ad);
		}
		paddr = rows[i].addr;
		pfile = rows[i].file;
		pline = rows[i].line;
	}
	put8(b, GSYM_LT_END);
}

static void
enc_inline(struct bb *b, struct strtab *st, const struct tinl *n,
    uint64_t base)
{
	uint64_t lo = UINT64_MAX;
	int i;

	uleb(b, (uint64_t)n->nr);
	for (i = 0; i < n->nr; i++) {
		uleb(b, n->r[i][0] - base);
		uleb(b, n->r[i][1] - n->r[i][0]);
		if (n->r[i][0] < lo)
			lo = n->r[i][0];
	}
	put8(b, n->nkids > 0);
	putn(b, str_add(st, n->name), 4);
	uleb(b, n->call_file);
	uleb(b, n->call_line);
	if (n->nkids == 0)
		return;
	for (i = 0; i < n->nkids; i++)
		enc_inline(b, st, &n->kids[i], lo);
	uleb(b, 0);
}

static void
intern_inline(struct strtab *st, const struct tinl *n)
{
	int i;

	str_add(st, n->name);
	for (i = 0; i < n->nkids; i++)
		intern_inline(st, &n->kids[i]);
}

/* Build the image of s; *len its size.  Freed by the caller. */
static unsigned char *
build(const struct tspec *s, size_t *len)
{
	struct strtab st = { { 0 }, 1 };
	struct bb b = { NULL, 0, 0, s->be };
	size_t offs, stoff, at;
	const struct tfunc *f;
	int i;

	for (i = 0; i < s->nfiles; i++) {
		str_add(&st, s->files[i].dir);
		str_add(&st, s->files[i].base);
	}
	for (i = 0; i < s->nfuncs; i++) {
		str_add(&st, s->funcs[i].name);
		if (s->funcs[i].inl != NULL)
			intern_inline(&st, s->funcs[i].inl);
	}
	putn(&b, GSYM_MAGIC, 4);
	putn(&b, s->version ? s->version : GSYM_VERSION, 2);
	put8(&b, (unsigned)s->aos);
	put8(&b, 4);
	putn(&b, s->base, 8);
	putn(&b, (uint64_t)s->nfuncs, 4);
	putn(&b, 0, 4);		/* StrtabOffset, patched */
	putn(&b, st.len, 4);
	for (i = 0; i < GSYM_UUID_MAX; i++)
		put8(&b, i < 4 ? 0xa0 + (unsigned)i : 0);
	for (i = 0; i < s->nfuncs; i++)
		putn(&b, s->funcs[i].start - s->base, s->aos);
	align(&b, 4);
	offs = b.len;
	for (i = 0; i < s->nfuncs; i++)
		putn(&b, 0, 4);
	putn(&b, (uint64_t)s->nfiles + 1, 4);
	putn(&b, 0, 4);
	putn(&b, 0, 4);
	for (i = 0; i < s->nfiles; i++) {
		putn(&b, str_add(&st, s->files[i].dir), 4);
		putn(&b, str_add(&st, s->files[i].base), 4);
	}
	stoff = b.len;
	patch32(&b, 20, (uint32_t)stoff);
	bb_need(&b, st.len);
	memcpy(b.p + b.len, st.buf, st.len);
	b.len += st.len;
	for (i = 0; i < s->nfuncs; i++) {
		f = &s->funcs[i];
		align(&b, 4);
		patch32(&b, offs + 4 * (size_t)i, (uint32_t)b.len);
		putn(&b, f->size, 4);
		putn(&b, f->name_off ? f->name_off : str_add(&st, f->name), 4);
		if (f->rows != NULL || f->raw_lt != NULL) {
			putn(&b, GSYM_INFO_LINES, 4);
			at = b.len;
			putn(&b, 0, 4);
			if (f->raw_lt != NULL) {
				bb_need(&b, f->raw_lt_len);
				memcpy(b.p + b.len, f->raw_lt, f->raw_lt_len);
				b.len += f->raw_lt_len;
			} else
				enc_lines(&b, f->start, f->rows, f->nrows);
			patch32(&b, at, (uint32_t)(b.len - at - 4));
		}
		if (f->extra != 0) {
			putn(&b, f->extra, 4);
			putn(&b, 3, 4);
			put8(&b, 1);
			put8(&b, 2);
			put8(&b, 3);
		}
		if (f->inl != NULL) {
			putn(&b, GSYM_INFO_INLINE, 4);
			at = b.len;
			putn(&b, 0, 4);
			enc_inline(&b, &st, f->inl, f->start);
			patch32(&b, at, (uint32_t)(b.len - at - 4));
		}
		putn(&b, GSYM_INFO_END, 4);
		putn(&b, 0, 4);
	}
	*len = b.len;
	return b.p;
}

/* ---- The main test image ---- */

static const struct tfile files[] = {
	{ "/src", "a.c" },		/* 1 */
	{ "/src/include", "b.h" },	/* 2 */
	{ "", "rel.c" },		/* 3 */
	{ "C:\\win", "w.c" },		/* 4 */
};

static const struct trow main_rows[] = {
	{ 0x1000, 1, 10 }, { 0x1004, 1, 11 }, { 0x1010, 2, 20 },
	{ 0x1010, 2, 21 }, { 0x1020, 1, 100 }, { 0x1030, 1, 5 },
	{ 0x1034, 3, 7 }, { 0x1038, 4, 8 },
};

static const struct tinl inl_c[] = {
	{ { { 0x100e, 0x1010 } }, 1, "inl_c", 2, 40, NULL, 0 },
};

static const struct tinl inl_b[] = {
	{ { { 0x100c, 0x1010 } }, 1, "inl_b", 2, 30, inl_c, 1 },
	/* Overlaps inl_b: the first sibling holding an address wins. */
	{ { { 0x100c, 0x1012 } }, 1, "inl_b2", 2, 31, NULL, 0 },
};

static const struct tinl main_kids[] = {
	{ { { 0x1008, 0x1018 }, { 0x1020, 0x1028 } }, 2, "inl_a", 1, 12,
	    inl_b, 2 },
	{ { { 0x1030, 0x1038 } }, 1, "inl_d", 1, 13, NULL, 0 },
	{ { { 0x1030, 0x1034 } }, 1, "inl_e", 1, 14, NULL, 0 },
	/* No call file: holds the address but adds no frame. */
	{ { { 0x103c, 0x1040 } }, 1, "inl_nofile", 0, 0, NULL, 0 },
};

static const struct tinl main_inl = {
	{ { 0x1000, 0x1040 } }, 1, "main", 0, 0, main_kids, 4
};

static const struct tinl nolines_kids[] = {
	{ { { 0x1050, 0x1058 } }, 1, "ignored", 1, 1, NULL, 0 },
};

static const struct tinl nolines_inl = {
	{ { 0x1050, 0x1060 } }, 1, "nolines", 0, 0, nolines_kids, 1
};

static const struct trow tail_rows[] = { { 0x1090, 1, 50 } };
static const struct trow fz_rows[] = { { 0x10a0, 1, 1 }, { 0x10a4, 0, 2 } };
static const struct trow fb_rows[] = { { 0x10b0, 9, 3 } };

static const struct tfunc funcs[] = {
	{ 0x1000, 0x40, "main", main_rows, 8, NULL, 0, &main_inl, 0, 0 },
	{ 0x1050, 0x10, "nolines", NULL, 0, NULL, 0, &nolines_inl, 0, 0 },
	{ 0x1060, 0x04, "dup_small", NULL, 0, NULL, 0, NULL, 0, 0 },
	{ 0x1060, 0x10, "dup_big", NULL, 0, NULL, 0, NULL, 0, 0 },
	{ 0x1080, 0, "zero", NULL, 0, NULL, 0, NULL, 0, 0 },
	/* A chunk of an unknown type: lookups skip it. */
	{ 0x1090, 0x10, "tail", tail_rows, 1, NULL, 0, NULL, 7, 0 },
	{ 0x10a0, 0x08, "filezero", fz_rows, 2, NULL, 0, NULL, 0, 0 },
	{ 0x10b0, 0x08, "filebad", fb_rows, 1, NULL, 0, NULL, 0, 0 },
};

#define IND "\n                    "

static const struct {
	uint64_t	 addr;
	const char	*want;	/* after "0x%016x: " */
} lookups[] = {
	{ 0, "error: address 0x0 is not in GSYM" },
	{ 0xfff, "error: address 0xfff is not in GSYM" },
	{ 0x1000, "main @ /src/a.c:10" },
	{ 0x1002, "main + 2 @ /src/a.c:10" },
	{ 0x1004, "main + 4 @ /src/a.c:11" },
	{ 0x1008, "inl_a @ /src/a.c:11 [inlined]" IND
	    "main + 8 @ /src/a.c:12" },
	{ 0x100d, "inl_b + 1 @ /src/a.c:11 [inlined]" IND
	    "inl_a + 5 @ /src/include/b.h:30 [inlined]" IND
	    "main + 13 @ /src/a.c:12" },
	{ 0x100e, "inl_c @ /src/a.c:11 [inlined]" IND
	    "inl_b + 2 @ /src/include/b.h:40 [inlined]" IND
	    "inl_a + 6 @ /src/include/b.h:30 [inlined]" IND
	    "main + 14 @ /src/a.c:12" },
	/* Two rows at 0x1010: the last one wins (LLVM 19). */
	{ 0x1010, "inl_b2 + 4 @ /src/include/b.h:21 [inlined]" IND
	    "inl_a + 8 @ /src/include/b.h:31 [inlined]" IND
	    "main + 16 @ /src/a.c:12" },
	{ 0x1018, "main + 24 @ /src/include/b.h:21" },
	{ 0x1020, "inl_a + 24 @ /src/a.c:100 [inlined]" IND
	    "main + 32 @ /src/a.c:12" },
	{ 0x1031, "inl_d + 1 @ /src/a.c:5 [inlined]" IND
	    "main + 49 @ /src/a.c:13" },
	{ 0x1035, "inl_d + 5 @ rel.c:7 [inlined]" IND
	    "main + 53 @ /src/a.c:13" },
	{ 0x103c, "main + 60 @ C:\\win\\w.c:8" },
	{ 0x103f, "main + 63 @ C:\\win\\w.c:8" },
	{ 0x1040, "error: address 0x1040 is not in GSYM" },
	{ 0x104f, "error: address 0x104f is not in GSYM" },
	/* Without a line table, inline info is not used. */
	{ 0x1055, "nolines + 5" },
	{ 0x1060, "dup_small" },
	{ 0x1063, "dup_small + 3" },
	{ 0x1064, "dup_big + 4" },
	{ 0x106f, "dup_big + 15" },
	{ 0x1070, "error: address 0x1070 is not in GSYM" },
	{ 0x1080, "zero" },
	{ 0x108f, "zero + 15" },
	{ 0x1090, "tail @ /src/a.c:50" },
	{ 0x109f, "tail + 15 @ /src/a.c:50" },
	{ 0x10a0, "filezero @ /src/a.c:1" },
	{ 0x10a4, "error: address 0x10a4 is not in the line table" },
	{ 0x10b0, "error: failed to extract file[9]" },
	{ 0x10b8, "error: address 0x10b8 is not in GSYM" },
	{ UINT64_MAX, "error: address 0xffffffffffffffff is not in GSYM" },
};

static struct tspec
main_spec(int aos, int be)
{
	struct tspec s = { 0x1000, aos, be, 0, files, 4, funcs,
	    (int)(sizeof(funcs) / sizeof(funcs[0])) };

	return s;
}

/* ---- Helpers ---- */

static struct gsym_result res, res2;
static FILE *devnull;

/* What gsym_print_result prints, in buf. */
static const char *
printed(uint64_t addr, int rc, const struct gsym_result *r, char *buf,
    size_t len)
{
	FILE *fp = fmemopen(buf, len, "w");

	if (fp == NULL)
		abort();
	gsym_print_result(fp, addr, rc, r);
	fclose(fp);
	return buf;
}

/* A lookup through the decode path. */
static int
slow_lookup(const struct gsym *g, uint64_t addr, struct gsym_result *r)
{
	struct gsym_func *f;
	uint32_t index;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = gsym_find(g, addr, &index)) != 0)
		return rc;
	if ((rc = gsym_decode(g, index, &f)) != 0)
		return rc;
	if (gsym_func_size(f) < 64)
		abort();
	rc = gsym_func_lookup(g, f, addr, r);
	gsym_func_free(f);
	return rc;
}

/* Both lookup paths at addr; 0 when they agree. */
static int
both(const struct gsym *g, uint64_t addr)
{
	char a[8192], b[8192];
	int rc1, rc2;

	rc1 = gsym_lookup(g, addr, &res);
	rc2 = slow_lookup(g, addr, &res2);
	gsym_print_result(devnull, addr, rc1, &res);
	if (rc1 != rc2)
		return 1;
	/* gsym_decode() has no message to give; compare the rest. */
	if (rc1 != 0 && rc1 != -ENOENT && res2.error[0] == '\0')
		return 0;
	return strcmp(printed(addr, rc1, &res, a, sizeof(a)),
	    printed(addr, rc2, &res2, b, sizeof(b))) != 0;
}

/* Everything a reader of an untrusted file can be asked. */
static int
exercise(const unsigned char *img, size_t len, uint64_t lo, uint64_t hi,
    const uint64_t *extra, size_t nextra, int dump, int copy_it)
{
	const struct gsym_header *h;
	struct gsym_func *f;
	unsigned char *copy;
	struct gsym *g;
	uint64_t a;
	uint32_t i, n;
	size_t k;
	int rc, bad = 0;

	/* An exact-size copy, so that ASan sees any overread (img is one
	 * already when not copy_it). */
	if (!copy_it)
		copy = NULL;
	else if ((copy = malloc(len ? len : 1)) == NULL)
		abort();
	else
		memcpy(copy, img, len);
	rc = gsym_open_mem(copy ? copy : img, len, &g);
	if (rc != 0) {
		free(copy);
		return rc == -EBADMSG || rc == -EPROTONOSUPPORT ? 0 : 1;
	}
	h = gsym_header(g);
	for (a = lo; a <= hi; a++)
		bad += both(g, a);
	for (k = 0; k < nextra; k++)
		bad += both(g, extra[k]);
	n = h->num_addresses < 64 ? h->num_addresses : 64;
	for (i = 0; i < n; i++) {
		if (gsym_decode(g, i, &f) == 0) {
			gsym_func_lookup(g, f, h->base_address, &res);
			gsym_func_free(f);
		}
	}
	if (gsym_decode(g, h->num_addresses, &f) != -EINVAL)
		bad++;
	if (dump) {
		rc = gsym_dump(devnull, g);
		if (rc != 0 && rc != -EBADMSG)
			bad++;
	}
	gsym_free(g);
	free(copy);
	return bad;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

/* Spoil 1 to 4 places of img[0..len), mostly within [0, hot) when hot
 * is not 0; the places changed go to where[] (up to 4). */
static int
corrupt(unsigned char *img, size_t len, size_t hot, size_t *where)
{
	int i, n = 1 + (int)(rnd() % 4);
	size_t at, span;
	uint32_t v;

	for (i = 0; i < n; i++) {
		span = hot != 0 && rnd() % 4 == 0 ? hot : len;
		at = (size_t)(rnd() % span);
		where[i] = at;
		switch (rnd() % 4) {
		case 0:
			img[at] ^= (unsigned char)(1u << (rnd() % 8));
			break;
		case 1:
			img[at] = (unsigned char)rnd();
			break;
		case 2:
			img[at] = rnd() % 2 ? 0xff : 0x00;
			break;
		default:
			/* A whole word: offsets and lengths. */
			at &= ~(size_t)3;
			if (at + 4 > len)
				break;
			v = rnd() % 3 == 0 ? 0xffffffffu : rnd() % 2 ?
			    (uint32_t)rnd() : (uint32_t)(rnd() % 0x200);
			memcpy(img + at, &v, 4);
			where[i] = at;
			break;
		}
	}
	return n;
}

/* ---- The tests ---- */

static void
test_lookups(int aos, int be)
{
	struct tspec s = main_spec(aos, be);
	char buf[4096], want[4096];
	unsigned char *img;
	struct gsym *g;
	size_t len, i;
	int rc, wrong = 0, differ = 0;

	img = build(&s, &len);
	rc = gsym_open_mem(img, len, &g);
	ok(rc == 0, "aos %d %s: opens (%d)", aos, be ? "BE" : "LE", rc);
	if (rc != 0) {
		free(img);
		return;
	}
	ok(gsym_swapped(g) == (be != (__BYTE_ORDER__ ==
	    __ORDER_BIG_ENDIAN__)), "aos %d %s: byte order seen", aos,
	    be ? "BE" : "LE");
	ok(gsym_header(g)->num_addresses == 8 &&
	    gsym_header(g)->base_address == 0x1000 &&
	    gsym_header(g)->uuid_size == 4 && gsym_header(g)->uuid[0] == 0xa0,
	    "aos %d %s: header", aos, be ? "BE" : "LE");
	for (i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
		rc = gsym_lookup(g, lookups[i].addr, &res);
		printed(lookups[i].addr, rc, &res, buf, sizeof(buf));
		snprintf(want, sizeof(want), "0x%016llx: %s\n",
		    (unsigned long long)lookups[i].addr, lookups[i].want);
		if (strcmp(buf, want) != 0) {
			wrong++;
			printf("# got:  %s# want: %s", buf, want);
		}
		differ += both(g, lookups[i].addr);
	}
	ok(wrong == 0, "aos %d %s: %zu lookups as llvm-gsymutil-19 prints "
	    "them", aos, be ? "BE" : "LE", i);
	ok(differ == 0, "aos %d %s: decode path agrees", aos,
	    be ? "BE" : "LE");
	gsym_free(g);
	free(img);
}

static void
test_result_fields(void)
{
	struct tspec s = main_spec(4, 0);
	struct gsym_func *f;
	unsigned char *img;
	struct gsym *g;
	uint32_t index;
	size_t len;

	img = build(&s, &len);
	if (gsym_open_mem(img, len, &g) != 0)
		abort();
	ok(gsym_lookup(g, 0x100e, &res) == 0 && res.nframes == 4 &&
	    res.start == 0x1000 && res.size == 0x40 &&
	    strcmp(res.frames[0].name, "inl_c") == 0 &&
	    res.frames[0].inlined && !res.frames[3].inlined &&
	    strcmp(res.frames[3].name, "main") == 0 &&
	    res.frames[3].offset == 14 && res.frames[3].line == 12 &&
	    strcmp(res.frames[1].dir, "/src/include") == 0 &&
	    strcmp(res.frames[1].base, "b.h") == 0,
	    "frames of an inline chain 3 deep");
	ok(gsym_lookup(g, 0x1055, &res) == 0 && res.nframes == 1 &&
	    res.frames[0].base == NULL && strcmp(res.frames[0].dir, "") == 0 &&
	    res.frames[0].offset == 5 && !res.frames[0].inlined,
	    "no line table: name and offset, no file");
	ok(gsym_find(g, 0x1064, &index) == 0 && index == 3,
	    "find: second of a run of equal starts");
	ok(gsym_find(g, 0x1070, &index) == -ENOENT, "find: past a run");
	ok(gsym_decode(g, 0, &f) == 0, "decode");
	ok(gsym_func_lookup(g, f, 0xfff, &res) == -ENOENT &&
	    gsym_func_lookup(g, f, 0x1040, &res) == -ENOENT &&
	    gsym_func_lookup(g, f, 0x103f, &res) == 0,
	    "func_lookup: only inside the function");
	ok(gsym_func_size(f) > sizeof(struct gsym_header),
	    "func_size counts what is held (%zu)", gsym_func_size(f));
	gsym_func_free(f);
	gsym_func_free(NULL);
	ok(gsym_decode(g, 8, &f) == -EINVAL && f == NULL,
	    "decode: index out of range");
	gsym_free(g);
	gsym_free(NULL);
	free(img);
}

static void
test_dump(void)
{
	struct tspec s = main_spec(2, 0), t = main_spec(2, 1);
	unsigned char *img, *img2;
	struct gsym *g, *g2;
	char *out = NULL, *out2 = NULL;
	size_t len, len2, olen, olen2;
	FILE *fp;
	int rc, rc2;

	img = build(&s, &len);
	img2 = build(&t, &len2);
	if (gsym_open_mem(img, len, &g) != 0 ||
	    gsym_open_mem(img2, len2, &g2) != 0)
		abort();
	fp = open_memstream(&out, &olen);
	rc = gsym_dump(fp, g);
	fclose(fp);
	fp = open_memstream(&out2, &olen2);
	rc2 = gsym_dump(fp, g2);
	fclose(fp);
	ok(rc == -EBADMSG && rc2 == rc, "dump: -EBADMSG for the record with "
	    "an unknown chunk type");
	ok(olen == olen2 && memcmp(out, out2, olen) == 0,
	    "dump: both byte orders print the same");
	ok(strstr(out, "Header:\n  Magic        = 0x4753594d\n"
	    "  Version      = 0x0001\n  AddrOffSize  = 0x02\n"
	    "  UUIDSize     = 0x04\n"
	    "  BaseAddress  = 0x0000000000001000\n"
	    "  NumAddresses = 0x00000008\n") == out &&
	    strstr(out, "  StrtabSize   = 0x0000009e\n"
	    "  UUID         = a0a1a2a3\n\n") != NULL, "dump: header");
	ok(strstr(out, "\n\nAddress Table:\nINDEX  OFFSET16 (ADDRESS)\n"
	    "====== =============================== \n"
	    "[   0] 0x0000 (0x0000000000001000)\n") != NULL,
	    "dump: address table");
	ok(strstr(out, "[   2] 0x0000000a 0x00000017 "
	    "/src/include/b.h\n") != NULL &&
	    strstr(out, "[   0] 0x00000000 0x00000000 \n") != NULL &&
	    strstr(out, "0x00000000: \"\"\n0x00000001: \"/src\"\n") != NULL,
	    "dump: files and strings");
	ok(strstr(out, ": [0x0000000000001000 - 0x0000000000001040) "
	    "\"main\"\nLineTable:\n  0x0000000000001000 /src/a.c:10\n"
	    "  0x0000000000001004 /src/a.c:11\n") != NULL,
	    "dump: function and line table");
	ok(strstr(out, "InlineInfo:\n[0x0000000000001000 - "
	    "0x0000000000001040) main\n  [0x0000000000001008 - "
	    "0x0000000000001018) [0x0000000000001020 - 0x0000000000001028) "
	    "inl_a called from /src/a.c:12\n    [0x000000000000100c - "
	    "0x0000000000001010) inl_b called from /src/include/b.h:30\n"
	    "      [0x000000000000100e") != NULL,
	    "dump: inline tree");
	ok(strstr(out, ": FunctionInfo:0x00000015: unsupported InfoType 7\n"
	    "FunctionInfo @ ") != NULL, "dump: unknown chunk type reported, "
	    "dump goes on");
	ok(strstr(out, "  0x00000000000010a4 :2\n") != NULL &&
	    strstr(out, "  0x00000000000010b0 <invalid-file>:3\n") != NULL,
	    "dump: rows with file 0 and a missing file");
	free(out);
	free(out2);
	gsym_free(g);
	gsym_free(g2);
	free(img);
	free(img2);
}

static void
test_versions(void)
{
	static const uint16_t vers[] = { 0, 2, 3, 0x100 };
	struct tspec s = main_spec(4, 0);
	struct gsym_header h;
	unsigned char *img;
	struct gsym *g;
	size_t len, i;
	uint16_t v;
	int be;

	for (be = 0; be < 2; be++) {
		s.be = be;
		for (i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
			v = vers[i];
			img = build(&s, &len);
			img[4] = (unsigned char)(be ? v >> 8 : v);
			img[5] = (unsigned char)(be ? v : v >> 8);
			g = (struct gsym *)1;
			ok(gsym_open_mem(img, len, &g) == -EPROTONOSUPPORT &&
			    g == NULL, "%s version %u: -EPROTONOSUPPORT",
			    be ? "BE" : "LE", v);
			ok(gsym_read_header(img, 6, &h) == -EPROTONOSUPPORT &&
			    h.version == v, "%s version %u: read_header "
			    "says which", be ? "BE" : "LE", v);
			free(img);
		}
	}
	s.version = 0;
	s.be = 0;
	img = build(&s, &len);
	img[6] = 3;
	ok(gsym_open_mem(img, len, &g) == -EBADMSG, "AddrOffSize 3");
	img[6] = 4;
	img[7] = 21;
	ok(gsym_open_mem(img, len, &g) == -EBADMSG, "UUID size 21");
	img[7] = 20;
	img[0] = 'X';
	ok(gsym_open_mem(img, len, &g) == -EBADMSG, "bad magic");
	img[0] = 0x4d;
	ok(gsym_read_header(img, len, &h) == 0 && h.uuid_size == 20 &&
	    gsym_read_header(img, 47, &h) == -EBADMSG, "read_header");
	/* A string table past the end. */
	memcpy(img + 24, &(uint32_t){ (uint32_t)len }, 4);
	ok(gsym_open_mem(img, len, &g) == -EBADMSG, "strtab past the end");
	free(img);
}

static void
test_truncated(int be)
{
	struct tspec s = main_spec(4, be);
	unsigned char *img;
	size_t len, n;
	int bad = 0, opened = 0;
	struct gsym *g;

	img = build(&s, &len);
	for (n = 0; n <= len; n++) {
		bad += exercise(img, n, 0xff8, 0x10c0, NULL, 0, 1, 1);
		if (gsym_open_mem(img, n, &g) == 0) {
			opened++;
			gsym_free(g);
		}
	}
	ok(bad == 0, "%s truncated at each of %zu lengths: no crash, paths "
	    "agree (%d opened)", be ? "BE" : "LE", len + 1, opened);
	free(img);
}

static void
test_corrupt(int be, int variants)
{
	struct tspec s = main_spec(be ? 8 : 2, be);
	uint64_t extra[16];
	unsigned char *img, *work;
	size_t len, where[4];
	int i, k, bad = 0;

	img = build(&s, &len);
	if ((work = malloc(len)) == NULL)
		abort();
	for (i = 0; i < variants; i++) {
		memcpy(work, img, len);
		corrupt(work, len, 0x100, where);
		for (k = 0; k < 16; k++)
			extra[k] = k < 8 ? rnd() : 0x1000 + rnd() % 0x100;
		bad += exercise(work, len, 0xff8, 0x10c0, extra, 16, 1, 1);
	}
	ok(bad == 0, "%s: %d corrupted images: no crash, paths agree",
	    be ? "BE" : "LE", variants);
	free(work);
	free(img);
}

static void
test_limits(void)
{
	static const struct tfile f1[] = { { "/d", "x.c" } };
	static const struct trow r1[] = { { 0x2000, 1, 1 } };
	/* MinDelta 1, MaxDelta 0: a line range of 0. */
	static const unsigned char zero_range[] = { 0x01, 0x00, 0x01, 0x10,
	    0x00 };
	/* MinDelta INT64_MIN, MaxDelta INT64_MAX: the range wraps to 0. */
	static const unsigned char wrap_range[] = {
	    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f,
	    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00,
	    0x01, 0x10, 0x00 };
	static const unsigned char no_end[] = { 0x00, 0x00, 0x01, 0x04 };
	struct tfunc fn[1] = { { 0x2000, 0x100, "deep", r1, 1, NULL, 0,
	    NULL, 0, 0 } };
	struct tspec s = { 0x2000, 4, 0, 0, f1, 1, fn, 1 };
	struct tinl *chain;
	unsigned char *img;
	struct gsym *g;
	size_t len;
	int i, n, rc;

	/* Inline chains: at most GSYM_FRAMES_MAX frames. */
	if ((chain = calloc(5000, sizeof(*chain))) == NULL)
		abort();
	for (n = GSYM_FRAMES_MAX; n <= 5000; n += 5000 - GSYM_FRAMES_MAX) {
		for (i = 0; i < n; i++) {
			chain[i].r[0][0] = 0x2000;
			chain[i].r[0][1] = 0x2100;
			chain[i].nr = 1;
			chain[i].name = i ? "link" : "deep";
			chain[i].call_file = i ? 1 : 0;
			chain[i].call_line = (uint32_t)i;
			chain[i].kids = i + 1 < n ? &chain[i + 1] : NULL;
			chain[i].nkids = i + 1 < n;
		}
		fn[0].inl = chain;
		img = build(&s, &len);
		if (gsym_open_mem(img, len, &g) != 0)
			abort();
		rc = gsym_lookup(g, 0x2010, &res);
		if (n == GSYM_FRAMES_MAX)
			ok(rc == 0 && res.nframes == GSYM_FRAMES_MAX &&
			    res.frames[GSYM_FRAMES_MAX - 1].line ==
			    1 && strcmp(res.frames[0].base, "x.c") == 0,
			    "inline chain of %d: %zu frames", n,
			    res.nframes);
		else
			ok(rc == -EBADMSG && both(g, 0x2010) == 0,
			    "inline chain of %d: -EBADMSG", n);
		gsym_free(g);
		free(img);
		/* One deeper than allowed. */
		if (n == GSYM_FRAMES_MAX) {
			chain[n - 1].kids = &chain[n];
			chain[n - 1].nkids = 1;
			chain[n] = chain[n - 1];
			chain[n].kids = NULL;
			chain[n].nkids = 0;
			img = build(&s, &len);
			if (gsym_open_mem(img, len, &g) != 0)
				abort();
			ok(gsym_lookup(g, 0x2010, &res) == -EBADMSG,
			    "inline chain of %d: -EBADMSG", n + 1);
			gsym_free(g);
			free(img);
		}
	}
	free(chain);
	fn[0].inl = NULL;

	fn[0].rows = NULL;
	fn[0].raw_lt = zero_range;
	fn[0].raw_lt_len = sizeof(zero_range);
	img = build(&s, &len);
	if (gsym_open_mem(img, len, &g) != 0)
		abort();
	rc = gsym_lookup(g, 0x2000, &res);
	ok(rc == -EBADMSG && strstr(res.error, "line range") != NULL,
	    "line range 0: -EBADMSG (%s)", res.error);
	gsym_free(g);
	free(img);
	fn[0].raw_lt = wrap_range;
	fn[0].raw_lt_len = sizeof(wrap_range);
	img = build(&s, &len);
	if (gsym_open_mem(img, len, &g) != 0)
		abort();
	ok(gsym_lookup(g, 0x2000, &res) == -EBADMSG,
	    "line range wrapping to 0: -EBADMSG");
	gsym_free(g);
	free(img);
	fn[0].raw_lt = no_end;
	fn[0].raw_lt_len = sizeof(no_end);
	img = build(&s, &len);
	if (gsym_open_mem(img, len, &g) != 0)
		abort();
	rc = gsym_lookup(g, 0x2000, &res);
	ok(rc == -EBADMSG && strcmp(res.error,
	    "0x00000004: EOF found before EndSequence") == 0,
	    "line table without end: %s", res.error);
	gsym_free(g);
	free(img);

	/* Name offsets past the table, or into an unterminated string. */
	fn[0].raw_lt = NULL;
	fn[0].rows = r1;
	fn[0].name_off = 0x7fffffff;
	img = build(&s, &len);
	if (gsym_open_mem(img, len, &g) != 0)
		abort();
	ok(gsym_lookup(g, 0x2000, &res) == -EBADMSG,
	    "name offset past the string table: -EBADMSG");
	gsym_free(g);
	free(img);
	fn[0].name_off = 0;
	fn[0].name = "zz_last";
	img = build(&s, &len);
	/* The table ends with "zz_last\0": lose that NUL. */
	{
		uint32_t so, ss;

		memcpy(&so, img + 20, 4);
		memcpy(&ss, img + 24, 4);
		img[so + ss - 1] = 'x';
	}
	if (gsym_open_mem(img, len, &g) != 0)
		abort();
	ok(gsym_lookup(g, 0x2000, &res) == -EBADMSG,
	    "unterminated name: -EBADMSG");
	ok(gsym_dump(devnull, g) == 0, "unterminated name: dump prints it");
	gsym_free(g);
	free(img);

	/* No functions at all. */
	s.nfuncs = 0;
	img = build(&s, &len);
	ok(gsym_open_mem(img, len, &g) == 0 &&
	    gsym_lookup(g, 0x2000, &res) == -ENOENT &&
	    gsym_find(g, 0, (uint32_t *)&n) == -ENOENT,
	    "no functions: -ENOENT");
	gsym_free(g);
	free(img);
}

static void
test_files(void)
{
	struct tspec s = main_spec(4, 1);
	char path[] = "/tmp/test_gsym.XXXXXX";
	unsigned char *img;
	struct gsym *g;
	size_t len;
	int fd, rc;

	img = build(&s, &len);
	if ((fd = mkstemp(path)) == -1 || write(fd, img, len) != (ssize_t)len)
		abort();
	rc = gsym_open(path, &g);
	ok(rc == 0 && gsym_lookup(g, 0x1031, &res) == 0 && res.nframes == 2,
	    "gsym_open maps a file");
	gsym_free(g);
	rc = gsym_open_fd(fd, &g);
	ok(rc == 0 && gsym_lookup(g, 0x1004, &res) == 0 &&
	    fcntl(fd, F_GETFD) != -1, "gsym_open_fd leaves the descriptor");
	gsym_free(g);
	if (ftruncate(fd, 10) != 0)
		abort();
	ok(gsym_open(path, &g) == -EBADMSG && g == NULL, "short file");
	if (ftruncate(fd, 0) != 0 || pwrite(fd, img, 6, 0) != 6)
		abort();
	ok(gsym_open(path, &g) == -EBADMSG, "a 6-byte file");
	img[5] = 2;	/* big-endian version 2 */
	if (pwrite(fd, img, 6, 0) != 6)
		abort();
	ok(gsym_open(path, &g) == -EPROTONOSUPPORT,
	    "a 6-byte version 2 stub: -EPROTONOSUPPORT");
	close(fd);
	unlink(path);
	ok(gsym_open(path, &g) == -ENOENT, "missing file: -ENOENT");
	free(img);
}

/* ---- A real file: test_gsym FILE ---- */

static uint32_t
rd32(const unsigned char *p, int swapped)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swapped ? __builtin_bswap32(v) : v;
}

struct rec {
	uint32_t	off;
	uint64_t	start;
};

static int
rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The record a byte at off is in: the last one starting at or below. */
static const struct rec *
rec_at(const struct rec *r, uint32_t n, size_t off)
{
	uint32_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? NULL : &r[lo - 1];
}

static int
real_file(const char *path)
{
	const struct rec *r;
	struct gsym_func *f;
	struct gsym *g;
	struct rec *recs;
	unsigned char *img, *work;
	uint64_t extra[96];
	uint32_t n, i;
	size_t len, where[4], tables, ndump = 0, dumpevery, j;
	int swapped, v, k, nw, bad = 0, rc;
	FILE *fp;
	long sz;

	if ((fp = fopen(path, "rb")) == NULL || fseek(fp, 0, SEEK_END) != 0 ||
	    (sz = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) != 0) {
		ok(0, "%s: %s", path, strerror(errno));
		return done();
	}
	len = (size_t)sz;
	if ((img = malloc(len ? len : 1)) == NULL ||
	    (work = malloc(len ? len : 1)) == NULL ||
	    fread(img, 1, len, fp) != len)
		abort();
	fclose(fp);
	rc = gsym_open_mem(img, len, &g);
	ok(rc == 0, "%s opens (%d)", path, rc);
	if (rc != 0)
		return done();
	n = gsym_header(g)->num_addresses;
	swapped = gsym_swapped(g);
	/* Function starts by record offset, to aim lookups at the records
	 * a corruption hits. */
	if ((recs = calloc(n + 1, sizeof(*recs))) == NULL)
		abort();
	tables = (GSYM_HEADER_SIZE + (size_t)n *
	    gsym_header(g)->addr_off_size + 3) & ~(size_t)3;
	for (i = 0; i < n; i++) {
		recs[i].off = rd32(img + tables + 4 * (size_t)i, swapped);
		if (gsym_decode(g, i, &f) == 0) {
			gsym_func_lookup(g, f, 0, &res);
			recs[i].start = res.start;
			gsym_func_free(f);
		}
	}
	for (k = 0; k < 2000; k++)
		bad += both(g, n ? recs[rnd() % n].start + rnd() % 64 : rnd());
	ok(bad == 0, "%s: 2000 lookups, both paths agree", path);
	tables = gsym_header(g)->strtab_offset;
	gsym_free(g);
	qsort(recs, n, sizeof(*recs), rec_cmp);

	/* Of a big file, dump only some variants: about 16 MB in all. */
	dumpevery = len / 16384 + 1;
	bad = 0;
	memcpy(work, img, len);
	for (v = 0; v < 1000; v++) {
		nw = corrupt(work, len, tables, where);
		k = 0;
		for (i = 0; i < (uint32_t)nw; i++) {
			if ((r = rec_at(recs, n, where[i])) == NULL)
				continue;
			extra[k++] = r->start;
			extra[k++] = r->start + 1 + rnd() % 256;
			extra[k++] = r->start + rnd() % 16;
		}
		while (k < 96)
			extra[k++] = n ? recs[rnd() % n].start + rnd() % 128 :
			    rnd();
		bad += exercise(work, len, 0, 0, extra, 96,
		    v % dumpevery == 0, 0);
		ndump += v % dumpevery == 0;
		/* Undo: corrupt() changes at most 4 bytes at each place. */
		for (i = 0; i < (uint32_t)nw; i++)
			for (j = where[i]; j < where[i] + 4 && j < len; j++)
				work[j] = img[j];
	}
	ok(bad == 0, "%s: 1000 corrupted copies: no crash, paths agree "
	    "(%zu dumped)", path, ndump);
	free(recs);
	free(img);
	free(work);
	return done();
}

static int
count_sink(void *ctx, const void *buf, size_t len)
{
	(void)buf;
	*(size_t *)ctx += len;
	return 0;
}

/* gsym_convert_opts.cancel, on this test's own binary (built with -g). */
static void
test_cancel(void)
{
	struct gsym_convert_opts o = { 1, NULL };
	int fd, cancel = 1, rc;
	size_t n = 0;
	unsigned t;

	if (elfinfo_init() < 0 ||
	    (fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)) < 0) {
		ok(0, "cancel: cannot open /proc/self/exe");
		return;
	}
	rc = gsym_dwarf_convert_opts(fd, &o, count_sink, &n, NULL);
	ok(rc == 0 && n > 0, "cancel: no flag: converted (%d, %zu bytes)", rc,
	    n);
	o.cancel = &cancel;
	for (t = 1; t <= 2; t++) {
		o.threads = t;
		n = 0;
		rc = gsym_dwarf_convert_opts(fd, &o, count_sink, &n, NULL);
		ok(rc == -ECANCELED && n == 0, "cancel: flag set, %u "
		    "thread(s): -ECANCELED, nothing written (%d, %zu bytes)",
		    t, rc, n);
	}
	cancel = 0;
	n = 0;
	rc = gsym_dwarf_convert_opts(fd, &o, count_sink, &n, NULL);
	ok(rc == 0 && n > 0, "cancel: flag clear: converted (%d, %zu bytes)",
	    rc, n);
	close(fd);
}

int
main(int argc, char **argv)
{
	int aos, be;

	if ((devnull = fopen("/dev/null", "w")) == NULL)
		abort();
	if (argc > 1)
		return real_file(argv[1]);
	for (be = 0; be < 2; be++)
		for (aos = 1; aos <= 8; aos *= 2)
			test_lookups(aos, be);
	test_result_fields();
	test_dump();
	test_versions();
	test_limits();
	test_files();
	test_truncated(0);
	test_truncated(1);
	test_corrupt(0, 1000);
	test_corrupt(1, 300);
	test_cancel();
	fclose(devnull);
	return done();
}

/*
 * gopclntab: Go's pc-line table.  See gopclntab.h and doc/gsym.md, "Go:
 * .gopclntab", for the layout and the Go sources it comes from.
 *
 * Nothing here trusts an offset: each is checked against the section
 * before it is read, and each step of a pc-value table, each byte of a
 * name scanned, is paid for from the table's work budget, so corrupt
 * offsets that send every function to the same long table or the same
 * unterminated name cost no more than the section's size allows.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "gopclntab.h"

/* An n-byte integer at off in the table's byte order. */
static int
get(const struct gopclntab *t, uint64_t off, unsigned n, uint64_t *v)
{
	uint64_t x = 0;
	unsigned i;

	if (off > t->len || n > t->len - off)
		return -EINVAL;
	for (i = 0; i < n; i++)
		x |= (uint64_t)t->p[off + i] << (8 * (t->big ? n - 1 - i : i));
	*v = x;
	return 0;
}

static int
spend(struct gopclntab *t, uint64_t n)
{
	if (n > t->work) {
		t->work = 0;
		return -ENOEXEC;
	}
	t->work -= n;
	return 0;
}

/* The NUL-terminated string at off; what is scanned is paid for, found
 * or not. */
static int
str_at(struct gopclntab *t, uint64_t off, const char **s, size_t *n)
{
	const unsigned char *z;
	uint64_t max;
	int rc;

	if (off >= t->len)
		return -EINVAL;
	max = t->len - off;
	if (max > t->work)
		max = t->work;
	if ((z = memchr(t->p + off, 0, (size_t)max)) == NULL) {
		rc = max < t->len - off ? -ENOEXEC : -EINVAL;
		(void)spend(t, max);
		return rc;
	}
	*n = (size_t)(z - (t->p + off));
	*s = (const char *)(t->p + off);
	return spend(t, *n + 1);
}

/* Go's varint, as runtime's readvarint: at most 5 bytes for 32 bits
 * (Go's encoders never write more). */
static int
varint(const struct gopclntab *t, uint64_t *off, uint32_t *v)
{
	uint32_t x = 0;
	unsigned shift;

	for (shift = 0; shift < 35; shift += 7) {
		unsigned char c;

		if (*off >= t->len)
			return -EINVAL;
		c = t->p[(*off)++];
		x |= (uint32_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EINVAL;
}

int
gopclntab_open(const void *p, size_t len, uint64_t text, struct gopclntab *t)
{
	uint64_t w[8], magic, fsz;
	const unsigned char *b = p;
	unsigned i, nw;

	memset(t, 0, sizeof(*t));
	t->p = p;
	t->len = len;
	if (len < 8 || b[4] != 0 || b[5] != 0 ||
	    (b[6] != 1 && b[6] != 2 && b[6] != 4) || (b[7] != 4 && b[7] != 8))
		return -ENOEXEC;
	t->quantum = b[6];
	t->ptrsize = b[7];
	/* Little-endian first, as debug/gosym tries it. */
	for (t->big = 0; t->big < 2; t->big++) {
		(void)get(t, 0, 4, &magic);
		if (magic == GOPCLNTAB_MAGIC_116 || magic == GOPCLNTAB_MAGIC_118 ||
		    magic == GOPCLNTAB_MAGIC_120)
			break;
	}
	if (t->big == 2)
		return -ENOEXEC;
	t->version = magic == GOPCLNTAB_MAGIC_116 ? 116 :
	    magic == GOPCLNTAB_MAGIC_118 ? 118 : 120;
	nw = t->version == 116 ? 7 : 8;
	for (i = 0; i < nw; i++)
		if (get(t, 8 + (uint64_t)i * t->ptrsize, t->ptrsize, &w[i]) < 0)
			return -EINVAL;
	if (w[0] > UINT32_MAX)
		return -EINVAL;
	t->nfunc = (uint32_t)w[0];
	if (t->version >= 118) {
		t->text = w[2] != 0 ? w[2] : text;
		memmove(&w[2], &w[3], 5 * sizeof(w[0]));
	}
	for (i = 2; i < 7; i++)
		if (w[i] > len)
			return -EINVAL;
	t->funcname = (size_t)w[2];
	t->cu = (size_t)w[3];
	t->filetab = (size_t)w[4];
	t->pctab = (size_t)w[5];
	t->functab = (size_t)w[6];
	/* nfunc {entry, offset} pairs, then the end of the last function. */
	fsz = t->version >= 118 ? 4 : t->ptrsize;
	if ((2 * (uint64_t)t->nfunc + 1) * fsz > len - t->functab)
		return -EINVAL;
	t->work = len > UINT64_MAX / GOPCLNTAB_WORK_PER_BYTE ? UINT64_MAX :
	    (uint64_t)len * GOPCLNTAB_WORK_PER_BYTE;
	return 0;
}

/* Entry k of the function table: a pc (even k) or a record offset. */
static int
functab(const struct gopclntab *t, uint64_t k, uint64_t *v)
{
	unsigned fsz = t->version >= 118 ? 4 : t->ptrsize;
	int rc;

	if ((rc = get(t, t->functab + k * fsz, fsz, v)) < 0)
		return rc;
	if (t->version >= 118 && k % 2 == 0) {
		if (*v > UINT64_MAX - t->text)
			return -EINVAL;
		*v += t->text;
	}
	return 0;
}

/* A pc-value table being walked: val holds for [start, end). */
struct pcv {
	uint64_t	off;		/* its next byte in the section */
	uint64_t	start, end;
	int32_t		val;
	int		done;		/* it ended: end is where */
};

static int
pcv_init(struct gopclntab *t, struct pcv *v, uint64_t table,
    uint64_t entry)
{
	memset(v, 0, sizeof(*v));
	if (table >= t->len - t->pctab)
		return -EINVAL;
	v->off = t->pctab + table;
	v->start = v->end = entry;
	v->val = -1;
	return 0;
}

/*
 * One step (runtime's step()): a zigzag value delta, then a pc delta in
 * quanta.  A zero value delta ends the table, except while the pc is
 * still at the entry.
 */
static int
pcv_step(struct gopclntab *t, struct pcv *v, uint64_t entry)
{
	uint32_t uv, pd;
	uint64_t d;
	int rc;

	if ((rc = spend(t, 1)) < 0 || (rc = varint(t, &v->off, &uv)) < 0)
		return rc;
	if (uv == 0 && v->end != entry) {
		v->done = 1;
		return 0;
	}
	if ((rc = varint(t, &v->off, &pd)) < 0)
		return rc;
	/* Unsigned, so that a corrupt table wraps instead of overflowing. */
	v->val = (int32_t)((uint32_t)v->val + (-(uv & 1) ^ (uv >> 1)));
	d = (uint64_t)pd * t->quantum;
	if (d > UINT64_MAX - v->end)
		return -EINVAL;
	v->start = v->end;
	v->end += d;
	return 0;
}

/* The file of index fno in the function's compilation unit, or NULL. */
static int
file_at(struct gopclntab *t, uint32_t cu, int32_t fno, const char **out)
{
	uint64_t off;
	size_t n;
	int rc;

	*out = NULL;
	if (fno < 0 || get(t, t->cu + ((uint64_t)cu + (uint32_t)fno) * 4, 4,
	    &off) < 0 || off == UINT32_MAX)
		return 0;
	rc = str_at(t, t->filetab + off, out, &n);
	if (rc == -EINVAL)
		*out = NULL;
	return rc == -ENOEXEC ? rc : 0;
}

static uint64_t
min3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a < b ? a : b;

	return m < c ? m : c;
}

/*
 * Walk the line table (pcln) and the file table (pcfile) of a function
 * side by side: a row wherever either changes, up to the end of the
 * line table or limit.  A file table that ends first leaves the rest
 * without a file.  @return the end, in *end.
 */
static int
walk(struct gopclntab *t, uint64_t entry, uint64_t limit, uint32_t pcfile,
    uint32_t pcln, uint32_t cu, gopclntab_row_fn fn, void *ctx,
    uint64_t *end)
{
	struct gopclntab_row row = { 0 }, last = { 0 };
	struct pcv ln, fl = { 0 };
	uint64_t pos = entry, next;
	int32_t fno = -1;
	int rc, have = 0;

	if ((rc = pcv_init(t, &ln, pcln, entry)) < 0 ||
	    (rc = pcv_step(t, &ln, entry)) < 0)
		return rc;
	if (pcfile == 0) {
		fl.val = -1;
		fl.end = UINT64_MAX;
		fl.done = 1;
	} else if ((rc = pcv_init(t, &fl, pcfile, entry)) < 0 ||
	    (rc = pcv_step(t, &fl, entry)) < 0) {
		return rc;
	}
	for (;;) {
		next = min3(ln.end, fl.end, limit);
		if (next > pos) {
			if (fl.val != fno || !have) {
				fno = fl.val;
				if ((rc = file_at(t, cu, fno, &row.file)) < 0)
					return rc;
			}
			row.addr = pos;
			row.line = ln.val;
			if (!have || row.file != last.file ||
			    row.line != last.line) {
				if ((rc = fn(ctx, &row)) != 0)
					return rc;
				last = row;
				have = 1;
			}
			pos = next;
		}
		if (pos >= limit)
			break;
		if (ln.end == pos) {
			if ((rc = pcv_step(t, &ln, entry)) < 0)
				return rc;
			if (ln.done)
				break;
		}
		if (fl.end == pos && !fl.done) {
			if ((rc = pcv_step(t, &fl, entry)) < 0)
				return rc;
			if (fl.done) {
				fl.val = -1;
				fl.end = UINT64_MAX;
			}
		}
	}
	*end = pos;
	return 0;
}

int
gopclntab_func(struct gopclntab *t, uint32_t i, struct gopclntab_func *f,
    gopclntab_row_fn fn, void *ctx)
{
	uint64_t entry, next, off, fentry, nameoff, pcfile, pcln, cu, rec;
	unsigned sz0 = t->version >= 118 ? 4 : t->ptrsize;
	int rc;

	memset(f, 0, sizeof(*f));
	if ((rc = spend(t, 1)) < 0)
		return rc;
	if (i >= t->nfunc)
		return -EINVAL;
	if (functab(t, 2 * (uint64_t)i, &entry) < 0 ||
	    functab(t, 2 * (uint64_t)i + 1, &off) < 0 ||
	    functab(t, 2 * (uint64_t)i + 2, &next) < 0 || next <= entry ||
	    off > t->len - t->functab)
		return -EINVAL;
	/* The _func record: the entry, then 32-bit fields from nameoff on
	 * (runtime2.go); its entry must be the table's. */
	rec = t->functab + off;
	if (get(t, rec, sz0, &fentry) < 0 ||
	    get(t, rec + sz0, 4, &nameoff) < 0 ||
	    get(t, rec + sz0 + 16, 4, &pcfile) < 0 ||
	    get(t, rec + sz0 + 20, 4, &pcln) < 0 ||
	    get(t, rec + sz0 + 28, 4, &cu) < 0)
		return -EINVAL;
	if (t->version >= 118)
		fentry += t->text;
	if (fentry != entry || nameoff > INT32_MAX)
		return -EINVAL;
	if ((rc = str_at(t, t->funcname + nameoff, &f->name, &f->namelen)) < 0)
		return rc;
	f->entry = entry;
	f->end = next;
	if (pcln == 0)
		return 0;
	return walk(t, entry, next, (uint32_t)pcfile, (uint32_t)pcln,
	    (uint32_t)cu, fn, ctx, &f->end);
}

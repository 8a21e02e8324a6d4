/*
 * gsym_dwarf: DWARF and .symtab to GSYM, following LLVM 19's
 * DwarfTransformer and ObjectFileTransformer (doc/gsym.md, "Converting from
 * DWARF").
 *
 * libdw walks the DIEs; the line programs are decoded here, one unit at a
 * time, because LLVM's choice of rows for a function depends on the
 * sequences of the program (which libdw does not expose), its file names
 * on the raw directory and file tables (libdw joins them differently),
 * and because libdw would keep every unit's decoded lines until the end.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/rd.h"
#include "common/dwline.h"
#include "common/elfinfo.h"
#include "dwimage.h"
#include "dwscan.h"
#include "gopclntab.h"
#include "gsym_dwarf.h"
#include "gsym_write.h"

/* ---- one unit's line table, as LLVM's DWARFDebugLine sees it ---- */

struct lrow {
	uint64_t	addr;
	uint32_t	file;
	uint32_t	line;
};

struct lseq {
	uint64_t	low, high;
	uint32_t	first, last;	/* rows [first, last); last-1 ends it */
	uint32_t	order;
};

struct ltable {
	int		 ok;		/* parsed */
	struct dwline	 hdr;		/* version, directories, files */
	struct lrow	*rows;
	size_t		 nrows, caprows;
	unsigned char	*endseq;	/* per row: 1 for an end_sequence */
	size_t		 capendseq;
	struct lseq	*seqs;
	size_t		 nseqs, capseqs;
	uint32_t	*gfile;		/* DWARF file index -> builder id + 1;
					 * 0 not yet, UINT32_MAX invalid */
	size_t		 capgfile;
};

static void
ltable_free(struct ltable *t)
{
	free(t->rows);
	free(t->endseq);
	free(t->seqs);
	dwline_free(&t->hdr);
	free(t->gfile);
}

struct pmap;

#define ABBR_MAX	1024

struct cvt {
	Elf			*elf;
	Dwarf			*dbg;
	struct gsym_builder	*b;
	int			 big;
	struct dwline_sect		 abbrev, line, line_str, str;
	struct ltable		 lt;
	/* the unit being converted */
	const char		*comp_dir;
	int			 lang;
	uint8_t			 addr_size;
	size_t			 dwarf_funcs;
	/* scratch for one function */
	struct gsym_row		*rows;
	size_t			 caprows;
	uint32_t		*idx;
	size_t			 capidx;
	struct pmap		*pm;		/* parents in other units */
	struct pmap		*names;		/* abstract origin -> name id + 1 */
	struct dwscan		 scan;		/* the unit's DIEs */
	Dwarf_Off		 unit_off;	/* its header */
	int			 err;		/* sticky -ENOMEM, -ENOEXEC,
						 * -ECANCELED */
	struct oplog		*log;		/* NULL: call the builder */
	const int		*cancel;	/* gsym_convert_opts' */
	Dwarf_Off		 unit_end;	/* of the unit being converted */
	uint64_t		 steps;		/* DIEs its walks may still meet */
	/* The unit's abbreviations as libdw decoded them, by index in
	 * scan.abbrevs, for mkdie(); libdw's unit, and its bytes (libdw's
	 * copy of .debug_info, from the unit's header on). */
	struct Dwarf_CU		*unit_cu;
	const unsigned char	*unit_base;
	Dwarf_Abbrev		*abbr[ABBR_MAX];
};

/*
 * The builder is not thread-safe, and its output depends on the order of
 * the calls it gets.  With several threads, each unit's calls are
 * recorded by the worker that walks it (ids local to the unit) and
 * replayed by the calling thread in unit order: the builder sees the
 * calls of a one-thread conversion, in the same order, and writes the
 * same bytes.
 */
enum { OP_STR = 1, OP_STRCOPY, OP_FILE, OP_ADD };

struct oplog {
	unsigned char	*p;
	size_t		 n, cap;
	uint32_t	 nstr, nfile;	/* local ids handed out */
	int		 err;		/* the worker's, for this unit */
};

static int
log_put(struct oplog *l, const void *p, size_t len)
{
	if (len == 0)
		return 0;	/* p may be NULL then */
	if (array_grow(&l->p, &l->cap, l->n + len, 1) < 0)
		return -ENOMEM;
	memcpy(l->p + l->n, p, len);
	l->n += len;
	return 0;
}

#define LOG_PUT(l, v)	log_put((l), &(v), sizeof(v))

static uint32_t
em_str(struct cvt *cv, const char *s, size_t len, int copy)
{
	struct oplog *l = cv->log;
	unsigned char op = copy ? OP_STRCOPY : OP_STR;
	uint64_t n = len;

	if (l == NULL)
		return gsym_builder_str(cv->b, s, len, copy);
	if (len == 0)
		return 0;	/* the builder's id of "" */
	if (LOG_PUT(l, op) < 0 || LOG_PUT(l, n) < 0 ||
	    (copy ? log_put(l, s, len) : LOG_PUT(l, s)) < 0)
		return UINT32_MAX;
	return ++l->nstr;
}

/* @return the file's id; 0 on ENOMEM. */
static uint32_t
em_file(struct cvt *cv, const char *path)
{
	struct oplog *l = cv->log;
	unsigned char op = OP_FILE;

	if (l == NULL)
		return gsym_builder_file(cv->b, path);
	if (LOG_PUT(l, op) < 0 || log_put(l, path, strlen(path) + 1) < 0)
		return 0;
	return ++l->nfile;
}

static int
log_inline(struct oplog *l, const struct gsym_inline *n)
{
	uint64_t nr = n->nranges, nk = n->nchildren;
	size_t i;

	if (LOG_PUT(l, nr) < 0 || log_put(l, n->ranges,
	    nr * 2 * sizeof(*n->ranges)) < 0 || LOG_PUT(l, n->name) < 0 ||
	    LOG_PUT(l, n->call_file) < 0 || LOG_PUT(l, n->call_line) < 0 ||
	    LOG_PUT(l, nk) < 0)
		return -ENOMEM;
	for (i = 0; i < n->nchildren; i++)
		if (log_inline(l, &n->children[i]) < 0)
			return -ENOMEM;
	return 0;
}

/* gsym_builder_add(); recorded, it answers 0 and the replay counts. */
static int
em_add(struct cvt *cv, uint64_t lo, uint64_t hi, uint32_t name,
    const struct gsym_row *rows, size_t nrows, const struct gsym_inline *inl)
{
	struct oplog *l = cv->log;
	unsigned char op = OP_ADD, has = inl != NULL;
	uint64_t n = nrows;

	if (l == NULL)
		return gsym_builder_add(cv->b, lo, hi, name, rows, nrows, inl);
	if (LOG_PUT(l, op) < 0 || LOG_PUT(l, lo) < 0 || LOG_PUT(l, hi) < 0 ||
	    LOG_PUT(l, name) < 0 || LOG_PUT(l, n) < 0 ||
	    log_put(l, rows, nrows * sizeof(*rows)) < 0 ||
	    LOG_PUT(l, has) < 0 || (inl != NULL && log_inline(l, inl) < 0))
		return -ENOMEM;
	return 0;
}

static int
add_row(struct ltable *t, uint64_t addr, uint32_t file, uint32_t line,
    int end)
{
	if (array_grow(&t->rows, &t->caprows, t->nrows + 1,
	    sizeof(*t->rows)) < 0)
		return -ENOMEM;
	/* One end-of-sequence flag a row, grown alike. */
	if (array_grow(&t->endseq, &t->capendseq, t->caprows,
	    sizeof(*t->endseq)) < 0)
		return -ENOMEM;
	t->rows[t->nrows].addr = addr;
	t->rows[t->nrows].file = file;
	t->rows[t->nrows].line = line;
	t->endseq[t->nrows] = (unsigned char)end;
	t->nrows++;
	return 0;
}

static int
cmp_seq(const void *a, const void *b)
{
	const struct lseq *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Decode the line program at off in .debug_line: its directory and file
 * tables, every row and its sequences (LLVM's ParsingState: a sequence is
 * kept when it is not empty and low < high; rows after a set_address of
 * the tombstone are dropped until the next set_address).
 * @return 0, -EINVAL for a program that cannot be read, -ENOMEM.
 */
static int
parse_lines(struct cvt *cv, uint64_t off)
{
	struct ltable *t = &cv->lt;
	struct dwline_sects ls = { cv->line, cv->line_str, cv->str, cv->big };
	struct rd r = { 0 };
	uint64_t addr = 0;
	unsigned minlen, line_range, opbase, i;
	const unsigned char *oplen;
	int line_base, rc, tombstoned = 0, seq_empty = 1;
	uint32_t file = 1, line = 1, seq_first = 0;
	uint64_t seq_low = 0;

	t->ok = 0;
	t->nrows = t->nseqs = 0;
	if ((rc = dwline_header(&ls, off, &t->hdr)) < 0)
		return rc;
	r.p = t->hdr.prog;	/* the program */
	r.end = t->hdr.end;
	r.big = cv->big;
	minlen = t->hdr.minlen;
	line_base = t->hdr.line_base;
	line_range = t->hdr.line_range;
	opbase = t->hdr.opbase;
	oplen = t->hdr.oplen;

#define EMIT(end) do {							\
	if (!tombstoned) {						\
		if (seq_empty) {					\
			seq_empty = 0;					\
			seq_low = addr;					\
			seq_first = (uint32_t)t->nrows;			\
		}							\
		if (add_row(t, addr, file, line, (end)) < 0)		\
			return -ENOMEM;					\
		if (end) {						\
			if (seq_low < addr && seq_first < t->nrows) {	\
				if (array_grow(&t->seqs, &t->capseqs, \
				    t->nseqs + 1, sizeof(*t->seqs)) < 0) \
					return -ENOMEM;			\
				t->seqs[t->nseqs].low = seq_low;	\
				t->seqs[t->nseqs].high = addr;		\
				t->seqs[t->nseqs].first = seq_first;	\
				t->seqs[t->nseqs].last =		\
				    (uint32_t)t->nrows;			\
				t->seqs[t->nseqs].order =		\
				    (uint32_t)t->nseqs;			\
				t->nseqs++;				\
			}						\
		}							\
	}								\
	if (end) {							\
		seq_empty = 1;						\
		addr = 0;						\
		file = 1;						\
		line = 1;						\
		tombstoned = 0;						\
	}								\
} while (0)

	while (r.p < r.end && !r.bad) {
		unsigned op = (unsigned)rd_fixed(&r, 1);

		if (op >= opbase) {
			unsigned adj = op - opbase;

			addr += (uint64_t)(adj / line_range) * minlen;
			line += (uint32_t)(line_base + (int)(adj % line_range));
			EMIT(0);
			continue;
		}
		switch (op) {
		case 0: {
			uint64_t len = rd_uleb(&r);
			const unsigned char *next;
			unsigned sub;

			if (r.bad || len == 0 ||
			    len > (uint64_t)(r.end - r.p))
				return -EINVAL;
			next = r.p + len;
			sub = (unsigned)rd_fixed(&r, 1);
			if (sub == DW_LNE_end_sequence) {
				EMIT(1);
			} else if (sub == DW_LNE_set_address) {
				size_t n = (size_t)(len - 1);

				addr = rd_fixed(&r, n > 8 ? 8 : n);
				tombstoned = n <= 8 && addr == (n >= 8 ?
				    UINT64_MAX : (UINT64_C(1) << (8 * n)) - 1);
			}
			r.p = next;
			break;
		}
		case DW_LNS_copy:
			EMIT(0);
			break;
		case DW_LNS_advance_pc:
			addr += rd_uleb(&r) * minlen;
			break;
		case DW_LNS_advance_line:
			line += (uint32_t)rd_sleb(&r);
			break;
		case DW_LNS_set_file:
			file = (uint32_t)rd_uleb(&r);
			break;
		case DW_LNS_const_add_pc:
			addr += (uint64_t)((255 - opbase) / line_range) * minlen;
			break;
		case DW_LNS_fixed_advance_pc:
			addr += rd_fixed(&r, 2);
			break;
		default:
			for (i = 0; i < oplen[op]; i++)
				(void)rd_uleb(&r);
			break;
		}
	}
#undef EMIT
	/* Sequences by low address; equal ones keep program order. */
	if (t->nseqs > 1)
		qsort(t->seqs, t->nseqs, sizeof(*t->seqs), cmp_seq);
	if (array_grow(&t->gfile, &t->capgfile, t->hdr.nfiles + 1,
	    sizeof(*t->gfile)) < 0)
		return -ENOMEM;
	memset(t->gfile, 0, (t->hdr.nfiles + 1) * sizeof(*t->gfile));
	t->ok = 1;
	return 0;
}

/* ---- file names, as LLVM's Prologue::getFileNameByIndex ---- */

static void
path_append(char *buf, size_t cap, size_t *len, const char *c)
{
	size_t n;

	if (c == NULL || *c == '\0')
		return;
	if (*len > 0 && buf[*len - 1] == '/') {
		while (*c == '/')
			c++;
	} else if (*c != '/' && *len > 0) {
		if (*len + 1 < cap)
			buf[(*len)++] = '/';
	}
	n = strlen(c);
	if (*len + n >= cap)
		n = cap - 1 - *len;
	memcpy(buf + *len, c, n);
	*len += n;
	buf[*len] = '\0';
}

/* The builder's id for DWARF file index idx of the unit's table.
 * @return 1 with *out, 0 when the index names no file. */
static int
file_id(struct cvt *cv, uint64_t idx, uint32_t *out)
{
	struct ltable *t = &cv->lt;
	const struct dwline_file *f;
	const char *dir = NULL;
	char path[8192];
	size_t len = 0;
	uint32_t id;

	if (!t->ok)
		return 0;
	if (t->hdr.version >= 5) {
		if (idx >= t->hdr.nfiles)
			return 0;
		f = &t->hdr.files[idx];
	} else {
		if (idx == 0 || idx > t->hdr.nfiles)
			return 0;
		f = &t->hdr.files[idx - 1];
	}
	if (t->gfile[f - t->hdr.files] == UINT32_MAX)
		return 0;
	if (t->gfile[f - t->hdr.files] != 0) {
		*out = t->gfile[f - t->hdr.files] - 1;
		return 1;
	}
	if (f->name == NULL) {
		t->gfile[f - t->hdr.files] = UINT32_MAX;
		return 0;
	}
	path[0] = '\0';
	if (f->name[0] != '/') {
		if (t->hdr.version >= 5) {
			if (f->dir < t->hdr.ndirs)
				dir = t->hdr.dirs[f->dir];
		} else if (f->dir > 0 && f->dir <= t->hdr.ndirs) {
			dir = t->hdr.dirs[f->dir - 1];
		}
		if ((t->hdr.version < 5 || f->dir != 0) && cv->comp_dir &&
		    *cv->comp_dir && !(dir && dir[0] == '/'))
			path_append(path, sizeof(path), &len, cv->comp_dir);
		path_append(path, sizeof(path), &len, dir);
	}
	path_append(path, sizeof(path), &len, f->name);
	if ((id = em_file(cv, path)) == 0) {
		cv->err = -ENOMEM;
		return 0;
	}
	t->gfile[f - t->hdr.files] = id + 1;
	*out = id;
	return 1;
}

/* ---- rows of one function (LLVM's lookupAddressRange) ---- */

/* Last row of seq at or before addr: std::upper_bound over
 * [first+1, last-1), minus one. */
static uint32_t
row_in_seq(const struct ltable *t, const struct lseq *s, uint64_t addr)
{
	size_t first = s->first + 1, count = (s->last - 1) - first;

	while (count > 0) {
		size_t step = count / 2, it = first + step;

		if (!(addr < t->rows[it].addr)) {
			first = it + 1;
			count -= step + 1;
		} else {
			count = step;
		}
	}
	return (uint32_t)(first - 1);
}

static int
push_idx(struct cvt *cv, size_t *n, uint32_t v)
{
	if (array_grow(&cv->idx, &cv->capidx, *n + 1, sizeof(*cv->idx)) <
	    0) {
		cv->err = -ENOMEM;
		return -1;
	}
	cv->idx[(*n)++] = v;
	return 0;
}

/* @return the number of row indices in cv->idx, or -1 when no sequence
 * holds start (then LLVM falls back to decl_file/decl_line). */
static long
range_rows(struct cvt *cv, uint64_t start, uint64_t end)
{
	const struct ltable *t = &cv->lt;
	size_t first = 0, count = t->nseqs, n = 0, s;

	while (count > 0) {	/* upper_bound by high pc */
		size_t step = count / 2, it = first + step;

		if (!(start < t->seqs[it].high)) {
			first = it + 1;
			count -= step + 1;
		} else {
			count = step;
		}
	}
	if (first == t->nseqs || !(t->seqs[first].low <= start &&
	    start < t->seqs[first].high))
		return -1;
	for (s = first; s < t->nseqs && t->seqs[s].low < end; s++) {
		const struct lseq *q = &t->seqs[s];
		uint32_t a = s == first ? row_in_seq(t, q, start) : q->first;
		uint32_t z = row_in_seq(t, q, end - 1), i;

		for (i = a; i <= z; i++)
			if (push_idx(cv, &n, i) < 0)
				return 0;
	}
	return (long)n;
}

static int
push_row(struct cvt *cv, size_t *n, uint64_t addr, uint32_t file,
    uint32_t line)
{
	if (array_grow(&cv->rows, &cv->caprows, *n + 1,
	    sizeof(*cv->rows)) < 0) {
		cv->err = -ENOMEM;
		return -1;
	}
	cv->rows[*n].addr = addr;
	cv->rows[*n].file = file;
	cv->rows[*n].line = line;
	(*n)++;
	return 0;
}

static int
attr_udata(Dwarf_Die *die, int name, int integrate, Dwarf_Word *out)
{
	Dwarf_Attribute a;

	if ((integrate ? dwarf_attr_integrate(die, name, &a) :
	    dwarf_attr(die, name, &a)) == NULL)
		return 0;
	return dwarf_formudata(&a, out) == 0;
}

/* LLVM's convertFunctionLineTable.  @return rows in cv->rows. */
static size_t
function_rows(struct cvt *cv, Dwarf_Die *die, uint64_t start, uint64_t end)
{
	const struct ltable *t = &cv->lt;
	size_t n = 0, i;
	long nidx;
	int have_prev = 0;
	uint64_t prev_addr = 0;

	if (!t->ok)
		return 0;
	if ((nidx = range_rows(cv, start, end)) < 0) {
		Dwarf_Word df, dl;
		uint32_t gf;

		if (attr_udata(die, DW_AT_decl_file, 1, &df) &&
		    attr_udata(die, DW_AT_decl_line, 1, &dl) &&
		    file_id(cv, df, &gf))
			(void)push_row(cv, &n, start, gf, (uint32_t)dl);
		return n;
	}
	for (i = 0; i < (size_t)nidx; i++) {
		const struct lrow *row = &t->rows[cv->idx[i]];
		uint64_t addr = row->addr;
		uint32_t gf;

		if (!file_id(cv, row->file, &gf))
			break;
		if (!(start <= addr && addr < end)) {
			if (addr < start)
				addr = start;
			else
				continue;
		}
		/* Rows going backwards: a repeated copy of the function's
		 * rows, or a broken table; LLVM stops at either. */
		if (i > 0 && have_prev && row->addr < prev_addr)
			break;
		if (n > 0 && cv->rows[n - 1].file == gf &&
		    cv->rows[n - 1].line == row->line)
			continue;
		if (t->endseq[cv->idx[i]]) {
			have_prev = 0;
			prev_addr = 0;
		} else if (n == 0 || addr >= cv->rows[n - 1].addr) {
			/* (LLVM fails to encode rows going backwards) */
			if (push_row(cv, &n, addr, gf, row->line) < 0)
				return 0;
			have_prev = 1;
			prev_addr = row->addr;
		}
	}
	return n;
}

/* ---- names (LLVM's getQualifiedNameIndex) ---- */

/*
 * The Dwarf_Die of the unit's DIE i (cv->scan.dies[i]), made without
 * libdw's search of the unit by offset (dwarf_offdie()), and with its
 * abbreviation filled in: libdw looks that up in a hash table behind a
 * read-write lock, which took a fifth of a conversion.  A Dwarf_Die's
 * fields are public (libdw.h); the abbreviation is the one libdw gave
 * the first DIE of that abbreviation in the unit.
 * @return 0, or -1 when libdw cannot make it.
 */
static int
mkdie(struct cvt *cv, size_t i, Dwarf_Die *out)
{
	const struct dwscan_die *d = &cv->scan.dies[i];

	memset(out, 0, sizeof(*out));
	out->addr = (void *)(cv->unit_base + d->off);
	out->cu = cv->unit_cu;
	if (d->abbrev < ABBR_MAX && cv->abbr[d->abbrev] != NULL) {
		out->abbrev = cv->abbr[d->abbrev];
		return 0;
	}
	if (dwarf_tag(out) < 0 || out->abbrev == NULL ||
	    out->abbrev == (Dwarf_Abbrev *)-1L)
		return -1;
	if (d->abbrev < ABBR_MAX)
		cv->abbr[d->abbrev] = out->abbrev;
	return 0;
}

/* ---- bounds (doc/protocol.md, "Robustness rules") ---- */

/*
 * Every walk of DIEs moves forward.  A unit's DIEs are written in the
 * order a depth-first walk meets them, so in a sound unit each DIE a walk
 * meets lies past the one before, and inside the unit.  libdw follows the
 * bytes: one children flag flipped in an abbreviation, or a DW_AT_sibling
 * pointing back, and dwarf_child()/dwarf_siblingof() lead to DIEs met
 * already, again and again (issue 11: 5 million entries for a file of 13
 * thousand DIEs, memory growing without end).  The unit being converted
 * is read once by dwscan_unit(), front to back, which cannot revisit a
 * DIE (a unit that is no tree is -ENOEXEC); only the units that other
 * units refer to (DW_FORM_ref_addr) are walked with libdw, and such a
 * walk that turns back ends the conversion with -ENOEXEC.
 *
 * The walks of the unit's DIEs that follow the scan (per subprogram:
 * has_inline(), and parse_inline() once per range) get STEPS_PER_BYTE
 * times the unit's length together, which sound files stay far below
 * (0.16 at most in the files measured: libc6-dbg's, the test fixtures
 * built with g++ -O2).
 */
#define STEPS_PER_BYTE	16
#define DEPTH_MAX	512	/* of nested DIEs */

/* A walk with libdw.  Offsets compared as addresses in the section's
 * data (Dwarf_Die.addr), which spares a call of dwarf_dieoffset() a
 * DIE. */
struct walk {
	const unsigned char	*last;	/* the DIE met last (first: the root) */
	const unsigned char	*end;	/* of its unit */
	uint64_t		*steps;	/* the budget counted down */
};

static const int never;		/* the cancel flag of no one */

static inline int
cancelled(const struct cvt *cv)
{
	return __atomic_load_n(cv->cancel, __ATOMIC_RELAXED) != 0;
}

/* Start a walk below root, whose unit ends at offset end. */
static void
walk_init(struct walk *wk, Dwarf_Die *root, Dwarf_Off end, uint64_t *steps)
{
	Dwarf_Off off = dwarf_dieoffset(root);

	wk->last = root->addr;
	wk->end = wk->last + (end > off ? end - off : 0);
	wk->steps = steps;
}

/*
 * Look at the cancel flag: after each DIE met, and after each list of
 * children, for one dwarf_siblingof() may skip a whole subtree unseen.
 * @return 0, or -1 with cv->err set.
 */
static inline int
walk_end(struct cvt *cv)
{
	if (cv->err)
		return -1;
	if (cancelled(cv)) {
		cv->err = -ECANCELED;
		return -1;
	}
	return 0;
}

/* Meet die.  @return 0, or -1 with cv->err set: the walk must end. */
static inline int
walk_step(struct cvt *cv, struct walk *wk, Dwarf_Die *die)
{
	const unsigned char *a = die->addr;

	if (a <= wk->last || a >= wk->end || *wk->steps == 0) {
		if (cv->err == 0)
			cv->err = -ENOEXEC;
		return -1;
	}
	wk->last = a;
	--*wk->steps;
	return walk_end(cv);
}

/* Meet one more DIE of the unit being converted.  @return 0, or -1
 * with cv->err set: the walk must end. */
static inline int
step(struct cvt *cv)
{
	if (cv->steps == 0) {
		if (cv->err == 0)
			cv->err = -ENOEXEC;
		return -1;
	}
	cv->steps--;
	return walk_end(cv);
}

/*
 * The header of the unit of cudie: where it and the unit lie, and what
 * dwscan_unit() needs of it (u->info, ->abbrev, ->cancel, ->depth_max
 * left to the caller).  @return 0, or -ENOEXEC.
 */
static int
unit_header(Dwarf_Die *cudie, struct dwscan_unit *u)
{
	Dwarf *dbg = dwarf_cu_getdwarf(cudie->cu);
	Dwarf_Off hdr = dwarf_dieoffset(cudie) - dwarf_cuoffset(cudie);
	Dwarf_Off end, abbrev;
	Dwarf_Half version;
	uint8_t asize, osize;
	size_t hsize;

	if (dbg == NULL || dwarf_next_unit(dbg, hdr, &end, &hsize, &version,
	    &abbrev, &asize, &osize, NULL, NULL) != 0 || end <= hdr)
		return -ENOEXEC;
	u->unit_off = hdr;
	u->die_off = dwarf_dieoffset(cudie);
	u->end = end;
	u->version = version;
	u->addr_size = asize;
	u->offset_size = osize;
	u->abbrev_off = abbrev;
	return 0;
}

/* The end of the unit of cudie in its section.  @return 0, or -ENOEXEC. */
static int
unit_end(Dwarf_Die *cudie, Dwarf_Off *end)
{
	struct dwscan_unit u;
	int rc = unit_header(cudie, &u);

	if (rc == 0)
		*end = u.end;
	return rc;
}

struct pmap {		/* DIE offset -> parent DIE offset, for the units
			 * walked; cleared at each new unit */
	uint64_t	*keys, *vals;	/* key 0: empty (no DIE is at 0) */
	size_t		 cap, n;
	Dwarf_Off	*walked;	/* unit DIE offsets walked */
	size_t		 nwalked, capwalked;
};

static int
pmap_put(struct pmap *m, uint64_t key, uint64_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 4096, j;
		uint64_t *nk = calloc(ncap, sizeof(*nk));
		uint64_t *nv = calloc(ncap, sizeof(*nv));

		if (nk == NULL || nv == NULL) {
			free(nk);
			free(nv);
			return -ENOMEM;
		}
		for (j = 0; j < m->cap; j++) {
			if (m->keys[j] == 0)
				continue;
			i = (size_t)(m->keys[j] * 0x9e3779b97f4a7c15ull) &
			    (ncap - 1);
			while (nk[i])
				i = (i + 1) & (ncap - 1);
			nk[i] = m->keys[j];
			nv[i] = m->vals[j];
		}
		free(m->keys);
		free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->cap = ncap;
	}
	i = (size_t)(key * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (m->keys[i] == 0)
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

static int
pmap_get(const struct pmap *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (m->cap == 0)
		return 0;
	i = (size_t)(key * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
	while (m->keys[i]) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return 1;
		}
		i = (i + 1) & (m->cap - 1);
	}
	return 0;
}

static void
pmap_clear(struct pmap *m)
{
	if (m->cap)
		memset(m->keys, 0, m->cap * sizeof(*m->keys));
	m->n = 0;
	m->nwalked = 0;
}

/* @return 0, or -1 with cv->err set. */
static int
pmap_walk(struct cvt *cv, struct walk *wk, Dwarf_Die *die, unsigned depth)
{
	Dwarf_Die child;
	uint64_t me = dwarf_dieoffset(die);

	if (depth > DEPTH_MAX || dwarf_child(die, &child) != 0)
		return 0;
	do {
		if (walk_step(cv, wk, &child) < 0)
			return -1;
		if (pmap_put(cv->pm, dwarf_dieoffset(&child), me) < 0) {
			cv->err = -ENOMEM;
			return -1;
		}
		if (pmap_walk(cv, wk, &child, depth + 1) < 0)
			return -1;
	} while (!cv->err && dwarf_siblingof(&child, &child) == 0);
	return walk_end(cv);
}

/*
 * The parent of die.  In the unit being converted, the scan has it; in
 * another unit (DW_FORM_ref_addr), that unit is walked into a map the
 * first time.
 */
static int
die_parent(struct cvt *cv, Dwarf_Die *die, Dwarf_Die *out)
{
	struct pmap *m = cv->pm;
	Dwarf_Off off = dwarf_dieoffset(die);
	uint64_t p;
	Dwarf_Die cu;
	struct walk wk;
	uint64_t steps = UINT64_MAX;	/* bounded by the unit */
	Dwarf_Off end = 0;
	size_t i;

	if (dwarf_diecu(die, &cu, NULL, NULL) == NULL)
		return 0;
	if (cu.cu == cv->unit_cu) {
		long k = off > cv->unit_off && off - cv->unit_off <
		    UINT32_MAX ? dwscan_find(&cv->scan,
		    (uint32_t)(off - cv->unit_off)) : -1;

		if (k < 0 || cv->scan.dies[k].parent == UINT32_MAX)
			return 0;
		return mkdie(cv, cv->scan.dies[k].parent, out) == 0;
	}
	if (pmap_get(m, off, &p))
		return dwarf_offdie(cv->dbg, p, out) != NULL;
	for (i = 0; i < m->nwalked; i++)
		if (m->walked[i] == dwarf_dieoffset(&cu))
			return 0;	/* walked: a unit DIE, no parent */
	if (array_grow(&m->walked, &m->capwalked, m->nwalked + 1,
	    sizeof(*m->walked)) < 0) {
		cv->err = -ENOMEM;
		return 0;
	}
	/* Another unit: one walk, bounded by its own length. */
	if (unit_end(&cu, &end) < 0) {
		cv->err = -ENOEXEC;
		return 0;
	}
	walk_init(&wk, &cu, end, &steps);
	if (pmap_walk(cv, &wk, &cu, 0) < 0)
		return 0;
	m->walked[m->nwalked++] = dwarf_dieoffset(&cu);
	if (pmap_get(m, off, &p))
		return dwarf_offdie(cv->dbg, p, out) != NULL;
	return 0;
}

static int
ref_die(Dwarf_Die *die, int name, Dwarf_Die *out)
{
	Dwarf_Attribute a;

	return dwarf_attr(die, name, &a) != NULL &&
	    dwarf_formref_die(&a, out) != NULL;
}

/*
 * LLVM's GetParentDeclContextDIE.  Both references of a DIE are tried, so
 * a cycle of them would cost 2^depth calls: *calls bounds a search.
 */
static int
decl_ctx(struct cvt *cv, Dwarf_Die *die, Dwarf_Die *out, unsigned depth,
    unsigned *calls)
{
	Dwarf_Die ref, parent;

	if (depth > 32 || *calls == 0)
		return 0;
	--*calls;
	if (ref_die(die, DW_AT_specification, &ref) &&
	    decl_ctx(cv, &ref, out, depth + 1, calls))
		return 1;
	if (ref_die(die, DW_AT_abstract_origin, &ref) &&
	    decl_ctx(cv, &ref, out, depth + 1, calls))
		return 1;
	if (dwarf_tag(die) == DW_TAG_inlined_subroutine)
		return 0;
	if (!die_parent(cv, die, &parent))
		return 0;
	switch (dwarf_tag(&parent)) {
	case DW_TAG_namespace:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
	case DW_TAG_subprogram:
		*out = parent;
		return 1;
	case DW_TAG_lexical_block:
		return decl_ctx(cv, &parent, out, depth + 1, calls);
	default:
		return 0;
	}
}

static const char *
die_str(Dwarf_Die *die, int name)
{
	Dwarf_Attribute a;

	if (dwarf_attr_integrate(die, name, &a) == NULL)
		return NULL;
	return dwarf_formstring(&a);
}

static int
qualifies(int lang)
{
	switch (lang) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
	case DW_LANG_ObjC_plus_plus:
	case DW_LANG_C:
		return 1;
	default:
		return 0;
	}
}

/* Calls of decl_ctx() for one context: far more than a sound chain of
 * references and lexical blocks takes. */
#define DECL_CALLS	256

/* @return the name's string id, or 0 for a DIE without a name. */
static uint32_t
die_name(struct cvt *cv, Dwarf_Die *die)
{
	const char *s = die_str(die, DW_AT_linkage_name);
	char *q = NULL, *nq;
	size_t qlen;
	Dwarf_Die ctx, next;
	uint32_t id;
	unsigned hops = 0, calls = DECL_CALLS;

	if (s == NULL || *s == '\0')
		s = die_str(die, DW_AT_MIPS_linkage_name);
	if (s != NULL && *s != '\0')
		goto plain;
	if ((s = die_str(die, DW_AT_name)) == NULL || *s == '\0')
		return 0;
	if (!qualifies(cv->lang))
		goto plain;
	if (strncmp(s, "_Z", 2) == 0 && (strstr(s, ".isra.") ||
	    strstr(s, ".part.")))
		goto plain;
	if (!decl_ctx(cv, die, &ctx, 0, &calls))
		goto plain;
	qlen = strlen(s);
	if ((q = malloc(qlen + 1)) == NULL)
		goto nomem;
	memcpy(q, s, qlen + 1);
	do {
		const char *p = die_str(&ctx, DW_AT_name);
		size_t plen;

		if (p != NULL && *p != '\0') {
			int lambda;

			plen = strlen(p);
			lambda = p[0] == '<' && p[plen - 1] == '>' && plen >= 2;
			if ((nq = malloc(plen + 2 + qlen + 1)) == NULL)
				goto nomem;
			if (lambda) {
				nq[0] = '{';
				memcpy(nq + 1, p + 1, plen - 2);
				nq[plen - 1] = '}';
			} else {
				memcpy(nq, p, plen);
			}
			memcpy(nq + plen, "::", 2);
			memcpy(nq + plen + 2, q, qlen + 1);
			free(q);
			q = nq;
			qlen += plen + 2;
		}
		calls = DECL_CALLS;
		if (!decl_ctx(cv, &ctx, &next, 0, &calls))
			break;
		ctx = next;
	} while (++hops < 64);
	id = em_str(cv, q, qlen, 1);
	free(q);
	if (id == UINT32_MAX)
		cv->err = -ENOMEM;
	return id == UINT32_MAX ? 0 : id;
plain:
	id = em_str(cv, s, strlen(s), 0);
	if (id == UINT32_MAX) {
		cv->err = -ENOMEM;
		return 0;
	}
	return id;
nomem:
	free(q);
	cv->err = -ENOMEM;
	return 0;
}

/*
 * The name of an inlined subroutine: that of its abstract origin, which
 * the same unit inlines again and again; remembered per unit.
 */
static uint32_t
origin_name(struct cvt *cv, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die origin;
	uint64_t v;
	uint32_t id;

	if (dwarf_attr(die, DW_AT_abstract_origin, &a) == NULL ||
	    dwarf_formref_die(&a, &origin) == NULL)
		return die_name(cv, die);
	if (pmap_get(cv->names, dwarf_dieoffset(&origin), &v))
		return (uint32_t)(v - 1);
	id = die_name(cv, die);
	if (pmap_put(cv->names, dwarf_dieoffset(&origin), (uint64_t)id + 1) < 0)
		cv->err = -ENOMEM;
	return id;
}

/* ---- ranges ---- */

struct ranges {
	uint64_t	*r;		/* {start, end} pairs */
	size_t		 n, cap;
};

/* The DIE's ranges in DWARF order (LLVM's getAddressRanges). */
static int
die_ranges(Dwarf_Die *die, struct ranges *out)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	out->n = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (array_grow(&out->r, &out->cap, 2 * (out->n + 1),
		    sizeof(*out->r)) < 0)
			return -ENOMEM;
		out->r[2 * out->n] = lo;
		out->r[2 * out->n + 1] = hi;
		out->n++;
	}
	return 0;
}

/* LLVM's AddressRanges::contains(range). */
static int
rset_contains(const uint64_t *r, size_t n, uint64_t start, uint64_t end)
{
	size_t i, k = 0;

	for (i = 0; i < n && r[2 * i] <= start; i++)
		k = i + 1;
	return k > 0 && end <= r[2 * (k - 1) + 1];
}

/* ---- inline trees ---- */

/* Whether an inlined subroutine lies below the unit's DIE i, nested
 * subprograms aside. */
static int
has_inline(struct cvt *cv, size_t i)
{
	const struct dwscan *sc = &cv->scan;
	size_t j = i + 1, end = sc->dies[i].next;

	while (j < end) {
		uint32_t tag = dwscan_tag(sc, j);

		if (step(cv) < 0)
			return 0;
		if (tag == DW_TAG_inlined_subroutine)
			return 1;
		j = tag == DW_TAG_subprogram ? sc->dies[j].next : j + 1;
	}
	return 0;
}

struct inode {
	struct gsym_inline	 g;	/* g.children points at kids */
	struct gsym_inline	*kids;
	size_t			 capkids;
};

static void
inline_free(struct gsym_inline *n)
{
	size_t i;

	for (i = 0; i < n->nchildren; i++)
		inline_free((struct gsym_inline *)&n->children[i]);
	free((void *)n->children);
	free((void *)n->ranges);
}

/* Walk the children of the unit's DIE i with parse_inline(). */
static void
parse_children(struct cvt *cv, size_t i, unsigned depth,
    struct gsym_inline *parent, size_t *capkids);

/* LLVM 19's parseInlineInfo: inlined subroutines at or below the unit's
 * DIE k become children of parent. */
static void
parse_inline(struct cvt *cv, size_t k, unsigned depth,
    struct gsym_inline *parent, size_t *capkids)
{
	uint32_t tag = dwscan_tag(&cv->scan, k);
	Dwarf_Die die;

	if (depth > DEPTH_MAX || cv->err)
		return;
	if (tag == DW_TAG_inlined_subroutine) {
		struct gsym_inline ii = { 0 };
		struct ranges rs = { 0 };
		uint64_t *r = NULL;
		size_t nr = 0, i, ckids = 0;
		Dwarf_Word cf = 0, cl = 0;
		uint32_t gf;
		struct gsym_inline *nk;

		if (mkdie(cv, k, &die) < 0)
			return;
		if (die_ranges(&die, &rs) < 0)
			goto nomem;
		if (rs.n > 0 && (r = malloc(rs.n * 2 * sizeof(*r))) == NULL) {
			free(rs.r);
			goto nomem;
		}
		for (i = 0; i < rs.n; i++)
			if (rset_contains(parent->ranges, parent->nranges,
			    rs.r[2 * i], rs.r[2 * i + 1]))
				nr = gsym_ranges_insert(r, nr, rs.r[2 * i],
				    rs.r[2 * i + 1]);
		free(rs.r);
		if (nr == 0) {
			free(r);
			return;
		}
		(void)attr_udata(&die, DW_AT_call_file, 1, &cf);
		(void)attr_udata(&die, DW_AT_call_line, 0, &cl);
		if (!file_id(cv, cf, &gf)) {
			free(r);
			return;
		}
		ii.ranges = r;
		ii.nranges = nr;
		ii.name = origin_name(cv, &die);
		ii.call_file = gf;
		ii.call_line = (uint32_t)cl;
		parse_children(cv, k, depth, &ii, &ckids);
		if (array_grow(&parent->children, capkids,
		    parent->nchildren + 1, sizeof(*parent->children)) < 0) {
			inline_free(&ii);
			goto nomem;
		}
		nk = (struct gsym_inline *)parent->children;
		nk[parent->nchildren++] = ii;
		return;
	}
	if ((tag == DW_TAG_subprogram && depth == 0) ||
	    tag == DW_TAG_lexical_block)
		parse_children(cv, k, depth, parent, capkids);
	return;
nomem:
	cv->err = -ENOMEM;
}

static void
parse_children(struct cvt *cv, size_t i, unsigned depth,
    struct gsym_inline *parent, size_t *capkids)
{
	size_t j = i + 1, end = cv->scan.dies[i].next;

	while (j < end && !cv->err) {
		if (step(cv) < 0)
			return;
		parse_inline(cv, j, depth + 1, parent, capkids);
		j = cv->scan.dies[j].next;
	}
}

/* ---- functions ---- */

/* The unit's DIE k, a subprogram. */
static void
subprogram(struct cvt *cv, size_t k, struct ranges *rs)
{
	uint64_t highest = cv->addr_size == 4 ? UINT32_MAX : UINT64_MAX;
	uint32_t name;
	size_t i;
	int inl = -1;
	Dwarf_Die d, *die = &d;

	/* No DW_AT_low_pc, DW_AT_high_pc or DW_AT_ranges: dwarf_ranges()
	 * finds none (it reads the DIE's own attributes), a declaration. */
	if (!(cv->scan.abbrevs[cv->scan.dies[k].abbrev].has & DWSCAN_PC))
		return;
	if (mkdie(cv, k, die) < 0)
		return;
	if (die_ranges(die, rs) < 0) {
		cv->err = -ENOMEM;
		return;
	}
	if (rs->n == 0)
		return;
	if ((name = die_name(cv, die)) == 0)
		return;
	for (i = 0; i < rs->n && !cv->err; i++) {
		uint64_t lo = rs->r[2 * i], hi = rs->r[2 * i + 1];
		struct gsym_inline top = { 0 };
		size_t nrows, capkids = 0;
		uint64_t fr[2];
		int rc;

		/* As LLVM: the first bad range ends the DIE's ranges. */
		if (lo >= hi || lo == highest ||
		    !gsym_builder_is_text(cv->b, lo))
			break;
		if (hi - lo > UINT32_MAX)
			break;
		nrows = function_rows(cv, die, lo, hi);
		if (inl < 0)
			inl = has_inline(cv, k);
		if (inl) {
			fr[0] = lo;
			fr[1] = hi;
			top.ranges = fr;
			top.nranges = 1;
			top.name = name;
			parse_inline(cv, k, 0, &top, &capkids);
		}
		rc = em_add(cv, lo, hi, name, cv->rows, nrows,
		    top.nchildren > 0 ? &top : NULL);
		top.ranges = NULL;
		inline_free(&top);
		if (rc == -ENOMEM)
			cv->err = rc;
		else if (rc == 0)
			cv->dwarf_funcs++;
	}
}

/* Convert one compile or partial unit.  @return cv->err. */
static int
convert_unit(struct cvt *cv, Dwarf_Die *cudie, struct ranges *rs)
{
	size_t i;
	Dwarf_Word stmt;
	Dwarf_Attribute a;
	uint8_t asize = 8;
	struct dwscan_unit u = { 0 };
	int rc;

	if (cv->err)
		return cv->err;
	if (cancelled(cv))
		return cv->err = -ECANCELED;
	pmap_clear(cv->pm);
	pmap_clear(cv->names);
	memset(cv->abbr, 0, sizeof(cv->abbr));
	if (unit_header(cudie, &u) < 0)
		return cv->err = -ENOEXEC;
	cv->unit_off = u.unit_off;
	cv->unit_end = u.end;
	/* The unit's bytes as libdw holds them (the unit DIE lies die_off
	 * into the section; dwarf_next_unit() checked the unit's end
	 * against the section's): the scan reads what libdw reads. */
	cv->unit_cu = cudie->cu;
	cv->unit_base = (const unsigned char *)cudie->addr -
	    (u.die_off - u.unit_off);
	cv->steps = STEPS_PER_BYTE * (uint64_t)(u.end - u.die_off);
	u.info = cv->unit_base - u.unit_off;
	u.info_len = u.end;
	u.abbrev = cv->abbrev.p;
	u.abbrev_len = cv->abbrev.len;
	u.big = cv->big;
	u.depth_max = DEPTH_MAX;
	u.cancel = cv->cancel;
	if ((rc = dwscan_unit(&cv->scan, &u)) < 0)
		return cv->err = rc;
	if (cv->scan.ndies == 0)
		return 0;
	cv->lang = dwarf_srclang(cudie);
	cv->comp_dir = NULL;
	if (dwarf_attr(cudie, DW_AT_comp_dir, &a) != NULL)
		cv->comp_dir = dwarf_formstring(&a);
	if (dwarf_diecu(cudie, cudie, &asize, NULL) != NULL)
		cv->addr_size = asize;
	cv->lt.ok = 0;
	if (dwarf_attr(cudie, DW_AT_stmt_list, &a) != NULL &&
	    dwarf_formudata(&a, &stmt) == 0)
		if (parse_lines(cv, stmt) == -ENOMEM)
			cv->err = -ENOMEM;
	/* The subprograms in the order LLVM's walk meets them. */
	for (i = 0; i < cv->scan.ndies && walk_end(cv) == 0; i++)
		if (dwscan_tag(&cv->scan, i) == DW_TAG_subprogram)
			subprogram(cv, i, rs);
	return cv->err;
}

static int
convert_dwarf(struct cvt *cv)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	struct ranges rs = { 0 };

	while (!cv->err && dwarf_get_units(cv->dbg, cu, &next, &version,
	    &unit_type, &cudie, &subdie) == 0) {
		cu = next;
		if (unit_type == DW_UT_compile || unit_type == DW_UT_partial)
			(void)convert_unit(cv, &cudie, &rs);
	}
	free(rs.r);
	return cv->err;
}

/* ---- several threads: workers record units, the caller replays ---- */

/* How many units the workers may run ahead of the replay. */
#define WINDOW		64
#define THREADS_MAX	GSYM_THREADS_MAX

struct unitjob {
	struct oplog	 log;
	int		 done;
};

struct pool {
	pthread_mutex_t	 mu;
	pthread_cond_t	 cond;
	struct unitjob	*units;
	size_t		 nunits, next, replayed;
	int		 abort;
};

struct worker {
	struct pool	*pool;
	struct cvt	 cv;		/* its own Dwarf and scratch */
	struct pmap	 pm, names;
	pthread_t	 tid;
};

static void
cvt_free(struct cvt *cv)
{
	ltable_free(&cv->lt);
	free(cv->rows);
	free(cv->idx);
	dwscan_free(&cv->scan);
	if (cv->pm) {
		free(cv->pm->keys);
		free(cv->pm->vals);
		free(cv->pm->walked);
	}
	if (cv->names) {
		free(cv->names->keys);
		free(cv->names->vals);
		free(cv->names->walked);
	}
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->pool;
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	Dwarf_Die cudie, subdie;
	uint8_t type = 0;
	struct ranges rs = { 0 };
	size_t at = 0, k;
	int rc = 0;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->abort && p->next < p->nunits &&
		    p->next >= p->replayed + WINDOW)
			pthread_cond_wait(&p->cond, &p->mu);
		if (p->abort || p->next >= p->nunits) {
			pthread_mutex_unlock(&p->mu);
			break;
		}
		k = p->next++;
		pthread_mutex_unlock(&p->mu);
		/* Each worker claims units in increasing order. */
		while (rc == 0 && at <= k) {
			rc = dwarf_get_units(w->cv.dbg, cu, &next, &version,
			    &type, &cudie, &subdie);
			cu = next;
			at++;
		}
		w->cv.log = &p->units[k].log;
		if (rc == 0 && (type == DW_UT_compile ||
		    type == DW_UT_partial))
			w->cv.log->err = convert_unit(&w->cv, &cudie, &rs);
		pthread_mutex_lock(&p->mu);
		p->units[k].done = 1;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->mu);
	}
	free(rs.r);
	return NULL;
}

/* Local ids of a unit's log -> the builder's. */
struct replay {
	uint32_t	*str, *file;	/* [local id] = the builder's */
	size_t		 capstr, capfile;
	uint32_t	 nstr, nfile;	/* local ids replayed so far */
	struct gsym_row	*rows;
	size_t		 caprows;
};

static int
take(const struct oplog *l, size_t *at, void *out, size_t len)
{
	if (len == 0)
		return 0;	/* out may be NULL then */
	if (l->n - *at < len)
		return -EINVAL;
	memcpy(out, l->p + *at, len);
	*at += len;
	return 0;
}

#define TAKE(l, at, v)	take((l), (at), &(v), sizeof(v))

/* The builder's id of a local one replayed already; 0 for none. */
static uint32_t
map_id(const uint32_t *map, uint32_t local, uint32_t replayed)
{
	return local == 0 || local > replayed ? 0 : map[local];
}

static int
replay_inline(const struct oplog *l, size_t *at, const struct replay *rp,
    struct gsym_inline *n, unsigned depth)
{
	uint64_t nr, nk, *r = NULL;
	struct gsym_inline *kids = NULL;
	size_t i;

	memset(n, 0, sizeof(*n));
	if (depth > 512 || TAKE(l, at, nr) < 0 || nr > l->n / 16)
		return -EINVAL;
	if (nr > 0 && (r = malloc(nr * 2 * sizeof(*r))) == NULL)
		return -ENOMEM;
	n->ranges = r;
	n->nranges = nr;
	if (take(l, at, r, nr * 2 * sizeof(*r)) < 0 ||
	    TAKE(l, at, n->name) < 0 || TAKE(l, at, n->call_file) < 0 ||
	    TAKE(l, at, n->call_line) < 0 || TAKE(l, at, nk) < 0 ||
	    nk > l->n)
		return -EINVAL;
	n->name = map_id(rp->str, n->name, rp->nstr);
	n->call_file = map_id(rp->file, n->call_file, rp->nfile);
	if (nk > 0 && (kids = calloc(nk, sizeof(*kids))) == NULL)
		return -ENOMEM;
	n->children = kids;
	for (i = 0; i < nk; i++) {
		int rc = replay_inline(l, at, rp, &kids[i], depth + 1);

		n->nchildren = i + 1;
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Make the calls a unit's log recorded.  @return 0; -ENOMEM; -EINVAL
 * for a log this file did not write. */
static int
replay(struct cvt *cv, struct replay *rp, const struct oplog *l)
{
	size_t at = 0, i;

	rp->nstr = rp->nfile = 0;
	if (array_grow(&rp->str, &rp->capstr, (size_t)l->nstr + 1,
	    sizeof(*rp->str)) < 0 || array_grow(&rp->file, &rp->capfile,
	    (size_t)l->nfile + 1, sizeof(*rp->file)) < 0)
		return -ENOMEM;
	while (at < l->n) {
		unsigned char op = l->p[at++], has;
		uint64_t len, lo, hi, nrows;
		const char *s;
		uint32_t id, name;
		struct gsym_inline top;
		int rc;

		switch (op) {
		case OP_STR:
		case OP_STRCOPY:
			if (TAKE(l, &at, len) < 0)
				return -EINVAL;
			if (op == OP_STRCOPY) {
				if (l->n - at < len)
					return -EINVAL;
				s = (const char *)l->p + at;
				at += len;
			} else if (TAKE(l, &at, s) < 0) {
				return -EINVAL;
			}
			if ((id = gsym_builder_str(cv->b, s, len,
			    op == OP_STRCOPY)) == UINT32_MAX)
				return -ENOMEM;
			rp->str[++rp->nstr] = id;
			break;
		case OP_FILE:
			s = (const char *)l->p + at;
			at += strnlen(s, l->n - at) + 1;
			if ((id = gsym_builder_file(cv->b, s)) == 0)
				return -ENOMEM;
			rp->file[++rp->nfile] = id;
			break;
		case OP_ADD:
			if (TAKE(l, &at, lo) < 0 || TAKE(l, &at, hi) < 0 ||
			    TAKE(l, &at, name) < 0 || TAKE(l, &at, nrows) < 0 ||
			    nrows > l->n)
				return -EINVAL;
			if (array_grow(&rp->rows, &rp->caprows, nrows,
			    sizeof(*rp->rows)) < 0)
				return -ENOMEM;
			if (take(l, &at, rp->rows, nrows *
			    sizeof(*rp->rows)) < 0 || TAKE(l, &at, has) < 0)
				return -EINVAL;
			for (i = 0; i < nrows; i++)
				rp->rows[i].file = map_id(rp->file,
				    rp->rows[i].file, rp->nfile);
			rc = 0;
			if (has)
				rc = replay_inline(l, &at, rp, &top, 0);
			if (rc == 0)
				rc = gsym_builder_add(cv->b, lo, hi,
				    map_id(rp->str, name, rp->nstr), rp->rows, nrows,
				    has ? &top : NULL);
			if (has)
				inline_free(&top);
			if (rc == -ENOMEM)
				return rc;
			if (rc == 0)
				cv->dwarf_funcs++;
			break;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * convert_dwarf() on n threads, each with its own Dwarf (dbgs[i], all
 * over cv->elf, whose sections the first dwarf_begin_elf() inflated).
 */
static int
convert_threads(struct cvt *cv, Dwarf **dbgs, unsigned n)
{
	struct pool p = { 0 };
	struct worker *w;
	struct replay rp = { 0 };
	Dwarf_CU *cu = NULL, *next;
	size_t k;
	unsigned i, started = 0;
	int rc = 0;

	while (dwarf_get_units(cv->dbg, cu, &next, NULL, NULL, NULL,
	    NULL) == 0) {
		cu = next;
		p.nunits++;
	}
	if (p.nunits == 0)
		return 0;
	if ((p.units = calloc(p.nunits, sizeof(*p.units))) == NULL ||
	    (w = calloc(n, sizeof(*w))) == NULL) {
		free(p.units);
		return -ENOMEM;
	}
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cond, NULL);
	for (i = 0; i < n; i++) {
		/* What the workers share, read-only; the rest is theirs
		 * (calloc: empty). */
		w[i].pool = &p;
		w[i].cv.elf = cv->elf;
		w[i].cv.dbg = dbgs[i];
		w[i].cv.b = cv->b;
		w[i].cv.big = cv->big;
		w[i].cv.line = cv->line;
		w[i].cv.line_str = cv->line_str;
		w[i].cv.str = cv->str;
		w[i].cv.abbrev = cv->abbrev;
		w[i].cv.addr_size = cv->addr_size;
		w[i].cv.pm = &w[i].pm;
		w[i].cv.names = &w[i].names;
		w[i].cv.cancel = cv->cancel;
		if (pthread_create(&w[i].tid, NULL, work, &w[i]) != 0)
			break;
		started++;
	}
	if (started == 0) {
		rc = convert_dwarf(cv);
		goto out;
	}
	for (k = 0; k < p.nunits && rc == 0; k++) {
		pthread_mutex_lock(&p.mu);
		while (!p.units[k].done)
			pthread_cond_wait(&p.cond, &p.mu);
		pthread_mutex_unlock(&p.mu);
		if ((rc = p.units[k].log.err) == 0)
			rc = replay(cv, &rp, &p.units[k].log);
		free(p.units[k].log.p);
		p.units[k].log.p = NULL;
		pthread_mutex_lock(&p.mu);
		p.replayed++;
		pthread_cond_broadcast(&p.cond);
		pthread_mutex_unlock(&p.mu);
	}
out:
	pthread_mutex_lock(&p.mu);
	p.abort = 1;
	pthread_cond_broadcast(&p.cond);
	pthread_mutex_unlock(&p.mu);
	for (i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	for (i = 0; i < n; i++)
		cvt_free(&w[i].cv);
	for (k = 0; k < p.nunits; k++)
		free(p.units[k].log.p);
	pthread_cond_destroy(&p.cond);
	pthread_mutex_destroy(&p.mu);
	free(p.units);
	free(w);
	free(rp.str);
	free(rp.file);
	free(rp.rows);
	return rc;
}

/* ---- the symbol table and the file ---- */

static int
convert_symtab(struct cvt *cv, size_t *count)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(cv->elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB ||
		    sh.sh_entsize == 0 || (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		n = d->d_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			uint32_t id;
			int rc;

			if (gelf_getsym(d, (int)i, &sym) == NULL ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !gsym_builder_is_text(cv->b, sym.st_value) ||
			    sym.st_size > UINT32_MAX)
				continue;
			name = elf_strptr(cv->elf, sh.sh_link, sym.st_name);
			if (name == NULL || *name == '\0')
				continue;
			if ((id = gsym_builder_str(cv->b, name, strlen(name),
			    0)) == UINT32_MAX)
				return -ENOMEM;
			rc = gsym_builder_add(cv->b, sym.st_value,
			    sym.st_value + sym.st_size, id, NULL, 0, NULL);
			if (rc == -ENOMEM)
				return rc;
			if (rc == 0)
				(*count)++;
		}
	}
	return 0;
}

/* The data of the first section called name: decompressed when inflate
 * is set, else left empty when compressed (Go never compresses its
 * table, and one flagged so is not worth inflating). */
static void
find_sect(Elf *elf, size_t shstrndx, const char *name, int inflate,
    struct dwline_sect *out)
{
	Elf_Scn *scn = NULL;

	out->p = NULL;
	out->len = 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *n;
		Elf_Data *d;
		int gnu;

		/* As libdw finds a DWARF section (check_section()): not in
		 * a group, and .zdebug_X for .debug_X (GNU compression). */
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_GROUP) ||
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) == NULL)
			continue;
		gnu = strncmp(name, ".debug_", 7) == 0 &&
		    strncmp(n, ".zdebug_", 8) == 0 &&
		    strcmp(n + 2, name + 1) == 0;
		if (!gnu && strcmp(n, name) != 0)
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) &&
		    (!inflate || elf_compress(scn, 0, 0) < 0))
			return;
		if ((d = elf_getdata(scn, NULL)) == NULL || d->d_buf == NULL)
			return;
		/* libdw inflated it in place already, unless it did not
		 * open this Elf. */
		if (gnu && d->d_size >= 12 && memcmp(d->d_buf, "ZLIB", 4) == 0) {
			if (!inflate || elf_compress_gnu(scn, 0, 0) < 0 ||
			    (d = elf_getdata(scn, NULL)) == NULL ||
			    d->d_buf == NULL)
				return;
		}
		out->p = d->d_buf;
		out->len = d->d_size;
		return;
	}
}

/* ---- Go: .gopclntab (doc/gsym.md, "Go: .gopclntab") ---- */

/* One function's rows, gathered in cv->rows. */
struct gorows {
	struct cvt	*cv;
	size_t		 n;
	const char	*file;		/* the last file met, and its id */
	uint32_t	 fileid;
};

static int
go_row(void *ctx, const struct gopclntab_row *r)
{
	struct gorows *g = ctx;
	struct cvt *cv = g->cv;
	struct gsym_row *last = g->n > 0 ? &cv->rows[g->n - 1] : NULL;

	/* Pcs without a file or line (only in a corrupt table) stay with
	 * the row before. */
	if (r->file == NULL || r->line < 0)
		return 0;
	if (r->file != g->file) {
		if ((g->fileid = gsym_builder_file(cv->b, r->file)) == 0)
			return -ENOMEM;
		g->file = r->file;
	}
	/* As the DWARF rows: equal neighbours collapse to the first. */
	if (last != NULL && last->file == g->fileid &&
	    last->line == (uint32_t)r->line)
		return 0;
	if (push_row(cv, &g->n, r->addr, g->fileid, (uint32_t)r->line) < 0)
		return -ENOMEM;
	return 0;
}

/* The address of runtime.text from .symtab, else that of .text: the
 * base of a Go 1.18+ table whose header holds 0 there (a PIE). */
static uint64_t
go_text(Elf *elf, size_t shstrndx)
{
	Elf_Scn *scn = NULL;
	uint64_t text = 0;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *n;
		Elf_Data *d;
		size_t i;

		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if ((n = elf_strptr(elf, shstrndx, sh.sh_name)) != NULL &&
		    strcmp(n, ".text") == 0 && text == 0)
			text = sh.sh_addr;
		if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0 ||
		    (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		for (i = 0; i < d->d_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(d, (int)i, &sym) != NULL &&
			    (n = elf_strptr(elf, sh.sh_link, sym.st_name)) !=
			    NULL && strcmp(n, "runtime.text") == 0)
				return sym.st_value;
		}
	}
	return text;
}

static int
has_start(const uint64_t *s, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && s[lo] == addr;
}

/*
 * Add the functions of .gopclntab that DWARF did not give (all of them
 * for a Go program built with -ldflags=-w), with their line rows; called
 * after the DWARF, before .symtab.  A section that is no Go 1.16+ table
 * adds nothing.
 * @return 0; -ENOEXEC for a table whose walk passes its work budget;
 *         -ECANCELED; -ENOMEM.
 */
static int
convert_go(struct cvt *cv, size_t *count)
{
	struct dwline_sect s;
	struct gopclntab t;
	struct gopclntab_func f;
	struct gorows g = { cv, 0, NULL, 0 };
	uint64_t *starts = NULL;
	size_t nstarts, shstrndx;
	uint32_t i, name;
	int rc;

	if (elf_getshdrstrndx(cv->elf, &shstrndx) != 0)
		return 0;
	/* A PIE linked by Go itself (up to Go 1.25) has it in RELRO. */
	find_sect(cv->elf, shstrndx, ".gopclntab", 0, &s);
	if (s.p == NULL)
		find_sect(cv->elf, shstrndx, ".data.rel.ro.gopclntab", 0,
		    &s);
	if (s.p == NULL || gopclntab_open(s.p, s.len,
	    go_text(cv->elf, shstrndx), &t) < 0)
		return 0;
	if ((rc = gsym_builder_starts(cv->b, &starts, &nstarts)) < 0)
		return rc;
	for (i = 0; i < t.nfunc; i++) {
		if (i % 256 == 0 && cancelled(cv)) {
			rc = -ECANCELED;
			goto out;
		}
		g.n = 0;
		if ((rc = gopclntab_func(&t, i, &f, go_row, &g)) == -EINVAL)
			continue;	/* this record alone is corrupt */
		if (rc < 0)
			goto out;
		/* DWARF wins: its names are whole, and it has the inlined
		 * calls. */
		if (has_start(starts, nstarts, f.entry) ||
		    !gsym_builder_is_text(cv->b, f.entry) || f.namelen == 0)
			continue;
		/* The name stays valid in the Elf's data until elf_end(),
		 * after the builder is freed. */
		if ((name = gsym_builder_str(cv->b, f.name, f.namelen, 0)) ==
		    UINT32_MAX) {
			rc = -ENOMEM;
			goto out;
		}
		rc = gsym_builder_add(cv->b, f.entry, f.end, name, cv->rows,
		    g.n, NULL);
		if (rc == -ENOMEM)
			goto out;
		if (rc == 0)
			(*count)++;
	}
	rc = 0;
out:
	free(starts);
	return rc;
}

int
gsym_dwarf_convert(int fd, unsigned threads, gsym_sink_fn sink, void *ctx,
    struct gsym_convert_stats *st)
{
	struct gsym_convert_opts o = { threads, NULL };

	return gsym_dwarf_convert_opts(fd, &o, sink, ctx, st);
}

int
gsym_dwarf_convert_opts(int fd, const struct gsym_convert_opts *opts,
    gsym_sink_fn sink, void *ctx, struct gsym_convert_stats *st)
{
	struct cvt cv = { 0 };
	unsigned threads = opts != NULL ? opts->threads : 0;
	Dwarf *dbgs[THREADS_MAX] = { NULL };
	struct dwimage *im = NULL;
	Elf *delf;
	unsigned ndbg = 0;
	struct pmap pm = { 0 }, names = { 0 };
	struct elfinfo ei;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t shstrndx, nph, i, nsym = 0, ngo = 0, nout = 0;
	int64_t wrote;
	int rc;

	if (st)
		memset(st, 0, sizeof(*st));
	if ((rc = elfinfo_read(fd, &ei)) < 0)
		return rc;
	if ((cv.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL ||
	    elf_kind(cv.elf) != ELF_K_ELF || gelf_getehdr(cv.elf, &eh) ==
	    NULL || elf_getshdrstrndx(cv.elf, &shstrndx) != 0) {
		rc = -ENOEXEC;
		goto out;
	}
	if ((rc = gsym_builder_create(&cv.b)) < 0)
		goto out;
	cv.big = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	cv.addr_size = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	gsym_builder_set_big_endian(cv.b, cv.big);
	gsym_builder_set_uuid(cv.b, ei.buildid, ei.buildid_len);
	if (elf_getphdrnum(cv.elf, &nph) == 0)
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(cv.elf, (int)i, &ph) != NULL &&
			    ph.p_type == PT_LOAD) {
				gsym_builder_set_base(cv.b, ph.p_vaddr);
				break;
			}
		}
	while ((scn = elf_nextscn(cv.elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) != NULL &&
		    (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size > 0 &&
		    (rc = gsym_builder_add_text(cv.b, sh.sh_addr,
		    sh.sh_addr + sh.sh_size)) < 0)
			goto out;
	}
	cv.pm = &pm;
	cv.names = &names;
	cv.cancel = opts != NULL && opts->cancel != NULL ? opts->cancel :
	    &never;
	if (threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		threads = n < 1 ? 1 : n > THREADS_MAX ? THREADS_MAX :
		    (unsigned)n;
	}
	if (threads > THREADS_MAX)
		threads = THREADS_MAX;
	/* Compressed sections are inflated into an image of their own;
	 * when libelf does it instead (dwimage_create() declines), the
	 * first Dwarf inflates them in the Elf and the others find them
	 * inflated. */
	delf = cv.elf;
	rc = dwimage_create(cv.elf, threads, &im);
	if (rc == -ENOMEM || rc == -ENOEXEC)
		goto out;
	if (rc == 0 && (delf = dwimage_elf(im)) != cv.elf &&
	    elf_getshdrstrndx(delf, &shstrndx) != 0) {
		rc = -ENOEXEC;
		goto out;
	}
	while (ndbg < threads && (dbgs[ndbg] = dwarf_begin_elf(delf,
	    DWARF_C_READ, NULL)) != NULL)
		ndbg++;
	/* libdw looks for a dwz file (.gnu_debugaltlink) the first time a
	 * unit refers to it, reading the Elf the Dwarfs share: look now,
	 * before the threads start, and it never looks again. */
	for (i = 0; ndbg > 1 && i < ndbg; i++)
		(void)dwarf_getalt(dbgs[i]);
	if ((cv.dbg = dbgs[0]) != NULL) {
		find_sect(delf, shstrndx, ".debug_abbrev", 1, &cv.abbrev);
		find_sect(delf, shstrndx, ".debug_line", 1, &cv.line);
		find_sect(delf, shstrndx, ".debug_line_str", 1, &cv.line_str);
		find_sect(delf, shstrndx, ".debug_str", 1, &cv.str);
		rc = ndbg > 1 ? convert_threads(&cv, dbgs, ndbg) :
		    convert_dwarf(&cv);
		if (rc < 0)
			goto out;
	}
	if (cancelled(&cv)) {
		rc = -ECANCELED;
		goto out;
	}
	if ((rc = convert_go(&cv, &ngo)) < 0 ||
	    (rc = convert_symtab(&cv, &nsym)) < 0)
		goto out;
	if (gsym_builder_count(cv.b) == 0) {
		rc = -ENODATA;
		goto out;
	}
	if ((wrote = gsym_builder_write(cv.b, sink, ctx, &nout)) < 0) {
		rc = (int)wrote;
		goto out;
	}
	if (st) {
		st->dwarf_funcs = cv.dwarf_funcs;
		st->symtab_funcs = nsym;
		st->go_funcs = ngo;
		st->funcs = nout;
		st->bytes = (uint64_t)wrote;
	}
	rc = 0;
out:
	gsym_builder_free(cv.b);
	while (ndbg > 0)
		dwarf_end(dbgs[--ndbg]);
	dwimage_free(im);
	if (cv.elf)
		elf_end(cv.elf);
	cvt_free(&cv);
	return rc;
}

/*
 * dwscan: the DIEs of one DWARF unit, in one pass (dwscan.h).
 *
 * Forms and their sizes: DWARF 5, section 7.5.6, and the GNU forms of
 * split DWARF (DWARF 4 extension) and dwz (.gnu_debugaltlink).
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/rd.h"
#include "dwscan.h"

#ifndef DW_FORM_GNU_addr_index
#define DW_FORM_GNU_addr_index	0x1f01
#define DW_FORM_GNU_str_index	0x1f02
#define DW_FORM_GNU_ref_alt	0x1f20
#define DW_FORM_GNU_strp_alt	0x1f21
#endif

/* Forms of variable size, in their own class; a form's size otherwise. */
enum {
	SZ_ULEB = -1,	/* a LEB128 */
	SZ_STRING = -2,	/* NUL-terminated */
	SZ_BLOCK = -3,	/* ULEB128 length, then that many */
	SZ_BLOCK1 = -4,
	SZ_BLOCK2 = -5,
	SZ_BLOCK4 = -6,
	SZ_INDIRECT = -7,
	SZ_UNKNOWN = -8
};

static int
form_size(unsigned form, const struct dwscan_unit *u)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_ref_sup4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
		return 4;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return (int)u->addr_size;
	case DW_FORM_ref_addr:
		return u->version <= 2 ? (int)u->addr_size :
		    (int)u->offset_size;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return (int)u->offset_size;
	case DW_FORM_sdata:
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		return SZ_ULEB;
	case DW_FORM_string:
		return SZ_STRING;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		return SZ_BLOCK;
	case DW_FORM_block1:
		return SZ_BLOCK1;
	case DW_FORM_block2:
		return SZ_BLOCK2;
	case DW_FORM_block4:
		return SZ_BLOCK4;
	case DW_FORM_indirect:
		return SZ_INDIRECT;
	default:
		return SZ_UNKNOWN;
	}
}

/* Skip one attribute value of form; r->bad when it is not there whole
 * or the form is unknown. */
static void
skip_form(struct rd *r, unsigned form, const struct dwscan_unit *u)
{
	int sz = form_size(form, u);

	if (sz == SZ_INDIRECT) {
		/* One hop, as libdw takes it. */
		form = (unsigned)rd_uleb(r);
		if (r->bad || form == DW_FORM_indirect ||
		    form == DW_FORM_implicit_const) {
			r->bad = 1;
			return;
		}
		sz = form_size(form, u);
	}
	if (sz >= 0) {
		rd_skip(r, (uint64_t)sz);
		return;
	}
	switch (sz) {
	case SZ_ULEB:
		(void)rd_uleb(r);
		break;
	case SZ_STRING:
		(void)rd_cstr(r);
		break;
	case SZ_BLOCK:
		rd_skip(r, rd_uleb(r));
		break;
	case SZ_BLOCK1:
		rd_skip(r, rd_fixed(r, 1));
		break;
	case SZ_BLOCK2:
		rd_skip(r, rd_fixed(r, 2));
		break;
	case SZ_BLOCK4:
		rd_skip(r, rd_fixed(r, 4));
		break;
	default:
		r->bad = 1;	/* unknown */
		break;
	}
}

/* DIEs (abbreviations) between two looks at the cancel flag. */
#define CANCEL_EVERY	65536

static int
cmp_code(const void *a, const void *b)
{
	const struct dwscan_abbrev *x = a, *y = b;

	/* Of two of one code, the first in the table comes first. */
	if (x->code != y->code)
		return x->code < y->code ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Decode the table of abbreviations at u->abbrev_off, unless it is the
 * one decoded last.  @return 0, -ENOEXEC, -ENOMEM. */
static int
read_abbrevs(struct dwscan *s, const struct dwscan_unit *u)
{
	struct rd r = { NULL, NULL, 0, u->big };
	uint64_t maxcode = 0;
	size_t i;

	/* The sizes of forms depend on the unit's header too. */
	if (s->table == u->abbrev && s->table_off == u->abbrev_off &&
	    s->table_version == u->version &&
	    s->table_addr_size == u->addr_size &&
	    s->table_offset_size == u->offset_size && s->nabbrevs > 0)
		return 0;
	s->table = NULL;
	s->nabbrevs = s->nforms = 0;
	if (u->abbrev == NULL || u->abbrev_off >= u->abbrev_len)
		return -ENOEXEC;
	r.p = u->abbrev + u->abbrev_off;
	r.end = u->abbrev + u->abbrev_len;
	for (;;) {
		struct dwscan_abbrev *a;
		uint64_t code, tag, attr, form;
		int64_t size = 0;

		/* A table that runs to the section's end without its 0 is
		 * taken, as libdw takes it. */
		if (r.p >= r.end)
			break;
		code = rd_uleb(&r);
		if (r.bad)
			return -ENOEXEC;
		if (code == 0)
			break;
		if (s->nabbrevs % CANCEL_EVERY == CANCEL_EVERY - 1 &&
		    u->cancel != NULL &&
		    __atomic_load_n(u->cancel, __ATOMIC_RELAXED))
			return -ECANCELED;
		tag = rd_uleb(&r);
		if (r.bad || tag > UINT32_MAX)
			return -ENOEXEC;
		if (array_grow(&s->abbrevs, &s->capabbrevs, s->nabbrevs + 1,
		    sizeof(*s->abbrevs)) < 0)
			return -ENOMEM;
		a = &s->abbrevs[s->nabbrevs];
		a->code = code;
		a->tag = (uint32_t)tag;
		a->children = rd_fixed(&r, 1) == DW_CHILDREN_yes;
		a->has = 0;
		a->bad = 0;
		a->first = (uint32_t)s->nforms;
		a->nforms = 0;
		for (;;) {
			int sz;

			attr = rd_uleb(&r);
			form = rd_uleb(&r);
			if (r.bad)
				return -ENOEXEC;
			if (attr == 0 && form == 0)
				break;
			/* Its value is in the table (an SLEB128, as long
			 * as the ULEB128 of the same bytes). */
			if (form == DW_FORM_implicit_const)
				(void)rd_uleb(&r);
			if (r.bad || s->nforms >= UINT32_MAX)
				return -ENOEXEC;
			/* A form libdw does not know either: an error for
			 * a DIE that uses the abbreviation, not before. */
			if (form > 0xffff || (sz = form_size((unsigned)form,
			    u)) == SZ_UNKNOWN) {
				a->bad = 1;
				form = 0;
				sz = SZ_UNKNOWN;
			}
			size = sz >= 0 && size >= 0 ? size + sz : -1;
			if (array_grow(&s->forms, &s->capforms, s->nforms + 1,
			    sizeof(*s->forms)) < 0)
				return -ENOMEM;
			s->forms[s->nforms++] = (uint16_t)form;
			a->nforms++;
			if (attr == DW_AT_low_pc || attr == DW_AT_high_pc ||
			    attr == DW_AT_ranges)
				a->has |= DWSCAN_PC;
		}
		a->fixed = !a->bad && size >= 0 && size <= INT32_MAX ?
		    (int32_t)size : -1;
		if (code > maxcode)
			maxcode = code;
		if (++s->nabbrevs >= UINT32_MAX)
			return -ENOEXEC;
	}
	/* Codes are 1, 2, 3... in what compilers write: a table by code.
	 * Sparse ones are looked up in the abbreviations sorted. */
	s->sorted = maxcode > 4 * (uint64_t)s->nabbrevs + 1024;
	if (s->sorted) {
		qsort(s->abbrevs, s->nabbrevs, sizeof(*s->abbrevs), cmp_code);
	} else {
		if (array_grow(&s->bycode, &s->capbycode, (size_t)maxcode + 1,
		    sizeof(*s->bycode)) < 0)
			return -ENOMEM;
		memset(s->bycode, 0, ((size_t)maxcode + 1) * sizeof(*s->bycode));
		s->nbycode = (size_t)maxcode + 1;
		/* The first of two abbreviations of one code counts. */
		for (i = s->nabbrevs; i-- > 0;)
			s->bycode[s->abbrevs[i].code] = (uint32_t)i + 1;
	}
	s->table = u->abbrev;
	s->table_off = u->abbrev_off;
	s->table_version = u->version;
	s->table_addr_size = u->addr_size;
	s->table_offset_size = u->offset_size;
	return 0;
}

/* The index of the abbreviation of code, or -1. */
static inline long
find_abbrev(const struct dwscan *s, uint64_t code)
{
	size_t lo = 0, hi = s->nabbrevs;

	if (!s->sorted)
		return code < s->nbycode ? (long)s->bycode[code] - 1 : -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->abbrevs[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nabbrevs && s->abbrevs[lo].code == code ? (long)lo : -1;
}

int
dwscan_unit(struct dwscan *s, const struct dwscan_unit *u)
{
	struct rd r = { NULL, NULL, 0, u->big };
	const unsigned char *base;
	uint32_t *open;			/* indices of the recorded DIEs whose
					 * children are being read, by level */
	size_t depth = 0, i;		/* levels open */
	uint64_t seen = 0;		/* DIEs read */
	int rc;

	s->ndies = 0;
	if (u->end > u->info_len || u->die_off > u->end ||
	    u->unit_off > u->die_off || u->end - u->unit_off > UINT32_MAX ||
	    u->addr_size == 0 || u->addr_size > 8 ||
	    (u->offset_size != 4 && u->offset_size != 8))
		return -ENOEXEC;
	if (u->die_off == u->end)
		return 0;			/* a header alone */
	if ((rc = read_abbrevs(s, u)) < 0)
		return rc;
	if (array_grow(&s->open, &s->capopen, (size_t)u->depth_max + 1,
	    sizeof(*s->open)) < 0)
		return -ENOMEM;
	open = s->open;
	base = u->info + u->unit_off;
	r.p = u->info + u->die_off;
	r.end = u->info + u->end;
	while (r.p < r.end) {
		const struct dwscan_abbrev *a;
		struct dwscan_die *d;
		uint32_t off = (uint32_t)(r.p - base);
		uint64_t code;
		long k;

		code = rd_uleb(&r);
		if (r.bad)
			goto bad;
		if (code == 0) {
			if (depth == 0)
				break;		/* a unit without DIEs */
			depth--;
			if (depth <= u->depth_max)
				s->dies[open[depth]].next = (uint32_t)s->ndies;
			if (depth == 0)
				break;		/* the end of the unit DIE's */
			continue;
		}
		if ((k = find_abbrev(s, code)) < 0 ||
		    s->abbrevs[k].bad || s->ndies >= UINT32_MAX - 1)
			goto bad;
		a = &s->abbrevs[k];
		if (a->fixed >= 0) {
			rd_skip(&r, (uint64_t)a->fixed);
		} else {
			for (i = 0; i < a->nforms && !r.bad; i++)
				skip_form(&r, s->forms[a->first + i], u);
		}
		if (r.bad)
			goto bad;
		/* Deeper than depth_max, DIEs are read past, not kept:
		 * they lie inside the subtree of the last one kept. */
		if (depth <= u->depth_max) {
			if (s->ndies == s->capdies && array_grow(&s->dies,
			    &s->capdies, s->ndies + 1, sizeof(*s->dies)) < 0) {
				rc = -ENOMEM;
				goto out;
			}
			d = &s->dies[s->ndies];
			d->off = off;
			d->abbrev = (uint32_t)k;
			d->parent = depth > 0 ? open[depth - 1] : UINT32_MAX;
			d->next = (uint32_t)s->ndies + 1;
			if (a->children)
				open[depth] = (uint32_t)s->ndies;
			s->ndies++;
		}
		if (a->children)
			depth++;
		if (depth == 0)
			break;			/* a unit DIE without children */
		if (++seen % CANCEL_EVERY == 0 && u->cancel != NULL &&
		    __atomic_load_n(u->cancel, __ATOMIC_RELAXED)) {
			rc = -ECANCELED;
			goto out;
		}
	}
	/* A unit DIE whose children end with the unit, as some producers
	 * write it, is taken; more open than that is not a tree. */
	if (depth > 1)
		goto bad;
	if (depth == 1)
		s->dies[open[0]].next = (uint32_t)s->ndies;
	rc = 0;
	goto out;
bad:
	rc = -ENOEXEC;
out:
	if (rc < 0)
		s->ndies = 0;
	return rc;
}

long
dwscan_find(const struct dwscan *s, uint32_t off)
{
	size_t lo = 0, hi = s->ndies;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->dies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->ndies && s->dies[lo].off == off ? (long)lo : -1;
}

void
dwscan_free(struct dwscan *s)
{
	free(s->dies);
	free(s->abbrevs);
	free(s->forms);
	free(s->bycode);
	free(s->open);
	memset(s, 0, sizeof(*s));
}

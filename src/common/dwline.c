/*
 * dwline: see dwline.h.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/rd.h"
#include "dwline.h"

const char *
dwline_str(const struct dwline_sect *s, uint64_t off)
{
	if (s->p == NULL || off >= s->len ||
	    memchr(s->p + off, 0, s->len - off) == NULL)
		return NULL;
	return (const char *)s->p + off;
}

static const char *
entry_form(const struct dwline_sects *s, struct rd *r, uint64_t form,
    size_t offsize, uint64_t *num)
{
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		return rd_cstr(r);
	case DW_FORM_line_strp:
		return dwline_str(&s->line_str, rd_fixed(r, offsize));
	case DW_FORM_strp:
		return dwline_str(&s->str, rd_fixed(r, offsize));
	case DW_FORM_udata:
		*num = rd_uleb(r);
		return NULL;
	case DW_FORM_data1:
		*num = rd_fixed(r, 1);
		return NULL;
	case DW_FORM_data2:
		*num = rd_fixed(r, 2);
		return NULL;
	case DW_FORM_data4:
		*num = rd_fixed(r, 4);
		return NULL;
	case DW_FORM_data8:
		*num = rd_fixed(r, 8);
		return NULL;
	case DW_FORM_data16:
		rd_skip(r, 16);
		return NULL;
	case DW_FORM_block:
		rd_skip(r, rd_uleb(r));
		return NULL;
	default:
		r->bad = 1;	/* strx needs the unit's str_offsets_base */
		return NULL;
	}
}

/* A DWARF 5 directory or file table. */
static int
v5_entries(const struct dwline_sects *s, struct rd *r, size_t offsize,
    struct dwline *t, int files)
{
	uint64_t fmt[2 * 16], n, i, k;
	unsigned nfmt = (unsigned)rd_fixed(r, 1);

	if (nfmt > 16)
		return -EINVAL;
	for (k = 0; k < nfmt; k++) {
		fmt[2 * k] = rd_uleb(r);
		fmt[2 * k + 1] = rd_uleb(r);
	}
	/* At most one entry a byte left: work bounded by the header. */
	n = rd_uleb(r);
	if (r->bad || n > (uint64_t)(r->end - r->p))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const char *path = NULL, *text = NULL;
		uint64_t dir = 0, num;

		for (k = 0; k < nfmt; k++) {
			const char *str = entry_form(s, r, fmt[2 * k + 1],
			    offsize, &num);

			if (fmt[2 * k] == DW_LNCT_path)
				path = str;
			else if (fmt[2 * k] == DW_LNCT_directory_index)
				dir = num;
			else if (fmt[2 * k] == DWLINE_LNCT_LLVM_SOURCE)
				text = str;
		}
		if (r->bad)
			return -EINVAL;
		if (files) {
			if (array_grow(&t->files, &t->capfiles,
			    t->nfiles + 1, sizeof(*t->files)) < 0)
				return -ENOMEM;
			t->files[t->nfiles].name = path;
			t->files[t->nfiles].source = text != NULL &&
			    *text != '\0' ? text : NULL;
			t->files[t->nfiles++].dir = dir;
		} else {
			if (array_grow(&t->dirs, &t->capdirs, t->ndirs + 1,
			    sizeof(*t->dirs)) < 0)
				return -ENOMEM;
			t->dirs[t->ndirs++] = path;
		}
	}
	return 0;
}

int
dwline_header(const struct dwline_sects *s, uint64_t off, struct dwline *t)
{
	struct rd	r = { 0 }, h;
	uint64_t	unit_len, hdr_len;
	size_t		offsize = 4;
	unsigned	i;
	int		rc;

	t->ndirs = t->nfiles = 0;
	if (s->line.p == NULL || off >= s->line.len)
		return -EINVAL;
	r.p = s->line.p + off;
	r.end = s->line.p + s->line.len;
	r.big = s->big;
	unit_len = rd_fixed(&r, 4);
	if (unit_len == 0xffffffffu) {
		offsize = 8;
		unit_len = rd_fixed(&r, 8);
	}
	if (r.bad || unit_len > (uint64_t)(r.end - r.p))
		return -EINVAL;
	r.end = r.p + unit_len;
	t->next = (uint64_t)(r.end - s->line.p);
	t->version = (int)rd_fixed(&r, 2);
	if (t->version < 2 || t->version > 5)
		return -EINVAL;
	if (t->version >= 5)	/* address and segment selector sizes: the
				 * set_address operand says the width */
		rd_skip(&r, 2);
	hdr_len = rd_fixed(&r, offsize);
	if (r.bad || hdr_len > (uint64_t)(r.end - r.p))
		return -EINVAL;
	h = r;
	h.end = r.p + hdr_len;
	t->prog = h.end;
	t->end = r.end;
	t->minlen = (unsigned)rd_fixed(&h, 1);
	if (t->version >= 4)
		(void)rd_fixed(&h, 1);	/* maximum_operations_per_instruction */
	(void)rd_fixed(&h, 1);	/* default_is_stmt */
	t->line_base = (int8_t)rd_fixed(&h, 1);
	t->line_range = (unsigned)rd_fixed(&h, 1);
	t->opbase = (unsigned)rd_fixed(&h, 1);
	memset(t->oplen, 0, sizeof(t->oplen));
	for (i = 1; i < t->opbase; i++)
		t->oplen[i] = (unsigned char)rd_fixed(&h, 1);
	if (h.bad || t->line_range == 0 || t->opbase == 0)
		return -EINVAL;
	if (t->version >= 5) {
		if ((rc = v5_entries(s, &h, offsize, t, 0)) < 0 ||
		    (rc = v5_entries(s, &h, offsize, t, 1)) < 0)
			return rc;
	} else {
		const char *str;

		while ((str = rd_cstr(&h)) != NULL && *str) {
			if (array_grow(&t->dirs, &t->capdirs,
			    t->ndirs + 1, sizeof(*t->dirs)) < 0)
				return -ENOMEM;
			t->dirs[t->ndirs++] = str;
		}
		while ((str = rd_cstr(&h)) != NULL && *str) {
			if (array_grow(&t->files, &t->capfiles,
			    t->nfiles + 1, sizeof(*t->files)) < 0)
				return -ENOMEM;
			t->files[t->nfiles].name = str;
			t->files[t->nfiles].source = NULL;
			t->files[t->nfiles++].dir = rd_uleb(&h);
			(void)rd_uleb(&h);
			(void)rd_uleb(&h);
		}
		if (h.bad)
			return -EINVAL;
	}
	return 0;
}

void
dwline_free(struct dwline *t)
{
	free(t->dirs);
	free(t->files);
	memset(t, 0, sizeof(*t));
}

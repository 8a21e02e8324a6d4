/* Fuzz the converter's DIE scanner (src/gsym/dwscan.c): any bytes as a
 * unit's .debug_info and its table in .debug_abbrev.  The first byte
 * chooses the header (version 2 to 5, address size 4 or 8, offset size 4
 * or 8, byte order), the next two the length of the table; the rest is
 * the unit's DIEs.  What a scan takes must be a tree: the first DIE the
 * root, every other one inside its parent's subtree (whose abbreviation
 * has children), a leaf's subtree itself alone, offsets ascending, each
 * found again by dwscan_find().  The input is scanned with two headers
 * in turn on one struct dwscan, whose table of abbreviations is cached,
 * and each result must be that of a fresh struct. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gsym/dwscan.h"

static void
check(const struct dwscan *s, size_t len)
{
	size_t i;

	for (i = 0; i < s->ndies; i++) {
		const struct dwscan_die *d = &s->dies[i];

		if (d->off >= len || d->abbrev >= s->nabbrevs ||
		    d->next <= i || d->next > s->ndies ||
		    (i == 0) != (d->parent == UINT32_MAX) ||
		    (i > 0 && (d->parent >= i || d->off <= s->dies[i - 1].off ||
		    d->next > s->dies[d->parent].next ||
		    !s->abbrevs[s->dies[d->parent].abbrev].children)) ||
		    (!s->abbrevs[d->abbrev].children && d->next != i + 1) ||
		    dwscan_find(s, d->off) != (long)i)
			abort();
	}
	if (s->ndies > 0 && s->dies[0].next != s->ndies)
		abort();
}

/* Scan u on s, and on a fresh struct: the same answer. */
static void
scan(struct dwscan *s, const struct dwscan_unit *u)
{
	struct dwscan f = { 0 };
	int rc = dwscan_unit(s, u), frc = dwscan_unit(&f, u);

	if (rc != frc || s->ndies != f.ndies || (s->ndies > 0 &&
	    memcmp(s->dies, f.dies, s->ndies * sizeof(*s->dies)) != 0))
		abort();
	if (rc == 0)
		check(s, u->info_len);
	else if ((rc != -ENOEXEC && rc != -ENOMEM) || s->ndies != 0)
		abort();
	dwscan_free(&f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwscan s = { 0 };
	struct dwscan_unit u = { 0 };
	size_t alen;

	if (size < 3)
		return 0;
	alen = (size_t)data[1] | (size_t)data[2] << 8;
	if (alen > size - 3)
		alen = size - 3;
	u.version = 2 + (data[0] & 3);
	u.addr_size = data[0] & 4 ? 4 : 8;
	u.offset_size = data[0] & 8 ? 8 : 4;
	u.big = (data[0] & 16) != 0;
	u.abbrev = data + 3;
	u.abbrev_len = alen;
	u.info = data + 3 + alen;
	u.info_len = size - 3 - alen;
	u.end = u.info_len;
	u.depth_max = 64;
	scan(&s, &u);
	/* Another header over the same table: its forms' sizes change. */
	u.addr_size = 12 - u.addr_size;
	u.offset_size = 12 - u.offset_size;
	u.version = 2 + ((u.version - 1) & 3);
	scan(&s, &u);
	dwscan_free(&s);
	return 0;
}

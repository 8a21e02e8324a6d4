/*
 * test_gsym_write: the GSYM writer's encodings, pruning and determinism,
 * read back with the reader.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/rd.h"
#include "gsym/gsym.h"
#include "gsym/gsym_write.h"
#include "tests/tap.h"

static int
bytes_eq(const unsigned char *got, int len, const char *want_hex)
{
	char hex[1024] = "";
	int i;

	for (i = 0; i < len && i < 500; i++)
		snprintf(hex + 2 * i, 3, "%02x", got[i]);
	if (strcmp(hex, want_hex) != 0) {
		printf("# got  %s\n# want %s\n", hex, want_hex);
		return 0;
	}
	return 1;
}

static void
test_lines(void)
{
	unsigned char out[256];
	struct gsym_row one[] = { { 0x1000, 1, 10 } };
	struct gsym_row two[] = { { 0x1000, 1, 10 }, { 0x1004, 1, 11 } };
	struct gsym_row outlier[] = { { 0x1000, 1, 10 }, { 0x1001, 1, 11 },
	    { 0x1002, 1, 12 }, { 0x1003, 1, 13 }, { 0x1004, 1, 100 } };
	struct gsym_row files[] = { { 0x1000, 2, 5 }, { 0x1400, 2, 3 } };
	int n;

	n = gsym_encode_lines(one, 1, 0x1000, out, sizeof(out));
	ok(n == 5 && bytes_eq(out, n, "00000a0400"),
	    "one row: min = max = 0, first line, one special opcode");
	n = gsym_encode_lines(two, 2, 0x1000, out, sizeof(out));
	/* min = max = 1 becomes min 0; range 2; 1 + 4*2 + 4 = 13 */
	ok(n == 6 && bytes_eq(out, n, "00010a040d00"),
	    "two rows: min widened to 0, special opcodes");
	n = gsym_encode_lines(outlier, 5, 0x1000, out, sizeof(out));
	/* deltas 1,1,1,87: the window [1,15] wins; 87 needs advance_line */
	ok(n > 0 && bytes_eq(out, n, "00010a040707070" "3d700020100"),
	    "an outlier delta is left out of the window");
	n = gsym_encode_lines(files, 2, 0x1000, out, sizeof(out));
	/* file 2 first: set_file; 0x400 bytes on: advance_line, advance_pc */
	ok(n > 0 && bytes_eq(out, n, "7e7e0501020200037e02800800"),
	    "set_file, and advance opcodes past 255");
	ok(gsym_encode_lines(two, 2, 0x1000, out, 3) == -ENOSPC,
	    "too small a buffer is -ENOSPC");
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* LLVM's LineTable::encode choice of [min, max] for rows of n lines,
 * by its own method (all deltas sorted). */
static void
llvm_window(const uint32_t *line, size_t n, int64_t *min, int64_t *max)
{
	int64_t d[600];
	size_t nd = n - 1, i, j, best = 0, bi = 0, bj = 0;

	for (i = 0; i < nd; i++)
		d[i] = (int64_t)line[i + 1] - (int64_t)line[i];
	qsort(d, nd, sizeof(*d), cmp_i64);
	*min = d[0];
	*max = d[nd - 1];
	if (*max - *min <= 14)
		return;
	for (i = 0; i < nd; i = j) {
		size_t cnt = 0;

		for (j = i; j < nd && d[j] - d[i] <= 14; j++)
			cnt++;
		if (cnt > best) {
			best = cnt;
			bi = i;
			bj = j - 1;
		}
		for (j = i + 1; j < nd && d[j] == d[i]; j++)
			;
	}
	*min = d[bi];
	*max = d[bj];
}

/*
 * The writer counts small deltas instead of sorting them all: random
 * tables (deltas near and far, ties between windows) must get LLVM's
 * window, read back from the table's first two SLEB128s.
 */
static void
test_line_window(void)
{
	static unsigned char out[65536];
	struct gsym_row rows[600];
	uint32_t line[600];
	unsigned seed = 1, t, bad = 0;
	size_t n, i;

	for (t = 0; t < 3000; t++) {
		struct rd rd = { out, out + sizeof(out), 0, 0 };
		int64_t wmin, wmax, gmin, gmax;

		seed = seed * 1103515245 + 12345;
		n = 2 + (seed >> 8) % 500;
		line[0] = 100000;
		for (i = 1; i < n; i++) {
			unsigned r;
			int64_t dl;

			seed = seed * 1103515245 + 12345;
			r = seed >> 8;
			switch (r % 4) {
			case 0:		/* small */
				dl = (int64_t)(r / 4 % 9) - 3;
				break;
			case 1:		/* near the counted range's edge */
				dl = (int64_t)(r / 4 % 80) + 220;
				break;
			case 2:		/* far, both signs */
				dl = (int64_t)(r / 4 % 4000) - 2000;
				break;
			default:	/* a few values repeated */
				dl = (int64_t)(r / 4 % 3) * 300 - 300;
				break;
			}
			line[i] = (uint32_t)((int64_t)line[i - 1] + dl);
		}
		for (i = 0; i < n; i++) {
			rows[i].addr = 0x1000 + i;
			rows[i].file = 1;
			rows[i].line = line[i];
		}
		llvm_window(line, n, &wmin, &wmax);
		if (gsym_encode_lines(rows, n, 0x1000, out, sizeof(out)) <= 0) {
			bad++;
			continue;
		}
		gmin = rd_sleb(&rd);
		gmax = rd_sleb(&rd);
		/* The writer then widens min = max > 0 to [0, max]. */
		if (wmin == wmax && wmin > 0 && wmin < 14)
			wmin = 0;
		if (gmin != wmin || gmax != wmax) {
			if (bad++ < 3)
				printf("# table %u: [%lld, %lld], LLVM's "
				    "[%lld, %lld]\n", t, (long long)gmin,
				    (long long)gmax, (long long)wmin,
				    (long long)wmax);
		}
	}
	ok(bad == 0, "3000 random line tables: the window LLVM's sort picks "
	    "(%u differ)", bad);
}

static int
mem_gsym(struct gsym_builder *b, unsigned char **img, size_t *len)
{
	int fd = memfd_create("gsym", 0);
	int64_t n;

	if (fd < 0)
		return -1;
	n = gsym_builder_write(b, gsym_fd_sink, &fd, NULL);
	if (n <= 0) {
		close(fd);
		return -1;
	}
	*len = (size_t)n;
	*img = malloc(*len);
	if (*img == NULL || pread(fd, *img, *len, 0) != (ssize_t)*len) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* A small program: main with an inlined helper, an alias symbol with the
 * same range, a size-0 symbol, and a final size-0 symbol. */
static struct gsym_builder *
build(int big)
{
	struct gsym_builder *b;
	uint32_t f_main, f_h, n_main, n_alias, n_help, n_zero, n_last, n_sym;
	struct gsym_row rows[] = {
		{ 0x1000, 0, 10 }, { 0x1008, 0, 11 }, { 0x1010, 0, 40 },
		{ 0x1018, 0, 12 }
	};
	uint64_t r_help[] = { 0x1010, 0x1018 };
	struct gsym_inline help = { r_help, 1, 0, 0, 11, NULL, 0 };
	uint64_t r_top[] = { 0x1000, 0x1020 };
	struct gsym_inline top = { r_top, 1, 0, 0, 0, &help, 1 };
	unsigned char uuid[20];

	if (gsym_builder_create(&b) < 0)
		return NULL;
	gsym_builder_set_big_endian(b, big);
	memset(uuid, 0xab, sizeof(uuid));
	gsym_builder_set_uuid(b, uuid, sizeof(uuid));
	gsym_builder_set_base(b, 0x1000);
	(void)gsym_builder_add_text(b, 0x1000, 0x1100);
	f_main = gsym_builder_file(b, "/src/main.c");
	f_h = gsym_builder_file(b, "/src/help.h");
	n_main = gsym_builder_str(b, "main", 4, 1);
	n_alias = gsym_builder_str(b, "main_alias", 10, 1);
	n_help = gsym_builder_str(b, "helper", 6, 1);
	n_zero = gsym_builder_str(b, "zero", 4, 1);
	n_last = gsym_builder_str(b, "last", 4, 1);
	n_sym = gsym_builder_str(b, "sym_only", 8, 1);
	rows[0].file = rows[1].file = rows[3].file = f_main;
	rows[2].file = f_h;
	help.name = n_help;
	help.call_file = f_main;
	top.name = n_main;
	/* The symbol table's copy of main first: the richer DWARF one wins. */
	ok(gsym_builder_add(b, 0x1000, 0x1020, n_alias, NULL, 0, NULL) == 0,
	    "add a symbol");
	ok(gsym_builder_add(b, 0x1000, 0x1020, n_main, rows, 4, &top) == 0,
	    "add a function with rows and an inline tree");
	ok(gsym_builder_add(b, 0x1030, 0x1030, n_zero, NULL, 0, NULL) == 0 &&
	    gsym_builder_add(b, 0x1030, 0x1040, n_sym, NULL, 0, NULL) == 0,
	    "add a size-0 symbol and a sized one at its address");
	ok(gsym_builder_add(b, 0x1080, 0x1080, n_last, NULL, 0, NULL) == 0,
	    "add a final size-0 symbol");
	ok(gsym_builder_add(b, 0x1000, 0x0fff, n_main, NULL, 0, NULL) ==
	    -EINVAL && gsym_builder_add(b, 0x1000, 0x1010, 0, NULL, 0,
	    NULL) == -EINVAL, "a reversed range and name 0 are refused");
	return b;
}

static void
test_build(int big)
{
	struct gsym_builder *b = build(big), *b2 = build(big);
	unsigned char *img = NULL, *img2 = NULL;
	size_t len = 0, len2 = 0;
	struct gsym *g = NULL;
	struct gsym_result r;
	const char *order = big ? "big-endian" : "little-endian";

	ok(b && b2 && mem_gsym(b, &img, &len) == 0 &&
	    mem_gsym(b2, &img2, &len2) == 0, "%s: written", order);
	ok(len == len2 && img && img2 && memcmp(img, img2, len) == 0,
	    "%s: two builds give identical bytes", order);
	ok(img && gsym_open_mem(img, len, &g) == 0, "%s: the reader opens it",
	    order);
	if (g == NULL)
		goto out;
	ok(gsym_swapped(g) == big, "%s: byte order seen", order);
	ok(gsym_header(g)->num_addresses == 3 &&
	    gsym_header(g)->base_address == 0x1000 &&
	    gsym_header(g)->addr_off_size == 1,
	    "%s: 3 records (alias and size-0 symbol pruned), base, 1-byte "
	    "offsets", order);
	ok(gsym_lookup(g, 0x1004, &r) == 0 && r.nframes == 1 &&
	    strcmp(r.frames[0].name, "main") == 0 && r.frames[0].line == 10 &&
	    strcmp(r.frames[0].base, "main.c") == 0 &&
	    strcmp(r.frames[0].dir, "/src") == 0 && r.frames[0].offset == 4,
	    "%s: main+4 is main.c:10", order);
	ok(gsym_lookup(g, 0x1012, &r) == 0 && r.nframes == 2 &&
	    strcmp(r.frames[0].name, "helper") == 0 &&
	    r.frames[0].line == 40 && r.frames[0].inlined &&
	    strcmp(r.frames[1].name, "main") == 0 && r.frames[1].line == 11 &&
	    !r.frames[1].inlined,
	    "%s: inside the inlined helper: two frames", order);
	ok(gsym_lookup(g, 0x1030, &r) == 0 &&
	    strcmp(r.frames[0].name, "sym_only") == 0 && r.frames[0].base ==
	    NULL, "%s: a size-0 symbol gives way to the sized one", order);
	ok(gsym_lookup(g, 0x10ff, &r) == 0 &&
	    strcmp(r.frames[0].name, "last") == 0,
	    "%s: the final size-0 symbol reaches the end of the text", order);
	ok(gsym_lookup(g, 0x1025, &r) == -ENOENT &&
	    gsym_lookup(g, 0xfff, &r) == -ENOENT &&
	    gsym_lookup(g, 0x1100, &r) == -ENOENT,
	    "%s: gaps, below the base and past the end are not found", order);
out:
	gsym_free(g);
	free(img);
	free(img2);
	gsym_builder_free(b);
	gsym_builder_free(b2);
}

static void
test_empty(void)
{
	struct gsym_builder *b;
	int fd = memfd_create("gsym", 0);

	ok(gsym_builder_create(&b) == 0, "create");
	ok(gsym_builder_write(b, gsym_fd_sink, &fd, NULL) == -ENODATA,
	    "nothing added: -ENODATA");
	ok(gsym_builder_file(b, "noslash.c") != 0 &&
	    gsym_builder_file(b, "/root.c") != gsym_builder_file(b,
	    "/x/root.c"), "files split at the last slash");
	gsym_builder_free(b);
	close(fd);
}

/*
 * Aliases (doc/gsym.md, "Aliases: which name an address gets"): NALIAS
 * ranges, each with ANAMES symbols of one range (more than an insertion
 * sort's 16, so that an unstable sort would scramble them), and at every
 * fourth range a function with a line row under a smaller name.  order
 * says in what order they are added: 0 as listed, 1 reversed, 2 shuffled
 * (a fixed seed).
 */
#define NALIAS	64
#define ANAMES	20

struct alias_add {
	uint64_t	start;
	int		name;		/* index in stem[] */
	int		dwarf;		/* with a line row, named A_dwarf_ */
};

static struct gsym_builder *
build_aliases(int order)
{
	static const char *stem[ANAMES] = { "f", "_f", "__f", "__GI_f",
	    "__GI___f", "F", "f2", "f_", "ff", "Zf", "zf", "f@@GLIBC_2.2.5",
	    "f@GLIBC_2.2.5", "__f_chk", "_F", "a", "zzz", "z", "f0", "_" };
	struct alias_add e[NALIAS * (ANAMES + 1)];
	struct gsym_builder *b;
	struct gsym_row row;
	uint32_t file;
	unsigned seed = 12345;
	size_t n = 0, i, j;
	char nm[64];

	if (gsym_builder_create(&b) < 0)
		return NULL;
	(void)gsym_builder_add_text(b, 0x1000, 0x1000 + 0x40 * NALIAS);
	file = gsym_builder_file(b, "/src/a.c");
	for (i = 0; i < NALIAS; i++) {
		for (j = 0; j < ANAMES; j++) {
			e[n].start = 0x1000 + 0x40 * i;
			e[n].name = (int)j;
			e[n++].dwarf = 0;
		}
		if (i % 4 == 0) {
			e[n].start = 0x1000 + 0x40 * i;
			e[n].name = -1;
			e[n++].dwarf = 1;
		}
	}
	for (i = 0; i < n && order > 0; i++) {
		size_t k = order == 1 ? n - 1 - i : i + (seed = seed * 1103515245u
		    + 12345u) % (n - i);

		if (order == 1 && k <= i)
			break;
		if (k != i) {
			struct alias_add t = e[i];

			e[i] = e[k];
			e[k] = t;
		}
	}
	for (i = 0; i < n; i++) {
		uint32_t id;

		if (e[i].dwarf)
			snprintf(nm, sizeof(nm), "A_dwarf_%03llx",
			    (unsigned long long)e[i].start);
		else
			snprintf(nm, sizeof(nm), "%s_%03llx", stem[e[i].name],
			    (unsigned long long)e[i].start);
		id = gsym_builder_str(b, nm, strlen(nm), 1);
		row.addr = e[i].start;
		row.file = file;
		row.line = 7;
		if (gsym_builder_add(b, e[i].start, e[i].start + 0x20, id,
		    e[i].dwarf ? &row : NULL, e[i].dwarf, NULL) != 0) {
			gsym_builder_free(b);
			return NULL;
		}
	}
	return b;
}

static void
test_aliases(void)
{
	unsigned char *img[3] = { NULL };
	size_t len[3] = { 0 }, i;
	struct gsym_builder *b;
	struct gsym *g = NULL;
	struct gsym_result r;
	int order, good = 1;
	uint32_t id, f1, f2;
	struct gsym_row r1 = { 0x1000, 0, 1 }, r2 = { 0x1000, 0, 2 };

	for (order = 0; order < 3; order++) {
		b = build_aliases(order);
		ok(b && mem_gsym(b, &img[order], &len[order]) == 0,
		    "aliases added in order %d: written", order);
		gsym_builder_free(b);
	}
	ok(img[0] && img[1] && img[2] && len[0] == len[1] &&
	    len[0] == len[2] && memcmp(img[0], img[1], len[0]) == 0 &&
	    memcmp(img[0], img[2], len[0]) == 0,
	    "%d aliases in order, reversed and shuffled: the same bytes",
	    NALIAS * ANAMES);
	if (img[2] == NULL || gsym_open_mem(img[2], len[2], &g) != 0)
		good = 0;
	for (i = 0; good && i < NALIAS; i++) {
		char want[32];

		/* The row wins; else "zzz", the greatest name in bytes. */
		snprintf(want, sizeof(want), i % 4 ? "zzz_%03llx" :
		    "A_dwarf_%03llx", (unsigned long long)(0x1000 + 0x40 * i));
		if (gsym_lookup(g, 0x1000 + 0x40 * i, &r) != 0 ||
		    strcmp(r.frames[r.nframes - 1].name, want) != 0) {
			printf("# at 0x%llx: %s, want %s\n",
			    (unsigned long long)(0x1000 + 0x40 * i),
			    r.nframes ? r.frames[r.nframes - 1].name : "none",
			    want);
			good = 0;
		}
	}
	ok(good && g && gsym_header(g)->num_addresses == NALIAS,
	    "one record a range: line rows first, then the greatest name");
	gsym_free(g);
	g = NULL;

	/* Equal but for their line numbers: the first added is kept. */
	for (order = 0; order < 2; order++) {
		free(img[0]);
		img[0] = NULL;
		if (gsym_builder_create(&b) < 0)
			break;
		(void)gsym_builder_add_text(b, 0x1000, 0x1100);
		f1 = gsym_builder_file(b, "/src/one.c");
		f2 = gsym_builder_file(b, "/src/two.c");
		r1.file = f1;
		r2.file = f2;
		id = gsym_builder_str(b, "same", 4, 1);
		(void)gsym_builder_add(b, 0x1000, 0x1010, id,
		    order ? &r2 : &r1, 1, NULL);
		(void)gsym_builder_add(b, 0x1000, 0x1010, id,
		    order ? &r1 : &r2, 1, NULL);
		ok(mem_gsym(b, &img[0], &len[0]) == 0 &&
		    gsym_open_mem(img[0], len[0], &g) == 0 &&
		    gsym_lookup(g, 0x1000, &r) == 0 &&
		    r.frames[0].line == (order ? 2u : 1u) &&
		    strcmp(r.frames[0].base, order ? "two.c" : "one.c") == 0,
		    "one name, one range, other lines: the first added (%s)",
		    order ? "two.c:2" : "one.c:1");
		gsym_free(g);
		g = NULL;
		gsym_builder_free(b);
	}
	for (i = 0; i < 3; i++)
		free(img[i]);
}

int
main(void)
{
	test_lines();
	test_line_window();
	test_build(0);
	test_build(1);
	test_empty();
	test_aliases();
	return done();
}

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

int
main(void)
{
	test_lines();
	test_build(0);
	test_build(1);
	test_empty();
	return done();
}

/*
 * test_symjson: the /symbolize body parser and answer writer, checked
 * byte for byte and by reading the answers back with json-c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/demangle.h"
#include "symhubd/symjson.h"
#include "tap.h"

static long
parse(const char *body, uint64_t max, uint64_t **a, const char **why)
{
	*why = NULL;
	return symjson_parse(body, strlen(body), max, a, why);
}

static void
test_parse(void)
{
	static const char *bad[] = {
		"xyz\n", "0x\n", "12345678901234567\n", "-1\n", "+1\n",
		"0x10 0x20\n", "[", "[1,", "{\"a\":1}", "[-1]", "[\"zz\"]",
		"[\"\"]", "[\" 1\"]", "[\"-1\"]", "[1.5]", "[true]", "[null]",
		"[[1]]", "[1] x", "[1]]", "\"1\"", "[1]\n\n2",
	};
	uint64_t	*a;
	const char	*why;
	long		 n;
	size_t		 i;

	n = parse("0x10\n20\r\n  \n\t0X1f \nffffffffffffffff", 10, &a, &why);
	ok(n == 4 && a[0] == 0x10 && a[1] == 0x20 && a[2] == 0x1f &&
	    a[3] == UINT64_MAX, "lines: 4 addresses, 0x optional, blanks "
	    "around (got %ld)", n);
	free(a);

	n = parse(" [16, \"0x20\", \"1f\", 18446744073709551615]", 10, &a,
	    &why);
	ok(n == 4 && a[0] == 16 && a[1] == 0x20 && a[2] == 0x1f &&
	    a[3] == UINT64_MAX, "JSON: numbers and hex strings (got %ld)", n);
	free(a);

	n = parse("", 10, &a, &why);
	ok(n == 0 && a == NULL, "empty body: no addresses");
	n = parse("[]", 10, &a, &why);
	ok(n == 0, "empty array: no addresses");
	free(a);
	n = parse("\r\n [1, 2] \r\n", 10, &a, &why);
	ok(n == 2, "blanks around the array");
	free(a);

	n = parse("1\n2\n3\n", 2, &a, &why);
	ok(n == -E2BIG && a == NULL && why != NULL,
	    "lines: 3 over a limit of 2 -> -E2BIG (%s)", why ? why : "");
	n = parse("[1,2,3]", 2, &a, &why);
	ok(n == -E2BIG && a == NULL, "JSON: 3 over a limit of 2 -> -E2BIG");
	n = parse("1\n2\n", 2, &a, &why);
	ok(n == 2, "exactly the limit is accepted");
	free(a);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = parse(bad[i], 10, &a, &why);
		ok(n == -EINVAL && a == NULL && why != NULL,
		    "malformed body '%.*s' -> -EINVAL (%s)",
		    (int)strcspn(bad[i], "\n"), bad[i],
		    why ? why : "no message");
	}
}

/* Frames of one result, by hand. */
static void
frame(struct gsym_result *r, const char *name, uint64_t off,
    const char *dir, const char *base, uint32_t line)
{
	struct gsym_frame *f = &r->frames[r->nframes++];

	f->name = name;
	f->offset = off;
	f->dir = dir;
	f->base = base;
	f->line = line;
	f->inlined = 0;
}

static char *
answer(struct symjson *j, size_t *len)
{
	char *buf;

	if (symjson_finish(j, &buf, len) != 0)
		return NULL;
	return buf;
}

static void
test_write(void)
{
	static const char name[] = "ns::f<\"q\", \\b/\x01\t\xc3\xa9>";
	static const char dir[] = "/src/a\"b", base[] = "x.c";
	static const char same_text[] = "x.c";	/* another address */
	static const char expect1[] =
	    "{\"buildid\":\"ab01\",\"results\":["
	    "{\"address\":\"0x1000\",\"frames\":["
	    "{\"function\":\"inl\",\"start\":\"0xffc\",\"offset\":4,"
	    "\"file\":\"x.c\",\"line\":7,"
	    "\"inlined\":true},"
	    "{\"function\":\"main\",\"start\":\"0x1000\",\"offset\":0,"
	    "\"file\":\"/src/a\\\"b/x.c\","
	    "\"line\":4294967295,\"inlined\":false}]},"
	    "{\"address\":\"0xffffffffffffffff\",\"frames\":[],"
	    "\"error\":\"address 0xffffffffffffffff is not in GSYM\"},"
	    "{\"address\":\"0x0\",\"frames\":[],"
	    "\"error\":\"corrupt record\"},"
	    "{\"address\":\"0x2\",\"frames\":["
	    "{\"function\":\"sym\",\"start\":\"0x3\","
	    "\"offset\":18446744073709551615,"
	    "\"inlined\":false}]}]}";
	static char		 own[5000][8];
	struct gsym_result	 r;
	struct symjson		*j;
	json_object		*o, *res, *f;
	char			*buf;
	size_t			 len, i;
	int			 rc;

	memset(&r, 0, sizeof(r));
	ok(symjson_create("ab01", 4, 0, &j) == 0, "create");
	frame(&r, "inl", 4, "", base, 7);
	frame(&r, "main", 0, dir, base, UINT32_MAX);
	r.frames[0].inlined = 1;
	rc = symjson_add(j, 0x1000, 0, &r);
	rc |= symjson_add(j, UINT64_MAX, -ENOENT, NULL);
	rc |= symjson_add(j, 0, -EBADMSG, NULL);
	r.nframes = 0;
	frame(&r, "sym", UINT64_MAX, "", NULL, 0);
	rc |= symjson_add(j, 2, 0, &r);
	ok(rc == 0, "four results added");
	buf = answer(j, &len);
	ok(buf != NULL && len == strlen(expect1) &&
	    memcmp(buf, expect1, len) == 0, "the answer, byte for byte: %.*s",
	    buf ? (int)len : 0, buf ? buf : "");
	free(buf);

	/* Escaping, and the cache of escaped strings. */
	ok(symjson_create("ab01", 0, 0, &j) == 0, "create for 0 addresses");
	for (i = 0; i < 5000; i++) {
		memset(&r, 0, sizeof(r));
		snprintf(own[i], sizeof(own[i]), "f%zu", i);
		frame(&r, name, i, dir, base, (uint32_t)i);
		frame(&r, i % 2 ? name : "other", i, "",
		    i % 3 ? base : same_text, 1);
		/* 5000 distinct names: the table grows. */
		frame(&r, own[i], 0, "", own[i], 2);
		if (symjson_add(j, i, 0, &r) != 0)
			break;
	}
	ok(i == 5000, "5000 results added");
	buf = answer(j, &len);
	o = buf ? json_tokener_parse(buf) : NULL;
	free(buf);
	ok(o != NULL, "json-c reads the answer back");
	res = o ? json_object_object_get(o, "results") : NULL;
	ok(res != NULL && json_object_array_length(res) == 5000,
	    "5000 results");
	for (i = 0; res != NULL && i < 5000; i++) {
		json_object	*fr = json_object_object_get(
				    json_object_array_get_idx(res, i), "frames");
		char		 want[32];
		const char	*s0, *f0, *s1, *f1, *s2, *f2;

		f = json_object_array_get_idx(fr, 0);
		s0 = json_object_get_string(json_object_object_get(f,
		    "function"));
		f0 = json_object_get_string(json_object_object_get(f, "file"));
		f = json_object_array_get_idx(fr, 1);
		s1 = json_object_get_string(json_object_object_get(f,
		    "function"));
		f1 = json_object_get_string(json_object_object_get(f, "file"));
		f = json_object_array_get_idx(fr, 2);
		s2 = json_object_get_string(json_object_object_get(f,
		    "function"));
		f2 = json_object_get_string(json_object_object_get(f, "file"));
		snprintf(want, sizeof(want), "f%zu", i);
		if (s0 == NULL || strcmp(s0, name) != 0 || f0 == NULL ||
		    strcmp(f0, "/src/a\"b/x.c") != 0 || s1 == NULL ||
		    strcmp(s1, i % 2 ? name : "other") != 0 || f1 == NULL ||
		    strcmp(f1, "x.c") != 0 || s2 == NULL ||
		    strcmp(s2, want) != 0 || f2 == NULL ||
		    strcmp(f2, want) != 0)
			break;
	}
	ok(i == 5000, "every string reads back as written (first bad: %zu)",
	    i);
	json_object_put(o);
}

/* SYMJSON_DEMANGLE, and demangle() itself: C++, Rust legacy and v0
 * (libiberty's reading, as c++filt prints it), C names left alone. */
static void
test_demangle(void)
{
	static const char expect[] = "{\"buildid\":\"ab\",\"results\":["
	    "{\"address\":\"0x1\",\"frames\":[{\"function\":"
	    "\"ns::f(int, char const*)\",\"start\":\"0x1\",\"offset\":0,"
	    "\"inlined\":false},"
	    "{\"function\":\"main\",\"start\":\"0x1\",\"offset\":0,"
	    "\"inlined\":false}]},"
	    "{\"address\":\"0x2\",\"frames\":[{\"function\":"
	    "\"ns::f(int, char const*)\",\"start\":\"0x2\",\"offset\":0,"
	    "\"inlined\":false}]}]}";
	static const char mangled[] = "_ZN2ns1fEiPKc";
	struct gsym_result	 r;
	struct symjson		*j;
	char			*buf, *d;
	size_t			 len;
	int			 rc;

	d = demangle(mangled);
	ok(d != NULL && strcmp(d, "ns::f(int, char const*)") == 0,
	    "demangle: C++ (%s)", d ? d : "NULL");
	free(d);
	d = demangle("_ZN4core3fmt5write17h0123456789abcdefE");
	ok(d != NULL && strcmp(d, "core::fmt::write") == 0,
	    "demangle: Rust legacy, its hash left out (%s)", d ? d : "NULL");
	free(d);
	d = demangle("_RNvCs15kBYyAo9fc_7mycrate7example");
	ok(d != NULL && strcmp(d, "mycrate::example") == 0,
	    "demangle: Rust v0 (%s)", d ? d : "NULL");
	free(d);
	ok(demangle("main") == NULL && demangle("_Zx") == NULL &&
	    demangle("") == NULL, "demangle: C names and garbage: NULL");
	{
		/* A valid name past the bound is left alone. */
		static char big[DEMANGLE_MAX + 64];
		size_t k = (DEMANGLE_MAX + 32) / 2;

		memset(big, 0, sizeof(big));
		memcpy(big, "_Z1f", 4);
		for (size_t q = 0; q < k - 4; q++)
			big[4 + q] = 'i';
		d = demangle(big);
		ok(d == NULL, "demangle: a name over DEMANGLE_MAX: NULL");
		free(d);
		big[200] = '\0';
		d = demangle(big);
		ok(d != NULL && strncmp(d, "f(int, int", 10) == 0,
		    "demangle: the same, short: demangled");
		free(d);
	}

	memset(&r, 0, sizeof(r));
	ok(symjson_create("ab", 2, SYMJSON_DEMANGLE, &j) == 0,
	    "create, demangling");
	frame(&r, mangled, 0, "", NULL, 0);
	frame(&r, "main", 0, "", NULL, 0);
	rc = symjson_add(j, 1, 0, &r);
	r.nframes = 1;
	rc |= symjson_add(j, 2, 0, &r);
	buf = answer(j, &len);
	ok(rc == 0 && buf != NULL && len == strlen(expect) &&
	    memcmp(buf, expect, len) == 0, "demangled names: %.*s",
	    buf ? (int)len : 0, buf ? buf : "");
	free(buf);
}

/* POST /symbolize's many-module body, and the writer's pieces. */
/* Each of n batch bodies is refused: -EINVAL, nothing kept, a message. */
static void
batch_refused(const char *const *bad, size_t n)
{
	struct symjson_batch	 b;
	const char		*why;
	size_t			 i;
	long			 rc;

	for (i = 0; i < n; i++) {
		why = NULL;
		rc = symjson_parse_batch(bad[i], strlen(bad[i]), 10, 10, &b,
		    &why);
		ok(rc == -EINVAL && b.mods == NULL && why != NULL,
		    "batch: malformed '%.60s' -> -EINVAL (%s)", bad[i],
		    why ? why : "no message");
	}
}

static void
test_batch(void)
{
	static const char good[] =
	    "{\"modules\":[{\"buildid\":\"ab01\",\"addresses\":[16,\"0x20\"]},"
	    "{\"fileid\":\"00112233445566778899aabbccddeeff\","
	    "\"offsets\":[\"ff\"]},{\"buildid\":\"cd\",\"addresses\":[]}],"
	    "\"deadline_ms\":1500,\"demangle\":true} ";
	static const char *bad[] = {
		"", "[]", "{}", "{\"modules\":{}}", "{\"modules\":[1]}",
		"{\"modules\":[{}]}",
		"{\"modules\":[{\"buildid\":\"AB\",\"addresses\":[]}]}",
		"{\"modules\":[{\"buildid\":\"abc\",\"addresses\":[]}]}",
		"{\"modules\":[{\"buildid\":\"ab\",\"fileid\":\"ab\","
		"\"addresses\":[]}]}",
		"{\"modules\":[{\"fileid\":\"ab\",\"addresses\":[]}]}",
		"{\"modules\":[{\"buildid\":\"ab\"}]}",
		"{\"modules\":[{\"buildid\":\"ab\",\"addresses\":[],"
		"\"offsets\":[]}]}",
		"{\"modules\":[{\"buildid\":\"ab\",\"addresses\":1}]}",
		"{\"modules\":[{\"buildid\":\"ab\",\"addresses\":[-1]}]}",
		"{\"modules\":[{\"buildid\":\"ab\",\"addresses\":[\"x\"]}]}",
		"{\"modules\":[{\"buildid\":12,\"addresses\":[]}]}",
		"{\"modules\":[{\"buildid\":\"a\\u0000b\",\"addresses\":[]}]}",
		"{\"modules\":[],\"deadline_ms\":-1}",
		"{\"modules\":[],\"deadline_ms\":\"1\"}",
		"{\"modules\":[],\"demangle\":1}",
		"{\"modules\":[]} x",
	};
	struct symjson_batch	 b;
	struct gsym_result	 r;
	struct symjson		*j;
	const char		*why;
	uint64_t		 off = 0x10;
	char			*buf;
	size_t			 len;
	long			 n;
	int			 rc;

	n = symjson_parse_batch(good, strlen(good), 10, 10, &b, &why);
	ok(n == 3 && b.nmods == 3 && b.naddrs == 3 && b.deadline_ms == 1500 &&
	    b.demangle == 1, "batch: 3 modules, 3 addresses, deadline, "
	    "demangle (got %ld)", n);
	ok(n == 3 && strcmp(b.mods[0].idhex, "ab01") == 0 &&
	    b.mods[0].idlen == 2 && !b.mods[0].by_fileid &&
	    !b.mods[0].offsets && b.mods[0].naddrs == 2 &&
	    b.mods[0].addrs[0] == 16 && b.mods[0].addrs[1] == 0x20,
	    "batch: the first module, by build-id, two addresses");
	ok(n == 3 && b.mods[1].by_fileid && b.mods[1].idlen == 16 &&
	    b.mods[1].offsets && b.mods[1].naddrs == 1 &&
	    b.mods[1].addrs[0] == 0xff && b.mods[2].naddrs == 0,
	    "batch: a FileID with offsets, a module without addresses");
	symjson_batch_free(&b);
	n = symjson_parse_batch("{\"modules\":[]}", 14, 10, 10, &b, &why);
	ok(n == 0 && b.deadline_ms == -1 && !b.demangle,
	    "batch: no modules, no deadline");
	symjson_batch_free(&b);
	n = symjson_parse_batch(good, strlen(good), 2, 10, &b, &why);
	ok(n == -E2BIG && strcmp(why, "too many addresses") == 0,
	    "batch: 3 addresses over a limit of 2 -> -E2BIG (%s)", why);
	n = symjson_parse_batch(good, strlen(good), 10, 2, &b, &why);
	ok(n == -E2BIG && strcmp(why, "too many modules") == 0,
	    "batch: 3 modules over a limit of 2 -> -E2BIG (%s)", why);
	batch_refused(bad, sizeof(bad) / sizeof(bad[0]));

	/* The pieces a multi-module answer is written with. */
	memset(&r, 0, sizeof(r));
	ok(symjson_open(2, 0, &j) == 0, "open a bare writer");
	rc = symjson_text(j, "{\"modules\":[{\"buildid\":");
	rc |= symjson_string(j, "a\"b");
	rc |= symjson_text(j, ",\"results\":[");
	symjson_list(j);
	frame(&r, "f", 1, "", "x.c", 3);
	rc |= symjson_result(j, 0x21, &off, 0, &r);
	rc |= symjson_result(j, 0, &off, -ERANGE, NULL);
	rc |= symjson_result(j, 0, &off, -ENOEXEC, NULL);
	rc |= symjson_text(j, "]},{\"n\":");
	rc |= symjson_hex(j, 255);
	rc |= symjson_text(j, ",\"results\":[");
	symjson_list(j);
	rc |= symjson_result(j, 5, NULL, -ENOENT, NULL);
	rc |= symjson_text(j, "]}]}");
	buf = NULL;
	if (rc == 0)
		symjson_take(j, &buf, &len);
	else
		symjson_free(j);
	{
		static const char expect[] = "{\"modules\":[{\"buildid\":"
		    "\"a\\\"b\",\"results\":["
		    "{\"file_offset\":\"0x10\",\"address\":\"0x21\","
		    "\"frames\":[{\"function\":\"f\",\"start\":\"0x20\","
		    "\"offset\":1,\"file\":\"x.c\",\"line\":3,"
		    "\"inlined\":false}]},"
		    "{\"file_offset\":\"0x10\",\"frames\":[],\"error\":"
		    "\"offset 0x10 is in no loadable segment\"},"
		    "{\"file_offset\":\"0x10\",\"frames\":[],\"error\":"
		    "\"file offsets need the module's executable, which is "
		    "neither here nor upstream\"}]},{\"n\":\"0xff\","
		    "\"results\":[{\"address\":\"0x5\",\"frames\":[],"
		    "\"error\":\"address 0x5 is not in GSYM\"}]}]}";

		ok(rc == 0 && buf != NULL && len == strlen(expect) &&
		    memcmp(buf, expect, len) == 0, "a multi-module answer, "
		    "byte for byte: %.*s", buf ? (int)len : 0,
		    buf ? buf : "");
	}
	free(buf);
}

/* POST /symbolicate/v5's body, and Breakpad ids. */
static void
test_tecken(void)
{
	static const unsigned char bid[20] = { 0xa1, 0x2a, 0xac, 0x88, 0x5f,
	    0xbc, 0x3b, 0xa1, 0xf5, 0xc5, 0x08, 0xc3, 0xd6, 0x2b, 0xc8, 0x6c,
	    0x05, 0x27, 0x66, 0xaa };
	static const char good[] = "{\"jobs\":[{\"memoryMap\":["
	    "[\"app\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"],"
	    "[\"again\",\"88ac2aa1bc5fa13bf5c508c3d62bc86c1\"],"
	    "[\"lib\",\"00000000000000000000000000000000A\"]],"
	    "\"stacks\":[[[0,16],[2,32]],[],[[1,48]]]},"
	    "{\"memoryMap\":[],\"stacks\":[]}]}";
	static const char one[] = "{\"memoryMap\":[[\"a\","
	    "\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],\"stacks\":[[[0,1]]]}";
	static const char *bad[] = {
		"[]", "{}", "{\"jobs\":{}}", "{\"jobs\":[1]}",
		"{\"memoryMap\":[],\"stacks\":{}}",
		"{\"memoryMap\":[[\"a\"]],\"stacks\":[]}",
		"{\"memoryMap\":[[\"a\",\"88AC\"]],\"stacks\":[]}",
		"{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86CZ\"]],"
		"\"stacks\":[]}",
		"{\"memoryMap\":[[1,\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
		"\"stacks\":[]}",
		"{\"memoryMap\":[],\"stacks\":[[[0,1]]]}",
		"{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
		"\"stacks\":[[[0,-1]]]}",
		"{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
		"\"stacks\":[[[-1,1]]]}",
		"{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
		"\"stacks\":[[0,1]]}",
	};
	struct symjson_tecken	 t;
	const char		*why;
	char			 bp[34];
	long			 n;
	size_t			 i;

	symjson_breakpad_id(bid, sizeof(bid), bp);
	ok(strcmp(bp, "88AC2AA1BC5FA13BF5C508C3D62BC86C0") == 0,
	    "breakpad id of a 20-byte build-id: %s", bp);
	symjson_breakpad_id(bid, 4, bp);
	ok(strcmp(bp, "88AC2AA1000000000000000000000000" "0") == 0,
	    "breakpad id of a 4-byte build-id, zero-padded: %s", bp);

	n = symjson_parse_tecken(good, strlen(good), 10, 10, &t, &why);
	ok(n == 2 && t.nmods == 2 && t.njobs == 2 && t.nframes == 3,
	    "tecken: 2 jobs, 3 frames, 2 modules (the same id twice, case "
	    "and age aside) (got %ld)", n);
	ok(n == 2 && memcmp(t.mods[0].id, bid, 16) == 0 &&
	    t.mods[0].idlen == 16 && t.jobs[0].nlibs == 3 &&
	    t.jobs[0].libs[1].mod == 0 && t.jobs[0].libs[2].mod == 1 &&
	    strcmp(t.jobs[0].libs[1].name, "again") == 0,
	    "tecken: the GUID read back to the build-id's first 16 bytes");
	ok(n == 2 && t.jobs[0].nstacks == 3 && t.jobs[0].stacks[1] == 2 &&
	    t.jobs[0].stacks[2] == 2 && t.jobs[0].stacks[3] == 3 &&
	    t.jobs[0].frames[1].lib == 2 && t.jobs[0].frames[1].addr == 32 &&
	    t.jobs[1].nstacks == 0, "tecken: stacks and frames in order");
	symjson_tecken_free(&t);
	n = symjson_parse_tecken(one, strlen(one), 10, 10, &t, &why);
	ok(n == 1 && t.njobs == 1 && t.nframes == 1,
	    "tecken: one job without \"jobs\"");
	symjson_tecken_free(&t);
	n = symjson_parse_tecken(good, strlen(good), 2, 10, &t, &why);
	ok(n == -E2BIG, "tecken: 3 frames over 2 -> -E2BIG (%s)", why);
	n = symjson_parse_tecken(good, strlen(good), 10, 1, &t, &why);
	ok(n == -E2BIG && strcmp(why, "too many modules") == 0,
	    "tecken: 2 modules over 1 -> -E2BIG (%s)", why);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		n = symjson_parse_tecken(bad[i], strlen(bad[i]), 10, 10, &t,
		    &why);
		ok(n == -EINVAL && t.jobs == NULL && why != NULL,
		    "tecken: malformed '%s' -> -EINVAL (%s)", bad[i],
		    why ? why : "no message");
	}
}

/*
 * Batches are read as they stream (yajl): keys in any order, a key given
 * twice (the last counts, as with json-c), values of other keys skipped
 * whatever they hold, and the limits json-c's tree gave (depth, UTF-8).
 */
static void
test_batch_stream(void)
{
	static const char *bad[] = {
		/* nested deeper than 64 under a key nothing reads */
		NULL,
		"{\"modules\":[],\"x\":\"\xff\xfe\"}",
		"{\"modules\":[{\"buildid\":\"ab\",\"addresses\":"
		"[\"0x10000000000000000\"]}]}",
		"{\"modules\":[{\"buildid\":\"ab\",\"addresses\":"
		"[18446744073709551616]}]}",
		"{\"modules\":[{\"buildid\":\"ab\",\"addresses\":[1e3]}]}",
		"{\"modules\":[{\"buildid\":\"AB\",\"addresses\":[]}]}",
		"{\"modules\":[{\"buildid\":\"ab\",\"fileid\":"
		"\"00112233445566778899aabbccddeeff\",\"addresses\":[]}]}",
		"{\"modules\":[{\"fileid\":\"ab\",\"addresses\":[]}]}",
		"{\"modules\":[],\"deadline_ms\":1.5}",
		"{\"modules\":[]",
		"[]",
	};
	const char *good =
	    "{\"x\":{\"modules\":[1,[2,{\"y\":null}]]},\"demangle\":false,"
	    "\"modules\":[{\"addresses\":[\"0x00000000000000000001f\", 2],"
	    "\"buildid\":\"ab\",\"offsets\":null,\"note\":{\"a\":[]}},"
	    "{\"fileid\":\"00112233445566778899aabbccddeeff\",\"offsets\":"
	    "[5,6,7],\"offsets\":[8]}],\"deadline_ms\":9,\"demangle\":true}";
	char deep[400];
	struct symjson_batch b;
	const char *why;
	size_t i;
	long n;

	n = symjson_parse_batch(good, strlen(good), 10, 10, &b, &why);
	ok(n == 2 && b.deadline_ms == 9 && b.demangle == 1 &&
	    b.mods[0].naddrs == 2 && b.mods[0].addrs[0] == 0x1f &&
	    b.mods[0].addrs[1] == 2 && !b.mods[0].offsets &&
	    b.mods[1].offsets && b.mods[1].naddrs == 1 &&
	    b.mods[1].addrs[0] == 8 && b.naddrs == 3,
	    "batch: keys in any order, other keys skipped, a key twice: "
	    "the last (got %ld%s%s)", n, n < 0 ? ": " : "", n < 0 ? why : "");
	if (n >= 0)
		symjson_batch_free(&b);
	why = "{\"modules\":[{\"buildid\":\"ab\",\"addresses\":[1]}],"
	    "\"modules\":[]}";
	n = symjson_parse_batch(why, strlen(why), 10, 10, &b, &why);
	ok(n == 0 && b.naddrs == 0, "batch: \"modules\" twice: the last");
	if (n >= 0)
		symjson_batch_free(&b);

	memset(deep, 0, sizeof(deep));
	snprintf(deep, sizeof(deep), "{\"modules\":[],\"x\":");
	for (i = strlen(deep); i < 20 + 70; i++)
		deep[i] = '[';
	for (; i < 20 + 140; i++)
		deep[i] = ']';
	deep[i] = '}';
	bad[0] = deep;
	batch_refused(bad, sizeof(bad) / sizeof(bad[0]));
}

/*
 * Tecken requests are read as they stream (yajl), as batches are: keys in
 * any order, a key given twice (the last counts), and what a hostile
 * request must not get through: addresses of 2^64 and more, bytes that
 * are not UTF-8, a debugName that would be repeated in every frame.
 */
static void
test_tecken_stream(void)
{
	static const char id[] = "88AC2AA1BC5FA13BF5C508C3D62BC86C0";
	char		 big[2048], name[300];
	const char	*bad[] = {
		"{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
		"\"stacks\":[[[0,18446744073709551616]]]}",
		"{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
		"\"stacks\":[[[0,1.5]]]}",
		"{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
		"\"stacks\":[[[0,1e3]]]}",
		"{\"memoryMap\":[[\"a\xff\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
		"\"stacks\":[]}",
		"{\"memoryMap\":[[\"a\\u0000b\","
		"\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],\"stacks\":[]}",
		"{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\","
		"\"x\"]],\"stacks\":[]}",
		"{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
		"\"stacks\":[[[0,1,2]]]}",
		"{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
		"\"stacks\":[[[4294967296,1]]]}",
		"{\"stacks\":[[[1,1]]],"
		"\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]]}",
		"{\"jobs\":[{\"memoryMap\":[]}]}",
		big,
	};
	struct symjson_tecken	 t;
	const char		*why, *body;
	long			 n;
	size_t			 i;

	memset(name, 'n', 256);
	name[256] = '\0';
	snprintf(big, sizeof(big), "{\"memoryMap\":[[\"%s\",\"%s\"]],"
	    "\"stacks\":[]}", name, id);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		n = symjson_parse_tecken(bad[i], strlen(bad[i]), 10, 10, &t,
		    &why);
		ok(n == -EINVAL && t.jobs == NULL && why != NULL,
		    "tecken: refused '%.90s' -> -EINVAL (%s)", bad[i],
		    why ? why : "no message");
	}
	name[255] = '\0';
	snprintf(big, sizeof(big), "{\"stacks\":[[[0,7],[0,18446744073709551615]"
	    "]],\"memoryMap\":[[\"%s\",\"%s\"]]}", name, id);
	n = symjson_parse_tecken(big, strlen(big), 10, 10, &t, &why);
	ok(n == 1 && t.nframes == 2 && t.jobs[0].frames[1].addr == UINT64_MAX &&
	    strlen(t.jobs[0].libs[0].name) == 255 &&
	    strcmp(t.jobs[0].libs[0].key, id) == 0,
	    "tecken: stacks before memoryMap, a 255-byte name, 2^64 - 1");
	symjson_tecken_free(&t);
	body = "{\"memoryMap\":[[\"a\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
	    "\"stacks\":[[[0,1]],[[0,2]]],\"stacks\":[[[0,3]]],"
	    "\"jobs\":null,\"x\":[[[\"y\"]]]}";
	n = symjson_parse_tecken(body, strlen(body), 2, 10, &t, &why);
	ok(n == 1 && t.njobs == 1 && t.nframes == 1 &&
	    t.jobs[0].nstacks == 1 && t.jobs[0].frames[0].addr == 3,
	    "tecken: a key given twice, the last counts; jobs null; others "
	    "skipped");
	symjson_tecken_free(&t);
	body = "{\"memoryMap\":[[\"top\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
	    "\"stacks\":[[[0,1],[0,1]]],\"jobs\":[{\"memoryMap\":[],"
	    "\"stacks\":[]},{\"stacks\":[[]],\"memoryMap\":[]}]}";
	n = symjson_parse_tecken(body, strlen(body), 2, 10, &t, &why);
	ok(n == 0 && t.njobs == 2 && t.nframes == 0 &&
	    t.jobs[1].nstacks == 1,
	    "tecken: \"jobs\" wins over a job at the top, whose frames do "
	    "not count (got %ld: %s)", n, n < 0 ? why : "");
	symjson_tecken_free(&t);
	/* Many small jobs, or empty stacks, cost memory with few frames:
	 * bounded too. */
	body = "{\"jobs\":[{\"memoryMap\":[],\"stacks\":[]},"
	    "{\"memoryMap\":[],\"stacks\":[]},{\"memoryMap\":[],\"stacks\":[]}]}";
	n = symjson_parse_tecken(body, strlen(body), 10, 2, &t, &why);
	ok(n == -E2BIG && strcmp(why, "too many jobs") == 0,
	    "tecken: 3 jobs over 2 -> -E2BIG (%s)", n < 0 ? why : "");
	body = "{\"memoryMap\":[],\"stacks\":[[],[],[],[]]}";
	n = symjson_parse_tecken(body, strlen(body), 1, 1, &t, &why);
	ok(n == -E2BIG, "tecken: 4 empty stacks over 2 x 1 + 1 items -> "
	    "-E2BIG (%s)", n < 0 ? why : "");
	n = symjson_parse_tecken(body, strlen(body), 1, 2, &t, &why);
	ok(n == 0 && t.jobs[0].nstacks == 4, "tecken: ... within 2 x 1 + 2 "
	    "(%ld)", n);
	symjson_tecken_free(&t);
}

/*
 * What the writer is given need not be UTF-8 (DWARF names, file names):
 * every byte that begins no well-formed sequence becomes U+FFFD, so the
 * answer stays JSON; well-formed text is written as it is.
 */
static void
test_write_utf8(void)
{
	static const char *names[] = {
		"ok\xc3\xa9",		/* é: kept */
		"a\xff" "b",		/* a byte that is never UTF-8 */
		"c\xc3",		/* cut short */
		"\xe0\x80\xaf",		/* overlong '/' */
		"\xed\xa0\x80",		/* a surrogate */
		"\xf4\x90\x80\x80",	/* above U+10FFFF */
		"\xf0\x9f\x98\x80",	/* an emoji: kept */
		"\x7f\x1f",
	};
	static const char *want[] = {
		"\"ok\xc3\xa9\"",
		"\"a\xef\xbf\xbd" "b\"",
		"\"c\xef\xbf\xbd\"",
		"\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
		"\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
		"\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
		"\"\xf0\x9f\x98\x80\"",
		"\"\x7f\\u001f\"",
	};
	struct gsym_result	 r;
	struct symjson		*j;
	json_tokener		*tok;
	json_object		*o;
	char			*buf, *exp;
	size_t			 i, len;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (symjson_open(0, 0, &j) != 0 ||
		    symjson_string(j, names[i]) != 0 ||
		    symjson_take(j, &buf, &len) != 0) {
			ok(0, "symjson_string");
			continue;
		}
		ok(len == strlen(want[i]) && memcmp(buf, want[i], len) == 0,
		    "string %zu: invalid UTF-8 replaced by U+FFFD, the rest "
		    "kept (%.*s)", i, (int)len, buf);
		free(buf);
	}
	/* A result whose function and file are not UTF-8 parses, with
	 * json-c checking UTF-8. */
	memset(&r, 0, sizeof(r));
	frame(&r, "f\xfe\xc0", 0, "/src\xff", "x\x80.c", 3);
	r.addr = 0x10;
	if (symjson_create("ab", 1, 0, &j) != 0 ||
	    symjson_add(j, 0x10, 0, &r) != 0 ||
	    (buf = answer(j, &len)) == NULL) {
		ok(0, "symjson_add");
		return;
	}
	tok = json_tokener_new();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, buf, (int)len);
	exp = "\"function\":\"f\xef\xbf\xbd\xef\xbf\xbd\",";
	ok(o != NULL && strstr(buf, exp) != NULL &&
	    strstr(buf, "\"file\":\"/src\xef\xbf\xbd/x\xef\xbf\xbd.c\"") !=
	    NULL, "an answer of names that are not UTF-8 is valid JSON: %.*s",
	    (int)len, buf);
	json_object_put(o);
	json_tokener_free(tok);
	free(buf);
}

/* A lookup for test_answer(): what it was asked, and one function. */
struct looked {
	size_t		 n;
	size_t		 mod[4];
	int		 at[4];
	uint64_t	 addr[4];
};

static int
fake_lookup(void *ctx, size_t mod, int at, uint64_t *addr,
    struct gsym_result *res)
{
	struct looked	*l = ctx;

	if (l->n < 4) {
		l->mod[l->n] = mod;
		l->at[l->n] = at;
		l->addr[l->n] = *addr;
	}
	l->n++;
	if (at == SYMJSON_AT_OFFSET)
		*addr += 0x1000;
	if (*addr != 0x10 && *addr != 0x1005)
		return -ENOENT;
	memset(res, 0, sizeof(*res));
	res->addr = *addr;
	res->start = *addr;
	frame(res, "f", 0, "", "a.c", 3);
	return 0;
}

/* Step an answer to its end; the bytes, malloc'd, or NULL. */
static char *
stepped(struct symjson *j, struct symjson_answer *a, size_t *len)
{
	char	*buf;
	int	 done = 0, steps = 0;

	while (!done && steps++ < 100)
		if (symjson_answer_step(a, j, &done) != 0)
			break;
	symjson_answer_free(a);
	if (!done || symjson_take(j, &buf, len) != 0) {
		symjson_free(j);
		return NULL;
	}
	return buf;
}

/*
 * The answers of POST /symbolize and of Tecken written from a request
 * and what became of its modules, the lookups the caller's: which
 * addresses it is asked, and what is written of each module.
 */
static void
test_answer(void)
{
	static const unsigned char bid[] = { 0xcd, 0xef };
	static const char body[] =
	    "{\"modules\":[{\"buildid\":\"ab\",\"addresses\":[16,32]},"
	    "{\"fileid\":\"00112233445566778899aabbccddeeff\","
	    "\"offsets\":[5]},{\"buildid\":\"cd\",\"offsets\":[5]}]}";
	static const char want[] =
	    "{\"modules\":[{\"buildid\":\"ab\",\"status\":\"ready\","
	    "\"how\":\"kept\",\"results\":[{\"address\":\"0x10\","
	    "\"frames\":[{\"function\":\"f\",\"start\":\"0x10\","
	    "\"offset\":0,\"file\":\"a.c\",\"line\":3,\"inlined\":false}]},"
	    "{\"address\":\"0x20\",\"frames\":[],\"error\":\"address 0x20 is "
	    "not in GSYM\"}]},"
	    "{\"fileid\":\"00112233445566778899aabbccddeeff\","
	    "\"buildid\":\"cdef\",\"status\":\"missing\",\"error\":"
	    "\"unknown\",\"results\":[]},"
	    "{\"buildid\":\"cd\",\"status\":\"ready\",\"how\":\"kept\","
	    "\"results\":[{\"file_offset\":\"0x5\",\"address\":\"0x1005\","
	    "\"frames\":[{\"function\":\"f\",\"start\":\"0x1005\","
	    "\"offset\":0,\"file\":\"a.c\",\"line\":3,"
	    "\"inlined\":false}]}]}]}";
	static const char tbody[] =
	    "{\"memoryMap\":[[\"a.so\",\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"],"
	    "[\"b.so\",\"99AC2AA1BC5FA13BF5C508C3D62BC86C0\"]],"
	    "\"stacks\":[[[0,16],[1,32]]]}";
	struct symjson_state	 st[3];
	struct symjson_batch	 b;
	struct symjson_tecken	 t;
	struct symjson_answer	*a;
	struct symjson		*j;
	struct looked		 l;
	const char		*why;
	char			*buf;
	size_t			 len;

	memset(st, 0, sizeof(st));
	st[0].status = st[2].status = "ready";
	st[0].ready = st[2].ready = 1;
	st[0].how = st[2].how = "kept";
	st[1].status = "missing";
	st[1].bid = bid;
	st[1].bidlen = sizeof(bid);
	memset(&l, 0, sizeof(l));
	if (symjson_parse_batch(body, strlen(body), 10, 10, &b, &why) != 3 ||
	    symjson_open(0, 0, &j) != 0) {
		ok(0, "answer: a batch read");
		return;
	}
	if (symjson_answer_batch(j, &b, st, fake_lookup, &l, &a) != 0 ||
	    (buf = stepped(j, a, &len)) == NULL) {
		ok(0, "answer: a batch written");
		symjson_batch_free(&b);
		return;
	}
	ok(len == strlen(want) && memcmp(buf, want, len) == 0,
	    "answer: a batch, as written before (%.*s)", (int)len, buf);
	ok(l.n == 3 && l.mod[0] == 0 && l.at[0] == SYMJSON_AT_ADDR &&
	    l.addr[0] == 16 && l.addr[1] == 32 && l.mod[2] == 2 &&
	    l.at[2] == SYMJSON_AT_OFFSET && l.addr[2] == 5,
	    "answer: addresses and offsets looked up, none of a module not "
	    "ready (%zu)", l.n);
	free(buf);
	memset(&t, 0, sizeof(t));
	ok(symjson_answer_least(&b, &t) == 3 * 64,
	    "answer: the least a batch's answer takes, its modules' heads");
	symjson_batch_free(&b);

	memset(&l, 0, sizeof(l));
	memset(st, 0, sizeof(st));
	if (symjson_parse_tecken(tbody, strlen(tbody), 10, 10, &t, &why) != 2 ||
	    symjson_open(0, SYMJSON_DEMANGLE, &j) != 0) {
		ok(0, "answer: a Tecken request read");
		return;
	}
	st[t.jobs[0].libs[0].mod].status = "ready";
	st[t.jobs[0].libs[0].mod].ready = 1;
	st[t.jobs[0].libs[0].mod].placed = 1;
	st[t.jobs[0].libs[1].mod].status = "ready";
	st[t.jobs[0].libs[1].mod].ready = 1;
	if (symjson_answer_tecken(j, &t, st, fake_lookup, &l, &a) != 0 ||
	    (buf = stepped(j, a, &len)) == NULL) {
		ok(0, "answer: a Tecken answer written");
		symjson_tecken_free(&t);
		return;
	}
	ok(l.n == 1 && l.mod[0] == t.jobs[0].libs[0].mod &&
	    l.at[0] == SYMJSON_AT_RELATIVE && l.addr[0] == 16,
	    "answer: Tecken frames looked up relative, only of modules "
	    "placed (%zu)", l.n);
	ok(strstr(buf, "{\"results\":[{\"stacks\":[[{\"frame\":0,"
	    "\"module_offset\":\"0x10\",\"module\":\"a.so\"") == buf &&
	    strstr(buf, "\"found_modules\":{\"a.so/"
	    "88AC2AA1BC5FA13BF5C508C3D62BC86C0\":true,\"b.so/"
	    "99AC2AA1BC5FA13BF5C508C3D62BC86C0\":false},\"module_errors\":"
	    "{\"b.so/99AC2AA1BC5FA13BF5C508C3D62BC86C0\":[{\"name\":"
	    "\"no_program_headers\",") != NULL &&
	    len > 4 && memcmp(buf + len - 4, "}}]}", 4) == 0,
	    "answer: Tecken, found_modules and module_errors (%.*s)",
	    (int)len, buf);
	ok(symjson_answer_least(&b, &t) == 2 * 45 + 4 + 4,
	    "answer: the least a Tecken answer takes");
	free(buf);
	symjson_tecken_free(&t);
}

/* The Firefox Profiler's /source/v1 and /asm/v1 (samply's API.md). */
static void
test_api(void)
{
	static const unsigned char bid[16] = { 0xa1, 0x2a, 0xac, 0x88, 0x5f,
	    0xbc, 0x3b, 0xa1, 0xf5, 0xc5, 0x08, 0xc3, 0xd6, 0x2b, 0xc8, 0x6c };
	static const char src[] = "{\"debugName\":\"app\",\"debugId\":"
	    "\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\",\"moduleOffset\":\"0x4b8f\","
	    "\"file\":\"/src/a.c\",\"other\":[{\"x\":[1,{}]}]}";
	static const char asm_[] = "{\"name\":\"app\",\"codeId\":"
	    "\"A12AAC885FBC3BA1F5C508C3D62BC86C01234567\",\"debugName\":null,"
	    "\"startAddress\":\"0x1d04742\",\"size\":132,"
	    "\"continueUntilFunctionEnd\":true}";
	static const char *bad[] = {
		"[]", "1", "{", "{}",
		"{\"file\":\"/a.c\"}",
		"{\"debugId\":\"88AC\",\"file\":\"/a.c\"}",
		"{\"debugId\":\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\"}",
		"{\"debugId\":\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\","
		"\"file\":{}}",
		"{\"debugId\":\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\","
		"\"file\":\"/a\\u0000b\"}",
		"{\"debugId\":\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\","
		"\"file\":\"/a.c\",\"file\":\"/b.c\"}",
		"{\"debugId\":\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\","
		"\"file\":\"/a.c\",\"moduleOffset\":\"0xzz\"}",
		"{\"debugId\":\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\","
		"\"file\":\"/a.c\",\"moduleOffset\":-1}",
		"{\"debugId\":\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\","
		"\"file\":\"/a.c\",\"moduleOffset\":\"0x10000000000000000\"}",
	};
	static const char not_utf8[] = "{\"debugId\":"
	    "\"88AC2AA1BC5FA13BF5C508C3D62BC86C0\",\"file\":\"/\xff\"}";
	struct symjson_api	 q;
	const char		*why;
	size_t			 i;
	int			 rc;

	rc = symjson_parse_api(src, strlen(src), 0, &q, &why);
	ok(rc == 0 && q.has_debug_id && memcmp(q.debug_id, bid, 16) == 0 &&
	    q.code_idlen == 0 && q.has_offset && q.module_offset == 0x4b8f &&
	    strcmp(q.file, "/src/a.c") == 0 &&
	    strcmp(q.debug_name, "app") == 0,
	    "source/v1: module, offset and file read, other keys skipped");
	symjson_api_free(&q);
	rc = symjson_parse_api(src, strlen(src), 1, &q, &why);
	ok(rc == -EINVAL && strstr(why, "startAddress") != NULL,
	    "asm/v1 of a source request: no startAddress (%s)", why);
	rc = symjson_parse_api(asm_, strlen(asm_), 1, &q, &why);
	ok(rc == 0 && !q.has_debug_id && q.code_idlen == 20 &&
	    q.code_id[0] == 0xa1 && q.code_id[19] == 0x67 &&
	    q.start == 0x1d04742 && q.size == 132 && q.until_end &&
	    q.debug_name == NULL && strcmp(q.name, "app") == 0,
	    "asm/v1: codeId of either case, a hex string and an integer, "
	    "null as if absent");
	symjson_api_free(&q);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		rc = symjson_parse_api(bad[i], strlen(bad[i]), 0, &q, &why);
		ok(rc == -EINVAL && q.file == NULL && why != NULL,
		    "source/v1: malformed '%s' -> -EINVAL (%s)", bad[i],
		    why ? why : "no message");
	}
	rc = symjson_parse_api(not_utf8, strlen(not_utf8), 0, &q, &why);
	ok(rc == -EINVAL, "source/v1: a file not UTF-8 -> -EINVAL (%s)", why);
}

int
main(void)
{
	test_parse();
	test_write();
	test_demangle();
	test_batch();
	test_batch_stream();
	test_tecken();
	test_tecken_stream();
	test_write_utf8();
	test_answer();
	test_api();
	return done();
}

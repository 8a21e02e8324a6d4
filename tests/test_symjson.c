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
	    "{\"function\":\"inl\",\"offset\":4,\"file\":\"x.c\",\"line\":7,"
	    "\"inlined\":true},"
	    "{\"function\":\"main\",\"offset\":0,\"file\":\"/src/a\\\"b/x.c\","
	    "\"line\":4294967295,\"inlined\":false}]},"
	    "{\"address\":\"0xffffffffffffffff\",\"frames\":[],"
	    "\"error\":\"address 0xffffffffffffffff is not in GSYM\"},"
	    "{\"address\":\"0x0\",\"frames\":[],"
	    "\"error\":\"corrupt record\"},"
	    "{\"address\":\"0x2\",\"frames\":["
	    "{\"function\":\"sym\",\"offset\":18446744073709551615,"
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
	    "\"ns::f(int, char const*)\",\"offset\":0,\"inlined\":false},"
	    "{\"function\":\"main\",\"offset\":0,\"inlined\":false}]},"
	    "{\"address\":\"0x2\",\"frames\":[{\"function\":"
	    "\"ns::f(int, char const*)\",\"offset\":0,\"inlined\":false}]}]}";
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

int
main(void)
{
	test_parse();
	test_write();
	test_demangle();
	return done();
}

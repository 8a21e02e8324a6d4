/*
 * Fuzz the /symbolize request bodies (hex lines or a JSON array for one
 * module, the JSON object of POST /symbolize for many, Tecken's, the
 * Firefox Profiler's /source/v1 and /asm/v1 objects), and the
 * answers' writer: the same bytes, cut at NULs, as the names, paths and
 * module of a result and a Tecken frame (DWARF's and a request's strings
 * may be any bytes), and the whole answer to each request read, its
 * modules found or not by turns.  Every answer written must be JSON that
 * a strict parser, checking UTF-8, takes whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "fuzz.h"
#include "symhubd/symjson.h"

/* The n-th NUL-terminated piece of a copy of the input, or "". */
static const char *
piece(const char *s, size_t size, unsigned n)
{
	size_t i = 0;

	while (n-- > 0) {
		i += strnlen(s + i, size - i) + 1;
		if (i >= size)
			return "";
	}
	return s + i;
}

/* Abort unless a strict parser takes out whole. */
static void
must_parse(const char *out, size_t len)
{
	yajl_handle	h;

	if ((h = yajl_alloc(NULL, NULL, NULL)) == NULL)
		abort();
	if (yajl_parse(h, (const unsigned char *)out, len) != yajl_status_ok ||
	    yajl_complete_parse(h) != yajl_status_ok)
		abort();	/* the writer made something not JSON */
	yajl_free(h);
}

static void
write_answer(const uint8_t *data, size_t size)
{
	struct gsym_result	 res;
	struct symjson		*j;
	char			*s, *out;
	size_t			 len;
	int			 rc;

	if ((s = malloc(size + 1)) == NULL)
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	memset(&res, 0, sizeof(res));
	res.nframes = 2;
	res.addr = 0x1010;
	res.start = 0x1000;
	res.size = 0x40;
	res.frames[0].name = piece(s, size, 0);
	res.frames[0].dir = piece(s, size, 1);
	res.frames[0].base = piece(s, size, 2);
	res.frames[0].line = 7;
	res.frames[0].inlined = 1;
	res.frames[1].name = piece(s, size, 3);
	res.frames[1].dir = "";
	res.frames[1].base = piece(s, size, 4);
	if (symjson_open(0, SYMJSON_DEMANGLE, &j) != 0) {
		free(s);
		return;
	}
	rc = symjson_text(j, "{\"s\":");
	rc |= symjson_string(j, s);
	rc |= symjson_text(j, ",\"r\":[");
	symjson_list(j);
	rc |= symjson_result(j, 0x1010, NULL, 0, &res);
	rc |= symjson_result(j, 0x1010, NULL, 0, &res);	/* strings known */
	rc |= symjson_text(j, "],\"t\":[");
	symjson_list(j);
	rc |= symjson_tecken_frame(j, 0, 0x10, piece(s, size, 5), 0, &res);
	rc |= symjson_text(j, "]}");
	symjson_take(j, &out, &len);
	if (rc == 0)
		must_parse(out, len);
	free(out);
	free(s);
}

/* A lookup for the whole answers: a function for even addresses. */
static int
lookup(void *ctx, size_t mod, int at, uint64_t *addr,
    struct gsym_result *res)
{
	(void)ctx;
	(void)mod;
	if (at == SYMJSON_AT_OFFSET && (*addr & 2) != 0)
		return -ERANGE;
	if ((*addr & 1) != 0)
		return -ENOENT;
	memset(res, 0, sizeof(*res));
	res->nframes = 1;
	res->addr = res->start = *addr;
	res->frames[0].name = "_ZN1a1bEv";
	res->frames[0].dir = "/src";
	res->frames[0].base = "a.c";
	res->frames[0].line = 1;
	return 0;
}

/* The whole answer to a request read, its modules ready or not by
 * turns: JSON that a strict parser takes. */
static void
whole_answer(const struct symjson_batch *b, const struct symjson_tecken *t)
{
	struct symjson_state	*st;
	struct symjson_answer	*a;
	struct symjson		*j;
	size_t			 i, n = b != NULL ? b->nmods : t->nmods, len;
	char			*out;
	int			 done = 0, rc;

	if ((st = calloc(n + 1, sizeof(*st))) == NULL)
		return;
	for (i = 0; i < n; i++) {
		st[i].ready = i % 3 != 2;
		st[i].placed = i % 3 == 0;
		st[i].status = st[i].ready ? "ready" : "missing";
		st[i].how = "kept";
		st[i].why = i % 2 ? NULL : "none \xff";
	}
	if (symjson_open(0, SYMJSON_DEMANGLE, &j) != 0) {
		free(st);
		return;
	}
	rc = b != NULL ? symjson_answer_batch(j, b, st, lookup, NULL, &a) :
	    symjson_answer_tecken(j, t, st, lookup, NULL, &a);
	while (rc == 0 && !done)
		rc = symjson_answer_step(a, j, &done);
	symjson_answer_free(a);
	symjson_take(j, &out, &len);
	if (rc == 0)
		must_parse(out, len);
	free(out);
	free(st);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symjson_batch	 b;
	struct symjson_tecken	 t;
	struct symjson_api	 q;
	uint64_t		*addrs = NULL;
	const char		*why;
	int			 asm_v1;

	(void)symjson_parse((const char *)data, size, 100000, &addrs, &why);
	free(addrs);
	if (symjson_parse_batch((const char *)data, size, 100000, 1000, &b,
	    &why) >= 0) {
		whole_answer(&b, NULL);
		symjson_batch_free(&b);
	}
	if (symjson_parse_tecken((const char *)data, size, 100000, 1000, &t,
	    &why) >= 0) {
		whole_answer(NULL, &t);
		symjson_tecken_free(&t);
	}
	for (asm_v1 = 0; asm_v1 < 2; asm_v1++)
		if (symjson_parse_api((const char *)data, size, asm_v1, &q,
		    &why) == 0) {
			/* What the routes rely on. */
			if ((!asm_v1 && (q.file == NULL ||
			    strlen(q.file) > SYMJSON_FILE_MAX)) ||
			    (!q.has_debug_id && q.code_idlen == 0) ||
			    q.code_idlen > SYMJSON_CODE_ID_MAX ||
			    (q.debug_name != NULL &&
			    strlen(q.debug_name) > 255))
				abort();
			symjson_api_free(&q);
		}
	write_answer(data, size);
	return 0;
}

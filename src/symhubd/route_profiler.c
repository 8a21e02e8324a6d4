/*
 * route_profiler: POST /source/v1 and /asm/v1, the Firefox Profiler's
 * source and assembly views, in the shapes samply's API.md gives them
 * (symjson.h reads the requests).  A module is named as /symbolicate/v5
 * names it, by its Breakpad id (the build-id's first 16 bytes), or
 * whole by its codeId.
 *
 * /source/v1 serves a file only when the module's DWARF names it (the
 * same list `debuginfod-find source` would ask from), and serves it from
 * what /buildid/ID/source/PATH answers with (records_open()): never a
 * path of the client's choosing.  /asm/v1 decodes at most DISASM_MAX
 * bytes of the module's code (disasm.h), from its executable or from a
 * debuginfo that kept the code.
 *
 * A module is looked for in the store alone (a Breakpad id holds only
 * the first 16 bytes of a build-id, which no upstream is asked by); a
 * source of a module held here is asked upstream on a miss, as
 * /buildid/ID/source/PATH would be.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/hex.h"
#include "base/utf8.h"
#include "common/elfinfo.h"
#include "bundle.h"
#include "derive.h"
#include "disasm.h"
#include "log.h"
#include "records.h"
#include "route.h"
#include "symjson.h"

/* A request of either is a few names and a path. */
#define API_BODY_MAX	(16u * 1024)

/* The largest source served: it is held whole, and escaped into the
 * answer (some 1.5 MB for the largest C file of a Linux tree, the
 * generated ones of a browser tens of MB). */
#define SOURCE_MAX	(64u * 1024 * 1024)

size_t
route_api_body_max(const struct config *cfg)
{
	(void)cfg;
	return API_BODY_MAX;
}

/* The files of a module that hold what each route reads, in the order
 * they are tried. */
static const enum cache_kind debug_first[] = { CACHE_DEBUGINFO,
    CACHE_EXECUTABLE };
static const enum cache_kind code_first[] = { CACHE_EXECUTABLE,
    CACHE_DEBUGINFO };

/* The build-id of the module q names: its codeId when the store has a
 * file of it, else the stored id its debugId begins.  @return 0; -ENOENT. */
static int
module_id(struct http *h, const struct symjson_api *q,
    unsigned char bid[CACHE_ID_MAX], size_t *bidlen)
{
	size_t i;

	for (i = 0; i < 2 && q->code_idlen > 0 &&
	    q->code_idlen <= CACHE_ID_MAX; i++)
		if (records_have(h->c, debug_first[i], q->code_id,
		    q->code_idlen)) {
			memcpy(bid, q->code_id, q->code_idlen);
			*bidlen = q->code_idlen;
			return 0;
		}
	for (i = 0; i < 2 && q->has_debug_id; i++)
		if (cache_find_prefix(h->c, debug_first[i], q->debug_id,
		    sizeof(q->debug_id), bid, bidlen) == 0)
			return 0;
	return -ENOENT;
}

/* Read the request body, or answer.  @return 1 when answered. */
static int
read_request(struct req *r, int asm_v1, struct symjson_api *q,
    enum MHD_Result *ret)
{
	const char	*why = NULL;
	int		 rc;

	if (r->too_long) {
		*ret = reply_text(r, REPLY_TOO_LARGE, "request body too large",
		    "profiler");
		return 1;
	}
	rc = symjson_parse_api(r->body.p != NULL ? (const char *)r->body.p :
	    "", r->body.len, asm_v1, q, &why);
	if (rc == 0)
		return 0;
	*ret = reply_text(r, rc == -EINVAL ? REPLY_BAD_REQUEST :
	    REPLY_INTERNAL, why, "profiler");
	return 1;
}

/* "YYYY-MM-DDTHH:MM:SSZ" of t into buf (JSON, quoted), or null. */
static int
put_time(struct buf *b, int64_t t)
{
	struct tm	tm;
	time_t		tt = (time_t)t;
	char		s[40];

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL ||
	    strftime(s, sizeof(s), "\"%Y-%m-%dT%H:%M:%SZ\"", &tm) == 0)
		return buf_puts(b, "null");
	return buf_puts(b, s);
}

static enum MHD_Result
answer_json(struct req *r, struct buf *b, const char *how)
{
	struct MHD_Response	*resp;
	size_t			 len = b->len;

	resp = reply_buffer(b->p, len, "application/json");
	b->p = NULL;	/* the response's now, or freed */
	buf_free(b);
	return reply_response(r, REPLY_OK, resp, len, how);
}

/* ---- /source/v1 ---- */

/* What the walk over the DWARF's file names looks for. */
struct want {
	const char	*file;		/* canonical when absolute */
	int		 absolute;
	char		*found;		/* malloc'd: the canonical name */
	int		 more;		/* a relative file ends two names */
};

/* Is name (a DWARF file name, canonical and rooted as
 * webapi_canon_source() makes a relative one) the wanted file?  An
 * absolute request is the name canonicalized; a relative one ends it,
 * after a '/', and must end only one. */
static int
match_source(void *ctx, const char *path)
{
	struct want	*w = ctx;
	size_t		 n, fl;
	char		*c;

	if ((c = webapi_canon_source(path)) == NULL)
		return errno == ENOMEM ? -ENOMEM : 0;
	n = strlen(c);
	fl = strlen(w->file);
	if (w->absolute ? strcmp(c, w->file) == 0 : n > fl &&
	    c[n - fl - 1] == '/' && strcmp(c + n - fl, w->file) == 0) {
		if (w->found != NULL && strcmp(w->found, c) != 0)
			w->more = 1;
		if (w->found == NULL) {
			w->found = c;
			return w->absolute;	/* the one: stop */
		}
	}
	free(c);
	return 0;
}

/* When the symbols were made, as far as the hub knows: the file's
 * Last-Modified, or the upload's time (an upload carries no other);
 * 0 (null) for a fetched file whose upstream gave none. */
static int64_t
symbols_time(const struct cache_record *rec)
{
	if (rec->last_modified > 0)
		return rec->last_modified;
	if (rec->origin != NULL && strncmp(rec->origin, "upload:", 7) == 0)
		return rec->stored;
	return 0;
}

/* Does the module's DWARF name q->file?  @return 0 with w->found; -ENOENT
 * not named; -ENODATA no file with DWARF; -errno. */
static int
dwarf_names(struct http *h, const unsigned char *bid, size_t bidlen,
    struct want *w, int64_t *symbols_lm)
{
	struct cache_record	rec;
	size_t			i;
	int			fd, rc = -ENODATA;

	for (i = 0; i < 2 && rc != 0; i++) {
		struct cache_key k = { debug_first[i], bid, bidlen, NULL };

		if (records_open(h->c, h->s, &k, &rec, &fd) != 0)
			continue;
		*symbols_lm = symbols_time(&rec);
		rc = elfinfo_sources(fd, match_source, w);
		close(fd);
		cache_record_release(&rec);
		if (rc == 1)
			rc = 0;
		if (rc == 0 && (w->found == NULL || w->more))
			rc = -ENOENT;
		if (rc == -ENOENT && i == 0) {
			/* The debuginfo says; no need to ask the code's. */
			break;
		}
	}
	return rc;
}

/* The text of key's source as its debuginfo's line tables embed it
 * (derive.h), appended to out.  @return 0, or derive_source()'s -errno. */
static int
embedded_source(struct http *h, const struct cache_key *key, struct buf *out,
    int64_t *lm)
{
	struct cache_record	 rec, parent;
	char			*named = NULL;
	int			 rc;

	rc = derive_source(h->dv, key, out, &rec, &parent, &named);
	if (rc == 0) {
		*lm = rec.last_modified;
		cache_record_release(&parent);
	}
	free(named);
	return rc;
}

enum MHD_Result
route_source_v1(struct http *h, struct req *r)
{
	struct symjson_api	 q;
	struct want		 w;
	struct cache_record	 rec;
	struct buf		 b = { 0 }, emb = { 0 };
	unsigned char		 bid[CACHE_ID_MAX];
	size_t			 bidlen, left;
	uint64_t		 tlen;
	int64_t			 source_lm = 0;
	char			*canon = NULL, *text = NULL;
	int64_t			 symbols_lm = 0;
	enum MHD_Result		 ret;
	ssize_t			 got;
	int			 fd = -1, rc;

	if (read_request(r, 0, &q, &ret))
		return ret;
	memset(&w, 0, sizeof(w));
	w.absolute = q.file[0] == '/';
	if (w.absolute) {
		if ((canon = strdup(q.file)) == NULL) {
			ret = MHD_NO;
			goto out;
		}
		(void)webapi_canon_path(q.file, canon);
		w.file = canon;
	} else {
		/* ./x and x name the same file. */
		w.file = q.file;
		while (w.file[0] == '.' && w.file[1] == '/')
			w.file += 2;
	}
	if (w.file[0] == '\0' || (!w.absolute && (strncmp(w.file, "../",
	    3) == 0 || strstr(w.file, "/../") != NULL))) {
		ret = reply_text(r, REPLY_BAD_REQUEST, "\"file\" is empty or "
		    "climbs out of its directory", "profiler");
		goto out;
	}
	/* Another tenant's private module is not here either. */
	if (module_id(h, &q, bid, &bidlen) != 0 ||
	    !route_may_read(h, r, bid, bidlen)) {
		ret = reply_text(r, REPLY_NOT_FOUND, "no debuginfo here for "
		    "this module (debugId, codeId)", "profiler: no module");
		goto out;
	}
	rc = dwarf_names(h, bid, bidlen, &w, &symbols_lm);
	if (rc == -ENOENT) {
		/* samply's "not present in the symbolication frames". */
		ret = reply_text(r, REPLY_FORBIDDEN, w.more ? "\"file\" ends "
		    "more than one path the module's DWARF names: ask for it "
		    "whole" : "the requested path is not one the module's "
		    "DWARF names", "profiler: not named");
		goto out;
	}
	if (rc != 0) {
		ret = reply_text(r, rc == -ENODATA ? REPLY_NOT_FOUND :
		    REPLY_UNPROCESSABLE, rc == -ENODATA ? "no debuginfo here "
		    "for this module" : "the module's DWARF cannot be read",
		    "profiler: no DWARF");
		goto out;
	}
	{
		struct cache_key k = { CACHE_SOURCE, bid, bidlen, w.found };

		if ((rc = records_open(h->c, h->s, &k, &rec, &fd)) != 0)
			fd = -1;	/* nothing to close or release */
		/* Where /buildid/ID/source/PATH finds it too: the bundle
		 * uploaded with the build (put in the store, then read
		 * there), else the text the line tables embed. */
		if (rc == -ENOENT && bundle_expand(h->c, bid, bidlen,
		    w.found) == 0 &&
		    (rc = records_open(h->c, h->s, &k, &rec, &fd)) != 0)
			fd = -1;
		if ((rc == -ENOENT || rc == -ENODATA) && h->dv != NULL &&
		    embedded_source(h, &k, &emb, &source_lm) == 0)
			rc = 0;
		/* As /buildid/ID/source/PATH would: ask the upstreams,
		 * once, and read the store again when they answered. */
		if (rc == -ENOENT && r->ask.fetches == 0 && h->f != NULL) {
			hex_encode(bid, bidlen, r->w.idhex);
			if (route_ask_upstream(h, r, &k, w.found, 0, 0)) {
				ret = MHD_YES;
				goto out;
			}
		}
	}
	if (rc == -ENOENT && r->ask.fetches > 0) {
		ret = route_after_fetch(r);
		goto out;
	}
	if (rc == -ENOENT || rc == -ENODATA) {
		ret = reply_text(r, REPLY_NOT_FOUND, "source not available "
		    "here", rc == -ENODATA ? "profiler: negative" :
		    "profiler: no source");
		goto out;
	}
	if (rc != 0) {
		log_limited("lookup", NULL, "source/v1 %s: %s", w.found,
		    strerror(-rc));
		ret = reply_text(r, REPLY_INTERNAL, "store error", "error");
		goto out;
	}
	if (fd >= 0) {
		tlen = rec.size;
		source_lm = rec.last_modified;
	} else {
		tlen = emb.len;
	}
	/* Escaped, a file grows at most 6 times; the answer's bound is
	 * --symbolize-max-answer's. */
	if (tlen > SOURCE_MAX ||
	    !route_answer_fits(h, tlen + strlen(q.file) + 128)) {
		ret = reply_textf(r, REPLY_TOO_LARGE, "profiler", "the source "
		    "is larger than /source/v1 serves (%u MiB, or "
		    "--symbolize-max-answer)", SOURCE_MAX >> 20);
		goto out;
	}
	if (fd >= 0) {
		if ((text = malloc(tlen + 1)) == NULL) {
			ret = MHD_NO;
			goto out;
		}
		for (left = 0; left < tlen; left += (size_t)got)
			if ((got = pread(fd, text + left, tlen - left,
			    (off_t)left)) <= 0)
				break;
		if (left < tlen) {
			ret = reply_text(r, REPLY_INTERNAL, "store error",
			    "error");
			goto out;
		}
	}
	rc = buf_puts(&b, "{\"symbolsLastModified\":");
	rc |= put_time(&b, symbols_lm);
	rc |= buf_puts(&b, ",\"sourceLastModified\":");
	rc |= put_time(&b, source_lm);
	rc |= buf_puts(&b, ",\"file\":\"");
	rc |= utf8_json(&b, q.file, strlen(q.file));
	rc |= buf_puts(&b, "\",\"source\":\"");
	rc |= utf8_json(&b, fd >= 0 ? (const char *)text :
	    (const char *)emb.p, (size_t)tlen);
	rc |= buf_puts(&b, "\"}");
	if (rc != 0) {
		ret = MHD_NO;
		goto out;
	}
	snprintf(r->how_buf, sizeof(r->how_buf), "profiler: source");
	ret = answer_json(r, &b, r->how_buf);
out:
	if (fd >= 0) {
		close(fd);
		cache_record_release(&rec);
	}
	buf_free(&b);
	buf_free(&emb);
	free(text);
	free(w.found);
	free(canon);
	symjson_api_free(&q);
	return ret;
}

/* ---- /asm/v1 ---- */

/* One instruction: [offset,"text"] (disasm_insn_fn); ctx is the buf. */
static int
put_insn(void *ctx, uint64_t offset, const char *text)
{
	struct buf	*b = ctx;
	int		 rc;

	rc = buf_printf(b, "%s[%" PRIu64 ",\"", b->len > 0 &&
	    b->p[b->len - 1] != '[' ? "," : "", offset);
	rc |= utf8_json(b, text, strlen(text));
	rc |= buf_puts(b, "\"]");
	return rc != 0 ? -ENOMEM : 0;
}

enum MHD_Result
route_asm_v1(struct http *h, struct req *r)
{
	struct symjson_api	 q;
	struct cache_record	 rec;
	struct disasm		 d;
	struct buf		 b = { 0 };
	unsigned char		 bid[CACHE_ID_MAX];
	uint64_t		 size, end;
	size_t			 bidlen, head;
	enum MHD_Result		 ret;
	int			 fd, rc = -ENODATA;

	if (read_request(r, 1, &q, &ret))
		return ret;
	size = q.size;
	if (size > DISASM_MAX) {
		ret = reply_textf(r, REPLY_TOO_LARGE, "profiler", "\"size\" "
		    "is over the %u bytes /asm/v1 decodes at most", DISASM_MAX);
		goto out;
	}
	if (module_id(h, &q, bid, &bidlen) != 0 ||
	    !route_may_read(h, r, bid, bidlen)) {
		ret = reply_text(r, REPLY_NOT_FOUND, "no executable or "
		    "debuginfo here for this module (debugId, codeId)",
		    "profiler: no module");
		goto out;
	}
	/* samply's continueUntilFunctionEnd: up to the end of the function
	 * symbol holding startAddress, within the bound. */
	for (head = 0; head < 2 && q.until_end; head++) {
		struct cache_key k = { code_first[head], bid, bidlen,
		    NULL };

		if (records_open(h->c, h->s, &k, &rec, &fd) != 0)
			continue;
		rc = disasm_function_end(fd, q.start, &end);
		close(fd);
		cache_record_release(&rec);
		if (rc == 0) {
			if (end > q.start && end - q.start > size)
				size = end - q.start < DISASM_MAX ?
				    end - q.start : DISASM_MAX;
			break;
		}
	}
	rc = -ENODATA;
	for (head = 0; head < 2 && rc == -ENODATA; head++) {
		struct cache_key k = { code_first[head], bid, bidlen,
		    NULL };

		if (records_open(h->c, h->s, &k, &rec, &fd) != 0)
			continue;
		b.len = 0;
		if (buf_puts(&b, "[") != 0)
			rc = -ENOMEM;
		else
			rc = disasm_code(fd, q.start, size, &d, put_insn, &b);
		close(fd);
		cache_record_release(&rec);
	}
	switch (rc) {
	case 0:
		break;
	case -ENODATA:
		ret = reply_text(r, REPLY_NOT_FOUND, "no file here holds the "
		    "module's code (a debuginfo without it only)",
		    "profiler: no code");
		goto out;
	case -ERANGE:
		ret = reply_textf(r, REPLY_NOT_FOUND, "profiler: no code",
		    "startAddress 0x%" PRIx64 " is in no code section of the "
		    "module", q.start);
		goto out;
	case -ENOTSUP:
		ret = reply_text(r, REPLY_UNPROCESSABLE, "the module's "
		    "machine is not one /asm/v1 decodes (x86-64, i386, "
		    "aarch64)", "profiler");
		goto out;
	case -ENOEXEC:
		ret = reply_text(r, REPLY_UNPROCESSABLE, "the module's file is "
		    "not ELF", "profiler");
		goto out;
	case -ENOMEM:
		ret = MHD_NO;
		goto out;
	default:
		log_limited("lookup", NULL, "asm/v1: %s", strerror(-rc));
		ret = reply_text(r, REPLY_INTERNAL, "store error", "error");
		goto out;
	}
	if (buf_puts(&b, "]}") != 0) {
		ret = MHD_NO;
		goto out;
	}
	if (!route_answer_fits(h, b.len + 128)) {
		ret = reply_text(r, REPLY_TOO_LARGE, "the answer would be "
		    "larger than --symbolize-max-answer: ask for fewer bytes",
		    "profiler");
		goto out;
	}
	{
		struct buf	 a = { 0 };

		rc = buf_printf(&a, "{\"startAddress\":\"0x%" PRIx64 "\","
		    "\"size\":\"0x%" PRIx64 "\",\"arch\":\"%s\",\"syntax\":"
		    "[\"%s\"],\"instructions\":", d.start, d.size, d.arch,
		    d.syntax);
		rc |= buf_add(&a, b.p, b.len);
		if (rc != 0) {
			buf_free(&a);
			ret = MHD_NO;
			goto out;
		}
		snprintf(r->how_buf, sizeof(r->how_buf), "profiler: %" PRIu64
		    " bytes of %s", d.size, d.arch);
		ret = answer_json(r, &a, r->how_buf);
	}
out:
	buf_free(&b);
	symjson_api_free(&q);
	return ret;
}

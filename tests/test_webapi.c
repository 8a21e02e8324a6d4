/*
 * test_webapi: request URL parsing, id validation and path canonicalization.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "base/hex.h"
#include "common/dwsource.h"
#include "common/webapi.h"
#include "tap.h"

#define ID40	"0123456789abcdef0123456789abcdef01234567"

static int
has(const char *why, const char *word)
{
	return why != NULL && strstr(why, word) != NULL;
}

/* Parse url and expect an artifact of kind k with canonical extra x. */
static int
artifact(const char *url, enum cache_kind k, const char *x)
{
	struct webapi_req	 req;
	const char		*why;
	int			 good;

	if (webapi_parse(url, &req, &why) != 0)
		return 0;
	good = req.route == WEBAPI_ARTIFACT && req.kind == k &&
	    (x == NULL ? req.extra == NULL :
	    req.extra != NULL && strcmp(req.extra, x) == 0);
	webapi_req_free(&req);
	return good;
}

/* Parse url and expect failure rc with a reason containing word. */
static int
fails(const char *url, int rc, const char *word)
{
	struct webapi_req	 req;
	const char		*why = NULL;
	int			 got, good;

	got = webapi_parse(url, &req, &why);
	good = got == rc && has(why, word) && req.extra == NULL &&
	    req.route == 0 && req.idlen == 0;
	webapi_req_free(&req);
	return good;
}

static int
canon(const char *in, const char *want)
{
	char	*buf;
	int	 good;

	if ((buf = malloc(strlen(in) + 1)) == NULL)
		return 0;
	good = webapi_canon_path(in, buf) == 0 && strcmp(buf, want) == 0;
	/* And in place. */
	memcpy(buf, in, strlen(in) + 1);
	good = good && webapi_canon_path(buf, buf) == 0 &&
	    strcmp(buf, want) == 0;
	free(buf);
	return good;
}

static void
test_hex(void)
{
	static const unsigned char bytes[] = { 0x00, 0x0f, 0xa5, 0xff };
	unsigned char	 out[WEBAPI_ID_HEX_MAX / 2];
	char		 hex[2 * sizeof(bytes) + 1], big[WEBAPI_ID_HEX_MAX + 3];

	memset(hex, 'x', sizeof(hex));
	hex_encode(bytes, sizeof(bytes), hex);
	ok(strcmp(hex, "000fa5ff") == 0, "webapi_hex lowercase: %s", hex);
	hex_encode(bytes, 0, hex);
	ok(hex[0] == '\0', "webapi_hex of nothing is empty");

	ok(webapi_parse_hexid("000fa5ff", 8, out) == 4 &&
	    memcmp(out, bytes, 4) == 0, "parse_hexid decodes 4 bytes");
	ok(webapi_parse_hexid("ab", 2, out) == 1 && out[0] == 0xab,
	    "parse_hexid: 2 characters");
	ok(webapi_parse_hexid("abcd", 2, out) == 1 && out[0] == 0xab,
	    "parse_hexid honours len");
	ok(webapi_parse_hexid("", 0, out) == -EINVAL, "parse_hexid: empty");
	ok(webapi_parse_hexid("abc", 3, out) == -EINVAL,
	    "parse_hexid: odd length");
	ok(webapi_parse_hexid("AB", 2, out) == -EINVAL,
	    "parse_hexid: uppercase");
	ok(webapi_parse_hexid("0g", 2, out) == -EINVAL,
	    "parse_hexid: non-hex");
	memset(big, 'a', sizeof(big));
	big[WEBAPI_ID_HEX_MAX + 2] = '\0';
	ok(webapi_parse_hexid(big, WEBAPI_ID_HEX_MAX, out) ==
	    WEBAPI_ID_HEX_MAX / 2, "parse_hexid: 128 characters");
	ok(webapi_parse_hexid(big, WEBAPI_ID_HEX_MAX + 2, out) == -EINVAL,
	    "parse_hexid: 130 characters");
}

static void
test_ids(void)
{
	struct webapi_req	 req;
	const char		*why;
	char			 url[512], id128[WEBAPI_ID_HEX_MAX + 1];
	char			 id130[WEBAPI_ID_HEX_MAX + 3];
	char			 back[WEBAPI_ID_HEX_MAX + 1];
	int			 rc;

	rc = webapi_parse("/buildid/ab/debuginfo", &req, &why);
	ok(rc == 0 && req.route == WEBAPI_ARTIFACT &&
	    req.kind == CACHE_DEBUGINFO && req.idlen == 1 &&
	    req.id[0] == 0xab && strcmp(req.idhex, "ab") == 0 &&
	    req.extra == NULL && req.raw_extra == NULL,
	    "2-character id, debuginfo");
	webapi_req_free(&req);

	rc = webapi_parse("/buildid/" ID40 "/executable", &req, &why);
	hex_encode(req.id, req.idlen, back);
	ok(rc == 0 && req.kind == CACHE_EXECUTABLE && req.idlen == 20 &&
	    req.id[0] == 0x01 && req.id[19] == 0x67 &&
	    strcmp(req.idhex, ID40) == 0 && strcmp(back, ID40) == 0,
	    "40-character id, executable; round trip through webapi_hex");
	webapi_req_free(&req);

	memset(id128, 'f', WEBAPI_ID_HEX_MAX);
	id128[0] = '1';
	id128[WEBAPI_ID_HEX_MAX] = '\0';
	snprintf(url, sizeof(url), "/buildid/%s/debuginfo", id128);
	rc = webapi_parse(url, &req, &why);
	ok(rc == 0 && req.idlen == 64 && req.id[0] == 0x1f &&
	    req.id[63] == 0xff && strcmp(req.idhex, id128) == 0,
	    "128-character id");
	webapi_req_free(&req);

	memset(id130, 'f', WEBAPI_ID_HEX_MAX + 2);
	id130[WEBAPI_ID_HEX_MAX + 2] = '\0';
	snprintf(url, sizeof(url), "/buildid/%s/debuginfo", id130);
	ok(fails(url, -EINVAL, "longer"), "130-character id");
	snprintf(url, sizeof(url), "/buildid/%.129s/debuginfo", id130);
	ok(fails(url, -EINVAL, "longer"), "129-character id");

	ok(fails("/buildid/AB/debuginfo", -EINVAL, "lowercase"),
	    "uppercase id");
	ok(fails("/buildid/aB/debuginfo", -EINVAL, "lowercase"),
	    "mixed-case id");
	ok(fails("/buildid/abc/debuginfo", -EINVAL, "odd"),
	    "odd-length id");
	ok(fails("/buildid/a/debuginfo", -EINVAL, "odd"),
	    "1-character id");
	ok(fails("/buildid//debuginfo", -EINVAL, "empty"), "empty id");
	ok(fails("/buildid/", -EINVAL, "empty"), "empty id, nothing after");
	ok(fails("/buildid/zz/debuginfo", -EINVAL, "non-hex"),
	    "non-hex id");
	ok(fails("/buildid/a-/debuginfo", -EINVAL, "non-hex"),
	    "id with punctuation");
	ok(fails("/buildid/%41%42/debuginfo", -EINVAL, "build-id"),
	    "percent-encoded id is not decoded again");
	ok(fails("/buildid/ab /debuginfo", -EINVAL, "odd"),
	    "id with a space");
}

static void
test_routes(void)
{
	struct webapi_req	 req;
	const char		*why;

	ok(webapi_parse("/", &req, &why) == 0 && req.route == WEBAPI_ROOT &&
	    req.extra == NULL, "root");
	webapi_req_free(&req);
	ok(webapi_parse("/metrics", &req, &why) == 0 &&
	    req.route == WEBAPI_METRICS, "metrics");
	webapi_req_free(&req);

	ok(fails("", -ENOENT, "route"), "empty url");
	ok(fails("/metrics/", -ENOENT, "route"), "metrics with a slash");
	ok(fails("/metricsx", -ENOENT, "route"), "metricsx");
	ok(fails("//", -ENOENT, "route"), "//");
	ok(fails("/buildid", -ENOENT, "route"), "/buildid alone");
	ok(fails("/buildidab/debuginfo", -ENOENT, "route"), "/buildidab");
	ok(fails("/BUILDID/ab/debuginfo", -ENOENT, "route"),
	    "route names are case-sensitive");
	ok(fails("//buildid/ab/debuginfo", -ENOENT, "route"),
	    "leading //");
	ok(fails("/nothing/here", -ENOENT, "route"), "unknown route");

	ok(fails("/buildid/ab", -EINVAL, "unknown artifact type"),
	    "id with nothing after");
	ok(fails("/buildid/ab/", -EINVAL, "unknown artifact type"),
	    "id with an empty type");
	ok(fails("/buildid/ab/foo", -EINVAL, "unknown artifact type"),
	    "unknown artifact type foo");
	ok(fails("/buildid/ab/Debuginfo", -EINVAL, "unknown artifact type"),
	    "artifact types are case-sensitive");
	ok(fails("/buildid/ab/debuginf", -EINVAL, "unknown artifact type"),
	    "a prefix of a type is not the type");
	ok(fails("/buildid/ab/sourcex/a.c", -EINVAL, "unknown artifact type"),
	    "sourcex");
	ok(fails("/buildid/ab/debuginfo/x", -EINVAL, "after"),
	    "trailing garbage after debuginfo");
	ok(fails("/buildid/ab/executable/", -EINVAL, "after"),
	    "trailing slash after executable");
}

static void
test_source(void)
{
	struct webapi_req	 req;
	const char		*why, *url;
	int			 rc;

	url = "/buildid/ab/source/usr/src/x.c";
	rc = webapi_parse(url, &req, &why);
	ok(rc == 0 && req.route == WEBAPI_ARTIFACT &&
	    req.kind == CACHE_SOURCE && req.extra != NULL &&
	    strcmp(req.extra, "/usr/src/x.c") == 0 &&
	    req.raw_extra == url + strlen("/buildid/ab/source"),
	    "source path, raw_extra points into url");
	webapi_req_free(&req);
	ok(req.extra == NULL, "webapi_req_free clears extra");

	url = "/buildid/ab/source//usr/src/./x.c";
	rc = webapi_parse(url, &req, &why);
	ok(rc == 0 && strcmp(req.extra, "/usr/src/x.c") == 0 &&
	    req.raw_extra == url + strlen("/buildid/ab/source") &&
	    strcmp(req.raw_extra, "//usr/src/./x.c") == 0,
	    "source // and ., raw_extra keeps the client's spelling");
	webapi_req_free(&req);

	ok(artifact("/buildid/ab/source/usr/../../../etc/passwd",
	    CACHE_SOURCE, "/etc/passwd"), ".. above root in a source path");
	ok(artifact("/buildid/ab/source/a/b/../c.c", CACHE_SOURCE,
	    "/a/c.c"), ".. in a source path");
	ok(artifact("/buildid/ab/source/src/%2e%2e/x.c", CACHE_SOURCE,
	    "/src/%2e%2e/x.c"), "%%2e%%2e is a name, not decoded again");
	ok(artifact("/buildid/ab/source/a%2fb", CACHE_SOURCE, "/a%2fb"),
	    "%%2f is a name, not a slash");
	ok(artifact("/buildid/ab/source/a\tb\x01.c", CACHE_SOURCE,
	    "/a\tb\x01.c"), "control characters are accepted");
	ok(artifact("/buildid/ab/source/d/", CACHE_SOURCE, "/d/"),
	    "trailing slash kept");

	ok(fails("/buildid/ab/source", -EINVAL, "missing"),
	    "source without path");
	ok(fails("/buildid/ab/source/", -EINVAL, "missing"),
	    "source with path /");
	ok(fails("/buildid/ab/source//", -EINVAL, "missing"),
	    "source with path //");
	ok(fails("/buildid/ab/source/a/..", -EINVAL, "missing"),
	    "source path that reduces to /");
	ok(fails("/buildid/AB/source/x.c", -EINVAL, "lowercase"),
	    "bad id with a source path");
}

/* webapi_canon_source(in) is want. */
static int
canon_source(const char *in, const char *want)
{
	char	*c;
	int	 good;

	if ((c = webapi_canon_source(in)) == NULL)
		return 0;
	good = strcmp(c, want) == 0;
	free(c);
	return good;
}

static void
test_canon_source(void)
{
	ok(canon_source("./csu/version.c", "/csu/version.c"),
	    "canon_source: a relative comp_dir's name, rooted");
	ok(canon_source("./csu/../sysdeps/x86/abi-note.c",
	    "/sysdeps/x86/abi-note.c"),
	    "canon_source: .. under a relative comp_dir");
	ok(canon_source("../../x.c", "/x.c"),
	    "canon_source: .. never climbs above the root");
	ok(canon_source("/b/src/./x.c", "/b/src/x.c"),
	    "canon_source: an absolute name as canon");
	errno = 0;
	ok(webapi_canon_source("") == NULL && errno == EINVAL,
	    "canon_source: an empty name is none");
}

static void
test_canon(void)
{
	char buf[8];

	ok(canon("/", "/"), "canon /");
	ok(canon("/a/b/c", "/a/b/c"), "canon leaves a clean path alone");
	ok(canon("/a//b/./c/", "/a/b/c/"), "canon /a//b/./c/");
	ok(canon("/a/b/../../../c", "/c"), "canon /a/b/../../../c");
	ok(canon("/..", "/"), "canon /..");
	ok(canon("/../../x", "/x"), "canon /../../x");
	ok(canon("/.", "/"), "canon /.");
	ok(canon("/a/b/..", "/a/"), "canon /a/b/.. keeps a trailing /");
	ok(canon("/a/b/.", "/a/b/"), "canon /a/b/. keeps a trailing /");
	ok(canon("///a///", "/a/"), "canon ///a///");
	ok(canon("/a/.../b", "/a/.../b"), "canon ... is a name");
	ok(canon("/a/..b/.c/c.", "/a/..b/.c/c."), "canon dotted names");
	ok(canon("/a/./../b", "/b"), "canon /a/./../b");
	ok(canon("/x", "/x"), "canon /x");
	ok(canon("/ab/cd/../ef", "/ab/ef"), "canon /ab/cd/../ef");
	ok(webapi_canon_path("a/b", buf) == -EINVAL, "canon relative path");
	ok(webapi_canon_path("", buf) == -EINVAL, "canon empty path");
}

static void
test_section(void)
{
	struct webapi_req	 req;
	const char		*why, *url;
	char			 name[300], u[400];
	int			 rc;

	url = "/buildid/" ID40 "/section/.debug_info";
	rc = webapi_parse(url, &req, &why);
	ok(rc == 0 && req.route == WEBAPI_ARTIFACT &&
	    req.kind == CACHE_SECTION && req.extra != NULL &&
	    strcmp(req.extra, ".debug_info") == 0 && req.extra != req.raw_extra &&
	    req.raw_extra == url + strlen(url) - strlen(".debug_info") &&
	    req.idlen == 20, "section .debug_info");
	webapi_req_free(&req);

	ok(artifact("/buildid/ab/section/.gnu_debugdata", CACHE_SECTION,
	    ".gnu_debugdata"), "section .gnu_debugdata");
	ok(artifact("/buildid/ab/section/%2edebug", CACHE_SECTION,
	    "%2edebug"), "percent-looking section name left alone");

	memset(name, 'x', 255);
	name[255] = '\0';
	snprintf(u, sizeof(u), "/buildid/ab/section/%s", name);
	ok(artifact(u, CACHE_SECTION, name), "255-byte section name");
	memset(name, 'x', 256);
	name[256] = '\0';
	snprintf(u, sizeof(u), "/buildid/ab/section/%s", name);
	ok(fails(u, -EINVAL, "longer"), "256-byte section name");

	ok(fails("/buildid/ab/section", -EINVAL, "missing"),
	    "section without name");
	ok(fails("/buildid/ab/section/", -EINVAL, "empty"),
	    "empty section name");
	ok(fails("/buildid/ab/section/a/b", -EINVAL, "'/'"),
	    "section name with /");
	ok(fails("/buildid/ab/section/.text/", -EINVAL, "'/'"),
	    "section name with trailing /");
}

static void
test_free(void)
{
	struct webapi_req	 req;
	const char		*why = "unchanged";

	memset(&req, 0, sizeof(req));
	webapi_req_free(&req);
	webapi_req_free(NULL);
	ok(req.extra == NULL, "webapi_req_free on a zeroed request and NULL");

	/* Garbage in req before the call must not be freed or kept. */
	memset(&req, 0x5a, sizeof(req));
	ok(webapi_parse("/buildid/ab/source/", &req, &why) == -EINVAL &&
	    req.extra == NULL && req.raw_extra == NULL,
	    "failure after allocating leaves a zeroed request");
	webapi_req_free(&req);
	webapi_req_free(&req);
	ok(req.extra == NULL, "webapi_req_free twice after failure");

	ok(webapi_parse("/", &req, &why) == 0 && why == NULL,
	    "why is NULL on success");
	ok(webapi_parse("/buildid/ab/debuginfo", &req, NULL) == 0,
	    "why may be NULL");
	webapi_req_free(&req);
}

static void
test_fileid(void)
{
	struct webapi_req	 r;
	const char		*why;
	static const char	 fid[] = "caf6e5907166ac76eef618e5f7f59cd9";
	char			 url[128];

	snprintf(url, sizeof(url), "/fileid/%s/debuginfo", fid);
	ok(webapi_parse(url, &r, &why) == 0 && r.route == WEBAPI_ARTIFACT &&
	    r.by_fileid && r.kind == CACHE_DEBUGINFO && r.idlen == 16 &&
	    r.id[0] == 0xca && strcmp(r.idhex, fid) == 0,
	    "/fileid/FILEID/debuginfo");
	webapi_req_free(&r);
	snprintf(url, sizeof(url), "/fileid/%s/section/.debug_line", fid);
	ok(webapi_parse(url, &r, &why) == 0 && r.by_fileid &&
	    r.kind == CACHE_SECTION && strcmp(r.extra, ".debug_line") == 0,
	    "/fileid/FILEID/section/NAME");
	webapi_req_free(&r);
	ok(webapi_parse("/fileid/abcd/debuginfo", &r, &why) == -EINVAL &&
	    why != NULL, "a short FileID rejected: %s", why ? why : "");
	ok(webapi_parse("/fileid/CAF6E5907166AC76EEF618E5F7F59CD9/executable",
	    &r, &why) == -EINVAL, "an uppercase FileID rejected");
	snprintf(url, sizeof(url), "/buildid/%s/debuginfo", fid);
	ok(webapi_parse(url, &r, &why) == 0 && !r.by_fileid && r.idlen == 16,
	    "a 32-hex id under /buildid is a build-id first");
	webapi_req_free(&r);
	ok(webapi_parse("/fileidx/00/debuginfo", &r, &why) == -ENOENT,
	    "/fileidx is no route");
}

static int
range(const char *hdr, uint64_t size, int want, uint64_t woff, uint64_t wlen)
{
	uint64_t	off = 999, len = 999;
	int		rc = webapi_range(hdr, size, &off, &len);

	return rc == want && (rc != 1 || (off == woff && len == wlen));
}

static void
test_range(void)
{
	ok(range(NULL, 100, 0, 0, 0), "no Range: whole");
	ok(range("bytes=0-9", 100, 1, 0, 10), "bytes=0-9");
	ok(range("bytes=10-", 100, 1, 10, 90), "bytes=10-: to the end");
	ok(range("bytes=-30", 100, 1, 70, 30), "bytes=-30: the last 30");
	ok(range("bytes=-300", 100, 1, 0, 100), "a suffix over the size: all");
	ok(range("bytes=90-500", 100, 1, 90, 10), "a last byte past the end");
	ok(range("bytes=99-99", 100, 1, 99, 1), "the last byte");
	ok(range(" Bytes = 5-6 ", 100, 1, 5, 2), "blanks, case");
	ok(range("bytes=100-", 100, -ENODATA, 0, 0), "first at the end: 416");
	ok(range("bytes=-0", 100, -ENODATA, 0, 0), "an empty suffix: 416");
	ok(range("bytes=0-0", 0, -ENODATA, 0, 0), "an empty file: 416");
	ok(range("bytes=5-4", 100, 0, 0, 0), "last before first: ignored");
	ok(range("bytes=0-9,20-29", 100, 0, 0, 0), "several: whole");
	ok(range("bytes=-5,-6", 100, 0, 0, 0), "several suffixes: whole");
	ok(range("lines=0-9", 100, 0, 0, 0), "another unit: whole");
	ok(range("bytes=a-9", 100, 0, 0, 0), "not a number: whole");
	ok(range("bytes=0-9x", 100, 0, 0, 0), "trailing junk: whole");
	ok(range("bytes", 100, 0, 0, 0), "no '=': whole");
	ok(range("bytes=99999999999999999999-", 100, 0, 0, 0),
	    "20 digits: whole");
	ok(range("bytes=1234567890123456789-", UINT64_MAX, 1,
	    1234567890123456789ull, UINT64_MAX - 1234567890123456789ull),
	    "19 digits, a huge size");
}

static void
test_etag(void)
{
	ok(webapi_etag_match("\"abc\"", "\"abc\""), "the same tag");
	ok(!webapi_etag_match("\"abd\"", "\"abc\""), "another tag");
	ok(webapi_etag_match("*", "\"abc\""), "*");
	ok(webapi_etag_match("\"x\", W/\"abc\"", "\"abc\""),
	    "weak, second in a list");
	ok(webapi_etag_match("\"abc\"", "W/\"abc\""), "against a weak tag");
	ok(!webapi_etag_match("abc", "\"abc\""), "unquoted: nothing");
	ok(!webapi_etag_match("\"abc", "\"abc\""), "unterminated: nothing");
	ok(!webapi_etag_match("\"ab\"", "\"abc\""), "a prefix: no");
	ok(!webapi_etag_match("", "\"abc\""), "empty: no");
	ok(!webapi_etag_match(NULL, "\"abc\""), "none: no");
	ok(!webapi_etag_match("\"abc\"", NULL), "no ETag: no");
}

static void
test_metadata(void)
{
	struct webapi_req	 req;
	struct webapi_meta	 m;
	const char		*why = NULL;

	ok(webapi_parse("/metadata", &req, &why) == 0 &&
	    req.route == WEBAPI_METADATA, "/metadata is a route");
	webapi_req_free(&req);
	ok(fails("/metadata/", -ENOENT, "route"), "/metadata/ is not");
	ok(webapi_metadata(NULL, "x", &m, &why) == -EINVAL &&
	    strcmp(why, "/metadata webapi error, need key and value") == 0,
	    "metadata: no key: elfutils' text");
	ok(webapi_metadata("file", NULL, &m, &why) == -EINVAL,
	    "metadata: no value");
	ok(webapi_metadata("source", "x", &m, &why) == -ENOTSUP &&
	    strcmp(why, "/metadata webapi error, unsupported key") == 0,
	    "metadata: another key: elfutils' text");
	ok(webapi_metadata("File", "x", &m, NULL) == -ENOTSUP,
	    "metadata: keys are case-sensitive");
	ok(webapi_metadata("file", "/usr/bin/ls", &m, &why) == 0 &&
	    m.key == WEBAPI_META_FILE && strcmp(m.keyname, "file") == 0 &&
	    webapi_meta_match(&m, "/usr/bin/ls") &&
	    !webapi_meta_match(&m, "/usr/bin/lsx") &&
	    !webapi_meta_match(&m, "/usr/bin/l*"), "metadata: file is equality");
	ok(webapi_metadata("glob", "/usr/bin/*", &m, &why) == 0 &&
	    m.key == WEBAPI_META_GLOB && webapi_meta_match(&m, "/usr/bin/ls") &&
	    !webapi_meta_match(&m, "/usr/bin/x/ls") &&
	    !webapi_meta_match(&m, "/usr/lib/ls"),
	    "metadata: glob is fnmatch with FNM_PATHNAME (* stops at /)");
	ok(webapi_metadata("glob", "/usr/*/l[st]", &m, &why) == 0 &&
	    webapi_meta_match(&m, "/usr/bin/ls") &&
	    webapi_meta_match(&m, "/usr/sbin/lt") &&
	    !webapi_meta_match(&m, "/usr/bin/lx"), "metadata: glob classes");
	ok(webapi_metadata("buildid", "0a1b", &m, &why) == 0 &&
	    m.key == WEBAPI_META_BUILDID && m.idlen == 2 && m.id[0] == 0x0a &&
	    m.id[1] == 0x1b && !webapi_meta_match(&m, "0a1b"),
	    "metadata: a build-id is decoded, and matches no name");
	ok(webapi_metadata("buildid", "0A1B", &m, &why) == 0 && m.idlen == 0,
	    "metadata: uppercase hex is no id (finds nothing)");
	ok(webapi_metadata("buildid", "abc", &m, &why) == 0 && m.idlen == 0,
	    "metadata: odd length is no id");
	ok(webapi_metadata("buildid", "", &m, &why) == 0 && m.idlen == 0,
	    "metadata: empty is no id");
}

static void
test_accept_encoding(void)
{
	const unsigned Z = WEBAPI_ENC_ZSTD, G = WEBAPI_ENC_GZIP;

	ok(webapi_accept_encoding(NULL) == 0, "accept-encoding: none");
	ok(webapi_accept_encoding("") == 0, "accept-encoding: empty");
	ok(webapi_accept_encoding("deflate, gzip, br, zstd") == (Z | G),
	    "accept-encoding: libcurl's list (libdebuginfod)");
	ok(webapi_accept_encoding("gzip") == G, "accept-encoding: gzip");
	ok(webapi_accept_encoding("x-gzip") == G, "accept-encoding: x-gzip");
	ok(webapi_accept_encoding("ZSTD") == Z, "accept-encoding: any case");
	ok(webapi_accept_encoding("br, deflate, identity") == 0,
	    "accept-encoding: none of ours");
	ok(webapi_accept_encoding("*") == (Z | G), "accept-encoding: *");
	ok(webapi_accept_encoding("*, zstd;q=0") == G &&
	    webapi_accept_encoding("zstd;q=0, *") == G,
	    "accept-encoding: q=0 wins over *, in either order");
	ok(webapi_accept_encoding("gzip;q=0.5, zstd;q=0.000") == G,
	    "accept-encoding: q values");
	ok(webapi_accept_encoding("gzip ; q=0.001") == G,
	    "accept-encoding: blanks around the parameter");
	ok(webapi_accept_encoding("gzip;q=x") == 0,
	    "accept-encoding: a malformed q refuses");
	ok(webapi_accept_encoding("gzipx, zst, ,,") == 0,
	    "accept-encoding: prefixes and empty elements are nothing");
	ok(webapi_accept_encoding("gzip;level=1;q=1") == G,
	    "accept-encoding: other parameters");
}

/* A request's path against the source names of a debuginfo (libdw's,
 * NULL-terminated; dwsource.h): the result, and the path matched in
 * *got (a static copy).  The names kept must answer alike. */
static int
srcmatch(const char *want, const char *const *names, const char **got)
{
	static char		 path[256];
	struct dwsource_names	 nl;
	struct dwsource		 d, m;
	int			 rc, mrc;

	memset(&d, 0, sizeof(d));
	memset(&m, 0, sizeof(m));
	memset(&nl, 0, sizeof(nl));
	d.want = m.want = want;
	d.names = &nl;
	rc = 0;
	for (; *names != NULL && rc == 0; names++)
		rc = dwsource_name(&d, *names);
	if (rc == 0)
		rc = dwsource_result(&d);
	snprintf(path, sizeof(path), "%s", d.path != NULL ? d.path : "");
	*got = path;
	mrc = dwsource_match(&m, &nl);
	if (mrc != rc || (rc != -ENOENT && strcmp(m.path, d.path) != 0))
		rc = -EPROTO;
	d.names = NULL;
	dwsource_free(&d);
	dwsource_free(&m);
	dwsource_names_free(&nl);
	return rc;
}

static void
test_dwsource(void)
{
	static const char *const abs[] = { "/b/src/main.c",
	    "/b/src/util/main.c", "/b/include/sq.h", "/b/src/./x/../io.c",
	    NULL };
	static const char *const rel[] = { "./libio/./libio/ioputs.c",
	    "./stdio/./stdio/ioputs.c", "main.c", NULL };
	/* As elfinfo_sources() gives them: a relative comp_dir joined once. */
	static const char *const once[] = { "./libio/ioputs.c",
	    "./libio/../stdio/x.c", NULL };
	const char *got;

	ok(srcmatch("/b/src/main.c", abs, &got) == 0 &&
	    strcmp(got, "/b/src/main.c") == 0, "dwsource: an exact path");
	ok(srcmatch("/src/main.c", abs, &got) == 0 &&
	    strcmp(got, "/b/src/main.c") == 0,
	    "dwsource: a relative request that ends one path");
	ok(srcmatch("/main.c", abs, &got) == -ENOTUNIQ,
	    "dwsource: two paths end in it: ambiguous");
	ok(srcmatch("/ain.c", abs, &got) == -ENOENT,
	    "dwsource: a suffix only at a '/'");
	ok(srcmatch("/io.c", abs, &got) == 0 &&
	    strcmp(got, "/b/src/io.c") == 0, "dwsource: names made canonical");
	ok(srcmatch("/etc/passwd", abs, &got) == -ENOENT,
	    "dwsource: what no name ends in: not found");
	ok(srcmatch("/libio/ioputs.c", rel, &got) == 0 &&
	    strcmp(got, "/libio/ioputs.c") == 0,
	    "dwsource: a relative name, without libdw's repeat");
	ok(srcmatch("/libio/libio/ioputs.c", rel, &got) == 0 &&
	    strcmp(got, "/libio/ioputs.c") == 0,
	    "dwsource: ... and in libdw's spelling: the same file");
	ok(srcmatch("/ioputs.c", rel, &got) == -ENOTUNIQ,
	    "dwsource: relative names can be ambiguous too");
	ok(srcmatch("/main.c", rel, &got) == 0 && strcmp(got, "/main.c") == 0,
	    "dwsource: a relative name is rooted");
	ok(srcmatch("/libio/libio/ioputs.c", once, &got) == 0 &&
	    strcmp(got, "/libio/ioputs.c") == 0,
	    "dwsource: a name joined once, asked in libdw's spelling");
	ok(srcmatch("/libio/ioputs.c", once, &got) == 0 &&
	    strcmp(got, "/libio/ioputs.c") == 0,
	    "dwsource: ... and as it is");
	ok(dwsource_doubled("/a/b/a/b/c.c") == 4 &&
	    dwsource_doubled("/a/a") == 0 && dwsource_doubled("/a/b/c") == 0 &&
	    dwsource_doubled("/ab/a/x") == 0,
	    "dwsource_doubled: a repeated leading sequence only");
}

int
main(void)
{
	test_hex();
	test_ids();
	test_routes();
	test_source();
	test_canon();
	test_canon_source();
	test_dwsource();
	test_section();
	test_free();
	test_fileid();
	test_range();
	test_etag();
	test_metadata();
	test_accept_encoding();
	return done();
}

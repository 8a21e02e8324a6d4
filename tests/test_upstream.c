/*
 * test_upstream: the table of upstream kinds, driven directly: which row
 * an --upstream URL picks, what each row reads from an answer's headers,
 * what the debuginfod row sends, what the bucket row holds and names as
 * origin.  The fetch engine relies on these without knowing the rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "cache/cache.h"
#include "symhubd/config.h"
#include "symhubd/upstream.h"
#include "tap.h"

/* Feed one header line, as libcurl does (CRLF included), to the
 * engine's reader, then to the kind's. */
static void
feed(const struct upstream_kind *k, struct upstream_reply *r,
    const char *line)
{
	char	buf[512];
	size_t	n;

	n = (size_t)snprintf(buf, sizeof(buf), "%s\r\n", line);
	if (!upstream_reply_header(r, buf, n) && k->header != NULL)
		(void)k->header(r, buf, n);
}

static void
test_registry(void)
{
	ok(upstream_kind_of("http://example.org") == &upstream_debuginfod,
	    "http:// is a debuginfod server");
	ok(upstream_kind_of("https://example.org/x") == &upstream_debuginfod,
	    "https:// is a debuginfod server");
	ok(upstream_kind_of("file:///srv/debug") == NULL,
	    "file:// is no kind (yet)");
	ok(upstream_kind_of("bucket") == NULL,
	    "the bucket is not picked by URL");
	ok(upstream_debuginfod.setup != NULL && upstream_bucket.setup != NULL,
	    "every row sets up a GET");
	ok(upstream_bucket.tier == 0 && upstream_debuginfod.tier == 1,
	    "the bucket is asked first, alone");
	ok(upstream_debuginfod.side != NULL && upstream_bucket.side == NULL,
	    "side queries go to debuginfod servers only");
}

static void
test_headers(void)
{
	struct upstream_reply	r;

	memset(&r, 0, sizeof(r));
	feed(&upstream_debuginfod, &r, "HTTP/1.1 200 OK");
	ok(r.xsize == -1, "a status line: no size said");
	feed(&upstream_debuginfod, &r, "X-DEBUGINFOD-SIZE: 1234");
	ok(r.xsize == 1234, "X-DEBUGINFOD-SIZE read");
	feed(&upstream_debuginfod, &r, "x-debuginfod-file:  /usr/lib/x.so ");
	ok(r.xfile != NULL && strcmp(r.xfile, "/usr/lib/x.so") == 0,
	    "X-DEBUGINFOD-FILE in any case, trimmed");
	feed(&upstream_debuginfod, &r, "Content-Encoding: identity");
	ok(r.encoded == 0, "identity is no encoding");
	feed(&upstream_debuginfod, &r, "Content-Encoding: gzip");
	ok(r.encoded == 1, "gzip is one");
	feed(&upstream_debuginfod, &r, "Last-Modified: "
	    "Thu, 01 Jan 1970 00:01:40 GMT");
	ok(r.lastmod == 100, "Last-Modified read");
	feed(&upstream_debuginfod, &r, "x-amz-meta-sha256: ab");
	ok(r.sha256 == NULL, "a debuginfod server's x-amz-meta-* ignored");
	feed(&upstream_debuginfod, &r, "X-DEBUGINFOD-SIZE: 12x");
	ok(r.xsize == -2, "a garbled size is marked so");
	feed(&upstream_debuginfod, &r, "HTTP/1.1 200 OK");
	ok(r.xfile == NULL && r.xsize == -1 && r.encoded == 0 &&
	    r.lastmod == 0, "a new response (a redirect) starts afresh");

	feed(&upstream_bucket, &r, "x-amz-meta-sha256: ab");
	feed(&upstream_bucket, &r, "x-amz-meta-origin: up1");
	feed(&upstream_bucket, &r, "x-amz-meta-debuginfod-archive: /p.rpm");
	ok(r.sha256 != NULL && strcmp(r.sha256, "ab") == 0 &&
	    r.origin != NULL && strcmp(r.origin, "up1") == 0 &&
	    r.xarchive != NULL && strcmp(r.xarchive, "/p.rpm") == 0,
	    "the bucket's x-amz-meta-* read");
	feed(&upstream_bucket, &r, "X-DEBUGINFOD-FILE: /x");
	ok(r.xfile != NULL && strcmp(r.xfile, "/x") == 0,
	    "and X-DEBUGINFOD-* as from any server");
	upstream_reply_clear(&r);
}

/* Is "line" in l? */
static int
has(const struct curl_slist *l, const char *line)
{
	for (; l != NULL; l = l->next)
		if (strcmp(l->data, line) == 0)
			return 1;
	return 0;
}

static void
test_debuginfod(void)
{
	struct config		 cfg;
	struct upstream		 u;
	struct upstream_ask	 ask;
	struct cache_key	 key;
	unsigned char		 id[2] = { 0xab, 0xcd };
	struct curl_slist	*hdrs = NULL;
	CURL			*easy = NULL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.up_connect = 2;
	cfg.up_first_byte = 5;
	cfg.up_timeout = 60;
	memset(&u, 0, sizeof(u));
	ok(upstream_open(&u, &upstream_debuginfod, &cfg,
	    "http://127.0.0.1:9/d name=up1", NULL) == 0 &&
	    strcmp(u.spec.name, "up1") == 0 && u.tier == 1,
	    "a debuginfod upstream opened from its spec");
	memset(&key, 0, sizeof(key));
	key.kind = CACHE_DEBUGINFO;
	key.id = id;
	key.idlen = sizeof(id);
	memset(&ask, 0, sizeof(ask));
	ask.key = &key;
	ask.idhex = "abcd";
	ask.ua = "gdb symhub-via/HUB";
	ask.xff = "10.0.0.1, 10.0.0.2";
	ask.via = "OTHER";
	ask.hub = "HUB";
	ask.maxsize = 4096;
	ok(u.kind->setup(&u, &ask, &easy, &hdrs) == 0, "a GET set up");
	ok(has(hdrs, "X-Forwarded-For: 10.0.0.1, 10.0.0.2"),
	    "X-Forwarded-For sent");
	ok(has(hdrs, "X-Symhub-Via: OTHER, HUB"),
	    "X-Symhub-Via: the chain, this hub last");
	ok(has(hdrs, "X-DEBUGINFOD-MAXSIZE: 4096"),
	    "the client's maximum size passed on");
	curl_easy_cleanup(easy);
	curl_slist_free_all(hdrs);
	upstream_close(&u);

	memset(&u, 0, sizeof(u));
	ok(upstream_open(&u, &upstream_debuginfod, &cfg, "ftp://x", NULL) < 0,
	    "a URL the row does not take is refused");
	upstream_close(&u);
}

static void
test_bucket(void)
{
	struct config		 cfg;
	struct upstream		 u;
	struct upstream_reply	 r;
	struct cache_key	 key;
	unsigned char		 id[2] = { 0xab, 0xcd };

	memset(&cfg, 0, sizeof(cfg));
	memset(&u, 0, sizeof(u));
	ok(upstream_open(&u, &upstream_bucket, &cfg, "http://127.0.0.1:9/b",
	    NULL) == 0 && strcmp(u.spec.name, "bucket") == 0 && u.tier == 0,
	    "the bucket's upstream is named bucket");
	memset(&key, 0, sizeof(key));
	key.kind = CACHE_DEBUGINFO;
	key.id = id;
	key.idlen = sizeof(id);
	ok(u.kind->holds(&u, &key), "it may hold a debuginfo");
	key.kind = CACHE_SOURCE;
	key.extra = "relative/path.c";
	ok(!u.kind->holds(&u, &key), "not a source it cannot name");
	memset(&r, 0, sizeof(r));
	ok(strcmp(u.kind->origin(&u, &r), "bucket") == 0,
	    "no origin recorded: the bucket");
	r.origin = "up1";
	ok(strcmp(u.kind->origin(&u, &r), "up1") == 0,
	    "the origin another replica recorded");
	upstream_close(&u);
}

int
main(void)
{
	test_registry();
	test_headers();
	test_debuginfod();
	test_bucket();
	return done();
}

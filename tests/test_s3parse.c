/*
 * test_s3parse: the S3 client's parts that need no server: the --s3 URL,
 * the credentials (variables and file), the config check, key encoding,
 * the status table, and the XML answers (ListObjectsV2, errors).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s3/s3.h"
#include "s3/s3conf.h"
#include "s3/s3xml.h"
#include "tap.h"
#include "testlib.h"

static char *dir;

static int
url(const char *u, struct s3_config *cfg)
{
	const char *why;

	memset(cfg, 0, sizeof(*cfg));
	return s3conf_url(u, cfg, &why);
}

static void
urls(void)
{
	static const char *bad[] = {
		"", "127.0.0.1:18085/b", "ftp://h/bkt", "http://", "http:///bkt",
		"http://h", "http://h/", "http://h?region=x",
		"http://h:0/bkt", "http://h:65536/bkt", "http://h:/bkt",
		"http://h:12a/bkt", "http://user:pw@h/bkt", "http://u@h/bkt",
		"http://h/bkt/key", "http://h/bkt//", "http://h/Bkt",
		"http://h/b", "http://h/-bkt", "http://h/bkt-", "http://h/a..b",
		"http://h/bkt?region=", "http://h/bkt?region=US_EAST",
		"http://h/bkt?x=1", "http://h/bkt?region=a&x=1",
		"http://h/bkt#frag", "http://[::1/bkt", "http://[]/bkt",
		"http://h h/bkt",
	};
	struct s3_config	 cfg;
	const char		*why;
	size_t			 i;
	int			 all = 1;

	ok(url("http://127.0.0.1:18085/symhub?region=eu-west-3", &cfg) == 0 &&
	    strcmp(cfg.endpoint, "http://127.0.0.1:18085") == 0 &&
	    strcmp(cfg.bucket, "symhub") == 0 &&
	    strcmp(cfg.region, "eu-west-3") == 0,
	    "endpoint, bucket, region: %s %s %s", cfg.endpoint, cfg.bucket,
	    cfg.region);
	ok(url("HTTPS://s3.example.org/my.bucket-1/", &cfg) == 0 &&
	    strcmp(cfg.endpoint, "https://s3.example.org") == 0 &&
	    strcmp(cfg.bucket, "my.bucket-1") == 0 &&
	    strcmp(cfg.region, "us-east-1") == 0,
	    "scheme lowercased, a '/' after the bucket, region us-east-1");
	ok(url("http://[::1]:9000/bkt", &cfg) == 0 &&
	    strcmp(cfg.endpoint, "http://[::1]:9000") == 0,
	    "an IPv6 endpoint");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&cfg, 0, sizeof(cfg));
		why = NULL;
		if (s3conf_url(bad[i], &cfg, &why) != -EINVAL || why == NULL) {
			printf("# accepted: %s\n", bad[i]);
			all = 0;
		}
	}
	ok(all, "%zu malformed URLs: -EINVAL, each with a reason",
	    sizeof(bad) / sizeof(bad[0]));
	memset(&cfg, 0, sizeof(cfg));
	s3conf_url("http://u:p@h/bkt", &cfg, &why);
	ok(why != NULL && strstr(why, "credentials") != NULL,
	    "credentials in the URL: \"%s\"", why);
}

static int
file(const char *text, struct s3_config *cfg, const char **why,
    unsigned *line)
{
	char	path[512];
	FILE	*fp;

	snprintf(path, sizeof(path), "%s/credentials", dir);
	if ((fp = fopen(path, "w")) == NULL)
		return -errno;
	fputs(text, fp);
	fclose(fp);
	memset(cfg, 0, sizeof(*cfg));
	return s3conf_file(path, cfg, why, line);
}

static void
credentials(void)
{
	struct s3_config	 cfg;
	const char		*why;
	unsigned		 line;
	int			 rc;

	rc = file("# symhub\n[other]\naws_access_key_id = no\n\n"
	    "[ default ]\r\n  aws_access_key_id=test:tester \n"
	    "; a comment\naws_secret_access_key = testing\nregion = x\n"
	    "[later]\naws_secret_access_key = no\n", &cfg, &why, &line);
	ok(rc == 0 && strcmp(cfg.access_key, "test:tester") == 0 &&
	    strcmp(cfg.secret_key, "testing") == 0,
	    "AWS credentials file: [default] read, other sections not");
	rc = file("[default]\naws_access_key_id = a\n", &cfg, &why, &line);
	ok(rc == -EINVAL && line == 0 && why != NULL,
	    "a missing secret: -EINVAL (%s)", why);
	rc = file("[default]\naws_access_key_id = a\nnonsense\n", &cfg, &why,
	    &line);
	ok(rc == -EINVAL && line == 3, "a line that is no KEY = VALUE: "
	    "-EINVAL at line %u", line);
	rc = file("[default\n", &cfg, &why, &line);
	ok(rc == -EINVAL && line == 1, "a section without ']'");
	rc = file("[default]\naws_access_key_id = a b\n"
	    "aws_secret_access_key = s\n", &cfg, &why, &line);
	ok(rc == -EINVAL && line == 2, "a key with a space: line %u", line);
	rc = file("[default]\naws_access_key_id = a\naws_secret_access_key = s\n"
	    "aws_session_token = t\n", &cfg, &why, &line);
	ok(rc == -EINVAL && line == 4, "a session token: refused (%s)", why);
	ok(s3conf_file("/nonexistent/credentials", &cfg, &why, &line) ==
	    -ENOENT, "a missing file: -ENOENT");

	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	memset(&cfg, 0, sizeof(cfg));
	ok(s3conf_env(&cfg, &why) == -ENOENT, "no variables: -ENOENT");
	setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE", 1);
	ok(s3conf_env(&cfg, &why) == -EINVAL, "one variable: -EINVAL (%s)",
	    why);
	setenv("AWS_SECRET_ACCESS_KEY", "wJalr/K7MDENG+bPxRfi", 1);
	ok(s3conf_env(&cfg, &why) == 0 &&
	    strcmp(cfg.access_key, "AKIAEXAMPLE") == 0 &&
	    strcmp(cfg.secret_key, "wJalr/K7MDENG+bPxRfi") == 0,
	    "both variables read");
	setenv("AWS_SECRET_ACCESS_KEY", "", 1);
	ok(s3conf_env(&cfg, &why) == -EINVAL, "an empty secret: -EINVAL");
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
}

static void
check(void)
{
	struct s3_config	 cfg;
	struct s3		*s3;
	const char		*why;

	url("http://127.0.0.1:1/bkt", &cfg);
	ok(s3conf_check(&cfg, &why) == -EINVAL && s3_create(&cfg, &s3) ==
	    -EINVAL, "no keys: refused (%s)", why);
	snprintf(cfg.access_key, sizeof(cfg.access_key), "test:tester");
	snprintf(cfg.secret_key, sizeof(cfg.secret_key), "testing");
	ok(s3conf_check(&cfg, &why) == 0, "a whole config passes");
	ok(s3_create(&cfg, &s3) == 0 && s3 != NULL,
	    "s3_create makes no request");
	s3_free(s3);
	s3_free(NULL);
	snprintf(cfg.endpoint, sizeof(cfg.endpoint), "http://h/path");
	ok(s3conf_check(&cfg, &why) == -EINVAL, "an endpoint with a path: %s",
	    why);
	snprintf(cfg.endpoint, sizeof(cfg.endpoint), "http://h");
	snprintf(cfg.region, sizeof(cfg.region), "Region 1");
	ok(s3conf_check(&cfg, &why) == -EINVAL, "a bad region: %s", why);
}

static void
keys(void)
{
	char	out[S3_KEY_MAX * 3 + 1], small[8], big[S3_KEY_MAX + 2];

	ok(s3_key_encode("source/usr/src/a b+c.c", 1, out, sizeof(out)) > 0 &&
	    strcmp(out, "source/usr/src/a%20b%2Bc.c") == 0,
	    "a path: '/' kept, space and '+' encoded: %s", out);
	ok(s3_key_encode("buildid/", 0, out, sizeof(out)) > 0 &&
	    strcmp(out, "buildid%2F") == 0, "a query value: '/' encoded");
	ok(s3_key_encode("AZaz09-._~", 0, out, sizeof(out)) == 10 &&
	    strcmp(out, "AZaz09-._~") == 0, "unreserved characters kept");
	ok(s3_key_encode("\xc3\xa9=%", 1, out, sizeof(out)) > 0 &&
	    strcmp(out, "%C3%A9%3D%25") == 0,
	    "UTF-8 and '=' '%%': uppercase %%XX: %s", out);
	ok(s3_key_encode("\xe2\x82", 1, out, sizeof(out)) == -EINVAL,
	    "a cut UTF-8 character: -EINVAL");
	ok(s3_key_encode("\xc0\xaf", 1, out, sizeof(out)) == -EINVAL,
	    "an overlong UTF-8 form: -EINVAL");
	ok(s3_key_encode("\xed\xa0\x80", 1, out, sizeof(out)) == -EINVAL,
	    "a UTF-16 surrogate: -EINVAL");
	ok(s3_key_encode("\xef\xbf\xbe", 1, out, sizeof(out)) == -EINVAL,
	    "U+FFFE (not XML): -EINVAL");
	ok(s3_key_encode("a\tb", 1, out, sizeof(out)) == -EINVAL &&
	    s3_key_encode("a\x7f", 1, out, sizeof(out)) == -EINVAL,
	    "control characters: -EINVAL");
	ok(s3_key_encode("", 1, out, sizeof(out)) == -EINVAL, "empty: -EINVAL");
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ok(s3_key_encode(big, 1, out, sizeof(out)) == -EINVAL,
	    "1025 bytes: -EINVAL");
	big[S3_KEY_MAX] = '\0';
	ok(s3_key_encode(big, 1, out, sizeof(out)) == S3_KEY_MAX,
	    "1024 bytes: taken");
	ok(s3_key_encode("a b c d", 1, small, sizeof(small)) ==
	    -ENAMETOOLONG, "a buffer too small: -ENAMETOOLONG");
}

static void
statuses(void)
{
	ok(s3_errno_http(200, NULL) == 0 && s3_errno_http(204, NULL) == 0,
	    "2xx: 0");
	ok(s3_errno_http(404, "NoSuchKey") == -ENOENT, "404: -ENOENT");
	ok(s3_errno_http(403, "SignatureDoesNotMatch") == -EACCES,
	    "403: -EACCES");
	ok(s3_errno_http(412, NULL) == -EEXIST, "412: -EEXIST");
	ok(s3_errno_http(501, "NotImplemented") == -ENOTSUP, "501: -ENOTSUP");
	ok(s3_errno_http(503, "SlowDown") == -EAGAIN &&
	    s3_errno_http(500, NULL) == -EAGAIN &&
	    s3_errno_http(429, NULL) == -EAGAIN, "500, 503, 429: -EAGAIN");
	ok(s3_errno_http(400, "InvalidArgument") == -EINVAL &&
	    s3_errno_http(400, "RequestTimeout") == -EAGAIN,
	    "400: -EINVAL, but RequestTimeout: -EAGAIN");
	ok(s3_errno_http(301, "PermanentRedirect") == -EPROTO &&
	    s3_errno_http(409, NULL) == -EPROTO, "others: -EPROTO");
}

/* ---- XML ---- */

struct got {
	char		keys[8][S3XML_KEY_MAX + 1];
	uint64_t	sizes[8];
	int		n, stop;
};

static int
take(void *ctx, const char *key, uint64_t size)
{
	struct got *g = ctx;

	if (g->n < 8) {
		snprintf(g->keys[g->n], sizeof(g->keys[0]), "%s", key);
		g->sizes[g->n] = size;
	}
	g->n++;
	return g->stop && g->n == g->stop ? 42 : 0;
}

static int
list(const char *xml, struct got *g, struct s3xml_page *page)
{
	memset(g, 0, sizeof(*g));
	return s3xml_list(xml, strlen(xml), take, g, page);
}

/* Swift 2.30's answer, as captured. */
static const char swift_page[] =
    "<?xml version='1.0' encoding='UTF-8'?>\n"
    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    "<Name>symhub</Name><Prefix>page/</Prefix>"
    "<NextContinuationToken>cGFnZS8wMw==</NextContinuationToken>"
    "<KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>"
    "<IsTruncated>true</IsTruncated>"
    "<Contents><Key>page/a &amp; b</Key>"
    "<LastModified>2026-11-26T04:45:56.000Z</LastModified>"
    "<ETag>\"b1946ac92492d2347c6235b4d2611184\"</ETag><Size>6</Size>"
    "<StorageClass>STANDARD</StorageClass></Contents>"
    "<Contents><Key>page/\xc3\xa9t\xc3\xa9</Key><Size>5368709120</Size>"
    "</Contents></ListBucketResult>";

static void
xml_list(void)
{
	struct s3xml_page	 page;
	struct got		*g = malloc(sizeof(*g));
	char			*big, *key;
	int			 rc;

	rc = list(swift_page, g, &page);
	ok(rc == 0 && g->n == 2 && page.keys == 2 &&
	    strcmp(g->keys[0], "page/a & b") == 0 && g->sizes[0] == 6 &&
	    strcmp(g->keys[1], "page/\xc3\xa9t\xc3\xa9") == 0 &&
	    g->sizes[1] == 5368709120ull,
	    "a Swift page: keys (entities decoded) and sizes");
	ok(page.truncated && strcmp(page.token, "cGFnZS8wMw==") == 0,
	    "truncated, with its token");
	rc = list("<ListBucketResult><IsTruncated>false</IsTruncated>"
	    "<KeyCount>0</KeyCount></ListBucketResult>", g, &page);
	ok(rc == 0 && g->n == 0 && !page.truncated, "an empty page");
	memset(g, 0, sizeof(*g));
	g->stop = 1;
	rc = s3xml_list(swift_page, strlen(swift_page), take, g, &page);
	ok(rc == 42 && g->n == 1, "the callback's 42 stops the parse");
	rc = list("<ListBucketResult><IsTruncated>true</IsTruncated>"
	    "</ListBucketResult>", g, &page);
	ok(rc == -EPROTO, "truncated without a token: -EPROTO");
	rc = list("<ListBucketResult><Contents><Key>k</Key></Contents>"
	    "</ListBucketResult>", g, &page);
	ok(rc == -EPROTO, "Contents without Size: -EPROTO");
	rc = list("<ListBucketResult><Contents><Key>k</Key><Size>-1</Size>"
	    "</Contents></ListBucketResult>", g, &page);
	ok(rc == -EPROTO, "a negative size: -EPROTO");
	rc = list("<ListBucketResult><Contents><Key>k</Key>"
	    "<Size>99999999999999999999</Size></Contents></ListBucketResult>",
	    g, &page);
	ok(rc == -EPROTO, "a size past 2^63: -EPROTO");
	rc = list("<ListBucketResult><Contents><Key></Key><Size>1</Size>"
	    "</Contents></ListBucketResult>", g, &page);
	ok(rc == -EPROTO, "an empty key: -EPROTO");
	rc = list("<ListBucketResult><Contents><Key>a</Key><Key>b</Key>"
	    "<Size>1</Size></Contents></ListBucketResult>", g, &page);
	ok(rc == -EPROTO, "two keys in one Contents: -EPROTO");
	rc = list("<Error><Code>AccessDenied</Code></Error>", g, &page);
	ok(rc == -EPROTO, "an error document is no listing");
	rc = list("<ListBucketResult><Contents><Key>a</Key><Size>1</Size>"
	    "</Contents>", g, &page);
	ok(rc == -EPROTO && g->n == 1, "cut short: -EPROTO, after the key "
	    "before the cut");
	rc = list("<?xml version='1.0'?><!DOCTYPE l [<!ENTITY a 'x'>]>"
	    "<ListBucketResult><Contents><Key>&a;</Key><Size>1</Size>"
	    "</Contents></ListBucketResult>", g, &page);
	ok(rc == -EPROTO && g->n == 0, "a DOCTYPE (entities): -EPROTO");
	rc = list("", g, &page);
	ok(rc == -EPROTO, "nothing: -EPROTO");

	key = malloc(S3XML_KEY_MAX + 2);
	big = malloc(3 * S3XML_KEY_MAX);
	memset(key, 'k', S3XML_KEY_MAX + 1);
	key[S3XML_KEY_MAX + 1] = '\0';
	snprintf(big, 3 * S3XML_KEY_MAX, "<ListBucketResult><Contents><Key>"
	    "%s</Key><Size>1</Size></Contents></ListBucketResult>", key);
	rc = list(big, g, &page);
	ok(rc == -EPROTO, "a key of %d bytes: -EPROTO", S3XML_KEY_MAX + 1);
	key[S3XML_KEY_MAX] = '\0';
	snprintf(big, 3 * S3XML_KEY_MAX, "<ListBucketResult><Contents><Key>"
	    "%s</Key><Size>1</Size></Contents></ListBucketResult>", key);
	rc = list(big, g, &page);
	ok(rc == 0 && g->n == 1 && strlen(g->keys[0]) == S3XML_KEY_MAX,
	    "a key of %d bytes: taken", S3XML_KEY_MAX);
	free(key);
	free(big);
	free(g);
}

static void
xml_error(void)
{
	char	code[64], msg[256], tiny[4];
	int	rc;
	const char *e = "<?xml version='1.0' encoding='UTF-8'?>\n<Error>"
	    "<Code>NoSuchKey</Code><Message>The specified key does not "
	    "exist.</Message><RequestId>tx3e</RequestId><Key>nope</Key>"
	    "</Error>";

	rc = s3xml_error(e, strlen(e), code, sizeof(code), msg, sizeof(msg));
	ok(rc == 0 && strcmp(code, "NoSuchKey") == 0 &&
	    strcmp(msg, "The specified key does not exist.") == 0,
	    "an error: Code and Message");
	rc = s3xml_error(e, strlen(e), tiny, sizeof(tiny), msg, sizeof(msg));
	ok(rc == 0 && strcmp(tiny, "NoS") == 0, "a Code truncated to fit");
	rc = s3xml_error("<Error><Message>m</Message></Error>", 35, code,
	    sizeof(code), msg, sizeof(msg));
	ok(rc == -EPROTO && code[0] == '\0' && msg[0] == '\0',
	    "no Code: -EPROTO, both empty");
	rc = s3xml_error("<html>502 Bad Gateway</html>", 28, code,
	    sizeof(code), msg, sizeof(msg));
	ok(rc == -EPROTO, "a proxy's HTML: -EPROTO");
	rc = s3xml_error(NULL, 0, code, sizeof(code), msg, sizeof(msg));
	ok(rc == -EPROTO, "no body (HEAD): -EPROTO");
}

int
main(void)
{
	dir = scratch("s3parse");
	urls();
	credentials();
	check();
	keys();
	statuses();
	xml_list();
	xml_error();
	rmtree(dir);
	free(dir);
	return done();
}

/*
 * test_config: the option table's parsers, driven directly: sizes, TTL
 * ladders, upstream specs, the command line over a config file, and
 * DEBUGINFOD_URLS as the default upstream list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/cache.h"
#include "common/webapi.h"
#include "symhubd/config.h"
#include "tap.h"

static void
test_sizes(void)
{
	uint64_t v;

	ok(config_parse_size("4096", &v) == 0 && v == 4096, "plain bytes");
	ok(config_parse_size("64k", &v) == 0 && v == 65536, "k suffix");
	ok(config_parse_size("10G", &v) == 0 && v == 10ull << 30, "G suffix");
	ok(config_parse_size("2GiB", &v) == 0 && v == 2ull << 30, "GiB");
	ok(config_parse_size("1T", &v) == 0 && v == 1ull << 40, "T suffix");
	ok(config_parse_size("0", &v) == 0 && v == 0, "zero");
	ok(config_parse_size("", &v) < 0, "empty rejected");
	ok(config_parse_size("-1", &v) < 0, "negative rejected");
	ok(config_parse_size("12x", &v) < 0, "unknown suffix rejected");
	ok(config_parse_size("99999999999T", &v) < 0, "overflow rejected");
}

static void
test_ttls(void)
{
	int64_t	*t;
	size_t	 n;

	ok(config_parse_ttls("600,3600,21600,86400", &t, &n) == 0 && n == 4 &&
	    t[0] == 600 && t[3] == 86400, "default ladder");
	free(t);
	ok(config_parse_ttls("5", &t, &n) == 0 && n == 1 && t[0] == 5,
	    "one value");
	free(t);
	ok(config_parse_ttls("", &t, &n) < 0, "empty rejected");
	ok(config_parse_ttls("10,,20", &t, &n) < 0, "empty element rejected");
	ok(config_parse_ttls("10,0", &t, &n) < 0, "zero rejected");
	ok(config_parse_ttls("10,-5", &t, &n) < 0, "negative rejected");
	ok(config_parse_ttls("10,20,", &t, &n) < 0, "trailing comma rejected");
}

static void
test_upstreams(void)
{
	struct config		 cfg;
	struct upstream_spec	 u;
	const char		*why;

	memset(&cfg, 0, sizeof(cfg));
	cfg.up_connect = 2;
	cfg.up_first_byte = 5;
	cfg.up_timeout = 600;
	cfg.up_max_size = 0;

	ok(config_parse_upstream(&cfg, "https://debuginfod.example.org/", &u,
	    &why) == 0, "plain URL");
	ok(strcmp(u.url, "https://debuginfod.example.org") == 0,
	    "trailing slash dropped: %s", u.url);
	ok(strcmp(u.name, "debuginfod.example.org") == 0,
	    "name defaults to the host: %s", u.name);
	ok(u.connect == 2 && u.first_byte == 5 && u.timeout == 600 &&
	    u.max_size == 0 && u.tls_verify == 1 && u.header_file == NULL,
	    "globals inherited, TLS verified by default");
	ok(u.kinds == (1u << CACHE_DEBUGINFO | 1u << CACHE_EXECUTABLE |
	    1u << CACHE_SOURCE | 1u << CACHE_SECTION), "all kinds by default");
	config_upstream_free(&u);

	ok(config_parse_upstream(&cfg, "http://127.0.0.1:8002 name=local "
	    "connect-timeout=1 first-byte-timeout=3 timeout=30 max-size=1G "
	    "header-file=/etc/h tls-verify=0 ca-path=/etc/ca.pem "
	    "kinds=debuginfo,source", &u, &why) == 0, "every key");
	ok(strcmp(u.name, "local") == 0 && u.connect == 1 &&
	    u.first_byte == 3 && u.timeout == 30 && u.max_size == 1ull << 30,
	    "numbers and names set");
	ok(u.tls_verify == 0 && strcmp(u.header_file, "/etc/h") == 0 &&
	    strcmp(u.ca_path, "/etc/ca.pem") == 0, "TLS and headers set");
	ok(u.kinds == (1u << CACHE_DEBUGINFO | 1u << CACHE_SOURCE),
	    "kinds restricted");
	config_upstream_free(&u);

	ok(config_parse_upstream(&cfg, "http://h:1", &u, &why) == 0 &&
	    strcmp(u.name, "h:1") == 0, "host and port as name: %s", u.name);
	config_upstream_free(&u);
	ok(config_parse_upstream(&cfg, "https://user:secret@h:8443/x", &u,
	    &why) == 0 && strcmp(u.name, "h:8443") == 0,
	    "credentials stay out of the name: %s", u.name);
	config_upstream_free(&u);
	ok(config_parse_upstream(&cfg, "http://[::1]:8002", &u, &why) == 0 &&
	    strcmp(u.name, "[::1]:8002") == 0, "IPv6 literal name: %s", u.name);
	config_upstream_free(&u);
	ok(config_parse_upstream(&cfg, "http:///path", &u, &why) < 0,
	    "a URL without a host rejected");

	ok(config_parse_upstream(&cfg, "ftp://x", &u, &why) < 0 && why,
	    "other schemes rejected: %s", why ? why : "");
	ok(config_parse_upstream(&cfg, "", &u, &why) < 0, "empty rejected");
	ok(config_parse_upstream(&cfg, "http://x bogus", &u, &why) < 0,
	    "a word that is not KEY=VALUE rejected");
	ok(config_parse_upstream(&cfg, "http://x colour=blue", &u, &why) < 0,
	    "unknown key rejected");
	ok(config_parse_upstream(&cfg, "http://x kinds=gsym", &u, &why) < 0,
	    "unknown kind rejected");
	ok(config_parse_upstream(&cfg, "http://x tls-verify=yes", &u, &why) < 0,
	    "tls-verify takes 0 or 1");
	ok(config_parse_upstream(&cfg, "http://x", &u, &why) == 0 &&
	    u.accept == 0, "identity asked by default");
	config_upstream_free(&u);
	ok(config_parse_upstream(&cfg, "http://x accept-encoding=zstd", &u,
	    &why) == 0 && u.accept == WEBAPI_ENC_ZSTD,
	    "accept-encoding=zstd: a hub asked for zstd");
	config_upstream_free(&u);
	ok(config_parse_upstream(&cfg, "http://x accept-encoding=gzip", &u,
	    &why) < 0, "accept-encoding takes zstd or identity only");
	ok(config_parse_upstream(&cfg, "http://x timeout=-1", &u, &why) < 0,
	    "negative timeout rejected");
	ok(config_parse_upstream(&cfg, "http://x name=", &u, &why) < 0,
	    "empty name rejected");
	ok(config_parse_upstream(&cfg, "http://x ca-path=/a ca-path=/b "
	    "header-file=/c header-file=/d name=n name=m", &u, &why) == 0 &&
	    strcmp(u.ca_path, "/b") == 0 && strcmp(u.header_file, "/d") == 0 &&
	    strcmp(u.name, "m") == 0, "a repeated key: the last one counts");
	config_upstream_free(&u);
}

static int
parse(struct config *cfg, int argc, char **argv)
{
	int rc;

	/* getopt keeps state between calls. */
	rc = config_parse(cfg, argc, argv);
	return rc;
}

static void
test_command_line(void)
{
	struct config	 cfg;
	char		 path[] = "/tmp/test_config.XXXXXX";
	FILE		*fp;
	int		 fd;
	char		*a1[] = { "symhubd", "-p", "9000", "-F", "/a", "-F", "/b",
			    "--cache-max", "1G", NULL };
	char		*a2[] = { "symhubd", "-c", path, "-t", "7", NULL };
	char		*a3[] = { "symhubd", NULL };
	char		*a4[] = { "symhubd", "-u", "http://up:1", NULL };
	char		*a5[] = { "symhubd", "--negative-ttl", "1,,2", NULL };
	char		*a6[] = { "symhubd", "-u", "gopher://x", NULL };
	char		*a7[] = { "symhubd", "--no-such-option", NULL };
	char		*a8[] = { "symhubd", "-R", "-U", "-Z", ".tar.xz",
			    "-Z", ".tar.zst=zstdcat", "/pkgs", "-F", "/elf",
			    NULL };
	char		*a9[] = { "symhubd", "-U", "http://up:1", NULL };

	unsetenv("DEBUGINFOD_URLS");
	ok(parse(&cfg, 9, a1) == 0 && strcmp(cfg.listen, "127.0.0.1:9000") ==
	    0 && cfg.scan_dirs.n == 2 && cfg.cache_max == 1ull << 30,
	    "-p, repeated -F, sizes");
	ok(cfg.upstreams.n == 0, "no upstreams without -u or DEBUGINFOD_URLS");
	config_free(&cfg);

	if ((fd = mkstemp(path)) < 0 || (fp = fdopen(fd, "w")) == NULL) {
		ok(0, "temp config file");
		return;
	}
	fprintf(fp, "# a comment\n\nrescan = 42\nscan-dir /from/file\n"
	    "upstream = http://a:1 name=a\nupstream = http://b:2\n");
	fclose(fp);
	ok(parse(&cfg, 5, a2) == 0, "config file read");
	ok(cfg.rescan == 7, "command line wins over the file: %llu",
	    (unsigned long long)cfg.rescan);
	ok(cfg.scan_dirs.n == 1 && strcmp(cfg.scan_dirs.v[0], "/from/file") ==
	    0, "'name value' without '=' accepted");
	ok(cfg.upstreams.n == 2, "upstream lines from the file");
	config_free(&cfg);
	unlink(path);

	setenv("DEBUGINFOD_URLS", "http://one:1  https://two ", 1);
	ok(parse(&cfg, 1, a3) == 0 && cfg.upstreams.n == 2 &&
	    strcmp(cfg.upstreams.v[1], "https://two") == 0,
	    "DEBUGINFOD_URLS is the default upstream list");
	config_free(&cfg);
	ok(parse(&cfg, 3, a4) == 0 && cfg.upstreams.n == 1 &&
	    strcmp(cfg.upstreams.v[0], "http://up:1") == 0,
	    "-u replaces DEBUGINFOD_URLS");
	config_free(&cfg);
	unsetenv("DEBUGINFOD_URLS");

	ok(parse(&cfg, 3, a5) < 0, "bad negative-ttl refused");
	config_free(&cfg);
	ok(parse(&cfg, 3, a6) < 0, "bad upstream refused");
	config_free(&cfg);
	ok(parse(&cfg, 2, a7) < 0, "unknown option refused");
	config_free(&cfg);

	ok(parse(&cfg, 10, a8) == 0 && cfg.scan_rpm == 1 &&
	    cfg.scan_deb == 1 && cfg.scan_archives.n == 2 &&
	    strcmp(cfg.scan_archives.v[1], ".tar.zst=zstdcat") == 0,
	    "-R, -U, -Z EXT[=CMD] as elfutils' debuginfod");
	ok(cfg.scan_dirs.n == 2 && strcmp(cfg.scan_dirs.v[0], "/elf") == 0 &&
	    strcmp(cfg.scan_dirs.v[1], "/pkgs") == 0,
	    "a directory after the options is scanned, as elfutils'");
	ok(cfg.archive_ratio == 1000 && cfg.archive_member_max == 16ull << 30,
	    "bomb bounds default to 1000x and 16G");
	config_free(&cfg);
	ok(parse(&cfg, 3, a9) < 0, "-U URL (the old --upstream) refused with "
	    "a reason, not scanned as a directory");
	config_free(&cfg);
}

/* --help's words come from man/options.txt: the same options, letters,
 * arguments and scopes as the table. */
static void
test_docs(void)
{
	char	why[200] = "";

	ok(config_docs_check(why, sizeof(why)) == 0,
	    "man/options.txt describes the table's options%s%s",
	    *why ? ": " : "", why);
}

int
main(void)
{
	test_sizes();
	test_ttls();
	test_upstreams();
	test_command_line();
	test_docs();
	return done();
}

/*
 * config: the option table and the code it drives.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>

#include "base/buf.h"
#include "cache/cache.h"
#include "common/kind.h"
#include "common/webapi.h"
#include "s3/s3conf.h"
#include "config.h"

enum otype { O_STR, O_LIST, O_NUM, O_SIZE, O_FLAG };

/* Where an option may be set. */
#define O_CLI	0x1
#define O_FILE	0x2
#define O_BOTH	(O_CLI | O_FILE)

/* What an option does; its words are in opt_docs. */
struct opt {
	const char	*name;
	int		 sopt;		/* short option letter, or 0 */
	enum otype	 type;
	int		 where;
	size_t		 off;		/* offsetof(struct config, ...) */
	const char	*def;		/* default, as text; NULL: none */
};

/*
 * What --help says of an option.  The words live in man/options.txt,
 * which also makes the OPTIONS of symhubd.8 and symhubd.conf.5, so each
 * option is described once; opthelp.h is made from it (make options).
 */
struct opt_doc {
	const char	*name;
	char		 sopt;		/* as opts[]'s, or '\0' */
	const char	*arg;		/* argument name; NULL for a flag */
	int		 cli;		/* command line only */
	const char	*help;
};

#include "opthelp.h"
#define NDOCS	(sizeof(opt_docs) / sizeof(opt_docs[0]))

#define F(m)	offsetof(struct config, m)

static const struct opt opts[] = {
	{ "listen", 'l', O_STR, O_BOTH, F(listen), "127.0.0.1:8002" },
	{ "port", 'p', O_STR, O_CLI, 0, NULL },
	{ "store", 'd', O_STR, O_BOTH, F(store), NULL },
	{ "scan-dir", 'F', O_LIST, O_BOTH, F(scan_dirs), NULL },
	{ "scan-rpm", 'R', O_FLAG, O_BOTH, F(scan_rpm), "0" },
	{ "scan-deb", 'U', O_FLAG, O_BOTH, F(scan_deb), "0" },
	{ "scan-archive", 'Z', O_LIST, O_BOTH, F(scan_archives), NULL },
	{ "archive-ratio-max", 0, O_NUM, O_BOTH, F(archive_ratio), "1000" },
	{ "archive-member-max", 0, O_SIZE, O_BOTH,
	    F(archive_member_max), "16G" },
	{ "source-root", 0, O_LIST, O_BOTH, F(source_roots), NULL },
	{ "rescan", 't', O_NUM, O_BOTH, F(rescan), "300" },
	{ "cache-max", 0, O_SIZE, O_BOTH, F(cache_max), "10G" },
	{ "verify-period", 0, O_NUM, O_BOTH, F(verify_period), "86400" },
	{ "verify-rate", 0, O_SIZE, O_BOTH, F(verify_rate), "0" },
	{ "verify-first-max", 0, O_SIZE, O_BOTH, F(verify_first_max), "64M" },
	{ "quarantine-keep", 0, O_NUM, O_BOTH, F(quarantine_keep), "604800" },
	{ "threads", 0, O_NUM, O_BOTH, F(threads), "0" },
	{ "connections", 0, O_NUM, O_BOTH, F(connections), "4096" },
	{ "connections-per-address", 0, O_NUM, O_BOTH,
	    F(conns_per_address), "1024" },
	{ "head-timeout", 0, O_NUM, O_BOTH, F(head_timeout), "10" },
	{ "body-timeout", 0, O_NUM, O_BOTH, F(body_timeout), "60" },
	{ "body-min-rate", 0, O_SIZE, O_BOTH, F(body_min_rate), "1k" },
	{ "timeout", 0, O_NUM, O_BOTH, F(timeout), "60" },
	{ "forwarded-ttl-limit", 0, O_NUM, O_BOTH, F(fwd_hops), "8" },
	{ "offline", 0, O_FLAG, O_BOTH, F(offline), "0" },
	{ "upstream", 'u', O_LIST, O_BOTH, F(upstreams), NULL },
	{ "upstream-connect-timeout", 0, O_NUM, O_BOTH, F(up_connect), "2" },
	{ "upstream-first-byte-timeout", 0, O_NUM, O_BOTH,
	    F(up_first_byte), "5" },
	{ "upstream-timeout", 0, O_NUM, O_BOTH, F(up_timeout), "600" },
	{ "upstream-max-size", 0, O_SIZE, O_BOTH, F(up_max_size), "16G" },
	{ "store-queue-max", 0, O_NUM, O_BOTH, F(store_queue_max), "256" },
	{ "store-queue-bytes", 0, O_SIZE, O_BOTH,
	    F(store_queue_bytes), "512M" },
	{ "negative-ttl", 0, O_STR, O_BOTH,
	    F(negative_ttl), "600,3600,21600,86400" },
	{ "breaker-failures", 0, O_NUM, O_BOTH, F(breaker_failures), "3" },
	{ "breaker-cooldown", 0, O_NUM, O_BOTH, F(breaker_cooldown), "30" },
	{ "s3", 0, O_STR, O_BOTH, F(s3), NULL },
	{ "s3-credentials", 0, O_STR, O_BOTH, F(s3_credentials), NULL },
	{ "s3-writers", 0, O_NUM, O_BOTH, F(s3_writers), "2" },
	{ "s3-queue-max", 0, O_NUM, O_BOTH, F(s3_queue_max), "1024" },
	{ "s3-staging-keep", 0, O_NUM, O_BOTH, F(s3_staging_keep), "86400" },
	{ "tokens", 0, O_STR, O_BOTH, F(tokens), NULL },
	{ "max-upload-size", 0, O_SIZE, O_BOTH, F(max_upload), "4G" },
	{ "bundle-max-unpacked", 0, O_SIZE, O_BOTH, F(bundle_unpacked), "1G" },
	{ "bundle-max-files", 0, O_NUM, O_BOTH, F(bundle_files), "100000" },
	{ "gsym-workers", 0, O_NUM, O_BOTH, F(gsym_workers), "1" },
	{ "gsym-threads", 0, O_NUM, O_BOTH, F(gsym_threads), "0" },
	{ "gsym-on-upload", 0, O_FLAG, O_BOTH, F(gsym_on_upload), "0" },
	{ "gsym-ahead", 0, O_FLAG, O_BOTH, F(gsym_ahead), "0" },
	{ "post-buffer-max", 0, O_SIZE, O_BOTH, F(post_buffer_max), "256M" },
	{ "symbolize-max-addresses", 0, O_NUM, O_BOTH,
	    F(symbolize_max), "1000000" },
	{ "symbolize-max-modules", 0, O_NUM, O_BOTH,
	    F(symbolize_modules), "1024" },
	{ "symbolize-max-answer", 0, O_SIZE, O_BOTH,
	    F(symbolize_answer_max), "1G" },
	{ "symbolize-deadline", 0, O_NUM, O_BOTH, F(symbolize_deadline), "30" },
	{ "profile-memory-max", 0, O_SIZE, O_BOTH,
	    F(profile_memory_max), "256M" },
	{ "compress", 0, O_STR, O_BOTH, F(compress), "zstd,gzip" },
	{ "compress-min", 0, O_SIZE, O_BOTH, F(compress_min), "16k" },
	{ "compress-level", 0, O_NUM, O_BOTH, F(compress_level), "3" },
	{ "compress-best-level", 0, O_NUM, O_BOTH, F(compress_best), "19" },
	{ "hot-cache", 0, O_SIZE, O_BOTH, F(hot_cache), "64M" },
	{ "hot-file-max", 0, O_SIZE, O_BOTH, F(hot_file_max), "256k" },
	{ "metadata-maxtime", 0, O_NUM, O_BOTH, F(metadata_maxtime), "5" },
	{ "metadata-upstream-timeout", 0, O_NUM, O_BOTH,
	    F(metadata_up_timeout), "10" },
	{ "metadata-ttl", 0, O_NUM, O_BOTH, F(metadata_ttl), "3600" },
	{ "home-html", 0, O_STR, O_BOTH, F(home_html), NULL },
	{ "home-redirect", 0, O_STR, O_BOTH, F(home_redirect), NULL },
	{ "cors", 0, O_STR, O_BOTH, F(cors), NULL },
	{ "read-auth", 0, O_FLAG, O_BOTH, F(read_auth), "0" },
	{ "metrics-auth", 0, O_FLAG, O_BOTH, F(metrics_auth), "0" },
	{ "behind-tls", 0, O_FLAG, O_BOTH, F(behind_tls), "0" },
	{ "rate-per-token", 0, O_NUM, O_BOTH, F(rate_token), "0" },
	{ "rate-per-address", 0, O_NUM, O_BOTH, F(rate_address), "0" },
	{ "rate-burst", 0, O_NUM, O_BOTH, F(rate_burst), "20" },
	{ "rate-addresses", 0, O_NUM, O_BOTH, F(rate_addresses), "4096" },
	{ "log-file", 'L', O_STR, O_BOTH, F(log_file), "-" },
	{ "verbose", 'v', O_FLAG, O_BOTH, F(verbose), "0" },
	{ "config", 'c', O_STR, O_CLI, F(config_file), NULL },
	{ "check", 'n', O_FLAG, O_CLI, 0, NULL },
	{ "help", 'h', O_FLAG, O_CLI, 0, NULL },
	{ "version", 'V', O_FLAG, O_CLI, 0, NULL },
};
#define NOPTS	(sizeof(opts) / sizeof(opts[0]))

int
config_parse_size(const char *s, uint64_t *out)
{
	char			*end;
	unsigned long long	 v;
	int			 shift = 0;

	errno = 0;
	if (*s == '-' || *s == '\0')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0' || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int
parse_num(const char *s, uint64_t *out)
{
	char			*end;
	unsigned long long	 v;

	errno = 0;
	if (*s == '-' || *s == '\0')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

static int
list_add(struct strlist *l, const char *s)
{
	if (array_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v)) != 0)
		return -ENOMEM;
	if ((l->v[l->n] = strdup(s)) == NULL)
		return -ENOMEM;
	l->n++;
	return 0;
}

void
strlist_free(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

/* Set option o from text; "where" names the source for diagnostics. */
static int
set(struct config *cfg, const struct opt *o, const char *val,
    const char *where)
{
	char	*p = (char *)cfg + o->off, *s;
	int	 rc = 0;

	if (strcmp(o->name, "port") == 0) {
		uint64_t	port;
		char		buf[32];

		if (parse_num(val, &port) < 0 || port > 65535) {
			fprintf(stderr, "symhubd: %s: bad port '%s'\n", where,
			    val);
			return -1;
		}
		snprintf(buf, sizeof(buf), "127.0.0.1:%u", (unsigned)port);
		val = buf;
		o = &opts[0];
		p = (char *)cfg + o->off;
		if ((s = strdup(val)) == NULL)
			return -1;
		free(*(char **)p);
		*(char **)p = s;
		return 0;
	}
	switch (o->type) {
	case O_STR:
		if ((s = strdup(val)) == NULL)
			return -1;
		free(*(char **)p);
		*(char **)p = s;
		break;
	case O_LIST:
		rc = list_add((struct strlist *)p, val);
		break;
	case O_NUM:
		rc = parse_num(val, (uint64_t *)p);
		break;
	case O_SIZE:
		rc = config_parse_size(val, (uint64_t *)p);
		break;
	case O_FLAG:
		if (val == NULL)
			(*(uint64_t *)p)++;
		else
			rc = parse_num(val, (uint64_t *)p);
		break;
	}
	if (rc < 0) {
		fprintf(stderr, "symhubd: %s: bad value '%s' for %s\n", where,
		    val ? val : "", o->name);
		return -1;
	}
	return 0;
}

static const struct opt *
find(const char *name)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
	    e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int
config_load_file(struct config *cfg, const char *path)
{
	const struct opt	*o;
	FILE			*fp;
	char			*line = NULL, *name, *val, where[512];
	size_t			 cap = 0;
	unsigned		 lineno = 0;
	int			 rc = 0;

	if ((fp = fopen(path, "re")) == NULL) {
		fprintf(stderr, "symhubd: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, fp) != -1) {
		lineno++;
		name = trim(line);
		if (*name == '#' || *name == '\0')
			continue;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		val = name + strcspn(name, " \t=");
		if (*val != '\0') {
			*val++ = '\0';
			val = trim(val);
			if (*val == '=')
				val = trim(val + 1);
		}
		if ((o = find(name)) == NULL || !(o->where & O_FILE)) {
			fprintf(stderr, "symhubd: %s: unknown option '%s'\n",
			    where, name);
			rc = -1;
			break;
		}
		if (*val == '\0' && o->type != O_FLAG) {
			fprintf(stderr, "symhubd: %s: %s needs a value\n",
			    where, name);
			rc = -1;
			break;
		}
		if (set(cfg, o, *val ? val : NULL, where) < 0) {
			rc = -1;
			break;
		}
	}
	free(line);
	fclose(fp);
	return rc;
}

static const struct opt_doc *
doc_of(const char *name)
{
	size_t i;

	for (i = 0; i < NDOCS; i++)
		if (strcmp(opt_docs[i].name, name) == 0)
			return &opt_docs[i];
	return NULL;
}

int
config_docs_check(char *why, size_t whylen)
{
	const struct opt_doc	*d;
	size_t			 i;

	for (i = 0; i < NOPTS; i++) {
		const struct opt *o = &opts[i];

		if ((d = doc_of(o->name)) == NULL) {
			snprintf(why, whylen, "%s: not in man/options.txt",
			    o->name);
			return -1;
		}
		if (d->sopt != o->sopt || (d->arg == NULL) !=
		    (o->type == O_FLAG) || d->cli != !(o->where & O_FILE)) {
			snprintf(why, whylen, "%s: man/options.txt gives "
			    "another short option, argument or scope",
			    o->name);
			return -1;
		}
	}
	if (NDOCS != NOPTS) {
		snprintf(why, whylen, "man/options.txt describes %zu options, "
		    "the table has %zu", (size_t)NDOCS, (size_t)NOPTS);
		return -1;
	}
	return 0;
}

static void
usage(FILE *fp)
{
	const struct opt_doc	*d;
	char			 buf[64];
	size_t			 i;

	fprintf(fp, "usage: symhubd [options]\n"
	    "Serve debuginfod requests from an LMDB-indexed symbol store.\n\n");
	for (i = 0; i < NOPTS; i++) {
		const struct opt *o = &opts[i];

		if ((d = doc_of(o->name)) == NULL)
			continue;
		snprintf(buf, sizeof(buf), "%c%c%s--%s%s%s",
		    o->sopt ? '-' : ' ', o->sopt ? o->sopt : ' ',
		    o->sopt ? ", " : "  ", o->name, d->arg ? " " : "",
		    d->arg ? d->arg : "");
		fprintf(fp, "  %-30s %s", buf, d->help);
		if (o->def && o->type != O_FLAG)
			fprintf(fp, " [%s]", o->def);
		fputc('\n', fp);
	}
}

static int
defaults(struct config *cfg)
{
	const char	*base;
	char		 buf[4096];
	size_t		 i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < NOPTS; i++)
		if (opts[i].def && opts[i].where & O_FILE &&
		    set(cfg, &opts[i], opts[i].def, "default") < 0)
			return -1;
	if ((base = getenv("XDG_CACHE_HOME")) != NULL && *base == '/')
		snprintf(buf, sizeof(buf), "%s/symhub", base);
	else if ((base = getenv("HOME")) != NULL && *base == '/')
		snprintf(buf, sizeof(buf), "%s/.cache/symhub", base);
	else
		snprintf(buf, sizeof(buf), "symhub-store");
	return (cfg->store = strdup(buf)) ? 0 : -1;
}

/* Check what the option table cannot: values with inner syntax. */
int
config_parse_codings(const char *s, unsigned *out)
{
	size_t	n;

	*out = 0;
	while (*s != '\0') {
		n = strcspn(s, ",");
		if (n == 4 && strncmp(s, "zstd", 4) == 0)
			*out |= WEBAPI_ENC_ZSTD;
		else if (n == 4 && strncmp(s, "gzip", 4) == 0)
			*out |= WEBAPI_ENC_GZIP;
		else if (!(n == 4 && strncmp(s, "none", 4) == 0))
			return -EINVAL;
		s += n + (s[n] == ',');
	}
	return 0;
}

static int
validate(const struct config *cfg)
{
	struct upstream_spec	 u;
	const char		*why;
	int64_t			*ttls;
	size_t			 i, n;
	unsigned		 codings;

	if (config_parse_ttls(cfg->negative_ttl, &ttls, &n) < 0) {
		fprintf(stderr, "symhubd: negative-ttl: expected positive "
		    "seconds separated by commas, got '%s'\n",
		    cfg->negative_ttl);
		return -1;
	}
	free(ttls);
	if (cfg->s3 != NULL) {
		struct s3_config	sc;

		if (s3conf_url(cfg->s3, &sc, &why) < 0) {
			fprintf(stderr, "symhubd: s3 '%s': %s\n", cfg->s3, why);
			return -1;
		}
		if (cfg->offline) {
			fprintf(stderr, "symhubd: offline and s3: the bucket "
			    "is an outbound connection; choose one\n");
			return -1;
		}
	}
	if (config_parse_codings(cfg->compress, &codings) < 0) {
		fprintf(stderr, "symhubd: compress: expected zstd, gzip or "
		    "none, separated by commas, got '%s'\n", cfg->compress);
		return -1;
	}
	if (cfg->compress_level < 1 || cfg->compress_level > 19 ||
	    cfg->compress_best > 19) {
		fprintf(stderr, "symhubd: compress-level and "
		    "compress-best-level: 1 to 19, got %" PRIu64 " and %"
		    PRIu64 "\n", cfg->compress_level, cfg->compress_best);
		return -1;
	}
	if (cfg->home_html != NULL && access(cfg->home_html, R_OK) != 0) {
		fprintf(stderr, "symhubd: home-html '%s': %s\n", cfg->home_html,
		    strerror(errno));
		return -1;
	}
	if (cfg->home_html != NULL && cfg->home_redirect != NULL) {
		fprintf(stderr, "symhubd: home-html and home-redirect: one "
		    "or the other\n");
		return -1;
	}
	if (cfg->cors != NULL && (*cfg->cors == '\0' ||
	    strpbrk(cfg->cors, "\r\n \t,") != NULL ||
	    (strcmp(cfg->cors, "*") != 0 && strstr(cfg->cors, "://") == NULL))) {
		fprintf(stderr, "symhubd: cors: * or one origin "
		    "(scheme://host[:port]), got '%s'\n", cfg->cors);
		return -1;
	}
	if (cfg->home_redirect != NULL && (strpbrk(cfg->home_redirect,
	    "\r\n") != NULL || *cfg->home_redirect == '\0')) {
		fprintf(stderr, "symhubd: home-redirect: not a URL\n");
		return -1;
	}
	if ((cfg->read_auth || cfg->metrics_auth) && cfg->tokens == NULL) {
		fprintf(stderr, "symhubd: read-auth and metrics-auth need a "
		    "tokens file (--tokens) with read tokens\n");
		return -1;
	}
	/* A token sent in clear text over a network is a token given
	 * away: only a proxy in front that speaks TLS makes it safe. */
	if ((cfg->read_auth || cfg->metrics_auth) && !cfg->behind_tls &&
	    !config_loopback(cfg->listen)) {
		fprintf(stderr, "symhubd: read-auth on '%s', which is not a "
		    "loopback address: tokens would travel in clear text; put "
		    "a TLS proxy in front (etc/nginx-tls.conf) and say "
		    "--behind-tls\n", cfg->listen);
		return -1;
	}
	if ((cfg->rate_token || cfg->rate_address) &&
	    (cfg->rate_burst == 0 || cfg->rate_addresses == 0)) {
		fprintf(stderr, "symhubd: rate-burst and rate-addresses: at "
		    "least 1\n");
		return -1;
	}
	for (i = 0; i < cfg->upstreams.n; i++) {
		if (config_parse_upstream(cfg, cfg->upstreams.v[i], &u,
		    &why) < 0) {
			fprintf(stderr, "symhubd: upstream '%s': %s\n",
			    cfg->upstreams.v[i], why);
			return -1;
		}
		config_upstream_free(&u);
	}
	return 0;
}

int
config_loopback(const char *listen)
{
	struct in6_addr	 a6;
	struct in_addr	 a4;
	const char	*p;
	char		 host[64];
	size_t		 n;

	if (listen[0] == '[') {
		if ((p = strchr(listen, ']')) == NULL)
			return 0;
		listen++;
		n = (size_t)(p - listen);
	} else {
		p = strrchr(listen, ':');
		n = p != NULL ? (size_t)(p - listen) : strlen(listen);
	}
	if (n == 0 || n >= sizeof(host))
		return 0;
	memcpy(host, listen, n);
	host[n] = '\0';
	if (strcmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
}

int
config_s3(const struct config *cfg, struct s3_config *sc, char *why,
    size_t whylen)
{
	const char	*w = NULL;
	unsigned	 line = 0;
	int		 rc;

	memset(sc, 0, sizeof(*sc));
	if (s3conf_url(cfg->s3, sc, &w) < 0) {
		snprintf(why, whylen, "--s3 %s: %s", cfg->s3, w);
		return -EINVAL;
	}
	if (cfg->s3_credentials != NULL) {
		rc = s3conf_file(cfg->s3_credentials, sc, &w, &line);
		if (rc == -EINVAL && line > 0)
			snprintf(why, whylen, "--s3-credentials %s:%u: %s",
			    cfg->s3_credentials, line, w);
		else if (rc == -EINVAL)
			snprintf(why, whylen, "--s3-credentials %s: %s",
			    cfg->s3_credentials, w);
		else if (rc < 0)
			snprintf(why, whylen, "--s3-credentials %s: %s",
			    cfg->s3_credentials, strerror(-rc));
		return rc < 0 ? -EINVAL : 0;
	}
	if ((rc = s3conf_env(sc, &w)) == -ENOENT) {
		snprintf(why, whylen, "no credentials: set AWS_ACCESS_KEY_ID "
		    "and AWS_SECRET_ACCESS_KEY, or --s3-credentials FILE");
		return -EINVAL;
	}
	if (rc < 0) {
		snprintf(why, whylen, "%s", w);
		return -EINVAL;
	}
	return 0;
}

int
config_header_file(const char *path, int (*fn)(void *, const char *),
    void *ctx, char *why, size_t whylen)
{
	FILE		*fp;
	char		*line = NULL;
	size_t		 cap = 0;
	ssize_t		 n;
	unsigned	 lineno = 0;
	int		 rc = 0;

	if ((fp = fopen(path, "re")) == NULL) {
		rc = -errno;
		snprintf(why, whylen, "%s", strerror(errno));
		return rc;
	}
	while ((n = getline(&line, &cap, fp)) != -1) {
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0 || line[0] == '#')
			continue;
		if (strchr(line, ':') == NULL) {
			snprintf(why, whylen, "line %u is not 'Name: value'",
			    lineno);
			rc = -EINVAL;
			break;
		}
		if (fn != NULL && (rc = fn(ctx, line)) < 0) {
			snprintf(why, whylen, "%s", strerror(-rc));
			break;
		}
	}
	if (rc == 0 && ferror(fp)) {
		rc = -EIO;
		snprintf(why, whylen, "%s", strerror(EIO));
	}
	free(line);
	fclose(fp);
	return rc;
}

/* No upstream configured: take the client's DEBUGINFOD_URLS, as elfutils'
 * debuginfod does (URLs separated by spaces). */
static int
env_upstreams(struct config *cfg)
{
	const char	*env = getenv("DEBUGINFOD_URLS");
	char		*copy, *tok, *save = NULL;
	int		 rc = 0;

	if (env == NULL || *env == '\0')
		return 0;
	if ((copy = strdup(env)) == NULL)
		return -1;
	for (tok = strtok_r(copy, " \t\n", &save); tok != NULL && rc == 0;
	    tok = strtok_r(NULL, " \t\n", &save))
		rc = list_add(&cfg->upstreams, tok);
	free(copy);
	return rc < 0 ? -1 : 0;
}

int
config_parse_ttls(const char *s, int64_t **out, size_t *n)
{
	const char	*p = s;
	char		*end;
	int64_t		*v = NULL;
	long long	 x;
	size_t		 cnt = 0, cap = 0;

	*out = NULL;
	*n = 0;
	for (;;) {
		errno = 0;
		x = strtoll(p, &end, 10);
		if (errno != 0 || end == p || x <= 0 ||
		    (*end != ',' && *end != '\0')) {
			free(v);
			return -EINVAL;
		}
		if (array_grow(&v, &cap, cnt + 1, sizeof(*v)) != 0) {
			free(v);
			return -ENOMEM;
		}
		v[cnt++] = x;
		if (*end == '\0')
			break;
		p = end + 1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

void
config_upstream_free(struct upstream_spec *u)
{
	free(u->url);
	free(u->name);
	free(u->header_file);
	free(u->ca_path);
	memset(u, 0, sizeof(*u));
}

/* Replace *dst by a copy of val; *dst is untouched on failure. */
static int
setstr(char **dst, const char *val)
{
	char *s;

	if ((s = strdup(val)) == NULL)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int
parse_kinds(const char *v, unsigned *out)
{
	enum cache_kind	k;
	size_t		n;

	*out = 0;
	while (*v != '\0') {
		n = strcspn(v, ",");
		/* Upstreams serve what the protocol has: no GSYM, and
		 * no bundle (its members are sources). */
		if (kind_parse(v, n, &k) < 0 || k == CACHE_GSYM ||
		    k == CACHE_BUNDLE)
			return -EINVAL;
		*out |= 1u << k;
		v += n + (v[n] == ',');
	}
	return *out ? 0 : -EINVAL;
}

int
config_parse_upstream(const struct config *cfg, const char *spec,
    struct upstream_spec *u, const char **why)
{
	char	*copy, *tok, *save = NULL, *val, *host;
	size_t	 n;
	int	 rc = -EINVAL;

	memset(u, 0, sizeof(*u));
	u->connect = cfg->up_connect;
	u->first_byte = cfg->up_first_byte;
	u->timeout = cfg->up_timeout;
	u->max_size = cfg->up_max_size;
	u->tls_verify = 1;
	u->kinds = 1u << CACHE_DEBUGINFO | 1u << CACHE_EXECUTABLE |
	    1u << CACHE_SOURCE | 1u << CACHE_SECTION;
	*why = "out of memory";
	if ((copy = strdup(spec)) == NULL)
		return -ENOMEM;
	tok = strtok_r(copy, " \t", &save);
	if (tok == NULL || (strncmp(tok, "http://", 7) != 0 &&
	    strncmp(tok, "https://", 8) != 0)) {
		*why = "an upstream URL must start with http:// or https://";
		goto out;
	}
	n = strlen(tok);
	while (n > 0 && tok[n - 1] == '/')
		tok[--n] = '\0';
	if ((u->url = strdup(tok)) == NULL)
		goto nomem;
	/* The default name is the URL's authority (host and port), so two
	 * upstreams on one host keep apart in metrics; credentials in the
	 * URL are left out of it. */
	host = tok + strcspn(tok, ":") + 3;
	host[strcspn(host, "/")] = '\0';
	if (strchr(host, '@') != NULL)
		host = strrchr(host, '@') + 1;
	if (*host == '\0') {
		*why = "an upstream URL needs a host";
		goto out;
	}
	if ((u->name = strdup(host)) == NULL)
		goto nomem;
	while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
		if ((val = strchr(tok, '=')) == NULL) {
			*why = "upstream settings are KEY=VALUE";
			goto out;
		}
		*val++ = '\0';
		*why = "bad upstream setting value";
		if (strcmp(tok, "name") == 0) {
			if (*val == '\0' || setstr(&u->name, val) < 0)
				goto out;
		} else if (strcmp(tok, "connect-timeout") == 0) {
			if (parse_num(val, &u->connect) < 0)
				goto out;
		} else if (strcmp(tok, "first-byte-timeout") == 0) {
			if (parse_num(val, &u->first_byte) < 0)
				goto out;
		} else if (strcmp(tok, "timeout") == 0) {
			if (parse_num(val, &u->timeout) < 0)
				goto out;
		} else if (strcmp(tok, "max-size") == 0) {
			if (config_parse_size(val, &u->max_size) < 0)
				goto out;
		} else if (strcmp(tok, "header-file") == 0) {
			if (setstr(&u->header_file, val) < 0)
				goto nomem;
		} else if (strcmp(tok, "ca-path") == 0) {
			if (setstr(&u->ca_path, val) < 0)
				goto nomem;
		} else if (strcmp(tok, "tls-verify") == 0) {
			if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0)
				goto out;
			u->tls_verify = *val == '1';
		} else if (strcmp(tok, "kinds") == 0) {
			if (parse_kinds(val, &u->kinds) < 0)
				goto out;
		} else if (strcmp(tok, "accept-encoding") == 0) {
			/* zstd only: its frames say when they end, where a
			 * gzip stream cut short decodes short (fetch.c). */
			if (strcmp(val, "zstd") == 0)
				u->accept = WEBAPI_ENC_ZSTD;
			else if (strcmp(val, "identity") == 0)
				u->accept = 0;
			else
				goto out;
		} else {
			*why = "unknown upstream setting";
			goto out;
		}
	}
	free(copy);
	*why = NULL;
	return 0;
nomem:
	rc = -ENOMEM;
	*why = "out of memory";
out:
	free(copy);
	config_upstream_free(u);
	return rc;
}

/*
 * One line for an option getopt_long() refused (ch '?' or ':'): --help,
 * a line an option, would push the cause off the screen.  optopt is the
 * short option's letter, 256 + index for a long one missing its
 * argument, 0 for an unknown long one (then arg is it).
 */
static void
bad_option(int ch, const char *arg)
{
	char	name[64];

	if (optopt >= 256 && (size_t)(optopt - 256) < NOPTS)
		snprintf(name, sizeof(name), "--%s", opts[optopt - 256].name);
	else if (optopt > 0 && optopt < 256)
		snprintf(name, sizeof(name), "-%c", optopt);
	else
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="),
		    arg);
	if (ch == ':')
		fprintf(stderr, "symhubd: option %s needs a value (symhubd "
		    "--help lists the options)\n", name);
	else
		fprintf(stderr, "symhubd: unknown option %s (symhubd --help "
		    "lists the options)\n", name);
}

int
config_parse(struct config *cfg, int argc, char **argv)
{
	struct option	 lopts[NOPTS + 1];
	char		 sopts[3 * NOPTS + 2], *sp = sopts;
	const char	*cfile = NULL;
	size_t		 i;
	int		 ch, idx, pass;

	if (defaults(cfg) < 0)
		return -1;
	memset(lopts, 0, sizeof(lopts));
	*sp++ = ':';
	for (i = 0; i < NOPTS; i++) {
		lopts[i].name = opts[i].name;
		lopts[i].has_arg = opts[i].type == O_FLAG ? no_argument :
		    required_argument;
		lopts[i].val = 256 + (int)i;
		if (opts[i].sopt) {
			*sp++ = (char)opts[i].sopt;
			if (opts[i].type != O_FLAG)
				*sp++ = ':';
		}
	}
	*sp = '\0';

	/* Pass 0 finds -c, pass 1 applies the command line over it. */
	for (pass = 0; pass < 2; pass++) {
		optind = 1;
		opterr = 0;
		while ((ch = getopt_long(argc, argv, sopts, lopts, &idx)) != -1) {
			const struct opt *o = NULL;

			if (ch >= 256)
				o = &opts[ch - 256];
			else
				for (i = 0; i < NOPTS && o == NULL; i++)
					if (opts[i].sopt == ch)
						o = &opts[i];
			if (o == NULL) {
				if (pass == 0)
					continue;
				bad_option(ch, argv[optind - 1]);
				return -1;
			}
			if (pass == 0) {
				if (strcmp(o->name, "config") == 0)
					cfile = optarg;
				continue;
			}
			if (strcmp(o->name, "help") == 0) {
				usage(stdout);
				return 1;
			}
			if (strcmp(o->name, "version") == 0) {
				printf("symhubd %s\n", PACKAGE_VERSION);
				return 1;
			}
			if (strcmp(o->name, "check") == 0) {
				cfg->check_only = 1;
				continue;
			}
			if (strcmp(o->name, "config") == 0)
				continue;
			if (set(cfg, o, o->type == O_FLAG ? NULL : optarg,
			    "command line") < 0)
				return -1;
		}
		if (pass == 0 && cfile != NULL) {
			if ((cfg->config_file = strdup(cfile)) == NULL ||
			    config_load_file(cfg, cfile) < 0)
				return -1;
		}
	}
	/* As elfutils' debuginfod: the directories to scan, last. */
	for (; optind < argc; optind++) {
		if (strstr(argv[optind], "://") != NULL) {
			fprintf(stderr, "symhubd: '%s' is not a directory to "
			    "scan; an upstream is -u/--upstream URL (-U is "
			    "--scan-deb, as in elfutils)\n", argv[optind]);
			return -1;
		}
		if (list_add(&cfg->scan_dirs, argv[optind]) < 0)
			return -1;
	}
	if (cfg->upstreams.n == 0 && env_upstreams(cfg) < 0)
		return -1;
	return validate(cfg);
}

void
config_dump(const struct config *cfg, FILE *fp)
{
	const char	*p;
	size_t		 i, j;

	for (i = 0; i < NOPTS; i++) {
		const struct opt *o = &opts[i];

		if (!(o->where & O_FILE))
			continue;
		p = (const char *)cfg + o->off;
		switch (o->type) {
		case O_STR:
			fprintf(fp, "%s = %s\n", o->name,
			    *(char *const *)p ? *(char *const *)p : "");
			break;
		case O_LIST: {
			const struct strlist *l = (const void *)p;

			for (j = 0; j < l->n; j++)
				fprintf(fp, "%s = %s\n", o->name, l->v[j]);
			break;
		}
		case O_NUM:
		case O_SIZE:
		case O_FLAG:
			fprintf(fp, "%s = %llu\n", o->name,
			    (unsigned long long)*(const uint64_t *)p);
			break;
		}
	}
}

void
config_names(FILE *fp)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		fprintf(fp, "%s %s\n", opts[i].where & O_FILE ? "file" : "cli",
		    opts[i].name);
}

void
config_free(struct config *cfg)
{
	size_t i;

	for (i = 0; i < NOPTS; i++) {
		char *p = (char *)cfg + opts[i].off;

		if (!(opts[i].where & O_FILE) && opts[i].off == 0)
			continue;
		if (opts[i].type == O_STR)
			free(*(char **)p), *(char **)p = NULL;
		else if (opts[i].type == O_LIST)
			strlist_free((struct strlist *)p);
	}
}

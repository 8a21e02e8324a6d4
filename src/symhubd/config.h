/*
 * config: symhubd's options.  One table drives the command line, the
 * config file, --help, and the config dump (-n).  Each option's words
 * are written once, in man/options.txt, which makes --help's text and
 * the OPTIONS of man/symhubd.8 and man/symhubd.conf.5
 * (tests/test_options.sh); etc/symhubd.conf lists the same names
 * (tests/test_server.sh checks it).
 */
#ifndef SYMHUB_CONFIG_H
#define SYMHUB_CONFIG_H

#include <stdint.h>
#include <stdio.h>

struct strlist {
	char	**v;
	size_t	  n, cap;
};

struct config {
	char		*listen;	/* ADDR:PORT, [ADDR6]:PORT */
	char		*store;
	struct strlist	 scan_dirs;
	struct strlist	 source_roots;
	uint64_t	 scan_rpm;	/* -R: .rpm members */
	uint64_t	 scan_deb;	/* -U: .deb, .ddeb members */
	struct strlist	 scan_archives;	/* -Z: "EXT" or "EXT=CMD" */
	uint64_t	 archive_ratio;	/* unpacked / packed at most; 0: any */
	uint64_t	 archive_member_max; /* bytes of a member; 0: any */
	uint64_t	 rescan;	/* seconds; 0: scan once at start */
	uint64_t	 cache_max;	/* bytes; 0: no limit */
	uint64_t	 verify_period;
	uint64_t	 verify_rate;	/* bytes/s; 0: as verify_period asks */
	uint64_t	 verify_first_max; /* hash blobs up to this on first open */
	uint64_t	 quarantine_keep; /* seconds; 0: forever */
	uint64_t	 s3_staging_keep; /* seconds; 0: forever */
	uint64_t	 conns_per_address; /* 0: no limit */
	uint64_t	 store_queue_max;	/* fetched files queued to store */
	uint64_t	 store_queue_bytes;
	uint64_t	 head_timeout;	/* seconds; 0: none */
	uint64_t	 body_timeout;	/* seconds; 0: none */
	uint64_t	 body_min_rate;	/* bytes a second; 0: any */
	uint64_t	 post_buffer_max; /* bytes of POST bodies held; 0: any */
	uint64_t	 threads;	/* HTTP threads; 0: 2 per CPU */
	uint64_t	 connections;	/* concurrent connections */
	uint64_t	 timeout;	/* idle connection timeout, seconds */
	uint64_t	 fwd_hops;	/* X-Forwarded-For hop limit */
	struct strlist	 upstreams;	/* "URL [key=value]..." */
	uint64_t	 up_connect;	/* seconds */
	uint64_t	 up_first_byte;	/* seconds */
	uint64_t	 up_timeout;	/* seconds, whole transfer */
	uint64_t	 up_max_size;	/* bytes; 0: no limit */
	char		*negative_ttl;	/* "600,3600,..." seconds */
	uint64_t	 breaker_failures;
	uint64_t	 breaker_cooldown;	/* seconds */
	char		*s3;		/* bucket URL; NULL: no S3 tier */
	char		*s3_credentials;	/* file; NULL: environment */
	uint64_t	 s3_writers;	/* threads writing to the bucket */
	uint64_t	 s3_queue_max;	/* write-backs waiting at most */
	char		*tokens;	/* tokens file; NULL: no uploads */
	uint64_t	 max_upload;	/* bytes */
	uint64_t	 bundle_unpacked; /* a source bundle's unpacked bytes */
	uint64_t	 bundle_files;	/* a source bundle's members */
	uint64_t	 gsym_workers;	/* conversions at once */
	uint64_t	 gsym_threads;	/* threads a conversion, 0: auto */
	uint64_t	 gsym_on_upload; /* convert debuginfo uploads at once */
	uint64_t	 offline;	/* no outbound connection */
	uint64_t	 gsym_ahead;	/* convert every new debuginfo */
	uint64_t	 symbolize_max;	/* addresses per /symbolize request */
	uint64_t	 symbolize_modules;	/* modules per batch request */
	uint64_t	 symbolize_answer_max;	/* bytes of one answer; 0: any */
	uint64_t	 profile_memory_max;	/* bytes all profiles being read
						 * hold at once; 0: any */
	uint64_t	 symbolize_deadline;	/* seconds a batch waits */
	char		*compress;	/* "zstd,gzip", "none" */
	uint64_t	 compress_min;	/* bytes */
	uint64_t	 compress_level;
	uint64_t	 compress_best;	/* 0: no second pass */
	uint64_t	 hot_cache;	/* bytes; 0: none */
	uint64_t	 hot_file_max;	/* bytes */
	uint64_t	 metadata_maxtime;	/* seconds; 0: no limit */
	uint64_t	 metadata_up_timeout;	/* seconds; 0: not asked */
	uint64_t	 metadata_ttl;		/* seconds; 0: not kept */
	char		*home_html;	/* GET / answers this file; NULL */
	char		*home_redirect;	/* GET / redirects here; NULL */
	char		*cors;		/* Access-Control-Allow-Origin; NULL */
	uint64_t	 read_auth;	/* reads need a token with read */
	uint64_t	 metrics_auth;	/* so do /metrics and the status page */
	uint64_t	 behind_tls;	/* a TLS proxy is in front */
	uint64_t	 rate_token;	/* requests a second a token; 0: any */
	uint64_t	 rate_address;	/* ... an address; 0: any */
	uint64_t	 rate_burst;	/* requests at once beyond the rate */
	uint64_t	 rate_addresses;	/* addresses remembered */
	char		*log_file;	/* "-": stderr */
	uint64_t	 verbose;
	char		*config_file;	/* -c, or NULL */
	int		 check_only;	/* -n */
};

/*
 * Fill cfg from defaults, then the config file named by -c (if any), then
 * the command line.  Prints its own diagnostics and --help / --version
 * text to stderr / stdout.
 * @return 0 to go on, 1 when the program should exit successfully (help,
 *         version), -1 on a usage or config error.  cfg is always safe to
 *         pass to config_free().
 */
int	config_parse(struct config *cfg, int argc, char **argv);

/* Is the host of a --listen value ("ADDR:PORT", "[ADDR6]:PORT") a
 * loopback address?  An empty host (every address) is not. */
int	config_loopback(const char *listen);

/* One upstream, from "URL [key=value]...", globals filled in. */
struct upstream_spec {
	char		*url;		/* without a trailing '/' */
	char		*name;		/* name=, default: the URL's host */
	uint64_t	 connect;	/* seconds */
	uint64_t	 first_byte;	/* seconds */
	uint64_t	 timeout;	/* seconds */
	uint64_t	 max_size;	/* bytes; 0: no limit */
	char		*header_file;	/* "Name: value" lines, or NULL */
	char		*ca_path;	/* CA bundle, or NULL for the system's */
	int		 tls_verify;	/* default 1 */
	unsigned	 kinds;		/* bit (1 << cache_kind); default all */
	unsigned	 accept;	/* accept-encoding=: WEBAPI_ENC_ZSTD
					 * or 0 (identity, the default) */
};

/*
 * Parse an upstream spec; unset keys take cfg's upstream-* values.
 * @param why  on failure, a static reason.
 * @return 0 (free out with config_upstream_free()), -EINVAL, -ENOMEM.
 */
int	config_parse_upstream(const struct config *cfg, const char *spec,
	    struct upstream_spec *out, const char **why);
void	config_upstream_free(struct upstream_spec *u);

struct s3_config;

/*
 * The bucket's settings: --s3's URL, then the keys from --s3-credentials
 * or the AWS_ variables.  Reads the credentials file; logs nothing.
 * @param why  on failure, one line naming the option or file and the
 *             cause ("no credentials: set ...").
 * @return 0 and *sc; -EINVAL.
 */
int	config_s3(const struct config *cfg, struct s3_config *sc, char *why,
	    size_t whylen);

/*
 * Read an upstream's header-file: each line but blank ones and #
 * comments must be "Name: value", and is given to fn (NULL: only check,
 * as -n does), which returns 0 or -errno to stop.  The one reader of
 * the format, for the check and for fetch.
 * @return 0; -EINVAL (a bad line), fn's error or -errno, with the cause
 *         in why.
 */
int	config_header_file(const char *path, int (*fn)(void *, const char *),
	    void *ctx, char *why, size_t whylen);

/* Parse a --compress list ("zstd,gzip", "none") into WEBAPI_ENC_* bits.
 * @return 0 or -EINVAL. */
int	config_parse_codings(const char *s, unsigned *out);

/* Parse one config file into cfg.  @return 0 or -1 (diagnosed). */
int	config_load_file(struct config *cfg, const char *path);

/* Print the effective configuration in config-file syntax. */
void	config_dump(const struct config *cfg, FILE *fp);

/* Print one line per option name (for the docs consistency test). */
void	config_names(FILE *fp);

/*
 * Check that man/options.txt (through opthelp.h) describes exactly the
 * options of the table, each with its short letter, an argument unless
 * it is a flag, and its scope (command line only or not).
 * @return 0; -1 with the first difference in why.
 */
int	config_docs_check(char *why, size_t whylen);

void	config_free(struct config *cfg);

/* Free a string list's strings and array, and empty it.  Accepts an
 * empty list. */
void	strlist_free(struct strlist *l);

/* Parse "10G", "512M", "64k", "4096".  @return 0 or -EINVAL. */
int	config_parse_size(const char *s, uint64_t *out);

/*
 * Parse a comma-separated list of positive seconds ("600,3600").
 * @param out  receives a malloc'd array (caller frees) of *n values.
 * @return 0 or -EINVAL / -ENOMEM.
 */
int	config_parse_ttls(const char *s, int64_t **out, size_t *n);

#endif

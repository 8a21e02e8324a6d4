/*
 * config: symhubd's options.  One table drives the command line, the
 * config file, --help, and the config dump (-n); man/symhubd.conf.5 and
 * etc/symhubd.conf list the same names (tests/test_server.sh checks it).
 */
#ifndef SYMHUB_CONFIG_H
#define SYMHUB_CONFIG_H

#include <stdint.h>
#include <stdio.h>

struct strlist {
	char	**v;
	size_t	  n;
};

struct config {
	char		*listen;	/* ADDR:PORT, [ADDR6]:PORT */
	char		*store;
	struct strlist	 scan_dirs;
	struct strlist	 source_roots;
	uint64_t	 rescan;	/* seconds; 0: scan once at start */
	uint64_t	 cache_max;	/* bytes; 0: no limit */
	uint64_t	 threads;	/* HTTP threads; 0: 2 per CPU */
	uint64_t	 connections;	/* concurrent connections */
	uint64_t	 timeout;	/* idle connection timeout, seconds */
	uint64_t	 fwd_hops;	/* X-Forwarded-For hop limit */
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

/* Parse one config file into cfg.  @return 0 or -1 (diagnosed). */
int	config_load_file(struct config *cfg, const char *path);

/* Print the effective configuration in config-file syntax. */
void	config_dump(const struct config *cfg, FILE *fp);

/* Print one line per option name (for the docs consistency test). */
void	config_names(FILE *fp);

void	config_free(struct config *cfg);

/* Free a string list's strings and array, and empty it.  Accepts an
 * empty list. */
void	strlist_free(struct strlist *l);

/* Parse "10G", "512M", "64k", "4096".  @return 0 or -EINVAL. */
int	config_parse_size(const char *s, uint64_t *out);

#endif

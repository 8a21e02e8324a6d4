/*
 * cli: what several symhub commands share in reading their arguments.
 */
#ifndef SYMHUB_CLI_H
#define SYMHUB_CLI_H

#include <stddef.h>
#include <stdio.h>

#define CLI_JOBS_MAX	64

/*
 * One result line, "LABEL KIND ID  NAME[  DETAIL]" in aligned columns, as
 * prefetch and perf print them; a progress bar on stderr (bar != 0) is
 * cleared first so that the line does not mix with it.  NAME and DETAIL
 * come from files and profiles: they are escaped as text_put() does.
 * Flushes fp.
 */
void	cli_line(FILE *fp, int bar, const char *label, const char *kind,
	    const char *id, const char *name, const char *detail);

/*
 * Redraw the progress bar on stderr: "[===   ] DONE/TOTAL" and then what
 * fmt says.  Nothing when total is 0.
 */
void	cli_bar(size_t done, size_t total, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/*
 * Parse a -j/--jobs argument: a decimal number from 1 to CLI_JOBS_MAX.
 * @return 0 with *jobs set, or -EINVAL (said on standard error).
 */
int	cli_jobs(const char *arg, int *jobs);

/*
 * Call file for every regular file under dir, recursively, in name order
 * (so that a run is repeatable).  Symbolic links, devices and sockets
 * below dir are neither followed nor reported (a tree of libraries has
 * many links); dir itself is followed.  Entries that cannot be read go
 * to fail with their errno, and the walk goes on.
 * @return 0; file's first negative result; -ENOMEM.
 */
int	cli_walk(const char *dir, int (*file)(void *ctx, const char *path),
	    void (*fail)(void *ctx, const char *path, int errnum), void *ctx);

/*
 * Say on standard error, after "PROG: ", why the store in dir was
 * refused: rc from cache_present(), cache_open() or cache_rebuild().  A
 * directory that is not a store is named with what it lacks (lacks,
 * e.g. "index/data.mdb"), a missing one as missing, so that a mistyped
 * path reads as one.
 */
void	cli_store_error(const char *prog, const char *dir, int rc,
	    const char *lacks);

/*
 * The first URL of $DEBUGINFOD_URLS (blank-separated, as libdebuginfod
 * reads it) into buf: the hub a command asks when given no --url.
 * @return buf, or NULL when it is unset, empty or longer than len.
 */
const char *cli_env_url(char *buf, size_t len);

/*
 * The first line of the file at path, blanks trimmed (a token file).
 * @return it (malloc'd; wipe it with explicit_bzero() before free()), or
 *         NULL with errno (ENODATA: no token on the first line).
 */
char	*cli_token_file(const char *path);

struct curl_slist;

/*
 * The token a reading command sends (symhub pprof, otlp, prefetch, perf):
 * read from the file at path (--token-file), else $SYMHUB_TOKEN, appended
 * to *hdrs as "Authorization: Bearer TOKEN".  None given is no error: a hub
 * without --read-auth needs none.  Errors are said on standard error,
 * after "PROG: ".
 * @return 0 (with *tok the file's token to wipe and free, or NULL); 2 for
 *         a file that cannot be read or a token with blanks or control
 *         characters (a usage error); 1 out of memory.
 */
int	cli_read_token(const char *prog, const char *path, char **tok,
	    struct curl_slist **hdrs);

/* curl_slist_free_all() of header lines that may hold a token: each is
 * wiped first.  Accepts NULL. */
void	cli_headers_free(struct curl_slist *hdrs);

#endif

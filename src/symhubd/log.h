/*
 * log: the daemon's and the CLI's only way to say something.  Lines go to
 * stderr or to a log file (reopened on SIGHUP for rotation), one write(2)
 * per line so threads never interleave within a line.
 */
#ifndef SYMHUB_LOG_H
#define SYMHUB_LOG_H

#include <stdarg.h>

/*
 * @param prog     name put in front of every line.
 * @param file     log file path, or NULL / "-" for stderr.  Copied.
 * @param verbose  0: warnings, info and access lines; 1: debug too.
 * @return 0, or -errno when the file cannot be opened (stderr is used).
 */
int	log_init(const char *prog, const char *file, int verbose);

/* Reopen the log file (after rotation).  @return 0 or -errno. */
int	log_reopen(void);

int	log_verbose(void);

/* log_warn appends strerror(errno); log_warnx does not. */
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One access-log line; never filtered by verbosity. */
void	log_access(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif

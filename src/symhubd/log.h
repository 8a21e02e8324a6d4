/*
 * log: the daemon's and the CLI's only way to say something.  Lines go to
 * stderr or to a log file (reopened on SIGHUP or SIGUSR1 for rotation),
 * one write(2) per line so threads never interleave within a line.  Every
 * byte of a message that is a control byte, a backslash or not UTF-8 is
 * written as \xNN, so no line can forge another or drive a terminal.
 *
 * What clients can cause at will goes through log_limited() (bounded per
 * cause and address); what stays broken, through log_changed() (once per
 * change).  Access lines are never dropped: their volume is one line per
 * request, and rotation bounds it.
 */
#ifndef SYMHUB_LOG_H
#define SYMHUB_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * A warning that a client can cause as often as it likes (a malformed
 * request, a refused token, a connection it drops): at most LOG_BURST
 * lines at once and LOG_RATE a second for each (cause, peer), and
 * LOG_ALL_RATE a second for all of them together.  What is dropped is
 * counted, and said by log_flush_dropped().
 * @param cause  the kind of warning, compared by its text (the format
 *               itself will do); its first 80 bytes name it in summaries.
 * @param peer   the client's address, or NULL when none is known.
 */
#define LOG_BURST	20
#define LOG_RATE	5
#define LOG_ALL_RATE	50
void	log_limited(const char *cause, const char *peer, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	log_vlimited(const char *cause, const char *peer, const char *fmt,
	    va_list ap) __attribute__((format(printf, 3, 0)));

/* One warning line for each (cause, peer) whose warnings were dropped
 * since the last call, "dropped N similar warnings ...".  The daemon calls
 * it every few seconds. */
void	log_flush_dropped(void);

/* Warnings log_limited() dropped since the start. */
uint64_t log_dropped_total(void);

/*
 * Once per change: something that stays broken (a stored GSYM that
 * cannot be read) is logged when it breaks, and when it mends, not on
 * every request that meets it.  The last LOG_STATES broken things are
 * remembered; one forgotten is logged again when next met.
 * @param cause, key, keylen  name the thing.
 * @param state  what is wrong with it (say, its digest mixed with the
 *               error), never 0; 0 when it is sound.
 * @return 1 when state differs from the one last seen for the thing (the
 *         caller logs), else 0.  A sound thing never seen broken: 0.
 */
#define LOG_STATES	64
int	log_changed(const char *cause, const void *key, size_t keylen,
	    uint64_t state);

void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif

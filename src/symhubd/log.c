/*
 * log: timestamped lines, one write(2) each.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/hex.h"
#include "log.h"

static const char	*prog = "symhub";
static char		*path;
static int		 fd = STDERR_FILENO;
static int		 verbose;
static long		 pid;
/* Guards fd against log_reopen(); lines need no lock, one write(2) each
 * to an O_APPEND file never interleaves with another. */
static pthread_rwlock_t	 fdlock = PTHREAD_RWLOCK_INITIALIZER;

static int
open_file(void)
{
	int nfd;

	if (path == NULL)
		return 0;
	nfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (nfd < 0)
		return -errno;
	pthread_rwlock_wrlock(&fdlock);
	if (fd != STDERR_FILENO)
		close(fd);
	fd = nfd;
	pthread_rwlock_unlock(&fdlock);
	return 0;
}

int
log_init(const char *p, const char *file, int v)
{
	prog = p;
	verbose = v;
	pid = (long)getpid();
	free(path);
	path = NULL;
	if (file == NULL || strcmp(file, "-") == 0)
		return 0;
	if ((path = strdup(file)) == NULL)
		return -ENOMEM;
	return open_file();
}

int
log_reopen(void)
{
	return open_file();
}

int
log_verbose(void)
{
	return verbose;
}

/*
 * Append src to line[*n..cap) with control bytes, DEL and backslash
 * written as \xNN (a client's URL cannot forge a line or drive a
 * terminal).  Bytes from 0x80 on pass: UTF-8 paths stay readable.
 */
static void
escape(char *line, size_t cap, size_t *n, const char *src)
{
	const unsigned char *p;

	for (p = (const unsigned char *)src; *p && *n + 4 < cap; p++) {
		if (*p >= 0x20 && *p != 0x7f && *p != '\\') {
			line[(*n)++] = (char)*p;
			continue;
		}
		line[(*n)++] = '\\';
		line[(*n)++] = 'x';
		line[(*n)++] = hex_digits[*p >> 4];
		line[(*n)++] = hex_digits[*p & 15];
	}
}

static void
vlog(const char *level, int errnum, const char *fmt, va_list ap)
{
	char		line[4096], msg[2048];
	struct timespec	ts;
	struct tm	tm;
	size_t		n;
	int		r;

	/* The second's stamp, made once a second a thread: an access line a
	 * request would otherwise cost a strftime(). */
	static __thread time_t	 stamp_sec = -1;
	static __thread char	 stamp[32];
	static __thread size_t	 stamp_len;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != stamp_sec) {
		gmtime_r(&ts.tv_sec, &tm);
		stamp_len = strftime(stamp, sizeof(stamp),
		    "%Y-%m-%dT%H:%M:%S", &tm);
		stamp_sec = ts.tv_sec;
	}
	memcpy(line, stamp, stamp_len);
	n = stamp_len;
	r = snprintf(line + n, sizeof(line) - n, ".%03ldZ %s[%ld] %s",
	    ts.tv_nsec / 1000000, prog, pid, level);
	if (r > 0 && (size_t)r < sizeof(line) - n)
		n += (size_t)r;
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	escape(line, sizeof(line) - 1, &n, msg);
	if (errnum) {
		r = snprintf(line + n, sizeof(line) - n, ": %s",
		    strerror(errnum));
		n = r < 0 ? n : n + (size_t)r;
		if (n >= sizeof(line) - 1)
			n = sizeof(line) - 2;
	}
	line[n++] = '\n';
	pthread_rwlock_rdlock(&fdlock);
	if (write(fd, line, n) < 0) {
		/* Nowhere left to report it. */
	}
	pthread_rwlock_unlock(&fdlock);
}

#define LOGFN(name, level, err, cond)				\
void								\
name(const char *fmt, ...)					\
{								\
	va_list	ap;						\
	int	e = errno;					\
								\
	if (!(cond))						\
		return;						\
	va_start(ap, fmt);					\
	vlog(level, err ? e : 0, fmt, ap);			\
	va_end(ap);						\
	errno = e;						\
}

LOGFN(log_warn, "warning: ", 1, 1)
LOGFN(log_warnx, "warning: ", 0, 1)
LOGFN(log_info, "", 0, 1)
LOGFN(log_debug, "debug: ", 0, verbose > 0)
LOGFN(log_access, "", 0, 1)

void
fatal(const char *fmt, ...)
{
	va_list	ap;
	int	e = errno;

	va_start(ap, fmt);
	vlog("fatal: ", e, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vlog("fatal: ", 0, fmt, ap);
	va_end(ap);
	exit(1);
}

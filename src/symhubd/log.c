/*
 * log: timestamped lines, one write(2) each.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
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
/* log_limited()'s lock, and when log_flush_dropped() last ran. */
static pthread_mutex_t	 limit_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t		 flushed;

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
	pthread_mutex_lock(&limit_mu);
	flushed = clock_us();
	pthread_mutex_unlock(&limit_mu);
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
 * The length of the UTF-8 sequence at p when it is well formed and not a
 * C1 control (U+0080-U+009F, which some terminals obey), else 0.  Stops
 * at a NUL, which is never a continuation byte.
 */
static size_t
utf8_len(const unsigned char *p)
{
	uint32_t	c;
	size_t		n, i;

	if (p[0] < 0xc2 || p[0] > 0xf4)	/* a continuation, an overlong */
		return 0;
	n = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	c = p[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 ||
	    c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff) || c <= 0x9f)
		return 0;
	return n;
}

/*
 * Append src to line[*n..cap) with control bytes, DEL, backslash and
 * every byte that is not part of well-formed UTF-8 written as \xNN (a
 * client's URL cannot forge a line or drive a terminal).  UTF-8 passes:
 * such paths stay readable.
 */
static void
escape(char *line, size_t cap, size_t *n, const char *src)
{
	const unsigned char	*p;
	size_t			 k;

	for (p = (const unsigned char *)src; *p && *n + 4 < cap; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
			line[(*n)++] = (char)*p;
			continue;
		}
		if (*p >= 0x80 && (k = utf8_len(p)) > 0) {
			if (*n + k >= cap)
				break;
			memcpy(line + *n, p, k);
			*n += k;
			p += k - 1;
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
	if (errnum) {
		r = (int)strlen(msg);
		snprintf(msg + r, sizeof(msg) - (size_t)r, ": %s",
		    strerror(errnum));
	}
	escape(line, sizeof(line) - 1, &n, msg);
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

/*
 * log_limited(): a token bucket for each (cause, peer) in a table of
 * LIMIT_SLOTS, the least recently used given up for a newcomer (its
 * drop count joins "lost"), and one bucket for all of them, so that many
 * addresses together cannot write more than LOG_ALL_RATE lines a second.
 * Tokens are counted in thousandths.
 */
#define LIMIT_SLOTS	256
#define LIMIT_SUMMARIES	16	/* summary lines at most, per flush */

struct limit {
	uint64_t	hash;		/* 0: free */
	char		cause[80];
	char		peer[48];
	int64_t		tokens;
	int64_t		t;		/* clock_us() of the last refill */
	uint64_t	dropped;	/* since the last summary */
};

static struct limit	 limits[LIMIT_SLOTS];
static int64_t		 all_tokens = -1, all_t;
static uint64_t		 lost;		/* dropped, from slots given up */
static uint64_t		 dropped_total;

#define FNV_START	0xcbf29ce484222325ULL

/* FNV-1a over n bytes of p, or up to a NUL when str. */
static uint64_t
fnv(uint64_t h, const void *p, size_t n, int str)
{
	const unsigned char	*s = p;
	size_t			 i;

	for (i = 0; i < n && !(str && s[i] == '\0'); i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return h;
}

static void
refill(int64_t *tokens, int64_t *t, int64_t now, int64_t rate,
    int64_t burst)
{
	*tokens += (now - *t) * rate / 1000;
	if (*tokens > burst * 1000)
		*tokens = burst * 1000;
	*t = now;
}

/* The slot of (cause, peer), taken over if need be.  Under limit_mu. */
static struct limit *
limit_slot(const char *cause, const char *peer, int64_t now)
{
	struct limit	*e, *victim = NULL;
	uint64_t	 h;
	size_t		 i;

	h = fnv(fnv(FNV_START, cause, sizeof(e->cause) - 1, 1), peer,
	    sizeof(e->peer) - 1, 1) | 1;
	for (i = 0; i < LIMIT_SLOTS; i++) {
		e = &limits[i];
		if (e->hash == h &&
		    strncmp(e->cause, cause, sizeof(e->cause) - 1) == 0 &&
		    strncmp(e->peer, peer, sizeof(e->peer) - 1) == 0)
			return e;
		if (victim == NULL || e->hash == 0 ||
		    (victim->hash != 0 && e->t < victim->t))
			victim = e;
	}
	e = victim;
	lost += e->dropped;
	e->hash = h;
	snprintf(e->cause, sizeof(e->cause), "%s", cause);
	snprintf(e->peer, sizeof(e->peer), "%s", peer);
	e->tokens = (int64_t)LOG_BURST * 1000;
	e->t = now;
	e->dropped = 0;
	return e;
}

void
log_vlimited(const char *cause, const char *peer, const char *fmt,
    va_list ap)
{
	struct limit	*e;
	int64_t		 now = clock_us();
	int		 ok;

	if (peer == NULL)
		peer = "";
	pthread_mutex_lock(&limit_mu);
	if (all_tokens < 0) {
		all_tokens = (int64_t)LOG_ALL_RATE * 2 * 1000;
		all_t = now;
	}
	refill(&all_tokens, &all_t, now, LOG_ALL_RATE, 2 * LOG_ALL_RATE);
	e = limit_slot(cause, peer, now);
	refill(&e->tokens, &e->t, now, LOG_RATE, LOG_BURST);
	ok = e->tokens >= 1000 && all_tokens >= 1000;
	if (ok) {
		e->tokens -= 1000;
		all_tokens -= 1000;
	} else {
		e->dropped++;
		dropped_total++;
	}
	pthread_mutex_unlock(&limit_mu);
	if (ok)
		vlog("warning: ", 0, fmt, ap);
}

void
log_limited(const char *cause, const char *peer, const char *fmt, ...)
{
	va_list	ap;
	int	e = errno;

	va_start(ap, fmt);
	log_vlimited(cause, peer, fmt, ap);
	va_end(ap);
	errno = e;
}

void
log_flush_dropped(void)
{
	struct limit	 out[LIMIT_SUMMARIES];
	uint64_t	 more = 0, nmore = 0, gone;
	int64_t		 now = clock_us(), secs;
	size_t		 i, n = 0;

	pthread_mutex_lock(&limit_mu);
	for (i = 0; i < LIMIT_SLOTS; i++) {
		if (limits[i].dropped == 0)
			continue;
		if (n < LIMIT_SUMMARIES) {
			out[n++] = limits[i];
		} else {
			more += limits[i].dropped;
			nmore++;
		}
		limits[i].dropped = 0;
	}
	gone = lost;
	lost = 0;
	secs = (now - flushed + 500000) / 1000000;
	flushed = now;
	pthread_mutex_unlock(&limit_mu);
	for (i = 0; i < n; i++) {
		/* MHD's formats end in a newline. */
		out[i].cause[strcspn(out[i].cause, "\n")] = '\0';
		log_warnx("dropped %llu warnings like \"%s\"%s%s in %llds "
		    "(over %d a second)", (unsigned long long)out[i].dropped,
		    out[i].cause, out[i].peer[0] ? " from " : "",
		    out[i].peer, (long long)secs, LOG_RATE);
	}
	if (more + gone > 0)
		log_warnx("dropped %llu warnings of %llu other causes and "
		    "addresses in %llds", (unsigned long long)(more + gone),
		    (unsigned long long)nmore + (gone > 0), (long long)secs);
}

uint64_t
log_dropped_total(void)
{
	uint64_t n;

	pthread_mutex_lock(&limit_mu);
	n = dropped_total;
	pthread_mutex_unlock(&limit_mu);
	return n;
}

/* log_changed(): the broken things last met, each with its state. */
struct broken {
	uint64_t	key;		/* a hash of (cause, key); 0: free */
	uint64_t	state;
	uint64_t	seen;		/* broken_tick when last met */
};

static pthread_mutex_t	 broken_mu = PTHREAD_MUTEX_INITIALIZER;
static struct broken	 brokens[LOG_STATES];
static uint64_t		 broken_tick;
static unsigned		 nbroken;	/* slots in use */

int
log_changed(const char *cause, const void *key, size_t keylen,
    uint64_t state)
{
	struct broken	*e, *victim = NULL;
	uint64_t	 h;
	size_t		 i;
	int		 changed = 0;

	/* The common case, a sound thing while nothing is broken, takes no
	 * lock. */
	if (state == 0 && __atomic_load_n(&nbroken, __ATOMIC_RELAXED) == 0)
		return 0;
	h = fnv(fnv(FNV_START, cause, SIZE_MAX, 1), key, keylen, 0) | 1;
	pthread_mutex_lock(&broken_mu);
	for (i = 0; i < LOG_STATES; i++) {
		e = &brokens[i];
		if (e->key == h)
			break;
		if (victim == NULL || e->key == 0 ||
		    (victim->key != 0 && e->seen < victim->seen))
			victim = e;
	}
	if (i < LOG_STATES) {
		changed = e->state != state;
		if (state == 0) {
			e->key = 0;
			__atomic_sub_fetch(&nbroken, 1, __ATOMIC_RELAXED);
		} else {
			e->state = state;
			e->seen = ++broken_tick;
		}
	} else if (state != 0) {
		changed = 1;
		if (victim->key == 0)
			__atomic_add_fetch(&nbroken, 1, __ATOMIC_RELAXED);
		victim->key = h;
		victim->state = state;
		victim->seen = ++broken_tick;
	}
	pthread_mutex_unlock(&broken_mu);
	return changed;
}

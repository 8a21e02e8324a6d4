/*
 * testlib.h: helpers the C tests share (tap.h counts and prints checks).
 * Each is small enough to be static inline: a test links only itself.
 */
#ifndef SYMHUB_TESTLIB_H
#define SYMHUB_TESTLIB_H

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* A fast deterministic generator: the same seed, the same sequence. */
static inline uint64_t
xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Deterministic pseudo-random bytes: the same seed gives the same bytes. */
static inline void
fill(unsigned char *b, size_t n, uint64_t seed)
{
	uint64_t	s = seed * 0x9e3779b97f4a7c15ull + 1, v = 0;
	size_t		i;

	for (i = 0; i < n; i++) {
		if (i % 8 == 0)
			v = xorshift(&s);
		b[i] = (unsigned char)(v >> (8 * (i % 8)));
	}
}

/* A fresh directory $TMPDIR/symhub-test-WHAT.XXXXXX (or under /tmp),
 * malloc'd; aborts on failure (nothing to test without it). */
static inline char *
scratch(const char *what)
{
	const char	*t = getenv("TMPDIR");
	char		*d;
	size_t		 n;

	if (t == NULL || *t == '\0')
		t = "/tmp";
	n = strlen(t) + strlen(what) + 32;
	if ((d = malloc(n)) == NULL)
		abort();
	snprintf(d, n, "%s/symhub-test-%s.XXXXXX", t, what);
	if (mkdtemp(d) == NULL) {
		perror("mkdtemp");
		abort();
	}
	return d;
}

static inline int
testlib_rm_one(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) != 0 && errno != ENOENT ? -1 : 0;
}

static inline int
testlib_writable(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_D)
		chmod(path, 0700);
	return 0;
}

/* Remove dir and everything under it, also what a test made read-only. */
static inline void
rmtree(const char *dir)
{
	nftw(dir, testlib_writable, 16, FTW_PHYS);
	nftw(dir, testlib_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Run a shell command made from fmt.  @return its exit status, or -1
 * when it could not run or ended on a signal. */
static inline int __attribute__((format(printf, 1, 2)))
run(const char *fmt, ...)
{
	char	cmd[16384];
	va_list	ap;
	int	n, st;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

#endif

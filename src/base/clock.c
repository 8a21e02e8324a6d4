/*
 * clock: the test clock's offset (see clock.h).  Compiled to nothing in a
 * release build.
 */
#include "clock.h"

#ifdef SYMHUB_TEST_CLOCK
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* The mapped file, or NULL: set once, before any thread starts. */
static const volatile char *offset_text;

int
clock_test_init(void)
{
	const char	*path = getenv("SYMHUB_TEST_CLOCK");
	struct stat	 st;
	void		*p;
	int		 fd, rc = 0;

	if (path == NULL || *path == '\0')
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	/* Shorter, and a read past its end would be a SIGBUS. */
	if (st.st_size < CLOCK_TEST_SIZE) {
		rc = -EINVAL;
		goto out;
	}
	p = mmap(NULL, CLOCK_TEST_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	offset_text = p;	/* mapped for the life of the process */
out:
	close(fd);
	return rc;
}

/* The decimal number at the start of the mapped text. */
static int64_t
parse(void)
{
	int64_t	v = 0;
	size_t	i = 0;
	int	neg = 0;

	if (offset_text[0] == '-') {
		neg = 1;
		i = 1;
	}
	for (; i < CLOCK_TEST_SIZE - 1; i++) {
		char ch = offset_text[i];

		if (ch < '0' || ch > '9' || v > INT64_MAX / 20)
			break;
		v = v * 10 + (ch - '0');
	}
	return neg ? -v : v;
}

int64_t
clock_test_offset_ms(void)
{
	int64_t	a, b;
	int	tries;

	if (offset_text == NULL)
		return 0;
	/* A test may be rewriting it right now: two equal reads in a row. */
	a = parse();
	for (tries = 0; tries < 100; tries++) {
		b = parse();
		if (a == b)
			break;
		a = b;
	}
	return a;
}
#else
/* ISO C wants something in a translation unit. */
typedef int clock_release_build;
#endif

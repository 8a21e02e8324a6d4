/*
 * tap.h: the smallest test harness that does the job.  ok() records one
 * check and prints it; done() prints the plan and returns the exit status
 * Automake expects (0 pass, 1 fail).
 */
#ifndef SYMHUB_TAP_H
#define SYMHUB_TAP_H

#include <stdio.h>

static int tap_n, tap_failed, tap_skipped;

#define ok(cond, ...) do {						\
	tap_n++;							\
	if (cond) {							\
		printf("ok %d - ", tap_n);				\
	} else {							\
		tap_failed++;						\
		printf("not ok %d - %s:%d: ", tap_n, __FILE__, __LINE__); \
	}								\
	printf(__VA_ARGS__);						\
	putchar('\n');							\
} while (0)

/* A check that cannot run here, with the reason: counted apart (CI fails
 * on it, since it installs every tool). */
#define skip(...) do {							\
	tap_n++;							\
	tap_skipped++;							\
	printf("ok %d # SKIP ", tap_n);					\
	printf(__VA_ARGS__);						\
	putchar('\n');							\
} while (0)

static inline int
done(void)
{
	printf("1..%d\n# %d passed, %d failed, %d skipped\n", tap_n,
	    tap_n - tap_failed - tap_skipped, tap_failed, tap_skipped);
	return tap_failed ? 1 : 0;
}

#endif

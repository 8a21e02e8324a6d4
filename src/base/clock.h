/*
 * clock: the two clocks symhub reads.  Durations and deadlines inside the
 * process use the monotonic clock (clock_ms, clock_us); only waits on a
 * condition variable, whose deadline POSIX gives in CLOCK_REALTIME, use
 * clock_deadline().  Times written down (records, HTTP dates) are
 * clock_wall_s().
 *
 * A test build (configure --enable-test-clock, which --enable-sanitizers
 * implies) adds an offset that a test steps, so that a negative entry's
 * TTL or a breaker's cooldown can pass without the test waiting for it,
 * as unbound's replay tests step their fake time.  Release builds hold
 * no such code: CLOCK_TEST_MS() is 0 there.
 */
#ifndef SYMHUB_CLOCK_H
#define SYMHUB_CLOCK_H

#include <stdint.h>
#include <time.h>

#ifdef SYMHUB_TEST_CLOCK
/*
 * Map the file named by the environment variable SYMHUB_TEST_CLOCK, when
 * set, once at start: from then on every clock below is ahead by the
 * milliseconds written in decimal at its start (at least CLOCK_TEST_SIZE
 * bytes, rewritten in place, never truncated: a test writes it with
 * `dd conv=notrunc`).  clock_deadline() stays on the kernel's clock:
 * pthread_cond_timedwait() waits in real time.
 * @return 0 (also when the variable is not set), or a negative errno.
 */
int	clock_test_init(void);
/* The offset now, in milliseconds (0 before clock_test_init()). */
int64_t	clock_test_offset_ms(void);
#define CLOCK_TEST_SIZE	32
#define CLOCK_TEST_MS()	clock_test_offset_ms()
#else
static inline int
clock_test_init(void)
{
	return 0;
}
#define CLOCK_TEST_MS()	((int64_t)0)
#endif

/* Seconds since the epoch: what records and HTTP dates hold. */
static inline int64_t
clock_wall_s(void)
{
	return (int64_t)time(NULL) + CLOCK_TEST_MS() / 1000;
}

/* Monotonic milliseconds, from an arbitrary origin. */
static inline int64_t
clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 +
	    CLOCK_TEST_MS();
}

/* Monotonic microseconds, from the same origin as clock_ms(). */
static inline int64_t
clock_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 +
	    CLOCK_TEST_MS() * 1000;
}

/* Monotonic milliseconds at the kernel tick's resolution (a few ms): for
 * stamps taken on every connection event, where cost matters more. */
static inline int64_t
clock_coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 +
	    CLOCK_TEST_MS();
}

/* The deadline ms milliseconds from now, for pthread_cond_timedwait(). */
static inline struct timespec
clock_deadline(int64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

#endif

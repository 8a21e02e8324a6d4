/*
 * clock: the two clocks symhub reads.  Durations and deadlines inside the
 * process use the monotonic clock (clock_ms, clock_us); only waits on a
 * condition variable, whose deadline POSIX gives in CLOCK_REALTIME, use
 * clock_deadline().  Times written down (records, HTTP dates) are
 * clock_wall_s().
 */
#ifndef SYMHUB_CLOCK_H
#define SYMHUB_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Seconds since the epoch: what records and HTTP dates hold. */
static inline int64_t
clock_wall_s(void)
{
	return (int64_t)time(NULL);
}

/* Monotonic milliseconds, from an arbitrary origin. */
static inline int64_t
clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Monotonic microseconds, from the same origin as clock_ms(). */
static inline int64_t
clock_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Monotonic milliseconds at the kernel tick's resolution (a few ms): for
 * stamps taken on every connection event, where cost matters more. */
static inline int64_t
clock_coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

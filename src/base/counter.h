/*
 * counter: the relaxed atomics that counters and gauges are kept in.
 *
 * A counter is bumped on whichever thread sees the event and read by
 * /metrics or the status page on another; no reader takes a decision
 * from it, so no ordering is needed, only that no increment is lost.
 * Each takes the lvalue of an atomic integer (not its address).
 */
#ifndef SYMHUB_COUNTER_H
#define SYMHUB_COUNTER_H

#include <stdatomic.h>

/* Add 1 to x. */
#define INC(x)		atomic_fetch_add_explicit(&(x), 1, \
			    memory_order_relaxed)
/* Add n to x. */
#define ADD(x, n)	atomic_fetch_add_explicit(&(x), (n), \
			    memory_order_relaxed)
/* x's value now. */
#define GET(x)		atomic_load_explicit(&(x), memory_order_relaxed)

#endif

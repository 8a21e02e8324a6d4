/*
 * breaker: one upstream's health, and the count of what its attempts
 * came to.
 *
 * The breaker: after a run of transport failures or timeouts (--breaker-
 * failures) the upstream is skipped for a cool-down (--breaker-cooldown),
 * then one probe is let through (half-open); its answer closes the
 * breaker, its failure opens it again.  The fetch thread alone feeds and
 * asks it; its state is also read by other threads (side queries,
 * /metrics, the status page).
 *
 * The counts (the symhub_upstream_* metrics): each attempt's outcome,
 * the time to its first byte, the bytes received.  Relaxed atomics:
 * written on the fetch thread, read on any.
 */
#ifndef SYMHUB_BREAKER_H
#define SYMHUB_BREAKER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How an attempt ended; the outcome label of
 * symhub_upstream_requests_total. */
enum breaker_outcome {
	BREAKER_HIT, BREAKER_NOTFOUND, BREAKER_TIMEOUT, BREAKER_TRANSPORT,
	BREAKER_HTTP_ERROR, BREAKER_WRONG_ID, BREAKER_CANCELLED,
	BREAKER_TOOBIG, BREAKER_NOUTCOMES
};

enum breaker_state { BREAKER_CLOSED, BREAKER_OPEN, BREAKER_HALF_OPEN };

/* First-byte latency histogram: its number of bounds. */
#define BREAKER_NFB	11

/* One upstream's; the fields are this module's. */
struct breaker {
	const char		*name;		/* the upstream's, borrowed */
	unsigned		 max_fails;	/* 0: never opens */
	int64_t			 cooldown_ms;
	/* Fetch thread only. */
	unsigned		 fails;		/* transport failures running */
	int64_t			 open_until;	/* ms; 0: closed */
	int			 probing;	/* half-open probe under way */
	/* Any thread. */
	atomic_int		 state;		/* enum breaker_state */
	atomic_uint_fast64_t	 out[BREAKER_NOUTCOMES];
	atomic_uint_fast64_t	 fb[BREAKER_NFB + 1];
	atomic_uint_fast64_t	 fb_sum_ms;
	atomic_uint_fast64_t	 bytes;
};

/* Closed, no counts.  name must stay valid as long as b is used;
 * max_fails 0 keeps the breaker closed whatever happens. */
void	breaker_init(struct breaker *b, const char *name, unsigned max_fails,
	    int64_t cooldown_ms);

/* May the upstream be asked at now (clock_ms())?  When the cool-down is
 * over this lets one probe through and marks it under way.  Fetch
 * thread. */
int	breaker_allows(struct breaker *b, int64_t now);

/* An attempt that was let through ended: with a transport failure or a
 * time-out (transport_failure 1), or with any answer (0: closes the
 * breaker).  Logs when the breaker opens or closes.  Fetch thread. */
void	breaker_result(struct breaker *b, int transport_failure);

/* An attempt that was let through ended without telling anything (it
 * was cancelled, or never started): the next one may probe. */
void	breaker_no_result(struct breaker *b);

/* The state now, from any thread. */
enum breaker_state breaker_state(const struct breaker *b);

/* Count one attempt's outcome. */
void	breaker_count(struct breaker *b, enum breaker_outcome o);

/* Count the first byte of an answer, ms after the attempt started. */
void	breaker_first_byte(struct breaker *b, uint64_t ms);

/* Count n bytes of a body received. */
void	breaker_bytes(struct breaker *b, uint64_t n);

/* One upstream's counts, as the status page shows them. */
struct breaker_counts {
	enum breaker_state	 state;
	uint64_t		 hits, notfound;
	uint64_t		 failures;	/* all but hits, 404s and
						 * cancelled attempts */
	uint64_t		 bytes;
	double			 first_byte_ms;	/* mean; 0: no answer yet */
};
void	breaker_read(const struct breaker *b, struct breaker_counts *out);

/* Append the symhub_upstream_* metrics of the n breakers v (requests by
 * outcome, first-byte histogram, bytes, breaker state), in Prometheus
 * text, labelled with their names. */
void	breaker_metrics(const struct breaker *v, size_t n, FILE *fp);

#endif

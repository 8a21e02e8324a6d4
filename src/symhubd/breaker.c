/*
 * breaker: an upstream's health and the counts of its attempts.  See
 * breaker.h.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

#include "base/clock.h"
#include "base/counter.h"
#include "breaker.h"
#include "log.h"

static const char *const onames[BREAKER_NOUTCOMES] = {
	"hit", "notfound", "timeout", "transport", "http_error",
	"wrong_buildid", "cancelled", "too_big"
};

/* First-byte latency histogram bounds, milliseconds. */
static const uint64_t fbb[BREAKER_NFB] = { 5, 10, 25, 50, 100, 250, 500,
    1000, 2500, 5000, 10000 };
#define NFBB	BREAKER_NFB

void
breaker_init(struct breaker *b, const char *name, unsigned max_fails,
    int64_t cooldown_ms)
{
	memset(b, 0, sizeof(*b));
	b->name = name;
	b->max_fails = max_fails;
	b->cooldown_ms = cooldown_ms;
}

/* May this upstream be asked now?  Half-open lets one probe through. */
int
breaker_allows(struct breaker *b, int64_t now)
{
	if (b->open_until == 0)
		return 1;
	if (now < b->open_until || b->probing)
		return 0;
	b->probing = 1;
	atomic_store(&b->state, BREAKER_HALF_OPEN);
	return 1;
}

void
breaker_result(struct breaker *b, int transport_failure)
{
	b->probing = 0;
	if (!transport_failure) {
		if (b->open_until != 0)
			log_info("upstream %s: answering again, breaker closed",
			    b->name);
		b->fails = 0;
		b->open_until = 0;
		atomic_store(&b->state, BREAKER_CLOSED);
		return;
	}
	if (b->max_fails == 0)
		return;		/* breaker disabled */
	if (++b->fails >= b->max_fails || b->open_until != 0) {
		if (b->open_until == 0 || GET(b->state) == BREAKER_HALF_OPEN)
			log_warnx("upstream %s: %u failures in a row, skipping "
			    "it for %" PRId64 " s", b->name, b->fails,
			    b->cooldown_ms / 1000);
		b->open_until = clock_ms() + b->cooldown_ms;
		atomic_store(&b->state, BREAKER_OPEN);
	}
}

void
breaker_no_result(struct breaker *b)
{
	b->probing = 0;
}

enum breaker_state
breaker_state(const struct breaker *b)
{
	return (enum breaker_state)atomic_load(&b->state);
}

void
breaker_count(struct breaker *b, enum breaker_outcome o)
{
	INC(b->out[o]);
}

void
breaker_first_byte(struct breaker *b, uint64_t ms)
{
	size_t i;

	for (i = 0; i < NFBB && ms > fbb[i]; i++)
		;
	INC(b->fb[i]);
	ADD(b->fb_sum_ms, ms);
}

void
breaker_bytes(struct breaker *b, uint64_t n)
{
	ADD(b->bytes, n);
}

void
breaker_read(const struct breaker *b, struct breaker_counts *out)
{
	uint64_t	n = 0;
	size_t		k;

	memset(out, 0, sizeof(*out));
	out->state = breaker_state(b);
	out->hits = GET(b->out[BREAKER_HIT]);
	out->notfound = GET(b->out[BREAKER_NOTFOUND]);
	for (k = 0; k < BREAKER_NOUTCOMES; k++)
		if (k != BREAKER_HIT && k != BREAKER_NOTFOUND &&
		    k != BREAKER_CANCELLED)
			out->failures += GET(b->out[k]);
	out->bytes = GET(b->bytes);
	for (k = 0; k <= NFBB; k++)
		n += GET(b->fb[k]);
	out->first_byte_ms = n > 0 ? (double)GET(b->fb_sum_ms) / (double)n :
	    0;
}

void
breaker_metrics(const struct breaker *v, size_t n, FILE *fp)
{
	size_t	i, k;

	fprintf(fp, "# TYPE symhub_upstream_requests_total counter\n");
	for (i = 0; i < n; i++)
		for (k = 0; k < BREAKER_NOUTCOMES; k++)
			fprintf(fp, "symhub_upstream_requests_total"
			    "{upstream=\"%s\",outcome=\"%s\"} %llu\n",
			    v[i].name, onames[k],
			    (unsigned long long)GET(v[i].out[k]));
	fprintf(fp, "# TYPE symhub_upstream_first_byte_seconds histogram\n");
	for (i = 0; i < n; i++) {
		const struct breaker	*b = &v[i];
		uint64_t		 cum = 0;

		for (k = 0; k <= NFBB; k++) {
			cum += GET(b->fb[k]);
			if (k < NFBB)
				fprintf(fp, "symhub_upstream_first_byte_seconds"
				    "_bucket{upstream=\"%s\",le=\"%g\"} %llu\n",
				    b->name, (double)fbb[k] / 1e3,
				    (unsigned long long)cum);
			else
				fprintf(fp, "symhub_upstream_first_byte_seconds"
				    "_bucket{upstream=\"%s\",le=\"+Inf\"} %llu\n",
				    b->name, (unsigned long long)cum);
		}
		fprintf(fp, "symhub_upstream_first_byte_seconds_sum"
		    "{upstream=\"%s\"} %.3f\n"
		    "symhub_upstream_first_byte_seconds_count"
		    "{upstream=\"%s\"} %llu\n",
		    b->name, (double)GET(b->fb_sum_ms) / 1e3,
		    b->name, (unsigned long long)cum);
	}
	fprintf(fp, "# TYPE symhub_upstream_bytes_total counter\n");
	for (i = 0; i < n; i++)
		fprintf(fp, "symhub_upstream_bytes_total{upstream=\"%s\"} "
		    "%llu\n", v[i].name, (unsigned long long)GET(v[i].bytes));
	fprintf(fp, "# TYPE symhub_upstream_breaker_state gauge\n");
	for (i = 0; i < n; i++)
		fprintf(fp, "symhub_upstream_breaker_state{upstream=\"%s\"} "
		    "%d\n", v[i].name, atomic_load(&v[i].state));
}

/*
 * rate: token buckets for the request rate of a key (a token's name, a
 * client's address), in a table of fixed size.  A key not in the table
 * takes the slot of the least recently seen key of its few candidates,
 * so a flood of new addresses costs no memory, only the buckets of the
 * quietest clients (who then start again with a full bucket).
 */
#ifndef SYMHUB_RATE_H
#define SYMHUB_RATE_H

#include <stddef.h>
#include <stdint.h>

struct rate;

/*
 * A table of slots buckets, each filled at per_s a second up to burst.
 * @return 0 and *out (free with rate_free()), or -ENOMEM, -EINVAL.
 */
int	rate_new(size_t slots, uint64_t per_s, uint64_t burst,
	    struct rate **out);

void	rate_free(struct rate *rt);

/*
 * Take one from key's bucket (len bytes) at now_ms (a monotonic clock).
 * @return 0 when there was one; else the seconds until there is (>= 1).
 */
unsigned rate_take(struct rate *rt, const void *key, size_t len,
	    int64_t now_ms);

/* Keys forgotten for others since the start (the table was full). */
uint64_t rate_evictions(struct rate *rt);

#endif

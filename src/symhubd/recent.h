/*
 * recent: the last few misses, uploads and conversions, for the status
 * page.  Process-wide, like metrics; a mutex guards the rings (a few
 * events a request at most, never on a hit).
 */
#ifndef SYMHUB_RECENT_H
#define SYMHUB_RECENT_H

#include <stddef.h>
#include <stdint.h>

enum recent_kind {
	RECENT_MISS,		/* a /buildid/ request answered 404 or reset */
	RECENT_UPLOAD,		/* a PUT stored or replaced a file */
	RECENT_CONVERSION,	/* a DWARF to GSYM conversion, done or failed */
	RECENT_N
};

#define RECENT_MAX	20

struct recent_event {
	int64_t	t;		/* wall seconds */
	char	id[129];	/* build-id in hex */
	char	what[24];	/* the artifact type */
	char	detail[96];	/* how it was answered */
};

/* Remember an event, dropping the oldest of its kind past RECENT_MAX.
 * Strings are copied, cut to fit. */
void	recent_add(enum recent_kind k, const char *id, const char *what,
	    const char *detail);

/* Copy up to max events of kind k, newest first.  @return how many. */
size_t	recent_get(enum recent_kind k, struct recent_event *out, size_t max);

#endif

/*
 * event: the names of the bucket's events (bucket.h, doc/store.md "The
 * bucket"): an empty object per upload or delete through a replica,
 * whose name says it all,
 *
 *	events/MS-REPLICA-SEQ.OP.KIND.ID[.SHA256]
 *
 * MS the writer's wall clock in milliseconds (13 digits: names sort in
 * time), REPLICA 16 hex digits, SEQ 6 digits, OP "put" or "delete", KIND
 * "debuginfo" or "executable", ID the build-id in lowercase hex, SHA256
 * (a put's) 64 lowercase hex digits.  Any replica, or anyone who may
 * write to the bucket, names them: reading one is parsing outside bytes.
 * Pure functions: no I/O, no allocation.
 */
#ifndef SYMHUB_EVENT_H
#define SYMHUB_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"

#define EVENT_PREFIX	"events/"
/* The longest name: prefix, MS-REPLICA-SEQ, ".delete.executable.",
 * a 64-byte id, ".", a SHA-256. */
#define EVENT_NAME_MAX	(7 + 13 + 1 + 16 + 1 + 6 + 19 + \
			    2 * CACHE_ID_MAX + 1 + 64)

struct event {
	int64_t			 ms;		/* 0 .. 10^13 - 1 */
	char			 replica[17];	/* hex, NUL-terminated */
	unsigned		 seq;		/* 0 .. 999999 */
	int			 del;		/* delete, else put */
	enum cache_kind		 kind;		/* DEBUGINFO, EXECUTABLE */
	unsigned char		 id[CACHE_ID_MAX];
	size_t			 idlen;
	int			 have_sha;	/* a put's SHA-256 */
	unsigned char		 sha[32];
};

/*
 * Write e's name (EVENT_PREFIX included) to out.
 * @return its length; -EINVAL for a field out of range; -ENAMETOOLONG.
 */
int	event_name(const struct event *e, char *out, size_t outsz);

/*
 * Read name (EVENT_PREFIX included) into out; every field must be as
 * event_name() writes it, and nothing after.  Reads at most
 * EVENT_NAME_MAX + 1 bytes of name.
 * @return 0, or -EINVAL (out is then partly written).
 */
int	event_parse(const char *name, struct event *out);

#endif

/*
 * artifact: the kinds of artifact and the lengths of their ids.  The
 * store keeps these values in its records and keys on disk (cache/cache.h
 * includes this header: never renumber a kind); the vocabulary above it
 * names them (common/kind.h) and parses them from URLs (common/webapi.h).
 * Here, at the bottom, so that neither has to include the other.  The
 * names keep the store's prefix: they are its values.
 */
#ifndef SYMHUB_ARTIFACT_H
#define SYMHUB_ARTIFACT_H

enum cache_kind {
	CACHE_DEBUGINFO = 1,
	CACHE_EXECUTABLE = 2,
	CACHE_SOURCE = 3,	/* extra: canonical absolute source path */
	CACHE_SECTION = 4,	/* extra: section name */
	CACHE_GSYM = 5,		/* derived from the debuginfo */
	CACHE_MEMBER = 6,	/* extra: "KIND:MEMBER": an archive member's
				 * bytes, extracted (derived, evictable) */
	CACHE_ENCODED = 7,	/* extra: "ENCODING:KIND": a debuginfo's or
				 * executable's bytes compressed (derived,
				 * evictable) */
	CACHE_BUNDLE = 8	/* the source bundle uploaded with a build
				 * (common/srcbundle.h), "sources" */
};

#define CACHE_ID_MAX	64	/* bytes of a build-id (128 hex characters) */

/* Bytes of a FileID (doc/protocol.md, "Keys"). */
#define CACHE_FILEID_LEN	16

#endif

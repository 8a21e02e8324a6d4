/*
 * metajson: the JSON of a /metadata answer (doc/protocol.md, "/metadata"):
 * {"results":[{"type":..,"buildid":..,"file":..,"archive":..},...],
 *  "complete":true|false}, built from this hub's own entries and the
 * answers of its upstreams, each entry once.  No I/O; json-c parses and
 * escapes.
 */
#ifndef SYMHUB_METAJSON_H
#define SYMHUB_METAJSON_H

#include <stddef.h>

struct metajson;	/* opaque: one answer being built */

/* @return 0 with *out; -ENOMEM. */
int	metajson_create(struct metajson **out);

/*
 * Append an entry, unless the same one (all four strings) is there.
 * @param type     "executable" or "debuginfo".
 * @param buildid  lowercase hex.
 * @param file     the file's name; archive the package it is a member
 *                 of, or NULL.  An empty string is left out.
 * @return 1 appended, 0 a duplicate, -ENOMEM.
 */
int	metajson_add(struct metajson *j, const char *type, const char *buildid,
	    const char *file, const char *archive);

/*
 * Append the entries of an upstream's answer (body, len bytes, need not
 * be NUL-terminated), each taken apart and written anew: an entry that
 * is not an object with string "type" and "buildid" is passed over, so is
 * any member besides the four, and a string that is not.
 * @param complete  set to the answer's "complete".
 * @return the entries appended (duplicates not counted); -EINVAL when
 *         body is not an object with an array "results" and a boolean
 *         "complete" (nothing appended); -ENOMEM.
 */
long	metajson_merge(struct metajson *j, const char *body, size_t len,
	    int *complete);

/* Most entries of one answer: beyond them metajson_add() leaves entries
 * out (returns 0) and metajson_full() says so; the answer is then not
 * complete.  Some 200 bytes of JSON each, 500 of json-c's tree. */
#define METAJSON_ENTRIES_MAX	65536

/* Was an entry left out for METAJSON_ENTRIES_MAX?  @return 1 or 0. */
int	metajson_full(const struct metajson *j);

/* Entries so far. */
size_t	metajson_count(const struct metajson *j);

/*
 * Close the answer with "complete" and hand its bytes over, each byte of
 * a string that is not UTF-8 replaced by U+FFFD (base/utf8.h).  j is
 * freed in every case.
 * @param buf  the JSON, malloc'd, the caller's (NUL-terminated; len
 *             without the NUL); NULL on failure.
 * @return 0; -ENOMEM.
 */
int	metajson_finish(struct metajson *j, int complete, char **buf,
	    size_t *len);

/* Accepts NULL. */
void	metajson_free(struct metajson *j);

#endif

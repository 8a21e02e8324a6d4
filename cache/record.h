/*
 * record: the byte encodings of the cache's LMDB keys and values.  Pure
 * functions, private to cache/ and its unit tests.
 */
#ifndef SYMHUB_CACHE_RECORD_H
#define SYMHUB_CACHE_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"

/* kind, id length, id, SHA-256 of extra: never over LMDB's 511 bytes. */
#define RECORD_KEY_MAX		(2 + CACHE_ID_MAX + 32)

/* Fixed part of an encoded record; atime can be patched in place.
 * Version 2 is version 1 followed by a seek (u32 length, bytes); a record
 * without one is written as version 1, which older builds read. */
#define RECORD_VERSION		1u
#define RECORD_VERSION_SEEK	2u
#define RECORD_FIXED		112
#define RECORD_ATIME_OFF	96

/*
 * Encode key into out.
 * @return the encoded length, or -EINVAL for an invalid key (bad kind,
 *         id length, or extra present/absent for the kind).
 */
int	record_key(const struct cache_key *key,
	    unsigned char out[RECORD_KEY_MAX]);

/*
 * Encode rec (strings included) into a malloc'd buffer.
 * @return 0 with *out (caller frees) and *len set, or -ENOMEM/-EINVAL.
 */
int	record_encode(const struct cache_record *rec, unsigned char **out,
	    size_t *len);

/*
 * Decode buf into out; the strings are copied into out->mem (one
 * allocation) and released by cache_record_release().
 * @return 0, -EINVAL for a malformed buffer, -ENOMEM.
 */
int	record_decode(const void *buf, size_t len, struct cache_record *out);

/* Offset of the mtime in an encoded files-table entry. */
#define RECORD_FILE_MTIME_OFF	24

/* An entry of the files table: a scanned file and the keys it gave. */
struct record_file {
	struct cache_file	 id;
	const char		*path;	/* points into the decoded buffer */
	size_t			 nkeys;
	const unsigned char	*keys;	/* nkeys x (u16 length, key bytes) */
	size_t			 keyslen;
};

/* LMDB key of the files table for path (the path, or a hash when long). */
size_t	record_file_key(const char *path, unsigned char out[RECORD_KEY_MAX],
	    const unsigned char **key);

int	record_file_encode(const char *path, const struct cache_file *f,
	    const struct cache_key *keys, size_t nkeys, unsigned char **out,
	    size_t *len);
/* Decode in place: out's pointers refer into buf, and out->path is not
 * NUL-terminated.  @return the path's length, or -EINVAL. */
int	record_file_decode(const void *buf, size_t len,
	    struct record_file *out);
/* Walk the encoded keys of a files entry: *pos starts at 0.
 * @return 1 with key and klen set, 0 at the end, -EINVAL if malformed. */
int	record_file_next_key(const struct record_file *f, size_t *pos,
	    const unsigned char **key, size_t *klen);

/*
 * The catalog (see cache.h): one small file per blob record or FileID
 * mapping, beside the index, from which the index can be rebuilt.  An
 * entry holds the encoded LMDB key, the key's extra string (source path
 * or section name; the LMDB key only holds its hash), the encoded value,
 * and a checksum over all of it, so a torn or rotten entry is refused.
 */
#define RECORD_CAT_RECORD	'R'	/* key: record_key(), value: record */
#define RECORD_CAT_FILEID	'F'	/* key: a FileID, value: a build-id */

struct record_cat {
	int			 type;	/* RECORD_CAT_* */
	const unsigned char	*key;
	size_t			 klen;
	const char		*extra;	/* NULL, or not NUL-terminated: */
	size_t			 extralen;
	const unsigned char	*val;
	size_t			 vlen;
};

/* Encode e into a malloc'd buffer.  @return 0 or -ENOMEM/-EINVAL. */
int	record_cat_encode(const struct record_cat *e, unsigned char **out,
	    size_t *len);
/* Decode in place: out's pointers refer into buf.
 * @return 0, or -EINVAL for anything malformed or a checksum mismatch. */
int	record_cat_decode(const void *buf, size_t len, struct record_cat *out);

#endif

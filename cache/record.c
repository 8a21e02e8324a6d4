/*
 * record: encodings of cache keys, records and files-table entries.
 *
 * Values are in host byte order: an LMDB environment is not portable across
 * architectures anyway, and the store is rebuilt, never copied, between
 * hosts (export/import moves blobs, not the index).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "cache/record.h"

#define NSTR	5
#define NOSTR	0xffffffffu

int
record_key(const struct cache_key *key, unsigned char out[RECORD_KEY_MAX])
{
	int	 needs_extra;
	size_t	 n;

	if (key->idlen < 1 || key->idlen > CACHE_ID_MAX || key->id == NULL)
		return -EINVAL;
	switch (key->kind) {
	case CACHE_DEBUGINFO:
	case CACHE_EXECUTABLE:
	case CACHE_GSYM:
	case CACHE_BUNDLE:
		needs_extra = 0;
		break;
	case CACHE_SOURCE:
	case CACHE_SECTION:
	case CACHE_MEMBER:
	case CACHE_ENCODED:
		needs_extra = 1;
		break;
	default:
		return -EINVAL;
	}
	if (needs_extra != (key->extra != NULL))
		return -EINVAL;
	out[0] = (unsigned char)key->kind;
	out[1] = (unsigned char)key->idlen;
	memcpy(out + 2, key->id, key->idlen);
	n = 2 + key->idlen;
	if (needs_extra) {
		SHA256((const unsigned char *)key->extra, strlen(key->extra),
		    out + n);
		n += 32;
	}
	return (int)n;
}

static void
put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void
put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint64_t
get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t
get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int
record_encode(const struct cache_record *rec, unsigned char **out,
    size_t *len)
{
	const char	*s[NSTR] = { rec->path, rec->origin, rec->xfile,
			    rec->xarchive, rec->ximasig };
	unsigned char	*buf, *p;
	size_t		 n = RECORD_FIXED, sl[NSTR];
	int		 i;

	for (i = 0; i < NSTR; i++) {
		sl[i] = s[i] ? strlen(s[i]) : 0;
		if (sl[i] >= NOSTR)
			return -EINVAL;
		n += 4 + sl[i];
	}
	if (rec->seeklen > CACHE_SEEK_MAX)
		return -EINVAL;
	if (rec->seeklen > 0)
		n += 4 + rec->seeklen;
	if ((buf = calloc(1, n)) == NULL)
		return -ENOMEM;
	put32(buf + 0, rec->seeklen > 0 ? RECORD_VERSION_SEEK :
	    RECORD_VERSION);
	put32(buf + 4, rec->flags);
	put32(buf + 8, rec->quality);
	put64(buf + 16, rec->size);
	memcpy(buf + 24, rec->digest, 32);
	put64(buf + 56, rec->dev);
	put64(buf + 64, rec->ino);
	put64(buf + 72, (uint64_t)rec->mtime_ns);
	put64(buf + 80, (uint64_t)rec->last_modified);
	put64(buf + 88, (uint64_t)rec->stored);
	put64(buf + RECORD_ATIME_OFF, (uint64_t)rec->atime);
	put64(buf + 104, rec->parent);
	p = buf + RECORD_FIXED;
	for (i = 0; i < NSTR; i++) {
		put32(p, s[i] ? (uint32_t)sl[i] : NOSTR);
		p += 4;
		if (sl[i])
			memcpy(p, s[i], sl[i]);
		p += sl[i];
	}
	if (rec->seeklen > 0) {
		put32(p, (uint32_t)rec->seeklen);
		memcpy(p + 4, rec->seek, rec->seeklen);
	}
	*out = buf;
	*len = n;
	return 0;
}

int
record_decode(const void *vbuf, size_t len, struct cache_record *out)
{
	const unsigned char	*buf = vbuf, *p, *end = buf + len;
	const char		**s[NSTR];
	uint32_t		 sl[NSTR], version, seeklen = 0;
	size_t			 total = 0;
	char			*mem, *m;
	int			 i;

	memset(out, 0, sizeof(*out));
	if (len < RECORD_FIXED)
		return -EINVAL;
	version = get32(buf);
	if (version != RECORD_VERSION && version != RECORD_VERSION_SEEK)
		return -EINVAL;
	p = buf + RECORD_FIXED;
	for (i = 0; i < NSTR; i++) {
		if ((size_t)(end - p) < 4)
			return -EINVAL;
		sl[i] = get32(p);
		p += 4;
		if (sl[i] == NOSTR)
			continue;
		if ((size_t)(end - p) < sl[i])
			return -EINVAL;
		p += sl[i];
		total += sl[i] + 1;
	}
	if (version == RECORD_VERSION_SEEK) {
		if ((size_t)(end - p) < 4)
			return -EINVAL;
		seeklen = get32(p);
		p += 4;
		if (seeklen == 0 || seeklen > CACHE_SEEK_MAX ||
		    (size_t)(end - p) < seeklen)
			return -EINVAL;
		memcpy(out->seek, p, seeklen);
		out->seeklen = seeklen;
		p += seeklen;
	}
	if (p != end) {
		out->seeklen = 0;
		return -EINVAL;
	}
	if ((mem = malloc(total ? total : 1)) == NULL)
		return -ENOMEM;

	out->flags = get32(buf + 4);
	out->quality = get32(buf + 8);
	out->size = get64(buf + 16);
	memcpy(out->digest, buf + 24, 32);
	out->dev = get64(buf + 56);
	out->ino = get64(buf + 64);
	out->mtime_ns = (int64_t)get64(buf + 72);
	out->last_modified = (int64_t)get64(buf + 80);
	out->stored = (int64_t)get64(buf + 88);
	out->atime = (int64_t)get64(buf + RECORD_ATIME_OFF);
	out->parent = get64(buf + 104);
	out->mem = mem;

	s[0] = &out->path;
	s[1] = &out->origin;
	s[2] = &out->xfile;
	s[3] = &out->xarchive;
	s[4] = &out->ximasig;
	p = buf + RECORD_FIXED;
	m = mem;
	for (i = 0; i < NSTR; i++) {
		p += 4;
		if (sl[i] == NOSTR)
			continue;
		memcpy(m, p, sl[i]);
		m[sl[i]] = '\0';
		*s[i] = m;
		m += sl[i] + 1;
		p += sl[i];
	}
	return 0;
}

/* Paths longer than this are keyed by their hash (LMDB keys <= 511). */
#define FILE_KEY_PATH_MAX	(RECORD_KEY_MAX - 1)

size_t
record_file_key(const char *path, unsigned char out[RECORD_KEY_MAX],
    const unsigned char **key)
{
	size_t n = strlen(path);

	if (n > 0 && n <= FILE_KEY_PATH_MAX && path[0] == '/') {
		*key = (const unsigned char *)path;
		return n;
	}
	/* Hashed keys start with a byte no absolute path starts with. */
	out[0] = 0x01;
	SHA256((const unsigned char *)path, n, out + 1);
	*key = out;
	return 33;
}

#define FILE_FIXED	(8 * 4 + 4 + 4)

int
record_file_encode(const char *path, const struct cache_file *f,
    const struct cache_key *keys, size_t nkeys, unsigned char **out,
    size_t *len)
{
	unsigned char	 kb[RECORD_KEY_MAX], *buf, *p;
	size_t		 pl = strlen(path), n, i;
	int		 kl;

	n = FILE_FIXED + pl;
	for (i = 0; i < nkeys; i++) {
		if ((kl = record_key(&keys[i], kb)) < 0)
			return kl;
		n += 2 + (size_t)kl;
	}
	if ((buf = malloc(n)) == NULL)
		return -ENOMEM;
	put64(buf, f->dev);
	put64(buf + 8, f->ino);
	put64(buf + 16, f->size);
	put64(buf + RECORD_FILE_MTIME_OFF, (uint64_t)f->mtime_ns);
	put32(buf + 32, (uint32_t)pl);
	put32(buf + 36, (uint32_t)nkeys);
	memcpy(buf + FILE_FIXED, path, pl);
	p = buf + FILE_FIXED + pl;
	for (i = 0; i < nkeys; i++) {
		uint16_t l;

		kl = record_key(&keys[i], kb);
		l = (uint16_t)kl;
		memcpy(p, &l, 2);
		memcpy(p + 2, kb, (size_t)kl);
		p += 2 + (size_t)kl;
	}
	*out = buf;
	*len = n;
	return 0;
}

int
record_file_decode(const void *vbuf, size_t len, struct record_file *out)
{
	const unsigned char	*buf = vbuf;
	size_t			 pl;

	memset(out, 0, sizeof(*out));
	if (len < FILE_FIXED)
		return -EINVAL;
	out->id.dev = get64(buf);
	out->id.ino = get64(buf + 8);
	out->id.size = get64(buf + 16);
	out->id.mtime_ns = (int64_t)get64(buf + 24);
	pl = get32(buf + 32);
	out->nkeys = get32(buf + 36);
	if (len - FILE_FIXED < pl)
		return -EINVAL;
	/* The path is not NUL-terminated in the buffer: callers compare it
	 * with memcmp() over the length returned. */
	out->path = (const char *)buf + FILE_FIXED;
	out->keys = buf + FILE_FIXED + pl;
	out->keyslen = len - FILE_FIXED - pl;
	return (int)pl;
}

int
record_file_next_key(const struct record_file *f, size_t *pos,
    const unsigned char **key, size_t *klen)
{
	uint16_t l;

	if (*pos == f->keyslen)
		return 0;
	if (f->keyslen - *pos < 2)
		return -EINVAL;
	memcpy(&l, f->keys + *pos, 2);
	if (l == 0 || l > RECORD_KEY_MAX || f->keyslen - *pos - 2 < l)
		return -EINVAL;
	*key = f->keys + *pos + 2;
	*klen = l;
	*pos += 2 + (size_t)l;
	return 1;
}

/*
 * Catalog entries: magic, type, three u32 lengths, the three byte strings,
 * then a 64-bit FNV-1a of everything before it.
 */
static const char CAT_MAGIC[8] = "SYMHCAT1";
#define CAT_FIXED	(8 + 4 + 12)
#define CAT_VAL_MAX	((size_t)1 << 20)

static uint64_t
fnv1a(const unsigned char *p, size_t n)
{
	uint64_t	h = 0xcbf29ce484222325ull;
	size_t		i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

int
record_cat_encode(const struct record_cat *e, unsigned char **out,
    size_t *len)
{
	unsigned char	*b;
	size_t		 n;

	*out = NULL;
	if ((e->type != RECORD_CAT_RECORD && e->type != RECORD_CAT_FILEID) ||
	    e->klen == 0 || e->klen > RECORD_KEY_MAX || e->vlen == 0 ||
	    e->vlen > CAT_VAL_MAX || e->extralen > 65536 ||
	    (e->extralen > 0 && e->extra == NULL))
		return -EINVAL;
	n = CAT_FIXED + e->klen + e->extralen + e->vlen + 8;
	if ((b = calloc(1, n)) == NULL)
		return -ENOMEM;
	memcpy(b, CAT_MAGIC, 8);
	b[8] = (unsigned char)e->type;
	put32(b + 12, (uint32_t)e->klen);
	put32(b + 16, (uint32_t)e->extralen);
	put32(b + 20, (uint32_t)e->vlen);
	memcpy(b + CAT_FIXED, e->key, e->klen);
	if (e->extralen > 0)
		memcpy(b + CAT_FIXED + e->klen, e->extra, e->extralen);
	memcpy(b + CAT_FIXED + e->klen + e->extralen, e->val, e->vlen);
	put64(b + n - 8, fnv1a(b, n - 8));
	*out = b;
	*len = n;
	return 0;
}

int
record_cat_decode(const void *vbuf, size_t len, struct record_cat *out)
{
	const unsigned char	*buf = vbuf;
	size_t			 kl, xl, vl;

	memset(out, 0, sizeof(*out));
	if (len < CAT_FIXED + 8 || memcmp(buf, CAT_MAGIC, 8) != 0)
		return -EINVAL;
	kl = get32(buf + 12);
	xl = get32(buf + 16);
	vl = get32(buf + 20);
	if (kl == 0 || kl > RECORD_KEY_MAX || xl > 65536 || vl == 0 ||
	    vl > CAT_VAL_MAX || len != CAT_FIXED + kl + xl + vl + 8 ||
	    get64(buf + len - 8) != fnv1a(buf, len - 8))
		return -EINVAL;
	out->type = buf[8];
	if (out->type != RECORD_CAT_RECORD && out->type != RECORD_CAT_FILEID)
		return -EINVAL;
	out->key = buf + CAT_FIXED;
	out->klen = kl;
	out->extra = xl > 0 ? (const char *)buf + CAT_FIXED + kl : NULL;
	out->extralen = xl;
	out->val = buf + CAT_FIXED + kl + xl;
	out->vlen = vl;
	return 0;
}

/*
 * upload: streaming, validation and "which copy wins".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/clock.h"
#include "base/hex.h"
#include "common/elfinfo.h"
#include "common/webapi.h"
#include "bundle.h"
#include "scan.h"
#include "upload.h"

struct upload {
	struct cache		*c;
	struct cache_key	 key;
	unsigned char		 id[CACHE_ID_MAX];
	struct cache_blob	*b;
	uint64_t		 max;
	int			 failed;
	int			 by_fileid;	/* key.id is a FileID */
	int			 have_fid;
	unsigned char		 fid[CACHE_FILEID_LEN];	/* to map */
	int			 unpinned;	/* durable elsewhere */
	int			 private;	/* CACHE_F_PRIVATE */
	struct srcbundle_limits	 lim;		/* CACHE_BUNDLE */
};

void
upload_private(struct upload *u)
{
	u->private = 1;
	u->unpinned = 0;
}

void
upload_bundle_limits(struct upload *u, uint64_t bytes, uint64_t members)
{
	u->lim.bytes_max = bytes;
	u->lim.members_max = members;
}

void
upload_unpinned(struct upload *u)
{
	u->unpinned = 1;
}

void
upload_by_fileid(struct upload *u)
{
	u->by_fileid = 1;
}

void
upload_set_fileid(struct upload *u, const unsigned char fid[CACHE_FILEID_LEN])
{
	memcpy(u->fid, fid, CACHE_FILEID_LEN);
	u->have_fid = 1;
}

int
upload_begin(struct cache *c, const struct cache_key *key, uint64_t max,
    struct upload **out)
{
	struct upload	*u;
	int		 rc;

	*out = NULL;
	if (key->kind != CACHE_DEBUGINFO && key->kind != CACHE_EXECUTABLE &&
	    key->kind != CACHE_BUNDLE)
		return -EINVAL;
	if ((u = calloc(1, sizeof(*u))) == NULL)
		return -ENOMEM;
	u->c = c;
	u->key = *key;
	memcpy(u->id, key->id, key->idlen);
	u->key.id = u->id;
	u->key.extra = NULL;
	u->max = max;
	u->lim.bytes_max = UINT64_MAX;
	u->lim.members_max = UINT64_MAX;
	if ((rc = cache_blob_create(c, &u->b)) < 0) {
		free(u);
		return rc;
	}
	*out = u;
	return 0;
}

int
upload_write(struct upload *u, const void *buf, size_t len)
{
	int rc;

	if (u->failed)
		return u->failed;
	if (u->max && cache_blob_size(u->b) + len > u->max)
		return u->failed = -EFBIG;
	if ((rc = cache_blob_write(u->b, buf, len)) < 0)
		u->failed = rc;
	return rc;
}

uint64_t
upload_size(const struct upload *u)
{
	return cache_blob_size(u->b);
}

void
upload_abort(struct upload *u)
{
	if (u == NULL)
		return;
	cache_blob_abort(u->b);
	free(u);
}

/* Is the file what the key says?  Fills msg when not. */
static int
valid(struct upload *u, struct elfinfo *ei, char *msg, size_t msglen)
{
	char		hex[2 * ELFINFO_BUILDID_MAX + 1];
	const char	*why;
	int		 rc;

	if (cache_blob_size(u->b) == 0) {
		snprintf(msg, msglen, "empty upload");
		return 0;
	}
	if ((rc = elfinfo_read(cache_blob_fd(u->b), ei)) < 0) {
		snprintf(msg, msglen, "%s", rc == -ENOEXEC ?
		    "not an ELF file, or truncated" : strerror(-rc));
		return 0;
	}
	if (u->by_fileid) {
		unsigned char fid[CACHE_FILEID_LEN];

		if (u->key.kind == CACHE_EXECUTABLE &&
		    (elfinfo_fileid(cache_blob_fd(u->b), fid) < 0 ||
		    memcmp(fid, u->key.id, sizeof(fid)) != 0)) {
			hex_encode(fid, sizeof(fid), hex);
			snprintf(msg, msglen, "FileID mismatch: the file's is %s",
			    hex);
			return 0;
		}
	} else if (ei->buildid_len == 0) {
		snprintf(msg, msglen, "the file has no GNU build-id note; "
		    "upload it under /fileid/FILEID/ instead");
		return 0;
	} else if (ei->buildid_len != u->key.idlen ||
	    memcmp(ei->buildid, u->key.id, ei->buildid_len) != 0) {
		hex_encode(ei->buildid, ei->buildid_len, hex);
		snprintf(msg, msglen, "build-id mismatch: the file's is %s",
		    hex);
		return 0;
	}
	if ((why = elfinfo_unfit(ei, u->key.kind == CACHE_DEBUGINFO)) != NULL) {
		snprintf(msg, msglen, "%s", why);
		return 0;
	}
	return 1;
}

/* Are these bytes what rec already stores?  For a scanned file, hash it
 * (only when the sizes agree), so re-uploading it is idempotent too. */
static int
same_bytes(struct upload *u, const struct cache_record *rec,
    const unsigned char digest[32])
{
	unsigned char	 d[32], buf[65536];
	EVP_MD_CTX	*md;
	ssize_t		 n;
	int		 fd, same = 0;
	unsigned int	 dl;

	if (rec->size != cache_blob_size(u->b))
		return 0;
	if (!(rec->flags & CACHE_F_EXTERNAL))
		return memcmp(rec->digest, digest, 32) == 0;
	if (cache_open_data(u->c, rec, &fd) < 0)
		return 0;
	if ((md = EVP_MD_CTX_new()) != NULL &&
	    EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			EVP_DigestUpdate(md, buf, (size_t)n);
		same = n == 0 && EVP_DigestFinal_ex(md, d, &dl) == 1 &&
		    memcmp(d, digest, 32) == 0;
	}
	EVP_MD_CTX_free(md);
	close(fd);
	return same;
}

/* The decision, made inside the store's write transaction. */
struct decision {
	uint32_t		 quality;	/* of the upload */
	int			 force;
	int			 pin;
	enum upload_result	 res;
	char			*msg;
	size_t			 msglen;
};

static int
decide(void *ctx, const struct cache_record *old,
    const struct cache_record *rec)
{
	struct decision	*d = ctx;
	char		 oq[96], nq[96];

	if (old == NULL) {
		d->res = UPLOAD_STORED;
		return 1;
	}
	if (!(old->flags & CACHE_F_EXTERNAL) &&
	    memcmp(old->digest, rec->digest, 32) == 0) {
		/* Idempotent; a copy fetched from an upstream becomes an
		 * upload now: pinned, so the budget never evicts it. */
		d->res = UPLOAD_SAME;
		snprintf(d->msg, d->msglen, "already stored: the same bytes%s",
		    !d->pin || (old->flags & CACHE_F_PINNED) ? "" :
		    ", now pinned");
		return d->pin && !(old->flags & CACHE_F_PINNED);
	}
	if (!d->force &&
	    elfinfo_score(old->quality) >= elfinfo_score(d->quality)) {
		elfinfo_quality_str(old->quality, oq, sizeof(oq));
		elfinfo_quality_str(d->quality, nq, sizeof(nq));
		snprintf(d->msg, d->msglen, "the stored copy (from %s: %s) is as "
		    "good or better than this one (%s); add ?force=1 to "
		    "replace it", old->origin ? old->origin : "?", oq, nq);
		d->res = UPLOAD_WORSE;
		return 0;
	}
	d->res = UPLOAD_REPLACED;
	return 1;
}

/* The store cannot take it: full, read-only, or made unwritable while we
 * run (which root meets as EPERM on an immutable directory). */
static int
store_full(int rc)
{
	return rc == -ENOSPC || rc == -EDQUOT || rc == -EROFS ||
	    rc == -EACCES || rc == -EPERM;
}

enum upload_result
upload_finish(struct upload *u, int force, const char *who, char *msg,
    size_t msglen)
{
	struct cache_record	 old, rec;
	struct elfinfo		 ei;
	struct decision		 d = { 0, force, !u->unpinned, UPLOAD_ERROR, msg,
				    msglen };
	enum upload_result	 res;
	unsigned char		 digest[32];
	char			 origin[128], nq[96];
	int			 rc, same;

	if (u->failed) {
		res = u->failed == -EFBIG ? UPLOAD_TOO_BIG :
		    store_full(u->failed) ? UPLOAD_NO_SPACE : UPLOAD_ERROR;
		snprintf(msg, msglen, "%s", u->failed == -EFBIG ?
		    "upload larger than the size limit" : strerror(-u->failed));
		goto out;
	}
	if (u->key.kind == CACHE_BUNDLE) {
		res = bundle_take(u->c, u->b, &u->key, &u->lim, !u->unpinned,
		    who, msg, msglen, NULL, NULL);
		u->b = NULL;	/* consumed */
		goto out;
	}
	if (!valid(u, &ei, msg, msglen)) {
		res = UPLOAD_INVALID;
		goto out;
	}
	if ((rc = cache_blob_digest(u->b, digest)) < 0) {
		snprintf(msg, msglen, "%s", strerror(-rc));
		res = UPLOAD_ERROR;
		goto out;
	}
	/* A scanned copy is hashed here, outside the store's lock. */
	if (cache_get(u->c, &u->key, clock_wall_s(), &old) == 0) {
		same = (old.flags & CACHE_F_EXTERNAL) &&
		    same_bytes(u, &old, digest);
		cache_record_release(&old);
		if (same) {
			snprintf(msg, msglen, "already stored: the same bytes "
			    "(a scanned file)");
			res = UPLOAD_SAME;
			goto out;
		}
	}

	/* Map the deployed binary's FileID to where its artifacts are: an
	 * executable's own FileID, else the one the uploader named, and a
	 * binary without a build-id to itself. */
	if (u->key.kind == CACHE_EXECUTABLE &&
	    elfinfo_fileid(cache_blob_fd(u->b), u->fid) == 0)
		u->have_fid = 1;
	if (u->by_fileid && !u->have_fid) {
		memcpy(u->fid, u->key.id, CACHE_FILEID_LEN);
		u->have_fid = 1;
	}

	memset(&rec, 0, sizeof(rec));
	rec.flags = (u->unpinned ? 0 : CACHE_F_PINNED) |
	    (u->private ? CACHE_F_PRIVATE : 0);
	rec.quality = ei.quality;
	snprintf(origin, sizeof(origin), "upload:%s", who ? who : "-");
	rec.origin = origin;
	d.quality = ei.quality;
	rc = cache_put_blob_if(u->c, u->b, &u->key, &rec, decide, &d, NULL);
	u->b = NULL;	/* consumed */
	if (rc == -ECANCELED) {
		res = d.res;	/* WORSE, or SAME and pinned already */
		goto out;
	}
	if (rc < 0) {
		snprintf(msg, msglen, "cannot store: %s", strerror(-rc));
		res = store_full(rc) ? UPLOAD_NO_SPACE : UPLOAD_ERROR;
		goto out;
	}
	res = d.res;
	if (res != UPLOAD_SAME) {
		elfinfo_quality_str(ei.quality, nq, sizeof(nq));
		snprintf(msg, msglen, "%s (%s)", res == UPLOAD_REPLACED ?
		    "replaced" : "stored", nq);
	}
	if (u->have_fid && cache_fileid_put(u->c, u->fid, u->key.id,
	    u->key.idlen) < 0) {
		size_t n = strlen(msg);

		snprintf(msg + n, msglen - n, "; its FileID was not recorded");
	}
out:
	upload_abort(u);
	return res;
}

int
upload_wants_bucket(enum upload_result res)
{
	return res == UPLOAD_STORED || res == UPLOAD_REPLACED ||
	    res == UPLOAD_SAME;
}

int
upload_bucket_done(struct cache *c, const struct cache_key *key,
    enum upload_result res, int rc)
{
	if (rc < 0 && res != UPLOAD_SAME)
		(void)cache_drop(c, key);
	return rc;
}

int
upload_delete(struct cache *c, struct scan *s, const struct cache_key *key,
    int elsewhere)
{
	int rc;

	if ((rc = cache_drop(c, key)) == -ENOENT && elsewhere)
		rc = 0;
	if (rc == 0 && s != NULL && cache_file_invalidate(c, key) > 0)
		scan_trigger(s);
	return rc;
}

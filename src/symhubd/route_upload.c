/*
 * route_upload: PUT and DELETE of .../debuginfo and .../executable, for
 * holders of a token (auth.h).  Everything the head can tell is checked
 * before the body is read, so a refused client is not sent
 * "100 Continue"; the body streams into the store (upload.h), which
 * decides at its end.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "log.h"
#include "records.h"
#include "route.h"
#include "upload.h"

/* The store refused the write: full, read-only, forbidden. */
static int
no_space(int rc)
{
	return rc == -EROFS || rc == -ENOSPC || rc == -EDQUOT ||
	    rc == -EACCES || rc == -EPERM;
}

/* The bucket's part is done (a writer thread): back to the front. */
static void
bucket_done(void *ctx, int rc)
{
	struct req *r = ctx;

	r->upl.bucket_rc = rc;
	route_resume(r);
}

/* What the bucket is asked to do. */
struct bucket_ask {
	const struct cache_key	*key;
	int			 del, force;
};

static int
start_bucket(struct http *h, struct req *r, void *arg)
{
	struct bucket_ask *a = arg;

	return a->del ? bucket_delete(h->bucket, a->key, bucket_done, r) :
	    bucket_put(h->bucket, a->key, a->force, bucket_done, r);
}

/* Hand key to the bucket (put or delete) and wait, suspended.
 * @return 0 (the request is the bucket's now), or -errno. */
static int
ask_bucket(struct http *h, struct req *r, const struct cache_key *key,
    int del, int force)
{
	struct bucket_ask a = { key, del, force };

	return route_wait(h, r, PHASE_BUCKET, start_bucket, &a);
}

static enum MHD_Result
delete(struct http *h, struct req *r, const struct cache_key *key,
    int bucket_had)
{
	int rc;

	/* Nothing made from a bundle outlives it. */
	if (key->kind == CACHE_BUNDLE)
		(void)bundle_forget(h->c, key->id, key->idlen);
	if ((rc = upload_delete(h->c, h->s, key, bucket_had)) == -ENOENT)
		return reply_text(r, REPLY_NOT_FOUND, "not stored", "delete");
	if (rc < 0)
		return reply_text(r, REPLY_INTERNAL, strerror(-rc), "delete");
	log_info("deleted %s by %s%s", r->url, r->upl.who,
	    h->bucket != NULL ? " (and from the bucket)" : "");
	return reply_text(r, REPLY_OK, "deleted", "delete");
}

/* Does the head's Content-Length, cl (or NULL), say more than max
 * (--max-upload, 0: no limit)?  Text that is no number is left to the
 * count of the body's bytes. */
static int
too_long(const char *cl, uint64_t max)
{
	unsigned long long	 len;
	char			*end;

	if (cl == NULL || max == 0)
		return 0;
	errno = 0;
	len = strtoull(cl, &end, 10);
	if (end == cl)
		return 0;
	return errno == ERANGE || len > max;
}

enum MHD_Result
route_upload_begin(struct http *h, struct req *r)
{
	struct cache_key	 key;
	const char		*fidhex, *priv;
	unsigned char		 fid[WEBAPI_ID_HEX_MAX / 2];
	char			 peer[NI_MAXHOST] = "-";
	int			 del, rc;

	del = strcmp(r->method, MHD_HTTP_METHOD_DELETE) == 0;
	r->type = METRICS_T_BUILDID;
	if (r->parse_rc < 0)
		return reply_text(r, r->parse_rc == -ENOENT ? REPLY_NO_PAGE :
		    REPLY_BAD_REQUEST, r->why ? r->why : "bad request", "-");
	if (r->rt == NULL || !(r->rt->methods & ROUTE_PUT))
		return reply_text(r, REPLY_METHOD,
		    "only debuginfo, executable and sources can be uploaded "
		    "or deleted",
		    "-");
	if (h->auth == NULL)
		return reply_text(r, REPLY_FORBIDDEN,
		    "uploads are disabled on this hub (no --tokens file)",
		    "refused");
	rc = req_token(h, r, del ? AUTH_ADMIN : AUTH_UPLOAD);
	if (r->tok.name[0] != '\0')
		r->upl.who = r->tok.name;
	if (rc < 0) {
		/* Logged without the token, which is never kept; a client
		 * can be refused as often as it likes, hence log_limited(). */
		req_peer(r, peer, sizeof(peer));
		log_limited("refused for its token", peer,
		    "%s %s refused for %s: %s", r->method, r->url, peer,
		    rc == -EPERM ? "token lacks the scope" :
		    "missing or unknown token");
		return reply_text(r, rc == -EPERM ? REPLY_FORBIDDEN :
		    REPLY_UNAUTHORIZED, rc == -EPERM ?
		    "this token may not do that" : "a valid bearer token is "
		    "needed", "refused");
	}
	key.kind = r->w.kind;
	key.id = r->w.id;
	key.idlen = r->w.idlen;
	key.extra = NULL;
	/* The bucket first: a copy kept there would come back. */
	if (del && h->bucket != NULL) {
		if ((rc = ask_bucket(h, r, &key, 1, 0)) == 0)
			return MHD_YES;
		r->upl.bucket_rc = rc;
		return route_upload_bucket(h, r);
	}
	if (del)
		return delete(h, r, &key, 0);
	/* Another tenant's private upload is neither replaced nor given
	 * sources by this one (who holds the file, since its build-id is
	 * the file's, and learns nothing new). */
	if (!r->w.by_fileid && !records_may_read(h->c, key.id, key.idlen,
	    r->tok.name))
		return reply_text(r, REPLY_CONFLICT, "this build-id is another "
		    "tenant's private upload", "refused");
	if (too_long(req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH),
	    h->cfg->max_upload))
		return reply_text(r, REPLY_TOO_LARGE,
		    "upload larger than the size limit", "upload");
	if ((rc = upload_begin(h->c, &key, h->cfg->max_upload, &r->upl.up)) < 0)
		return reply_text(r, no_space(rc) ? REPLY_NO_SPACE :
		    REPLY_INTERNAL, strerror(-rc), "upload");
	if (r->w.by_fileid)
		upload_by_fileid(r->upl.up);
	upload_bundle_limits(r->upl.up, h->cfg->bundle_unpacked ?
	    h->cfg->bundle_unpacked : UINT64_MAX, h->cfg->bundle_files ?
	    h->cfg->bundle_files : UINT64_MAX);
	/* Private: per request (X-Symhub-Private: 1 or 0), else as the
	 * token says (its private scope).  Never in the bucket, which
	 * other hubs and tenants read: pinned here instead. */
	priv = req_header(r, "X-Symhub-Private");
	r->upl.private = priv != NULL ? strcmp(priv, "0") != 0 :
	    (r->tok.scopes & AUTH_PRIVATE) != 0;
	if (r->upl.private)
		upload_private(r->upl.up);
	else if (h->bucket != NULL)
		upload_unpinned(r->upl.up);
	if ((fidhex = req_header(r, "X-Symhub-FileID")) != NULL) {
		if (webapi_parse_hexid(fidhex, strlen(fidhex), fid) !=
		    CACHE_FILEID_LEN) {
			upload_abort(r->upl.up);
			r->upl.up = NULL;
			return reply_text(r, REPLY_BAD_REQUEST,
			    "X-Symhub-FileID must be 32 lowercase hex "
			    "characters", "upload");
		}
		upload_set_fileid(r->upl.up, fid);
	}
	r->phase = PHASE_BODY;
	return MHD_YES;
}

/* --gsym-on-upload, --gsym-ahead: convert an uploaded file now, nobody
 * waiting. */
static void
eager_gsym(struct http *h, const struct req *r)
{
	int rc;

	if (!r->w.by_fileid && r->w.kind != CACHE_BUNDLE &&
	    (rc = derive_gsym_convert(h->dv, r->w.id,
	    r->w.idlen, NULL, NULL)) < 0)
		log_warnx("gsym %s: %s", r->w.idhex, strerror(-rc));
}

static enum reply
upload_reply(enum upload_result res)
{
	static const enum reply replies[] = {
		[UPLOAD_STORED] = REPLY_CREATED,
		[UPLOAD_REPLACED] = REPLY_OK,
		[UPLOAD_SAME] = REPLY_OK,
		[UPLOAD_WORSE] = REPLY_CONFLICT,
		[UPLOAD_INVALID] = REPLY_UNPROCESSABLE,
		[UPLOAD_TOO_BIG] = REPLY_TOO_LARGE,
		[UPLOAD_NO_SPACE] = REPLY_NO_SPACE,
		[UPLOAD_ERROR] = REPLY_INTERNAL,
	};

	return replies[res];
}

enum MHD_Result
route_upload_finish(struct http *h, struct req *r)
{
	enum upload_result	 res;
	const char		*f;
	char			 msg[400];
	int			 force, rc;

	f = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
	    "force");
	force = f != NULL && strcmp(f, "0") != 0;
	f = req_header(r, "X-Symhub-Force");
	force |= f != NULL && strcmp(f, "0") != 0;
	res = upload_finish(r->upl.up, force, r->upl.who, msg, sizeof(msg));
	r->upl.up = NULL;	/* consumed */
	/* Durable only once in the bucket: 201 after it, not before. */
	if (h->bucket != NULL && upload_wants_bucket(res) && !r->upl.private) {
		struct cache_key key = { r->w.kind, r->w.id, r->w.idlen,
		    NULL };

		r->upl.res = (int)res;
		if ((r->upl.msg = strdup(msg)) == NULL)
			rc = -ENOMEM;
		else if ((rc = ask_bucket(h, r, &key, 0, force)) == 0)
			return MHD_YES;
		r->upl.bucket_rc = rc;
		return route_upload_bucket(h, r);
	}
	if (h->dv != NULL && (h->cfg->gsym_on_upload || h->cfg->gsym_ahead) &&
	    (res == UPLOAD_STORED || res == UPLOAD_REPLACED))
		eager_gsym(h, r);
	log_info("upload %s by %s: %s", r->url,
	    r->upl.who ? r->upl.who : "-", msg);
	return reply_text(r, upload_reply(res), msg, "upload");
}

static void
writeback_source(void *ctx, const struct cache_key *key)
{
	bucket_writeback(ctx, key, 0);
}

enum MHD_Result
route_upload_bucket(struct http *h, struct req *r)
{
	struct cache_key	 key = { r->w.kind, r->w.id, r->w.idlen, NULL };
	enum upload_result	 res = (enum upload_result)r->upl.res;
	int			 rc = r->upl.bucket_rc;

	r->phase = PHASE_DISPATCH;
	if (strcmp(r->method, MHD_HTTP_METHOD_DELETE) == 0) {
		if (rc < 0 && rc != -ENOENT) {
			log_warnx("delete %s: the bucket: %s", r->url,
			    strerror(-rc));
			return reply_textf(r, REPLY_BUSY, "delete", "the "
			    "bucket could not delete it (%s): nothing "
			    "deleted; try again", strerror(-rc));
		}
		return delete(h, r, &key, rc == 0);
	}
	/* Not in the bucket: not kept here either (upload.h). */
	rc = upload_bucket_done(h->c, &key, res, rc);
	if (rc == -EEXIST) {
		/* The bucket's copy is as good or better: it stands, and is
		 * what this replica serves too. */
		log_info("upload %s by %s: the bucket's copy is as good or "
		    "better: not stored", r->url,
		    r->upl.who ? r->upl.who : "-");
		return reply_text(r, REPLY_CONFLICT, "the bucket's copy (from "
		    "another replica) is as good or better than this one; add "
		    "?force=1 to replace it", "upload");
	}
	if (rc < 0) {
		log_warnx("upload %s by %s: the bucket: %s: not stored",
		    r->url, r->upl.who ? r->upl.who : "-", strerror(-rc));
		return reply_textf(r, REPLY_BUSY, "upload", "the bucket could "
		    "not store it (%s): not stored; try again", strerror(-rc));
	}
	if (h->dv != NULL && (h->cfg->gsym_on_upload || h->cfg->gsym_ahead) &&
	    (res == UPLOAD_STORED || res == UPLOAD_REPLACED))
		eager_gsym(h, r);
	/* The bundle is in the bucket; its sources go there too, each under
	 * its own name, so that every replica serves them as it serves a
	 * fetched source (they are written behind, never over a copy). */
	if (r->w.kind == CACHE_BUNDLE)
		(void)bundle_expand_all(h->c, r->w.id, r->w.idlen,
		    writeback_source, h->bucket);
	log_info("upload %s by %s: %s (in the bucket)", r->url,
	    r->upl.who ? r->upl.who : "-", r->upl.msg ? r->upl.msg : "");
	return reply_text(r, upload_reply(res), r->upl.msg ? r->upl.msg :
	    "stored", "upload");
}

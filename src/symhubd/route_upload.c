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

#include "log.h"
#include "route.h"
#include "upload.h"

/* The store refused the write: full, read-only, forbidden. */
static int
no_space(int rc)
{
	return rc == -EROFS || rc == -ENOSPC || rc == -EDQUOT ||
	    rc == -EACCES || rc == -EPERM;
}

static enum MHD_Result
delete(struct http *h, struct req *r, const struct cache_key *key)
{
	int rc;

	if ((rc = cache_drop(h->c, key)) == -ENOENT)
		return reply_text(r, REPLY_NOT_FOUND, "not stored", "delete");
	if (rc < 0)
		return reply_text(r, REPLY_INTERNAL, strerror(-rc), "delete");
	log_info("deleted %s by %s", r->url, r->who);
	/* A scanned file the deleted copy had displaced takes over again:
	 * the next pass reads the files that list this key. */
	if (h->s != NULL && cache_file_invalidate(h->c, key) > 0)
		scan_trigger(h->s);
	return reply_text(r, REPLY_OK, "deleted", "delete");
}

enum MHD_Result
route_upload_begin(struct http *h, struct req *r)
{
	struct cache_key	 key;
	const char		*cl, *fidhex;
	unsigned char		 fid[WEBAPI_ID_HEX_MAX / 2];
	char			 peer[NI_MAXHOST] = "-";
	unsigned long long	 len;
	int			 del, rc;

	del = strcmp(r->method, MHD_HTTP_METHOD_DELETE) == 0;
	r->type = METRICS_T_BUILDID;
	if (r->parse_rc < 0)
		return reply_text(r, r->parse_rc == -ENOENT ? REPLY_NO_PAGE :
		    REPLY_BAD_REQUEST, r->why ? r->why : "bad request", "-");
	if (r->w.route != WEBAPI_ARTIFACT || (r->w.kind != CACHE_DEBUGINFO &&
	    r->w.kind != CACHE_EXECUTABLE))
		return reply_text(r, REPLY_METHOD,
		    "only debuginfo and executable can be uploaded or deleted",
		    "-");
	if (h->auth == NULL)
		return reply_text(r, REPLY_FORBIDDEN,
		    "uploads are disabled on this hub (no --tokens file)",
		    "refused");
	rc = auth_check(h->auth, req_header(r, MHD_HTTP_HEADER_AUTHORIZATION),
	    del ? AUTH_ADMIN : AUTH_UPLOAD, &r->who);
	if (rc < 0) {
		/* Logged without the token, which is never kept. */
		req_peer(r, peer, sizeof(peer));
		log_warnx("%s %s refused for %s: %s", r->method, r->url, peer,
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
	if (del)
		return delete(h, r, &key);
	cl = req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && (len = strtoull(cl, NULL, 10)) > 0 &&
	    h->cfg->max_upload && len > h->cfg->max_upload)
		return reply_text(r, REPLY_TOO_LARGE,
		    "upload larger than the size limit", "upload");
	if ((rc = upload_begin(h->c, &key, h->cfg->max_upload, &r->up)) < 0)
		return reply_text(r, no_space(rc) ? REPLY_NO_SPACE :
		    REPLY_INTERNAL, strerror(-rc), "upload");
	if (r->w.by_fileid)
		upload_by_fileid(r->up);
	if ((fidhex = req_header(r, "X-Symhub-FileID")) != NULL) {
		if (webapi_parse_hexid(fidhex, strlen(fidhex), fid) !=
		    CACHE_FILEID_LEN) {
			upload_abort(r->up);
			r->up = NULL;
			return reply_text(r, REPLY_BAD_REQUEST,
			    "X-Symhub-FileID must be 32 lowercase hex "
			    "characters", "upload");
		}
		upload_set_fileid(r->up, fid);
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

	if (!r->w.by_fileid && (rc = derive_gsym_convert(h->dv, r->w.id,
	    r->w.idlen, NULL, NULL)) < 0)
		log_warnx("gsym %s: %s", r->w.idhex, strerror(-rc));
}

enum MHD_Result
route_upload_finish(struct http *h, struct req *r)
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
	enum upload_result	 res;
	const char		*f;
	char			 msg[400];
	int			 force;

	f = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
	    "force");
	force = f != NULL && strcmp(f, "0") != 0;
	f = req_header(r, "X-Symhub-Force");
	force |= f != NULL && strcmp(f, "0") != 0;
	res = upload_finish(r->up, force, r->who, msg, sizeof(msg));
	r->up = NULL;	/* consumed */
	if (h->dv != NULL && (h->cfg->gsym_on_upload || h->cfg->gsym_ahead) &&
	    (res == UPLOAD_STORED || res == UPLOAD_REPLACED))
		eager_gsym(h, r);
	log_info("upload %s by %s: %s", r->url, r->who ? r->who : "-", msg);
	return reply_text(r, replies[res], msg, "upload");
}

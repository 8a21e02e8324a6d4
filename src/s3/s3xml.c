/*
 * s3xml: see s3xml.h.
 *
 * expat (libexpat1-dev): a SAX parser, small, in every distribution and
 * fuzzed upstream (OSS-Fuzz); a listing is read in one pass with no tree
 * built, and what is kept of it is a few fixed buffers.  Without namespace
 * processing, element names arrive as S3 writes them ("Contents").
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <expat.h>

#include "s3xml.h"

/* The elements read; every other one is passed over with its content. */
enum elem {
	E_OTHER, E_LIST, E_CONTENTS, E_KEY, E_SIZE, E_TRUNCATED, E_TOKEN,
	E_ERROR, E_CODE, E_MESSAGE
};

/* Depth of the deepest element read: ListBucketResult/Contents/Key. */
#define DEPTH	3

/* Longest text kept for a leaf; longer is -EPROTO for the fields that
 * must be whole, truncated for Code and Message. */
#define TEXT_MAX	S3XML_TOKEN_MAX

struct parse {
	XML_Parser	 p;
	int		 list;		/* ListObjectsV2, else an error */
	int		 rc;		/* first failure or fn's result */
	unsigned	 depth;		/* of the element open now */
	enum elem	 path[DEPTH + 1];	/* path[1] the root */
	enum elem	 leaf;		/* element whose text is kept, or E_OTHER */
	char		 text[TEXT_MAX + 1];
	size_t		 tlen, tmax;
	int		 cut_ok;	/* text past tmax is dropped, not an error */
	/* a listing */
	int		(*fn)(void *, const char *, uint64_t);
	void		*ctx;
	struct s3xml_page *page;
	char		 key[S3XML_KEY_MAX + 1];
	int		 has_key, has_size;
	uint64_t	 size;
	/* an error */
	char		*code, *msg;
	size_t		 codesz, msgsz;
	int		 has_code;
};

static void
stop(struct parse *st, int rc)
{
	if (st->rc == 0)
		st->rc = rc;
	XML_StopParser(st->p, XML_FALSE);
}

static enum elem
classify(const struct parse *st, const char *name)
{
	enum elem parent = st->depth >= 1 && st->depth <= DEPTH ?
	    st->path[st->depth] : E_OTHER;

	switch (st->depth) {
	case 0:
		if (st->list && strcmp(name, "ListBucketResult") == 0)
			return E_LIST;
		if (!st->list && strcmp(name, "Error") == 0)
			return E_ERROR;
		return E_OTHER;
	case 1:
		if (parent == E_LIST) {
			if (strcmp(name, "Contents") == 0)
				return E_CONTENTS;
			if (strcmp(name, "IsTruncated") == 0)
				return E_TRUNCATED;
			if (strcmp(name, "NextContinuationToken") == 0)
				return E_TOKEN;
		} else if (parent == E_ERROR) {
			if (strcmp(name, "Code") == 0)
				return E_CODE;
			if (strcmp(name, "Message") == 0)
				return E_MESSAGE;
		}
		return E_OTHER;
	case 2:
		if (parent == E_CONTENTS) {
			if (strcmp(name, "Key") == 0)
				return E_KEY;
			if (strcmp(name, "Size") == 0)
				return E_SIZE;
		}
		return E_OTHER;
	default:
		return E_OTHER;
	}
}

static void XMLCALL
on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
	struct parse	*st = ud;
	enum elem	 e;

	if (st->rc != 0)
		return;
	e = classify(st, name);
	if (st->depth == 0 && e == E_OTHER) {
		stop(st, -EPROTO);	/* not the document asked for */
		return;
	}
	st->depth++;
	if (st->depth <= DEPTH)
		st->path[st->depth] = e;
	st->leaf = E_OTHER;
	st->tlen = 0;
	st->cut_ok = 0;
	switch (e) {
	case E_CONTENTS:
		st->has_key = st->has_size = 0;
		break;
	case E_KEY:
		st->tmax = S3XML_KEY_MAX;
		break;
	case E_SIZE:
		st->tmax = 20;
		break;
	case E_TRUNCATED:
		st->tmax = 5;
		break;
	case E_TOKEN:
		st->tmax = S3XML_TOKEN_MAX;
		break;
	case E_CODE:
		st->tmax = st->codesz - 1;
		st->cut_ok = 1;
		break;
	case E_MESSAGE:
		st->tmax = st->msgsz - 1;
		st->cut_ok = 1;
		break;
	default:
		return;
	}
	if (e != E_CONTENTS)
		st->leaf = e;
}

static void XMLCALL
on_text(void *ud, const XML_Char *s, int len)
{
	struct parse	*st = ud;
	size_t		 n = (size_t)len;

	if (st->rc != 0 || st->leaf == E_OTHER || len <= 0)
		return;
	if (n > st->tmax - st->tlen) {
		if (!st->cut_ok) {
			stop(st, -EPROTO);
			return;
		}
		n = st->tmax - st->tlen;
	}
	memcpy(st->text + st->tlen, s, n);
	st->tlen += n;
}

static int
parse_size(const char *s, size_t len, uint64_t *out)
{
	uint64_t	v = 0;
	size_t		i;

	if (len == 0)
		return -EPROTO;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - 9) / 10)
			return -EPROTO;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* The end of a leaf whose text is in st->text. */
static void
leaf_end(struct parse *st, enum elem e)
{
	st->text[st->tlen] = '\0';
	switch (e) {
	case E_KEY:
		/* A key holds no NUL (expat would not pass one) and is not
		 * empty; a second Key in one Contents is not S3's. */
		if (st->has_key || st->tlen == 0)
			goto bad;
		memcpy(st->key, st->text, st->tlen + 1);
		st->has_key = 1;
		return;
	case E_SIZE:
		if (st->has_size || parse_size(st->text, st->tlen, &st->size))
			goto bad;
		st->has_size = 1;
		return;
	case E_TRUNCATED:
		if (strcmp(st->text, "true") == 0)
			st->page->truncated = 1;
		else if (strcmp(st->text, "false") == 0)
			st->page->truncated = 0;
		else
			goto bad;
		return;
	case E_TOKEN:
		memcpy(st->page->token, st->text, st->tlen + 1);
		return;
	case E_CODE:
		memcpy(st->code, st->text, st->tlen + 1);
		st->has_code = 1;
		return;
	case E_MESSAGE:
		memcpy(st->msg, st->text, st->tlen + 1);
		return;
	default:
		return;
	}
bad:
	stop(st, -EPROTO);
}

static void XMLCALL
on_end(void *ud, const XML_Char *name)
{
	struct parse	*st = ud;
	enum elem	 e;
	int		 rc;

	(void)name;
	if (st->rc != 0 || st->depth == 0)
		return;
	e = st->depth <= DEPTH ? st->path[st->depth] : E_OTHER;
	if (st->leaf != E_OTHER && st->leaf == e)
		leaf_end(st, e);
	st->leaf = E_OTHER;
	st->depth--;
	if (st->rc != 0 || e != E_CONTENTS)
		return;
	if (!st->has_key || !st->has_size) {
		stop(st, -EPROTO);
		return;
	}
	st->page->keys++;
	if ((rc = st->fn(st->ctx, st->key, st->size)) != 0)
		stop(st, rc);
}

/* A document type declaration brings entities, and with them the
 * amplification attacks; S3 never sends one. */
static void XMLCALL
on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
    const XML_Char *pubid, int has_internal_subset)
{
	stop(ud, -EPROTO);
}

static int
run(struct parse *st, const char *body, size_t len)
{
	enum XML_Status	s;

	if (len > INT_MAX)
		return -EFBIG;
	if ((st->p = XML_ParserCreate(NULL)) == NULL)
		return -ENOMEM;
	XML_SetUserData(st->p, st);
	XML_SetElementHandler(st->p, on_start, on_end);
	XML_SetCharacterDataHandler(st->p, on_text);
	XML_SetStartDoctypeDeclHandler(st->p, on_doctype);
	s = XML_Parse(st->p, body, (int)len, XML_TRUE);
	if (s != XML_STATUS_OK && st->rc == 0)
		st->rc = XML_GetErrorCode(st->p) == XML_ERROR_NO_MEMORY ?
		    -ENOMEM : -EPROTO;
	XML_ParserFree(st->p);
	return st->rc;
}

int
s3xml_list(const char *body, size_t len,
    int (*fn)(void *ctx, const char *key, uint64_t size), void *ctx,
    struct s3xml_page *page)
{
	struct parse	*st;
	int		 rc;

	memset(page, 0, sizeof(*page));
	/* About 3 KiB: on the heap, as callers run on worker threads. */
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -ENOMEM;
	st->list = 1;
	st->fn = fn;
	st->ctx = ctx;
	st->page = page;
	rc = run(st, body, len);
	if (rc == 0 && page->truncated && page->token[0] == '\0')
		rc = -EPROTO;	/* a next page no one can ask for */
	free(st);
	return rc;
}

int
s3xml_error(const char *body, size_t len, char *code, size_t codesz,
    char *msg, size_t msgsz)
{
	struct parse	*st;
	int		 rc;

	if (codesz == 0 || msgsz == 0)
		return -EINVAL;
	code[0] = msg[0] = '\0';
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -ENOMEM;
	st->code = code;
	st->codesz = codesz < TEXT_MAX + 1 ? codesz : TEXT_MAX + 1;
	st->msg = msg;
	st->msgsz = msgsz < TEXT_MAX + 1 ? msgsz : TEXT_MAX + 1;
	rc = run(st, body, len);
	if (rc == 0 && (!st->has_code || code[0] == '\0'))
		rc = -EPROTO;
	if (rc != 0)
		code[0] = msg[0] = '\0';
	free(st);
	return rc;
}

/*
 * s3xml: the XML bodies an S3 server answers, taken apart with expat: a
 * ListObjectsV2 page and an error.  No I/O; the bytes come from anyone
 * who can answer on the endpoint, so every input is hostile: a document
 * type declaration (and with it any entity) is refused, every text kept
 * is bounded, the work is linear in the input.
 */
#ifndef SYMHUB_S3XML_H
#define SYMHUB_S3XML_H

#include <stddef.h>
#include <stdint.h>

/* Longest key S3 allows (bytes of UTF-8), and longest continuation token
 * kept (AWS's are about 100 characters; Swift's the base64 of a key). */
#define S3XML_KEY_MAX		1024
#define S3XML_TOKEN_MAX		2048

/* What a ListObjectsV2 page says beyond its keys. */
struct s3xml_page {
	int		truncated;	/* IsTruncated: more pages follow */
	char		token[S3XML_TOKEN_MAX + 1];	/* NextContinuationToken, or "" */
	unsigned long	keys;		/* Contents elements seen */
};

/*
 * Take a ListObjectsV2 answer apart (a <ListBucketResult> of <Contents>
 * with <Key> and <Size>), calling fn for each object in document order.
 * @param body  len bytes, need not be NUL-terminated.
 * @param fn    gets the key (NUL-terminated UTF-8, valid during the call)
 *              and the size; returns 0 to go on, anything else to stop.
 * @return 0 with *page filled; fn's non-zero result (the parse stopped
 *         there); -EPROTO when body is not such a document (malformed
 *         XML, another root, a <Contents> without a key or a decimal
 *         size, a key or token too long, IsTruncated true without a
 *         token, a DOCTYPE); -EFBIG when len is past INT_MAX; -ENOMEM.
 *         Objects before a malformed part have been given to fn.
 */
int	s3xml_list(const char *body, size_t len,
	    int (*fn)(void *ctx, const char *key, uint64_t size), void *ctx,
	    struct s3xml_page *page);

/*
 * Take an S3 error answer apart: <Error><Code>..</Code><Message>..
 * </Message>...</Error>.
 * @param code  the Code (ASCII by S3's spelling), truncated to codesz - 1
 *              bytes; "" when absent.
 * @param msg   the Message, truncated likewise (it may then end inside a
 *              UTF-8 character: for logs, which escape); "" when absent.
 * @return 0 when body is an <Error> with a Code; -EPROTO otherwise (code
 *         and msg then ""); -EFBIG; -ENOMEM.
 */
int	s3xml_error(const char *body, size_t len, char *code, size_t codesz,
	    char *msg, size_t msgsz);

#endif

/* Fuzz the S3 client's answers: s3xml_list() on any bytes as a
 * ListObjectsV2 page, s3xml_error() on the same bytes as an error, with
 * buffer sizes taken from the input.  The parsers' promises are checked:
 * keys whole and bounded, sizes inside int64, a truncated page has a
 * token, a callback's result stops the parse at once, codes fit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "s3/s3xml.h"

struct count {
	unsigned long	n, stop_at;
};

static int
key(void *ctx, const char *k, uint64_t size)
{
	struct count *c = ctx;

	if (k[0] == '\0' || strlen(k) > S3XML_KEY_MAX || size > INT64_MAX)
		abort();
	c->n++;
	return c->n == c->stop_at ? 99 : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct s3xml_page	 page;
	struct count		 c = {0};
	char			 code[64], msg[256];
	size_t			 codesz, msgsz;
	int			 rc;

	/* Stop after the third key on inputs of odd length. */
	c.stop_at = size % 2 ? 3 : 0;
	rc = s3xml_list((const char *)data, size, key, &c, &page);
	if (rc == 99 && c.n != 3)
		abort();
	if (rc == 0 && ((page.truncated && page.token[0] == '\0') ||
	    page.keys != c.n ||
	    strlen(page.token) > S3XML_TOKEN_MAX))
		abort();
	if (rc != 0 && rc != 99 && rc != -EPROTO && rc != -ENOMEM)
		abort();

	codesz = size > 0 ? 1 + data[0] % sizeof(code) : sizeof(code);
	msgsz = size > 1 ? 1 + data[1] % sizeof(msg) : sizeof(msg);
	rc = s3xml_error((const char *)data, size, code, codesz, msg, msgsz);
	if (strlen(code) >= codesz || strlen(msg) >= msgsz)
		abort();
	if (rc == 0 && code[0] == '\0' && codesz > 1)
		abort();
	if (rc != 0 && (code[0] != '\0' || msg[0] != '\0'))
		abort();
	return 0;
}

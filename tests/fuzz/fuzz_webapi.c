/* Fuzz the URL parser: webapi_parse() and webapi_canon_path() on any
 * string (the decoded URL libmicrohttpd hands over); and the header
 * readers webapi_range(), webapi_etag_match() and
 * webapi_accept_encoding(), and the /metadata
 * query's webapi_metadata() and webapi_meta_match(), on the same string. */
#include <stdlib.h>
#include <string.h>

#include "common/webapi.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct webapi_req	 w;
	struct webapi_meta	 m;
	const char		*why;
	char			*url, *out;
	uint64_t		 off, len;

	if ((url = malloc(size + 1)) == NULL)
		return 0;
	memcpy(url, data, size);
	url[size] = '\0';
	if (webapi_parse(url, &w, &why) == 0)
		webapi_req_free(&w);
	if ((out = malloc(size + 2)) != NULL) {
		(void)webapi_canon_path(url, out);
		free(out);
	}
	/* The same bytes as a Range and an If-None-Match header. */
	if (webapi_range(url, size, &off, &len) == 1 &&
	    (len == 0 || off + len > size))
		abort();
	(void)webapi_etag_match(url, "\"0123456789abcdef\"");
	(void)webapi_accept_encoding(url);
	/* And as a /metadata value, a glob matched against itself. */
	if (webapi_metadata("buildid", url, &m, &why) != 0 ||
	    (m.idlen != 0 && m.idlen * 2 != strlen(url)))
		abort();
	if (webapi_metadata("glob", url, &m, &why) == 0)
		(void)webapi_meta_match(&m, url);
	free(url);
	return 0;
}

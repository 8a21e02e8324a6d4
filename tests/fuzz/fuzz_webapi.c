/* Fuzz the URL parser: webapi_parse() and webapi_canon_path() on any
 * string (the decoded URL libmicrohttpd hands over). */
#include <stdlib.h>
#include <string.h>

#include "common/webapi.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct webapi_req	 w;
	const char		*why;
	char			*url, *out;

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
	free(url);
	return 0;
}

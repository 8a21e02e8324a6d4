/* Fuzz the store's decoders: records, files-table entries and catalog
 * entries, as read back from a damaged index or catalog. */
#include <stdlib.h>
#include <string.h>

#include "cache/record.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cache_record	 rec;
	struct record_file	 f;
	struct record_cat	 c;
	const unsigned char	*key;
	unsigned char		*copy;
	size_t			 pos = 0, klen;

	/* A copy: LMDB values are not NUL-terminated, nor aligned. */
	if ((copy = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	if (record_decode(copy, size, &rec) == 0)
		free(rec.mem);	/* cache_record_release(), without cache.c */
	if (record_file_decode(copy, size, &f) >= 0)
		while (record_file_next_key(&f, &pos, &key, &klen) == 1)
			;
	if (record_cat_decode(copy, size, &c) == 0 &&
	    c.type == RECORD_CAT_RECORD &&
	    record_decode(c.val, c.vlen, &rec) == 0)
		free(rec.mem);	/* cache_record_release(), without cache.c */
	free(copy);
	return 0;
}

/* Fuzz the source bundle reader: srcbundle_read_mem() over any bytes as a
 * client may PUT them to /buildid/ID/sources, every member checked as
 * the reader promises (absolute, canonical, within the bounds), and the
 * kept ones written again as the hub does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/srcbundle.h"
#include "fuzz.h"

struct ctx {
	struct srcbundle_writer	*w;
	uint64_t		 bytes;
};

static int
sink(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return 0;
}

static int
member(void *arg, const char *path, int64_t mtime, const void *data,
    size_t len)
{
	struct ctx *c = arg;

	if (!srcbundle_name_ok(path))
		abort();	/* the reader lets no other name through */
	c->bytes += len;
	if (c->bytes > (1u << 22))
		abort();	/* past lim.bytes_max */
	if (len > 0 && data == NULL)
		abort();
	if (mtime < 0)
		abort();	/* the reader gives 0 for none */
	/* Opened at the first member: a compressor costs more than most
	 * inputs' reading. */
	if (c->w == NULL && srcbundle_write_open(sink, NULL, &c->w) < 0)
		return -ENOMEM;
	return srcbundle_write_add(c->w, path, mtime, data, len) == 0 ? 0 : -EIO;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct srcbundle_limits	 lim = { 1u << 22, 1000 };
	struct ctx		 c = { NULL, 0 };
	char			 why[SRCBUNDLE_WHY_MAX], *s;

	(void)srcbundle_read_mem(data, size, &lim, member, &c, why);
	(void)srcbundle_write_close(c.w, 0);
	if ((s = malloc(size + 2)) != NULL) {
		s[0] = '/';
		memcpy(s + 1, data, size);
		s[size + 1] = '\0';
		(void)srcbundle_name_ok(s);
		free(s);
	}
	return 0;
}

/* Fuzz ELF inspection: build-id, kind and quality, sources, sections, the
 * FileID and the loadable segments (file offsets mapped for POST
 * /symbolize) of any file, as a scan, an upload or a fetch reads it; and
 * the build-id of a head still arriving (elfinfo_head()), at every
 * length a fetch may look at it. */
#define _GNU_SOURCE 1
#include <sys/mman.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elfinfo.h"
#include "fuzz.h"

static int
sink(void *ctx, const void *buf, size_t len)
{
	(void)buf;
	*(size_t *)ctx += len;
	return 0;
}

static int
count(void *ctx, const char *path)
{
	(void)path;
	(*(int *)ctx)++;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 inited;
	struct elfinfo	 ei;
	struct elfinfo_load loads[ELFINFO_LOADS_MAX];
	unsigned char	 fid[16];
	uint64_t	 addr;
	size_t		 got = 0;
	uint64_t	 shoff, need;
	size_t		 len;
	int		 fd, n = 0, k;

	if (!inited) {
		if (elfinfo_init() < 0)
			abort();
		inited = 1;
	}
	/* As a fetch does: again once the bytes it asked for are in. */
	for (len = size < 64 ? size : 64; ; len = need) {
		if (elfinfo_head(data, len, &ei, &shoff, &need) != -EAGAIN ||
		    need <= len || need > size)
			break;
	}
	(void)elfinfo_head(data, size, &ei, &shoff, &need);
	if ((fd = memfd_create("fuzz", MFD_CLOEXEC)) < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		(void)elfinfo_read(fd, &ei);
		(void)elfinfo_fileid(fd, fid);
		(void)elfinfo_sources(fd, count, &n);
		(void)elfinfo_section(fd, ".debug_line", sink, &got);
		(void)elfinfo_section(fd, ".text", sink, &got);
		if ((k = elfinfo_loads(fd, loads)) > 0 &&
		    elfinfo_loads_map(loads, (size_t)k))
			(void)elfinfo_load_addr(loads, (size_t)k, 0x1000,
			    &addr);
	}
	close(fd);
	return 0;
}

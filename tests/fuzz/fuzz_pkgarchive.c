/* Fuzz the package reader: pkga_walk() over any bytes as a scan directory
 * may hold them (a .deb's ar and data.tar, rpm, tar with any compression,
 * zip, cpio), every member read to its end, and pkga_member_name() on
 * every name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/pkgarchive.h"
#include "fuzz.h"

static int
member(void *ctx, const char *name, uint64_t size, struct pkga_member *m)
{
	char	buf[4096];
	ssize_t	n;

	(void)ctx;
	(void)size;
	if (name[0] != '/')
		abort();	/* names are canonical, absolute */
	while ((n = pkga_read(m, buf, sizeof(buf))) > 0)
		;
	return n < 0 ? (int)n : 0;
}

static void
refused(void *ctx, const char *name, const char *why)
{
	(void)ctx;
	(void)name;
	(void)why;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkga_limits	 lim = { 1u << 24, 1000 };
	const char		*why;
	char			 whybuf[PKGA_WHY_MAX], out[256], *s;
	int			 fd;

	if ((fd = memfd_create("fuzz", MFD_CLOEXEC)) < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size &&
	    lseek(fd, 0, SEEK_SET) == 0)
		(void)pkga_walk(fd, "fuzz", PKGA_AUTO, NULL, &lim, member,
		    refused, NULL, whybuf);
	close(fd);
	if ((s = malloc(size + 1)) != NULL) {
		memcpy(s, data, size);
		s[size] = '\0';
		(void)pkga_member_name(s, out, sizeof(out), &why);
		free(s);
	}
	return 0;
}

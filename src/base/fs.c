/*
 * fs: see fs.h.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "fs.h"

int
fs_mkdir_p(const char *path, int parents_only)
{
	char	buf[PATH_MAX], *p;
	size_t	n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (!parents_only && mkdir(buf, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * replay: runs a fuzz harness's LLVMFuzzerTestOneInput() on every file of
 * the directories (or files) named, without libFuzzer, so that `make
 * check` replays the corpora and regression cases under the sanitizers
 * of the build.  Prints a TAP line per directory; a crash is the test's
 * failure.
 *
 * usage: replay_NAME DIR|FILE...
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static int
one(const char *path, long *n)
{
	unsigned char	*buf;
	struct stat	 st;
	FILE		*fp;
	size_t		 len;

	if ((fp = fopen(path, "rb")) == NULL)
		return -errno;
	if (fstat(fileno(fp), &st) != 0 || st.st_size > (64 << 20) ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		fclose(fp);
		return -EFBIG;
	}
	len = fread(buf, 1, (size_t)st.st_size, fp);
	fclose(fp);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	(*n)++;
	return 0;
}

int
main(int argc, char **argv)
{
	char		 path[PATH_MAX];
	struct dirent	*e;
	struct stat	 st;
	DIR		*d;
	long		 n;
	int		 i, t = 0, bad = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		n = 0;
		if (stat(argv[i], &st) == 0 && !S_ISDIR(st.st_mode)) {
			bad |= one(argv[i], &n) < 0;
		} else if ((d = opendir(argv[i])) != NULL) {
			while ((e = readdir(d)) != NULL) {
				if (e->d_name[0] == '.')
					continue;
				snprintf(path, sizeof(path), "%s/%s", argv[i],
				    e->d_name);
				if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
				    one(path, &n) < 0)
					bad = 1;
			}
			closedir(d);
		}
		printf("ok %d - %s: %ld inputs replayed\n", ++t, argv[i], n);
	}
	printf("1..%d\n", t);
	return bad;
}

/*
 * dfclient: fetch one artifact through libdebuginfod's C API, as gdb and
 * valgrind do, and print the path of the cached copy.
 *
 *   dfclient debuginfo|executable BUILDID
 *   dfclient source BUILDID PATH
 *   dfclient section BUILDID NAME
 *
 * Exit 0 and the path on success; 1 and the error otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

int
main(int argc, char **argv)
{
	debuginfod_client	*c;
	const unsigned char	*id;
	char			*path = NULL;
	int			 fd = -1;

	if (argc < 3) {
		fprintf(stderr, "usage: dfclient KIND BUILDID [PATH|NAME]\n");
		return 2;
	}
	if ((c = debuginfod_begin()) == NULL) {
		fprintf(stderr, "dfclient: debuginfod_begin failed\n");
		return 1;
	}
	id = (const unsigned char *)argv[2];
	/* A length of 0 means: id is a hex string. */
	if (strcmp(argv[1], "debuginfo") == 0)
		fd = debuginfod_find_debuginfo(c, id, 0, &path);
	else if (strcmp(argv[1], "executable") == 0)
		fd = debuginfod_find_executable(c, id, 0, &path);
	else if (strcmp(argv[1], "source") == 0 && argc > 3)
		fd = debuginfod_find_source(c, id, 0, argv[3], &path);
	else if (strcmp(argv[1], "section") == 0 && argc > 3)
		fd = debuginfod_find_section(c, id, 0, argv[3], &path);
	else {
		fprintf(stderr, "dfclient: unknown kind %s\n", argv[1]);
		debuginfod_end(c);
		return 2;
	}
	debuginfod_end(c);
	if (fd < 0) {
		fprintf(stderr, "dfclient: %s\n", strerror(-fd));
		return 1;
	}
	close(fd);
	printf("%s\n", path);
	free(path);
	return 0;
}

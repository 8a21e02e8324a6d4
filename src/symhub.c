/*
 * symhub: the command-line tool.  So far: ids and quality markers of ELF
 * files (buildid, fileid, info).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elfinfo.h"
#include "webapi.h"

static int
usage(FILE *fp)
{
	fprintf(fp, "usage: symhub buildid FILE...\n"
	    "       symhub fileid FILE...\n"
	    "       symhub info FILE...\n"
	    "       symhub --version\n");
	return fp == stdout ? 0 : 2;
}

static const struct {
	unsigned	 bit;
	const char	*name;
} qnames[] = {
	{ ELFINFO_Q_DEBUG_INFO, "debug_info" },
	{ ELFINFO_Q_DEBUG_LINE, "debug_line" },
	{ ELFINFO_Q_SYMTAB, "symtab" },
	{ ELFINFO_Q_DYNSYM, "dynsym" },
	{ ELFINFO_Q_GOPCLNTAB, "gopclntab" },
	{ ELFINFO_Q_COMPRESSED, "compressed" },
};

/* One file; returns 0 or 1 (an error was printed). */
static int
one(const char *cmd, const char *path, int many)
{
	struct elfinfo	ei;
	unsigned char	fid[16];
	char		hex[2 * ELFINFO_BUILDID_MAX + 1];
	size_t		i;
	int		fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "symhub: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (strcmp(cmd, "fileid") == 0) {
		if ((rc = elfinfo_fileid(fd, fid)) < 0)
			goto fail;
		webapi_hex(fid, sizeof(fid), hex);
		printf(many ? "%s  %s\n" : "%s\n", hex, path);
		close(fd);
		return 0;
	}
	if ((rc = elfinfo_read(fd, &ei)) < 0)
		goto fail;
	if (strcmp(cmd, "buildid") == 0) {
		if (ei.buildid_len == 0) {
			fprintf(stderr, "symhub: %s: no GNU build-id note\n",
			    path);
			close(fd);
			return 1;
		}
		webapi_hex(ei.buildid, ei.buildid_len, hex);
		printf(many ? "%s  %s\n" : "%s\n", hex, path);
		close(fd);
		return 0;
	}
	printf("file: %s\n", path);
	webapi_hex(ei.buildid, ei.buildid_len, hex);
	printf("buildid: %s\n", ei.buildid_len ? hex : "(none)");
	if ((rc = elfinfo_fileid(fd, fid)) < 0)
		goto fail;
	webapi_hex(fid, sizeof(fid), hex);
	printf("fileid: %s\n", hex);
	printf("kind:%s%s%s\n", ei.is_executable ? " executable" : "",
	    ei.is_debuginfo ? " debuginfo" : "",
	    !ei.is_executable && !ei.is_debuginfo ? " none" : "");
	printf("quality:");
	for (i = 0; i < sizeof(qnames) / sizeof(qnames[0]); i++)
		if (ei.quality & qnames[i].bit)
			printf(" %s", qnames[i].name);
	printf("%s\n", ei.quality ? "" : " none");
	close(fd);
	return 0;
fail:
	fprintf(stderr, "symhub: %s: %s\n", path, rc == -ENOEXEC ?
	    "not an ELF file, or truncated" : strerror(-rc));
	close(fd);
	return 1;
}

int
main(int argc, char **argv)
{
	int i, bad = 0;

	if (argc < 2)
		return usage(stderr);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return usage(stdout);
	if (strcmp(argv[1], "--version") == 0) {
		printf("symhub %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "buildid") != 0 && strcmp(argv[1], "fileid") != 0 &&
	    strcmp(argv[1], "info") != 0) {
		fprintf(stderr, "symhub: unknown command '%s'\n", argv[1]);
		return usage(stderr);
	}
	if (argc < 3)
		return usage(stderr);
	if (elfinfo_init() < 0) {
		fprintf(stderr, "symhub: libelf is too old\n");
		return 1;
	}
	for (i = 2; i < argc; i++)
		bad |= one(argv[1], argv[i], argc > 3);
	return bad;
}

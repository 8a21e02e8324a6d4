/*
 * test_auth: the tokens file parser, the bearer check, and new tokens
 * round-tripping through a tokens file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/auth.h"
#include "tap.h"

static char path[] = "/tmp/test_auth.XXXXXX";

static int
load(const char *text, struct auth **a, const char **why, unsigned *line)
{
	FILE *fp;

	if ((fp = fopen(path, "w")) == NULL)
		return -errno;
	fputs(text, fp);
	fclose(fp);
	return auth_load(path, a, why, line);
}

int
main(void)
{
	struct auth	*a;
	const char	*why, *who;
	unsigned	 line;
	char		 up[65], ad[65], l1[512], l2[512], text[1200], hdr[80];
	int		 fd;

	if ((fd = mkstemp(path)) < 0)
		return 99;
	close(fd);

	ok(auth_new_token("ci", "upload", up, l1, sizeof(l1)) == 0 &&
	    strlen(up) == 64, "new upload token: 64 hex characters");
	ok(auth_new_token("root", "upload,admin", ad, l2, sizeof(l2)) == 0,
	    "new admin token");
	ok(strcmp(up, ad) != 0, "tokens differ");
	ok(strstr(l1, up) == NULL, "the line does not contain the token");
	ok(auth_new_token("two words", "upload", up, l1, sizeof(l1)) ==
	    -EINVAL, "a name with a space refused");
	ok(auth_new_token("x", "root", ad, l2, sizeof(l2)) == -EINVAL,
	    "an unknown scope refused");

	auth_new_token("ci", "upload", up, l1, sizeof(l1));
	auth_new_token("root", "upload,admin", ad, l2, sizeof(l2));
	snprintf(text, sizeof(text), "# tokens\n\n%s\n  %s  \n", l1, l2);
	ok(load(text, &a, &why, &line) == 0, "the lines load back");

	snprintf(hdr, sizeof(hdr), "Bearer %s", up);
	ok(auth_check(a, hdr, AUTH_UPLOAD, &who) == 0 && who &&
	    strcmp(who, "ci") == 0, "upload token may upload, named ci");
	ok(auth_check(a, hdr, AUTH_ADMIN, &who) == -EPERM && who &&
	    strcmp(who, "ci") == 0, "upload token may not administer");
	snprintf(hdr, sizeof(hdr), "bearer   %s", ad);
	ok(auth_check(a, hdr, AUTH_ADMIN, &who) == 0, "admin token, "
	    "scheme case-insensitive, extra spaces");
	ok(auth_check(a, hdr, AUTH_UPLOAD | AUTH_ADMIN, &who) == 0,
	    "both scopes");
	ok(auth_check(a, NULL, AUTH_UPLOAD, &who) == -EACCES,
	    "no header: -EACCES");
	ok(auth_check(a, "Basic dXNlcjpwYXNz", AUTH_UPLOAD, &who) == -EACCES,
	    "another scheme: -EACCES");
	ok(auth_check(a, "Bearer ", AUTH_UPLOAD, &who) == -EACCES,
	    "empty token: -EACCES");
	up[0] = up[0] == 'a' ? 'b' : 'a';
	snprintf(hdr, sizeof(hdr), "Bearer %s", up);
	ok(auth_check(a, hdr, AUTH_UPLOAD, &who) == -EACCES && who == NULL,
	    "one character off: -EACCES");
	ok(auth_check(NULL, hdr, AUTH_UPLOAD, &who) == -EACCES,
	    "no tokens at all: -EACCES");
	auth_free(a);

	ok(load("ci abc upload\n", &a, &why, &line) == -EINVAL && line == 1 &&
	    why != NULL, "short hash refused at line 1: %s", why ? why : "");
	ok(load("# c\nci " "00000000000000000000000000000000"
	    "00000000000000000000000000000000 root\n", &a, &why, &line) ==
	    -EINVAL && line == 2, "unknown scope refused at line 2");
	ok(load("ci\n", &a, &why, &line) == -EINVAL, "missing fields refused");
	ok(load("ci 0000000000000000000000000000000000000000000000000000000000"
	    "000000 upload extra\n", &a, &why, &line) == -EINVAL,
	    "extra field refused");
	ok(load("ci 0000000000000000000000000000000000000000000000000000000000"
	    "00000G upload\n", &a, &why, &line) == -EINVAL, "non-hex refused");
	ok(load("", &a, &why, &line) == 0, "an empty file loads (no tokens)");
	ok(auth_check(a, "Bearer x", AUTH_UPLOAD, &who) == -EACCES,
	    "and accepts nobody");
	auth_free(a);
	unlink(path);
	ok(auth_load(path, &a, &why, &line) == -ENOENT, "missing file: -ENOENT");
	auth_free(NULL);
	return done();
}

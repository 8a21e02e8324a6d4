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
	/* Read tokens, as Bearer and as Basic credentials. */
	{
		char	rd[65], l3[512], b64[200], long_hdr[1100];
		FILE	*p;

		ok(auth_new_token("acme/dev", "read", rd, l3, sizeof(l3)) ==
		    0, "new read token");
		ok(auth_new_token("acme/ci", "upload,private", up, l1,
		    sizeof(l1)) == 0, "new private upload token");
		snprintf(text, sizeof(text), "%s\n%s\n", l3, l1);
		ok(load(text, &a, &why, &line) == 0, "read and private load");
		snprintf(hdr, sizeof(hdr), "Bearer %s", rd);
		ok(auth_check(a, hdr, AUTH_READ, &who) == 0 &&
		    strcmp(who, "acme/dev") == 0, "read token reads");
		ok(auth_check(a, hdr, AUTH_UPLOAD, &who) == -EPERM,
		    "read token may not upload");
		ok(auth_scopes(a, "acme/ci") == (AUTH_UPLOAD | AUTH_PRIVATE),
		    "scopes of acme/ci");
		ok(auth_tenant_len("acme/dev") == 4 &&
		    auth_tenant_len("solo") == 4, "tenant: up to the first /");
		snprintf(text, sizeof(text), "printf 'user:%s' | base64 -w0",
		    rd);
		b64[0] = '\0';
		if ((p = popen(text, "r")) != NULL) {
			if (fgets(b64, sizeof(b64), p) == NULL)
				b64[0] = '\0';
			pclose(p);
		}
		snprintf(text, sizeof(text), "Basic %s", b64);
		ok(auth_check(a, text, AUTH_READ, &who) == 0,
		    "Basic user:TOKEN reads");
		snprintf(text, sizeof(text), "basic   %s  ", b64);
		ok(auth_check(a, text, AUTH_READ, &who) == 0,
		    "scheme case-insensitive, blanks around");
		ok(auth_check(a, "Basic dXNlcjpwYXNz", AUTH_READ, &who) ==
		    -EACCES, "Basic with an unknown password: -EACCES");
		ok(auth_check(a, "Basic dXNlcjo=", AUTH_READ, &who) == -EACCES,
		    "Basic with an empty password: -EACCES");
		ok(auth_check(a, "Basic dXNlcg==", AUTH_READ, &who) == -EACCES,
		    "Basic without a colon: -EACCES");
		ok(auth_check(a, "Basic dXNlcjpw=YXNz", AUTH_READ, &who) ==
		    -EACCES, "padding inside: -EACCES");
		ok(auth_check(a, "Basic dXNlcjpwYXN", AUTH_READ, &who) ==
		    -EACCES, "length not a multiple of 4: -EACCES");
		snprintf(text, sizeof(text), "Bearer %s x", rd);
		ok(auth_check(a, text, AUTH_READ, &who) == -EACCES,
		    "Bearer with a second word: -EACCES");
		memset(long_hdr, 'A', sizeof(long_hdr) - 1);
		long_hdr[sizeof(long_hdr) - 1] = '\0';
		memcpy(long_hdr, "Basic ", 6);
		ok(auth_check(a, long_hdr, AUTH_READ, &who) == -EACCES,
		    "over AUTH_HEADER_MAX: -EACCES");
		auth_free(a);
	}

	ok(load("", &a, &why, &line) == 0, "an empty file loads (no tokens)");
	ok(auth_check(a, "Bearer x", AUTH_UPLOAD, &who) == -EACCES,
	    "and accepts nobody");
	auth_free(a);
	unlink(path);
	ok(auth_load(path, &a, &why, &line) == -ENOENT, "missing file: -ENOENT");
	auth_free(NULL);
	return done();
}

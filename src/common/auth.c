/*
 * auth: the tokens file and the constant-time check.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "auth.h"
#include "base/buf.h"
#include "base/hex.h"
#include "webapi.h"

struct entry {
	char		*name;
	unsigned char	 hash[32];
	unsigned	 scopes;
};

struct auth {
	struct entry	*e;
	size_t		 n, cap;
	/* Fetched once: SHA256() looks the algorithm up on every call,
	 * which is most of a check's time (0.99 us against 1.8). */
	EVP_MD		*md;
};

static int
parse_scopes(const char *s, unsigned *out)
{
	size_t n;

	*out = 0;
	while (*s != '\0') {
		n = strcspn(s, ",");
		if (n == 6 && strncmp(s, "upload", 6) == 0)
			*out |= AUTH_UPLOAD;
		else if (n == 5 && strncmp(s, "admin", 5) == 0)
			*out |= AUTH_ADMIN;
		else if (n == 4 && strncmp(s, "read", 4) == 0)
			*out |= AUTH_READ;
		else if (n == 7 && strncmp(s, "private", 7) == 0)
			*out |= AUTH_PRIVATE;
		else
			return -EINVAL;
		s += n + (s[n] == ',');
	}
	return *out ? 0 : -EINVAL;
}

static int
valid_name(const char *s)
{
	/* A leading '#' would make the line a comment in the tokens file. */
	if (*s == '\0' || *s == '#')
		return 0;
	for (; *s; s++)
		if (*s <= ' ' || *s == 0x7f)
			return 0;
	return 1;
}

void
auth_free(struct auth *a)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n; i++)
		free(a->e[i].name);
	free(a->e);
	EVP_MD_free(a->md);
	free(a);
}

int
auth_load(const char *path, struct auth **out, const char **why,
    unsigned *lineno)
{
	struct auth	*a;
	struct entry	*ne;
	FILE		*fp;
	char		*line = NULL, *name, *hex, *scopes, *extra, *save;
	unsigned char	 buf[WEBAPI_ID_HEX_MAX / 2];
	size_t		 cap = 0;
	int		 rc = 0;

	*out = NULL;
	*lineno = 0;
	*why = NULL;
	if ((fp = fopen(path, "re")) == NULL)
		return -errno;
	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (a->md = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL) {
		free(a);
		fclose(fp);
		return -ENOMEM;
	}
	while (getline(&line, &cap, fp) != -1) {
		(*lineno)++;
		save = NULL;
		name = strtok_r(line, " \t\r\n", &save);
		if (name == NULL || *name == '#')
			continue;
		hex = strtok_r(NULL, " \t\r\n", &save);
		scopes = strtok_r(NULL, " \t\r\n", &save);
		extra = strtok_r(NULL, " \t\r\n", &save);
		rc = -EINVAL;
		if (hex == NULL || scopes == NULL || extra != NULL) {
			*why = "expected NAME SHA256HEX SCOPES";
			break;
		}
		if (array_grow(&a->e, &a->cap, a->n + 1, sizeof(*a->e)) != 0) {
			rc = -ENOMEM;
			break;
		}
		ne = &a->e[a->n];
		if (strlen(hex) != 64 ||
		    webapi_parse_hexid(hex, 64, buf) != 32) {
			*why = "the hash must be 64 lowercase hex characters";
			break;
		}
		memcpy(ne->hash, buf, sizeof(ne->hash));
		if (parse_scopes(scopes, &ne->scopes) < 0) {
			*why = "scopes are read, upload, admin and private, "
			    "comma-separated";
			break;
		}
		if ((ne->name = strdup(name)) == NULL) {
			rc = -ENOMEM;
			break;
		}
		a->n++;
		rc = 0;
	}
	free(line);
	fclose(fp);
	if (rc < 0) {
		auth_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

/*
 * Decode the base64 of src (n bytes) into out (at most cap bytes).
 * @return the decoded length, or -1 for anything but strict base64.
 */
static int
base64_decode(const char *src, size_t n, unsigned char *out, size_t cap)
{
	static const char	 alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const char		*p;
	unsigned		 acc = 0, bits = 0;
	size_t			 i, len = 0, pad = 0;

	if (n == 0 || n % 4 != 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (src[i] == '=') {
			/* Only at the end, at most two. */
			if (++pad > 2 || i < n - 2)
				return -1;
			continue;
		}
		if (pad > 0 || (p = strchr(alpha, src[i])) == NULL ||
		    src[i] == '\0')
			return -1;
		acc = (acc << 6) | (unsigned)(p - alpha);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (len == cap)
				return -1;
			out[len++] = (unsigned char)(acc >> bits);
		}
	}
	return (int)len;
}

/*
 * The token of an Authorization header: *tok and *len, within header or
 * within buf (cap bytes) for Basic credentials.
 * @return 0 (Bearer), 1 (Basic: the token is in buf), or -EACCES.
 */
static int
token_of(const char *header, unsigned char *buf, size_t cap,
    const unsigned char **tok, size_t *len)
{
	const unsigned char	*colon;
	const char		*p;
	size_t			 n;
	int			 dn;

	if (header == NULL || strnlen(header, AUTH_HEADER_MAX + 1) >
	    AUTH_HEADER_MAX)
		return -EACCES;
	if (strncasecmp(header, "Bearer ", 7) == 0) {
		p = header + 7;
		while (*p == ' ')
			p++;
		n = strcspn(p, " \t");
		if (n == 0 || p[n + strspn(p + n, " \t")] != '\0')
			return -EACCES;
		*tok = (const unsigned char *)p;
		*len = n;
		return 0;
	}
	if (strncasecmp(header, "Basic ", 6) != 0)
		return -EACCES;
	p = header + 6;
	while (*p == ' ')
		p++;
	n = strcspn(p, " \t");
	if (p[n + strspn(p + n, " \t")] != '\0' ||
	    (dn = base64_decode(p, n, buf, cap)) <= 0)
		return -EACCES;
	/* USER:TOKEN; the user says nothing (the token names its holder). */
	if ((colon = memchr(buf, ':', (size_t)dn)) == NULL ||
	    colon + 1 == buf + dn)
		return -EACCES;
	*tok = colon + 1;
	*len = (size_t)(buf + dn - *tok);
	return 1;
}

/*
 * The bits in which two digests differ, in a time that does not depend
 * on where: every word is read and no branch taken.  CRYPTO_memcmp()
 * does the same a byte at a time, behind a call, 65 ns a digest: with
 * 50 tokens, more than the rest of a warm hit's check.
 */
static uint64_t
digest_diff(const unsigned char *x, const unsigned char *y)
{
	uint64_t	a, b, d = 0;
	size_t		k;

	for (k = 0; k < 32; k += 8) {
		memcpy(&a, x + k, 8);
		memcpy(&b, y + k, 8);
		d |= a ^ b;
	}
	return d;
}

int
auth_check(const struct auth *a, const char *header, unsigned scope,
    const char **who)
{
	unsigned char		 h[32], buf[AUTH_HEADER_MAX];
	const unsigned char	*tok;
	unsigned int		 hlen;
	size_t			 i, len, hit = (size_t)-1;
	int			 rc, basic;

	*who = NULL;
	if (a == NULL || (basic = token_of(header, buf, sizeof(buf), &tok,
	    &len)) < 0)
		return -EACCES;
	rc = EVP_Digest(tok, len, h, &hlen, a->md, NULL);
	/* Basic credentials were decoded into buf: the token, in clear.
	 * Only those bytes (OPENSSL_cleanse() of all 1 KB: 1 us). */
	if (basic)
		OPENSSL_cleanse(buf, (size_t)(tok - buf) + len);
	if (rc != 1 || hlen != sizeof(h))
		return -EACCES;
	/* Every entry is compared, so timing says nothing of which;
	 * the digests have one length whatever the token's. */
	for (i = 0; i < a->n; i++)
		if (digest_diff(h, a->e[i].hash) == 0)
			hit = i;
	OPENSSL_cleanse(h, sizeof(h));
	if (hit == (size_t)-1)
		return -EACCES;
	*who = a->e[hit].name;
	return (a->e[hit].scopes & scope) == scope ? 0 : -EPERM;
}

unsigned
auth_scopes(const struct auth *a, const char *who)
{
	size_t i;

	if (a == NULL || who == NULL)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->e[i].name == who || strcmp(a->e[i].name, who) == 0)
			return a->e[i].scopes;
	return 0;
}

size_t
auth_tenant_len(const char *name)
{
	return strcspn(name, "/");
}

int
auth_new_token(const char *name, const char *scopes, char token[65],
    char *line, size_t linelen)
{
	unsigned char	rnd[32], h[32];
	char		hex[65];
	unsigned	s;
	int		n;

	if (!valid_name(name) || parse_scopes(scopes, &s) < 0)
		return -EINVAL;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -EIO;
	hex_encode(rnd, sizeof(rnd), token);
	SHA256((const unsigned char *)token, 64, h);
	hex_encode(h, sizeof(h), hex);
	n = snprintf(line, linelen, "%s %s %s", name, hex, scopes);
	OPENSSL_cleanse(rnd, sizeof(rnd));
	return n < 0 || (size_t)n >= linelen ? -ENAMETOOLONG : 0;
}

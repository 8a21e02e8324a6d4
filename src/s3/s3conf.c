/*
 * s3conf: see s3conf.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "s3conf.h"

/* Copy s[0, len) into dst (size dstsz) with a NUL; 0, or -EINVAL when it
 * does not fit. */
static int
copy(char *dst, size_t dstsz, const char *s, size_t len)
{
	if (len >= dstsz)
		return -EINVAL;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 0;
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || is_digit(c);
}

/*
 * The length of "http[s]://AUTHORITY" at the start of s, or -EINVAL.
 * AUTHORITY is HOST[:PORT], HOST a name or IPv4 address (letters, digits,
 * '.', '-') or [IPv6] (hex digits, ':', '.').
 */
static int
endpoint_len(const char *s, const char **why)
{
	const char	*h, *p;
	long		 port;
	size_t		 n, i;

	if (strncasecmp(s, "http://", 7) == 0)
		h = s + 7;
	else if (strncasecmp(s, "https://", 8) == 0)
		h = s + 8;
	else
		return *why = "the URL must start with http:// or https://",
		    -EINVAL;
	if (memchr(h, '@', strcspn(h, "/?#")) != NULL)
		return *why = "credentials do not belong in the URL", -EINVAL;
	p = h;
	if (*p == '[') {
		n = strspn(p + 1, "0123456789abcdefABCDEF:.");
		if (n == 0 || p[1 + n] != ']')
			return *why = "malformed IPv6 address", -EINVAL;
		p += n + 2;
	} else {
		n = strspn(p, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-");
		if (n == 0)
			return *why = "no host in the URL", -EINVAL;
		p += n;
	}
	if (*p == ':') {
		p++;
		n = strspn(p, "0123456789");
		port = 0;
		for (i = 0; i < n && i < 6; i++)
			port = port * 10 + (p[i] - '0');
		if (n == 0 || n > 5 || port < 1 || port > 65535)
			return *why = "malformed port", -EINVAL;
		p += n;
	}
	if (*p != '\0' && *p != '/' && *p != '?')
		return *why = "malformed host", -EINVAL;
	if ((size_t)(p - s) >= sizeof(((struct s3_config *)0)->endpoint))
		return *why = "endpoint too long", -EINVAL;
	return (int)(p - s);
}

static int
bucket_check(const char *b, size_t len, const char **why)
{
	size_t i;

	if (len < 3 || len > 63)
		return *why = "a bucket name has 3 to 63 characters", -EINVAL;
	for (i = 0; i < len; i++)
		if (!is_lower_alnum(b[i]) && b[i] != '.' && b[i] != '-')
			return *why = "a bucket name holds only a-z, 0-9, "
			    "'.' and '-'", -EINVAL;
	if (!is_lower_alnum(b[0]) || !is_lower_alnum(b[len - 1]))
		return *why = "a bucket name starts and ends with a letter "
		    "or digit", -EINVAL;
	for (i = 0; i + 1 < len; i++)
		if (b[i] == '.' && b[i + 1] == '.')
			return *why = "a bucket name has no \"..\"", -EINVAL;
	return 0;
}

static int
region_check(const char *r, size_t len, const char **why)
{
	size_t i;

	if (len == 0 || len >= sizeof(((struct s3_config *)0)->region))
		return *why = "a region has 1 to 31 characters", -EINVAL;
	for (i = 0; i < len; i++)
		if (!is_lower_alnum(r[i]) && r[i] != '-')
			return *why = "a region holds only a-z, 0-9 and '-'",
			    -EINVAL;
	return 0;
}

static int
secret_check(const char *s, const char *what, const char **why)
{
	size_t i;

	if (s[0] == '\0')
		return *why = what, -EINVAL;
	for (i = 0; s[i] != '\0'; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return *why = "a key holds a space or a character "
			    "that is not printable ASCII", -EINVAL;
	return 0;
}

int
s3conf_check(const struct s3_config *cfg, const char **why)
{
	const char	*e = cfg->endpoint;
	int		 n;

	*why = NULL;
	if (memchr(e, '\0', sizeof(cfg->endpoint)) == NULL ||
	    memchr(cfg->bucket, '\0', sizeof(cfg->bucket)) == NULL ||
	    memchr(cfg->region, '\0', sizeof(cfg->region)) == NULL ||
	    memchr(cfg->access_key, '\0', sizeof(cfg->access_key)) == NULL ||
	    memchr(cfg->secret_key, '\0', sizeof(cfg->secret_key)) == NULL)
		return *why = "a field is not NUL-terminated", -EINVAL;
	if ((n = endpoint_len(e, why)) < 0)
		return n;
	if (e[n] != '\0')
		return *why = "the endpoint has a path or query", -EINVAL;
	if (bucket_check(cfg->bucket, strlen(cfg->bucket), why) < 0)
		return -EINVAL;
	if (cfg->region[0] != '\0' &&
	    region_check(cfg->region, strlen(cfg->region), why) < 0)
		return -EINVAL;
	if (secret_check(cfg->access_key, "no access key", why) < 0 ||
	    secret_check(cfg->secret_key, "no secret key", why) < 0)
		return -EINVAL;
	return 0;
}

int
s3conf_url(const char *url, struct s3_config *cfg, const char **why)
{
	const char	*p, *b, *q;
	size_t		 blen, i;
	int		 n;

	*why = NULL;
	if ((n = endpoint_len(url, why)) < 0)
		return n;
	if (copy(cfg->endpoint, sizeof(cfg->endpoint), url, (size_t)n) < 0)
		return *why = "endpoint too long", -EINVAL;
	/* http and https as libcurl and logs spell them. */
	for (i = 0; cfg->endpoint[i] != ':'; i++)
		cfg->endpoint[i] = (char)(cfg->endpoint[i] | 0x20);
	p = url + n;
	if (*p != '/' || p[1] == '\0' || p[1] == '?')
		return *why = "no bucket: write ENDPOINT/BUCKET", -EINVAL;
	b = p + 1;
	blen = strcspn(b, "/?#");
	q = b + blen;
	if (*q == '/')
		q++;
	if (*q != '\0' && *q != '?')
		return *why = *q == '#' ? "a fragment in the URL" :
		    "a path after the bucket (URLs are path-style: "
		    "ENDPOINT/BUCKET)", -EINVAL;
	if (bucket_check(b, blen, why) < 0)
		return -EINVAL;
	copy(cfg->bucket, sizeof(cfg->bucket), b, blen);
	snprintf(cfg->region, sizeof(cfg->region), "us-east-1");
	if (*q == '?') {
		q++;
		if (strncmp(q, "region=", 7) != 0)
			return *why = "the only query parameter is region=",
			    -EINVAL;
		q += 7;
		if (region_check(q, strlen(q), why) < 0)
			return -EINVAL;
		copy(cfg->region, sizeof(cfg->region), q, strlen(q));
	}
	return 0;
}

int
s3conf_env(struct s3_config *cfg, const char **why)
{
	const char *id = getenv("AWS_ACCESS_KEY_ID");
	const char *secret = getenv("AWS_SECRET_ACCESS_KEY");

	*why = NULL;
	if (id == NULL && secret == NULL)
		return -ENOENT;
	if (id == NULL || secret == NULL)
		return *why = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go "
		    "together", -EINVAL;
	if (secret_check(id, "AWS_ACCESS_KEY_ID is empty", why) < 0 ||
	    secret_check(secret, "AWS_SECRET_ACCESS_KEY is empty", why) < 0)
		return -EINVAL;
	if (copy(cfg->access_key, sizeof(cfg->access_key), id,
	    strlen(id)) < 0 ||
	    copy(cfg->secret_key, sizeof(cfg->secret_key), secret,
	    strlen(secret)) < 0)
		return *why = "a key is too long", -EINVAL;
	return 0;
}

/* s without the blanks at either end, NUL-terminated in place. */
static char *
trim(char *s)
{
	size_t n;

	s += strspn(s, " \t");
	n = strlen(s);
	while (n > 0 && strchr(" \t\r\n", s[n - 1]) != NULL)
		s[--n] = '\0';
	return s;
}

int
s3conf_file(const char *path, struct s3_config *cfg, const char **why,
    unsigned *lineno)
{
	FILE	*fp;
	char	*line = NULL, *s, *k, *v, *eq;
	size_t	 cap = 0;
	int	 in_default = 0, have_id = 0, have_secret = 0, rc = 0;

	*why = NULL;
	*lineno = 0;
	if ((fp = fopen(path, "re")) == NULL)
		return -errno;
	while (getline(&line, &cap, fp) != -1) {
		(*lineno)++;
		s = trim(line);
		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		rc = -EINVAL;
		if (*s == '[') {
			if (s[strlen(s) - 1] != ']') {
				*why = "a section header without ']'";
				goto out;
			}
			s[strlen(s) - 1] = '\0';
			in_default = strcmp(trim(s + 1), "default") == 0;
			rc = 0;
			continue;
		}
		if ((eq = strchr(s, '=')) == NULL) {
			*why = "expected KEY = VALUE or [SECTION]";
			goto out;
		}
		*eq = '\0';
		k = trim(s);
		v = trim(eq + 1);
		rc = 0;
		if (!in_default)
			continue;
		if (strcmp(k, "aws_access_key_id") == 0) {
			rc = secret_check(v, "aws_access_key_id is empty", why);
			if (rc == 0 && (rc = copy(cfg->access_key,
			    sizeof(cfg->access_key), v, strlen(v))) < 0)
				*why = "aws_access_key_id is too long";
			have_id = 1;
		} else if (strcmp(k, "aws_secret_access_key") == 0) {
			rc = secret_check(v, "aws_secret_access_key is empty",
			    why);
			if (rc == 0 && (rc = copy(cfg->secret_key,
			    sizeof(cfg->secret_key), v, strlen(v))) < 0)
				*why = "aws_secret_access_key is too long";
			have_secret = 1;
		} else if (strcmp(k, "aws_session_token") == 0) {
			*why = "temporary credentials (aws_session_token) are "
			    "not supported";
			rc = -EINVAL;
		}
		if (rc < 0)
			goto out;
	}
	if (ferror(fp)) {
		rc = -EIO;
		goto out;
	}
	if (!have_id || !have_secret) {
		*lineno = 0;
		*why = "[default] needs aws_access_key_id and "
		    "aws_secret_access_key";
		rc = -EINVAL;
	}
out:
	if (line != NULL) {
		memset(line, 0, cap);
		free(line);
	}
	fclose(fp);
	return rc;
}

/*
 * cli: see cli.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "cli.h"
#include "text.h"

int
cli_jobs(const char *arg, int *jobs)
{
	char	*end;
	long	 j;

	errno = 0;
	j = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || j < 1 ||
	    j > CLI_JOBS_MAX) {
		fprintf(stderr, "symhub: -j wants 1 to %d\n", CLI_JOBS_MAX);
		return -EINVAL;
	}
	*jobs = (int)j;
	return 0;
}

int
cli_walk(const char *dir, int (*file)(void *ctx, const char *path),
    void (*fail)(void *ctx, const char *path, int errnum), void *ctx)
{
	struct dirent	**ents = NULL;
	struct stat	  st;
	const char	 *sep;
	char		 *p;
	size_t		  len, plen;
	int		  i, n, rc = 0;

	if ((n = scandir(dir, &ents, NULL, alphasort)) < 0) {
		fail(ctx, dir, errno);
		return 0;
	}
	len = strlen(dir);
	sep = len > 0 && dir[len - 1] == '/' ? "" : "/";
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;

		if (rc < 0 || strcmp(name, ".") == 0 ||
		    strcmp(name, "..") == 0)
			continue;
		plen = len + strlen(name) + 2;
		if ((p = malloc(plen)) == NULL) {
			rc = -ENOMEM;
			continue;
		}
		(void)snprintf(p, plen, "%s%s%s", dir, sep, name);
		if (lstat(p, &st) < 0)
			fail(ctx, p, errno);
		else if (S_ISDIR(st.st_mode))
			rc = cli_walk(p, file, fail, ctx);
		else if (S_ISREG(st.st_mode))
			rc = file(ctx, p);
		free(p);
	}
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return rc;
}

void
cli_line(FILE *fp, int bar, const char *label, const char *kind,
    const char *id, const char *name, const char *detail)
{
	if (bar)
		fputs("\r\033[K", stderr);
	fprintf(fp, "%-8s %-10s %s  ", label, kind, id);
	text_put(fp, name);
	if (detail != NULL) {
		fputs("  ", fp);
		text_put(fp, detail);
	}
	fputc('\n', fp);
	fflush(fp);
}

void
cli_bar(size_t done, size_t total, const char *fmt, ...)
{
	va_list	ap;
	char	bar[31];
	size_t	fill;

	if (total == 0)
		return;
	fill = (done > total ? total : done) * 30 / total;
	memset(bar, '=', fill);
	memset(bar + fill, ' ', 30 - fill);
	bar[30] = '\0';
	fprintf(stderr, "\r\033[K[%s] %zu/%zu  ", bar, done, total);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

void
cli_store_error(const char *prog, const char *dir, int rc, const char *lacks)
{
	struct stat	st;

	fprintf(stderr, "%s: ", prog);
	if (rc == -ENOENT && stat(dir, &st) != 0)
		fprintf(stderr, "%s: no such directory\n", dir);
	else if (rc == -ENOENT)
		fprintf(stderr, "%s is not a symhub store: no %s\n", dir,
		    lacks);
	else if (rc == -ENOTDIR && stat(dir, &st) == 0)
		fprintf(stderr, "%s is not a directory\n", dir);
	else if (rc == -ENOTDIR)
		fprintf(stderr, "%s: %s\n", dir, strerror(-rc));
	else if (rc == -EUCLEAN)
		fprintf(stderr, "store %s: the index is damaged or lost: run "
		    "'symhub store rebuild %s'\n", dir, dir);
	else
		fprintf(stderr, "store %s: %s\n", dir, strerror(-rc));
}

const char *
cli_env_url(char *buf, size_t len)
{
	const char	*e = getenv("DEBUGINFOD_URLS");
	size_t		 n;

	if (e == NULL)
		return NULL;
	e += strspn(e, " \t\n");
	n = strcspn(e, " \t\n");
	if (n == 0 || n >= len)
		return NULL;
	memcpy(buf, e, n);
	buf[n] = '\0';
	return buf;
}

char *
cli_token_file(const char *path)
{
	FILE	*fp;
	char	*line = NULL, *p, *t = NULL;
	size_t	 cap = 0, len;
	ssize_t	 n;
	int	 err;

	if ((fp = fopen(path, "re")) == NULL)
		return NULL;
	errno = 0;
	n = getline(&line, &cap, fp);
	err = n < 0 ? (errno ? errno : ENODATA) : 0;
	fclose(fp);
	if (n >= 0) {
		p = line + strspn(line, " \t\r\n");
		len = strlen(p);
		while (len > 0 && strchr(" \t\r\n", p[len - 1]) != NULL)
			len--;
		if (len == 0)
			err = ENODATA;
		else if ((t = strndup(p, len)) == NULL)
			err = ENOMEM;
	}
	if (line != NULL)
		explicit_bzero(line, cap);
	free(line);
	errno = err;
	return t;
}

int
cli_read_token(const char *prog, const char *path, char **tok,
    struct curl_slist **hdrs)
{
	const char	*env = NULL, *p;
	char		*t = NULL, *h = NULL;
	size_t		 len;
	int		 rc = 2;

	*tok = NULL;
	if (path != NULL && (t = cli_token_file(path)) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, errno == ENODATA ?
		    "no token on the first line" : strerror(errno));
		return 2;
	}
	if (t == NULL && ((env = getenv("SYMHUB_TOKEN")) == NULL ||
	    *env == '\0'))
		return 0;
	/* A header line of the token's own: nothing else may ride in it. */
	for (p = t != NULL ? t : env; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			fprintf(stderr, "%s: the token has blanks or control "
			    "characters\n", prog);
			goto out;
		}
	len = strlen("Authorization: Bearer ") + strlen(t != NULL ? t : env) +
	    1;
	rc = 1;
	if ((h = malloc(len)) == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto out;
	}
	snprintf(h, len, "Authorization: Bearer %s", t != NULL ? t : env);
	if ((*hdrs = curl_slist_append(*hdrs, h)) == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto out;
	}
	rc = 0;
out:
	if (h != NULL) {
		explicit_bzero(h, strlen(h));
		free(h);
	}
	if (rc == 0 && t != NULL)
		*tok = t;
	else if (t != NULL) {
		explicit_bzero(t, strlen(t));
		free(t);
	}
	return rc;
}

void
cli_headers_free(struct curl_slist *hdrs)
{
	struct curl_slist *l;

	for (l = hdrs; l != NULL; l = l->next)
		if (l->data != NULL)
			explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(hdrs);
}

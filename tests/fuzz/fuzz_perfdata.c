/* Fuzz the perf.data reader: perfdata_buildids() over any bytes (a
 * profile copied from another machine is foreign input), every module's
 * name read to its end, judged by perfdata_name_check() and printed by
 * text_put(); and perfdata_config_buildid_dir() on the same bytes as a
 * perf config file.  The promises checked: a name the check takes stays
 * below the cache when joined to it (no ".", ".." or empty component);
 * what text_put() writes is printable ASCII and unescapes to the name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "symhub/perfdata.h"
#include "symhub/text.h"

/* Walk name as the kernel would below the cache: abort when a component
 * could take it elsewhere. */
static void
stays_below(const char *name)
{
	const char	*c, *e;
	size_t		 n;

	if (name[0] != '/' || strlen(name) > PERFDATA_NAME_MAX)
		abort();
	for (c = name + 1; ; c = e + 1) {
		e = strchr(c, '/');
		n = e != NULL ? (size_t)(e - c) : strlen(c);
		if (n == 0 || n > 255 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			abort();
		if (e == NULL)
			return;
	}
}

static int
hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	    c - 'a' + 10 : -1;
}

/* text_put(name) is printable ASCII, and unescaped gives name back. */
static void
escaped(const char *name)
{
	char	*out = NULL, *p, *back;
	size_t	 len = 0, n = 0;
	FILE	*fp;

	if ((fp = open_memstream(&out, &len)) == NULL)
		return;
	text_put(fp, name);
	fclose(fp);
	if ((back = malloc(len + 1)) == NULL) {
		free(out);
		return;
	}
	for (p = out; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();	/* a control byte got through */
		if (*p != '\\') {
			back[n++] = *p;
			continue;
		}
		if (p[1] == '\\') {
			back[n++] = '\\';
			p++;
		} else if (p[1] == 'x' && hexval(p[2]) >= 0 &&
		    hexval(p[3]) >= 0) {
			back[n++] = (char)(hexval(p[2]) << 4 | hexval(p[3]));
			p += 3;
		} else
			abort();	/* a lone backslash: ambiguous */
	}
	back[n] = '\0';
	if ((size_t)(p - out) != len || strcmp(back, name) != 0)
		abort();
	if (text_printable(name) && strchr(name, '\\') == NULL &&
	    strcmp(out, name) != 0)
		abort();	/* printable text passes as it is */
	free(back);
	free(out);
}

static int
module(void *ctx, const struct perfdata_module *m)
{
	size_t *n = ctx;

	if (m->idlen == 0 || m->idlen > PERFDATA_BUILDID_MAX)
		abort();
	*n += strlen(m->name) + m->id[m->idlen - 1] + (size_t)m->kernel;
	if (perfdata_name_check(m->name) == NULL)
		stays_below(m->name);
	escaped(m->name);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfdata_info	 info;
	const char		*why;
	char			 dir[256], *s;
	size_t			 n = 0;
	FILE			*fp;
	int			 fd, rc;

	if ((fd = memfd_create("fuzz", MFD_CLOEXEC)) < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		rc = perfdata_buildids(fd, module, &n, &info, &why);
		if (rc == -ENOEXEC && why == NULL)
			abort();	/* every refusal says why */
	}
	close(fd);
	if (size > 0 && (fp = fmemopen((void *)data, size, "r")) != NULL) {
		if (perfdata_config_buildid_dir(fp, dir, sizeof(dir)) == 1 &&
		    strlen(dir) >= sizeof(dir))
			abort();
		fclose(fp);
	}
	/* The whole input as one name: names in a profile are short, and
	 * most mutations break the file around them. */
	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (perfdata_name_check(s) == NULL)
		stays_below(s);
	escaped(s);
	free(s);
	return 0;
}

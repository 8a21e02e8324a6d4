/*
 * dwsource: see dwsource.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "dwsource.h"
#include "webapi.h"

/* Longer names and directories are passed over: no build names one, and
 * a table whose entries all point at one long string would otherwise
 * cost its length for every entry. */
#define NAME_MAX_LEN	4096

static int
set(char **dst, const char *src)
{
	char *s;

	if ((s = strdup(src)) == NULL)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/*
 * p (canonical, rooted) against d->want; the file is recorded as as (p,
 * or the same file as libdw spells it otherwise); text: its embedded
 * text.
 */
static int
match(struct dwsource *d, const char *p, const char *as, const char *text)
{
	size_t	plen = strlen(p), wlen = strlen(d->want);
	int	rc;

	/* want begins with '/': a suffix of p that equals it begins at a
	 * path separator, so "o.c" never matches "/src/foo.c". */
	if (wlen < 2 || plen < wlen || strcmp(p + plen - wlen, d->want) != 0)
		return 0;
	p = as;
	if (d->path != NULL && strcmp(d->path, p) == 0) {
		/* The same file in another unit may carry the text. */
		if (d->text == NULL && text != NULL) {
			d->text = text;
			d->textlen = strlen(text);
			d->embedded = 1;
		}
		return 0;
	}
	if (d->path != NULL && d->exact)
		return 0;
	if (plen == wlen && !d->exact) {
		/* An exact match ends any doubt. */
		if ((rc = set(&d->path, p)) < 0)
			return rc;
		free(d->other);
		d->other = NULL;
		d->exact = 1;
		d->text = text;
		d->textlen = text != NULL ? strlen(text) : 0;
		d->embedded = text != NULL;
		return 0;
	}
	if (d->path == NULL) {
		if ((rc = set(&d->path, p)) < 0)
			return rc;
		d->text = text;
		d->textlen = text != NULL ? strlen(text) : 0;
		d->embedded = text != NULL;
		return 0;
	}
	if (d->other == NULL)
		return set(&d->other, p);
	return 0;
}

/*
 * Make *bp the rooted, canonical form of dir (may be NULL), then name,
 * put under comp (twice with twice set) while relative: a relative whole
 * is put under "/", as webapi does a request.
 * @return 1 when made, 0 when passed over, -ENOMEM.
 */
static int
whole(char **bp, size_t *bsz, const char *comp, int twice, const char *dir,
    const char *name)
{
	size_t	clen, dlen, nlen, need;
	char	*w;
	int	i;

	nlen = strnlen(name, NAME_MAX_LEN);
	dlen = dir != NULL && name[0] != '/' ? strnlen(dir, NAME_MAX_LEN) : 0;
	clen = comp != NULL ? strnlen(comp, NAME_MAX_LEN) : 0;
	if (nlen == 0 || nlen == NAME_MAX_LEN || dlen == NAME_MAX_LEN ||
	    clen == NAME_MAX_LEN)
		return 0;
	need = 2 * clen + dlen + nlen + 5;
	if (array_grow(bp, bsz, need, 1) < 0)
		return -ENOMEM;
	w = *bp;
	/* libdw: the directory, then the compilation directory while the
	 * path is still relative. */
	for (i = 0; i < 1 + (twice != 0); i++) {
		if (name[0] != '/' && (dlen == 0 || dir[0] != '/') &&
		    clen > 0 && (i == 0 || comp[0] != '/')) {
			memcpy(w, comp, clen);
			w += clen;
			*w++ = '/';
		}
	}
	if (dlen > 0) {
		memcpy(w, dir, dlen);
		w += dlen;
		*w++ = '/';
	}
	memcpy(w, name, nlen);
	w[nlen] = '\0';
	if ((*bp)[0] != '/') {
		memmove(*bp + 1, *bp, strlen(*bp) + 1);
		(*bp)[0] = '/';
	}
	return webapi_canon_path(*bp, *bp) == 0;
}

/*
 * Add a file to d->names.  A header is named by every unit that
 * includes it: listed once (with its other spelling: the key is both,
 * the first's length first), embedded if any unit embeds it.
 */
static int
list(struct dwsource *d, const char *path, const char *alt,
    const char *text)
{
	struct dwsource_names	*nl = d->names;
	size_t			 plen, alen, off;

	plen = strlen(path);
	alen = alt != NULL ? strlen(alt) : 0;
	d->key.len = 0;
	if (buf_printf(&d->key, "%zu:%s%s", plen, path,
	    alt != NULL ? alt : "") < 0 || buf_add(&d->key, "", 1) < 0)
		return -ENOMEM;
	if (strmap_get(&d->listed, (const char *)d->key.p, &off)) {
		if (text != NULL)
			nl->b.p[off] = '1';
		return 0;
	}
	off = nl->b.len;
	if (nl->over || off + plen + alen + 3 > DWSOURCE_NAMES_MAX) {
		nl->over = 1;
		return 0;
	}
	if (strmap_put(&d->listed, (const char *)d->key.p, off) < 0 ||
	    buf_add(&nl->b, text != NULL ? "1" : "0", 1) < 0 ||
	    buf_add(&nl->b, path, plen + 1) < 0 ||
	    buf_add(&nl->b, alt != NULL ? alt : "", alen + 1) < 0)
		return -ENOMEM;
	nl->n++;
	return 0;
}

/* One file the tables name: path, alt its other spelling (NULL: none);
 * listed, and matched. */
static int
entry(struct dwsource *d, const char *path, const char *alt,
    const char *text)
{
	int rc;

	d->seen++;
	if (d->names != NULL && (rc = list(d, path, alt, text)) < 0)
		return rc;
	if ((rc = match(d, path, path, text)) < 0 || alt == NULL)
		return rc;
	return match(d, alt, path, text);
}

int
dwsource_match(struct dwsource *d, const struct dwsource_names *nl)
{
	/* Stands for a text not read this time. */
	static const char embedded[] = "";
	const char	*p = (const char *)nl->b.p, *end = p + nl->b.len;
	const char	*path, *alt;
	int		 rc, text;

	while (p < end) {
		text = *p++ == '1';
		path = p;
		p += strlen(p) + 1;
		alt = p;
		p += strlen(p) + 1;
		if ((rc = match(d, path, path, text ? embedded : NULL)) < 0 ||
		    (*alt != '\0' &&
		    (rc = match(d, alt, path, text ? embedded : NULL)) < 0))
			return rc;
	}
	d->text = NULL;
	d->textlen = 0;
	return dwsource_result(d);
}

void
dwsource_names_free(struct dwsource_names *nl)
{
	buf_free(&nl->b);
	memset(nl, 0, sizeof(*nl));
}

size_t
dwsource_doubled(const char *canon)
{
	size_t l;

	for (l = 1; canon[l] != '\0'; l++)
		if (canon[l] == '/' && strncmp(canon + l, canon, l) == 0 &&
		    canon[2 * l] == '/')
			return l;
	return 0;
}

int
dwsource_name(struct dwsource *d, const char *path)
{
	size_t	l = 0, n;
	int	rc;

	if ((rc = whole(&d->tmp, &d->tmpsz, NULL, 0, NULL, path)) <= 0)
		return rc;
	/* Relative: libdw's callers may have put the compilation directory
	 * in front twice (dwsource_find()); the one file, recorded once. */
	if (path[0] != '/' && (l = dwsource_doubled(d->tmp)) > 0)
		return entry(d, d->tmp + l, d->tmp, NULL);
	/* elfinfo_sources() joins a unit's own file with a relative
	 * compilation directory once ("./csu/version.c"): its first
	 * directory may be that one, which libdw's callers put in front
	 * twice ("/csu/csu/version.c"): that spelling finds it too. */
	if (path[0] != '/' && (l = strcspn(d->tmp + 1, "/") + 1) > 1 &&
	    d->tmp[l] == '/') {
		n = strlen(d->tmp);
		if (array_grow(&d->tmp2, &d->tmp2sz, n + l + 1, 1) < 0)
			return -ENOMEM;
		memcpy(d->tmp2, d->tmp, l);
		memcpy(d->tmp2 + l, d->tmp, n + 1);
		return entry(d, d->tmp, d->tmp2, NULL);
	}
	return entry(d, d->tmp, NULL, NULL);
}

int
dwsource_result(const struct dwsource *d)
{
	if (d->path == NULL)
		return -ENOENT;
	if (!d->exact && d->other != NULL)
		return -ENOTUNIQ;
	return 0;
}

int
dwsource_find(struct dwsource *d, const struct dwline_sects *s,
    const char *want)
{
	struct dwline	 t;
	const char	*comp, *dir, *alt;
	uint64_t	 off;
	size_t		 i;
	int		 rc = 0;

	d->want = want;
	memset(&t, 0, sizeof(t));
	for (off = 0; s->line.p != NULL && off < s->line.len; off = t.next) {
		if ((rc = dwline_header(s, off, &t)) < 0)
			goto out;
		if (t.version != 5) {
			rc = -ENOTSUP;
			goto out;
		}
		/* Version 5: directory 0 is the unit's compilation
		 * directory, so it is not put in front twice. */
		comp = t.ndirs > 0 ? t.dirs[0] : NULL;
		for (i = 0; i < t.nfiles; i++) {
			if (t.files[i].name == NULL ||
			    t.files[i].dir >= t.ndirs)
				continue;
			dir = t.files[i].dir > 0 ? t.dirs[t.files[i].dir] :
			    NULL;
			if ((rc = whole(&d->tmp, &d->tmpsz, comp, 0, dir,
			    t.files[i].name)) < 0)
				goto out;
			if (rc == 0)
				continue;
			/* libdw puts directory 0, the compilation directory,
			 * before the name, and its callers (elfutils'
			 * debuginfod, elfinfo_sources()) the compilation
			 * directory again when still relative: a client may
			 * ask for ./libio/./libio/ioputs.c.  The same file. */
			alt = NULL;
			if (t.files[i].dir == 0 && comp != NULL &&
			    comp[0] != '/' && t.files[i].name[0] != '/') {
				if ((rc = whole(&d->tmp2, &d->tmp2sz, comp, 1,
				    NULL, t.files[i].name)) < 0)
					goto out;
				/* Both must name one file: a ".." in the
				 * name could make them part. */
				if (rc == 1 && strcmp(d->tmp2, d->tmp) != 0 &&
				    strcmp(strrchr(d->tmp2, '/'),
				    strrchr(d->tmp, '/')) == 0)
					alt = d->tmp2;
			}
			if ((rc = entry(d, d->tmp, alt,
			    t.files[i].source)) < 0)
				goto out;
		}
	}
	rc = dwsource_result(d);
out:
	dwline_free(&t);
	return rc;
}

void
dwsource_free(struct dwsource *d)
{
	struct dwsource_names	*nl = d->names;
	const char		*want = d->want;

	free(d->path);
	free(d->other);
	free(d->tmp);
	free(d->tmp2);
	strmap_free(&d->listed);
	buf_free(&d->key);
	memset(d, 0, sizeof(*d));
	d->want = want;
	if ((d->names = nl) != NULL) {
		nl->b.len = 0;
		nl->b.err = 0;
		nl->n = 0;
		nl->over = 0;
	}
}

/*
 * text: see text.h.
 */
#include <string.h>

#include "base/hex.h"
#include "text.h"

/*
 * The length of the printable character at s (1 to 4), or 0 when the
 * byte at s starts none: a control, an invalid or cut-short sequence.
 */
static size_t
char_len(const unsigned char *s)
{
	unsigned	c = s[0], cp;
	size_t		n, i;

	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;	/* C0, DEL, continuation, overlong, > U+10FFFF */
	n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	cp = c & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* the NUL at the end stops here too */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0)
		return 0;
	return n;
}

int
text_printable(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n;

	for (; *p != '\0'; p += n)
		if ((n = char_len(p)) == 0)
			return 0;
	return 1;
}

int
text_has_control(const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 1;
	return 0;
}

void
text_sanitize(char *s)
{
	unsigned char	*p = (unsigned char *)s;
	size_t		 n;

	while (*p != '\0') {
		if ((n = char_len(p)) == 0) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

void
text_put(FILE *fp, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n;

	while (*p != '\0') {
		if (*p == '\\') {
			fputs("\\\\", fp);
			p++;
		} else if ((n = char_len(p)) == 0) {
			fputc('\\', fp);
			fputc('x', fp);
			fputc(hex_digits[*p >> 4], fp);
			fputc(hex_digits[*p & 15], fp);
			p++;
		} else {
			fwrite(p, 1, n, fp);
			p += n;
		}
	}
}

/*
 * text: see text.h.
 */
#include <string.h>

#include "base/hex.h"
#include "base/utf8.h"
#include "text.h"

/*
 * The length of the printable character at s (1 to 4), or 0 when the
 * byte at s starts none: a control, an invalid or cut-short sequence.
 */
static size_t
char_len(const unsigned char *s)
{
	size_t	n;

	if (s[0] >= 0x20 && s[0] < 0x7f)
		return 1;
	if (s[0] < 0x80)
		return 0;	/* C0, DEL */
	/* The NUL at the end cuts a sequence short. */
	n = utf8_seq(s, strnlen((const char *)s, 4));
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;	/* C1 */
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

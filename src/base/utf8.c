/*
 * utf8: well-formed UTF-8 (RFC 3629, table 3-7 of the Unicode standard)
 * and JSON strings made of any bytes.
 */
#include <errno.h>
#include <stdint.h>

#include "base/hex.h"
#include "base/utf8.h"

size_t
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char	c, lo = 0x80, hi = 0xbf;
	size_t		len, i;

	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80)
		return 1;
	if (c < 0xc2)		/* a continuation, or an overlong lead */
		return 0;
	if (c < 0xe0)
		len = 2;
	else if (c < 0xf0) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* a surrogate */
	} else if (c < 0xf5) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else
		return 0;
	if (n < len)
		return 0;
	/* The second byte has the lead's own range, the rest 80..bf. */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

int
utf8_valid(const void *p, size_t n)
{
	const unsigned char	*s = p;
	size_t			 i = 0, k;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((k = utf8_seq(s + i, n - i)) == 0)
			return 0;
		i += k;
	}
	return 1;
}

int
utf8_add(struct buf *b, const void *p, size_t n)
{
	const unsigned char	*s = p;
	size_t			 i = 0, run = 0, k;

	/* Runs of good bytes are copied whole. */
	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((k = utf8_seq(s + i, n - i)) > 0) {
			i += k;
			continue;
		}
		if (buf_add(b, s + run, i - run) != 0 ||
		    buf_add(b, UTF8_REPLACEMENT, 3) != 0)
			return -ENOMEM;
		run = ++i;
	}
	/* s + run only when there is a run: s is NULL for an empty text. */
	if (i > run && buf_add(b, s + run, i - run) != 0)
		return -ENOMEM;
	return b->err != 0 ? -ENOMEM : 0;
}

int
utf8_json(struct buf *b, const void *p, size_t n)
{
	const unsigned char	*s = p;
	size_t			 i = 0, run = 0, k;
	char			 e[6];
	const char		*rep;
	size_t			 rlen;

	while (i < n) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80 && (k = utf8_seq(s + i, n - i)) > 0) {
			i += k;
			continue;
		}
		rep = e;
		rlen = 2;
		e[0] = '\\';
		switch (c) {
		case '"':  e[1] = '"'; break;
		case '\\': e[1] = '\\'; break;
		case '\b': e[1] = 'b'; break;
		case '\f': e[1] = 'f'; break;
		case '\n': e[1] = 'n'; break;
		case '\r': e[1] = 'r'; break;
		case '\t': e[1] = 't'; break;
		default:
			if (c >= 0x80) {
				rep = UTF8_REPLACEMENT;
				rlen = 3;
				break;
			}
			e[1] = 'u';
			e[2] = '0';
			e[3] = '0';
			e[4] = hex_digits[c >> 4];
			e[5] = hex_digits[c & 15];
			rlen = 6;
			break;
		}
		if (buf_add(b, s + run, i - run) != 0 ||
		    buf_add(b, rep, rlen) != 0)
			return -ENOMEM;
		run = ++i;
	}
	/* s + run only when there is a run: s is NULL for an empty text. */
	if (i > run && buf_add(b, s + run, i - run) != 0)
		return -ENOMEM;
	return b->err != 0 ? -ENOMEM : 0;
}

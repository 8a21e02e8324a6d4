/*
 * hex: see hex.h.
 */
#include <errno.h>

#include "hex.h"

const char hex_digits[16] = "0123456789abcdef";

void
hex_encode(const unsigned char *buf, size_t len, char *out)
{
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = hex_digits[buf[i] >> 4];
		out[2 * i + 1] = hex_digits[buf[i] & 15];
	}
	out[2 * len] = '\0';
}

int
hex_decode(const char *hex, size_t len, unsigned char *out)
{
	size_t	i;
	int	hi, lo;

	if (len % 2 != 0)
		return -EINVAL;
	for (i = 0; i < len; i += 2) {
		if ((hi = hex_value((unsigned char)hex[i])) < 0 ||
		    (lo = hex_value((unsigned char)hex[i + 1])) < 0)
			return -EINVAL;
		out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	return (int)(len / 2);
}

/*
 * hex: lowercase hexadecimal, the one spelling of ids in symhub (build-ids,
 * FileIDs, tokens, store keys).
 */
#ifndef SYMHUB_HEX_H
#define SYMHUB_HEX_H

#include <stddef.h>

extern const char hex_digits[16];	/* "0123456789abcdef" */

/* Write 2 * len lowercase hex characters and a NUL to out. */
void	hex_encode(const unsigned char *buf, size_t len, char *out);

/*
 * Decode len lowercase hex characters (uppercase is refused: ids are
 * compared as strings elsewhere) into len / 2 bytes of out.
 * @return len / 2, or -EINVAL for an odd length or a character that is
 *         not a lowercase hex digit (out is then partly written).
 */
int	hex_decode(const char *hex, size_t len, unsigned char *out);

/* The value of a lowercase hex digit, or -1. */
static inline int
hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

#endif

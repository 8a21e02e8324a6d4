/*
 * auth: bearer tokens for uploads and administration.
 *
 * The tokens file holds one token per line, as "NAME SHA256HEX SCOPES":
 * the token's name (for logs), the SHA-256 of the token in hex, and a
 * comma-separated list of scopes ("upload", "admin").  Blank lines and
 * lines starting with '#' are ignored.  Tokens themselves are never
 * stored; comparison is constant-time and visits every entry.
 */
#ifndef SYMHUB_AUTH_H
#define SYMHUB_AUTH_H

#include <stddef.h>

#define AUTH_UPLOAD	0x1u
#define AUTH_ADMIN	0x2u

struct auth;

/*
 * Read a tokens file.
 * @param why  on -EINVAL, set to a static reason; *line to the line.
 * @return 0 and *out (free with auth_free()), -EINVAL for a malformed
 *         line, -errno when the file cannot be read.
 */
int	auth_load(const char *path, struct auth **out, const char **why,
	    unsigned *line);

void	auth_free(struct auth *a);

/*
 * Check an Authorization header value ("Bearer TOKEN") for scope.
 * @param who  on 0 and -EPERM, the token's name (valid as long as a).
 * @return 0; -EACCES when there is no header, it is malformed, or the
 *         token is unknown; -EPERM when the token lacks the scope.
 */
int	auth_check(const struct auth *a, const char *header, unsigned scope,
	    const char **who);

/*
 * Make a new token: 32 random bytes as 64 hex characters, and the tokens
 * file line for it.
 * @return 0, -EINVAL for a bad name or scope list, -errno.
 */
int	auth_new_token(const char *name, const char *scopes, char token[65],
	    char *line, size_t linelen);

#endif

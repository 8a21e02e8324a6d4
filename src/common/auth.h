/*
 * auth: bearer tokens for uploads and administration.
 *
 * The tokens file holds one token per line, as "NAME SHA256HEX SCOPES":
 * the token's name (for logs), the SHA-256 of the token in hex, and a
 * comma-separated list of scopes ("read", "upload", "admin", and
 * "private": what the token uploads is private unless the upload says
 * otherwise).  Blank lines and lines starting with '#' are ignored.
 * Tokens themselves are never stored; comparison is constant-time and
 * visits every entry.
 *
 * A token's tenant is its name up to the first '/' ("acme/ci" and
 * "acme/dev" are both of "acme"): a private upload is read by the
 * tokens of its tenant only.
 */
#ifndef SYMHUB_AUTH_H
#define SYMHUB_AUTH_H

#include <stddef.h>

#define AUTH_UPLOAD	0x1u
#define AUTH_ADMIN	0x2u
#define AUTH_READ	0x4u
#define AUTH_PRIVATE	0x8u	/* uploads private by default */

/* The longest Authorization header looked at: a longer one is refused
 * before anything is decoded or hashed. */
#define AUTH_HEADER_MAX	1024

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
 * Check an Authorization header value for scope: "Bearer TOKEN", or
 * "Basic BASE64(USER:TOKEN)" (the user is ignored: libdebuginfod sends
 * the credentials of http://USER:TOKEN@hub/ so).
 * @param who  on 0 and -EPERM, the token's name (valid as long as a).
 * @return 0; -EACCES when there is no header, it is malformed, or the
 *         token is unknown; -EPERM when the token lacks the scope.
 */
int	auth_check(const struct auth *a, const char *header, unsigned scope,
	    const char **who);

/* The scopes of the token named who (from auth_check()), 0 if none. */
unsigned auth_scopes(const struct auth *a, const char *who);

/* The length of name's tenant: the bytes before its first '/'. */
size_t	auth_tenant_len(const char *name);

/*
 * Make a new token: 32 random bytes as 64 hex characters, and the tokens
 * file line for it.
 * @return 0, -EINVAL for a bad name or scope list, -errno.
 */
int	auth_new_token(const char *name, const char *scopes, char token[65],
	    char *line, size_t linelen);

#endif

/*
 * s3conf: a struct s3_config from what a user writes: the daemon's
 * `--s3 URL` option, the AWS credential variables, a credentials file.
 * No I/O but reading the file named; no logging: on -EINVAL, *why is a
 * static reason for the caller's message.
 */
#ifndef SYMHUB_S3CONF_H
#define SYMHUB_S3CONF_H

#include "s3.h"

/*
 * Endpoint, bucket and region from a URL, path-style:
 *   http[s]://HOST[:PORT]/BUCKET[/][?region=REGION]
 * e.g. http://127.0.0.1:18085/symhub?region=us-east-1.  HOST is a name,
 * an IPv4 address or a bracketed IPv6 one; REGION defaults to us-east-1.
 * Credentials in the URL (user@) are refused: they would show in ps and
 * logs.  Sets endpoint (scheme lowercased, no '/' at the end), bucket and
 * region; leaves the other fields alone.
 * @return 0; -EINVAL with *why (cfg then partly set).
 */
int	s3conf_url(const char *url, struct s3_config *cfg, const char **why);

/*
 * Keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
 * @return 0; -ENOENT when neither is set; -EINVAL with *why when one is
 *         missing or either is empty, too long or holds a space or a
 *         control character.
 */
int	s3conf_env(struct s3_config *cfg, const char **why);

/*
 * Keys from a credentials file in the AWS CLI's format (the one of
 * ~/.aws/credentials), its [default] section:
 *
 *   [default]
 *   aws_access_key_id = test:tester
 *   aws_secret_access_key = testing
 *
 * Blank lines and lines starting with '#' or ';' are ignored, and so are
 * other sections and other keys, but aws_session_token in [default]:
 * temporary credentials are not supported.
 * @param line  on -EINVAL, the line at fault, or 0 when a key is missing.
 * @return 0; -EINVAL with *why and *line; -errno when it cannot be read.
 */
int	s3conf_file(const char *path, struct s3_config *cfg, const char **why,
	    unsigned *line);

/*
 * Is cfg one s3_create() takes: an endpoint as s3conf_url() writes it, a
 * bucket by S3's rules (3 to 63 of a-z 0-9 . -, a letter or digit at
 * each end, no ".."), a region of a-z 0-9 - (or ""), two keys of
 * printable ASCII without spaces?
 * @return 0; -EINVAL with *why.
 */
int	s3conf_check(const struct s3_config *cfg, const char **why);

#endif

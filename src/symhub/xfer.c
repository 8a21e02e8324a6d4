/*
 * xfer: the CLI's one loop over a libcurl multi handle.  Its three users
 * each had their own copy, differing only in their callbacks and in how
 * long a wait for news may be.
 */
#include <curl/curl.h>

#include "xfer.h"

int
xfer_run(CURLM *multi, size_t jobs, int poll_ms,
    const struct xfer_ops *ops, void *ctx)
{
	CURLMsg	*m;
	CURL	*easy;
	char	*priv;
	size_t	 active = 0;
	int	 running, left, res, r = 0, rc = 0;

	for (;;) {
		while (active < jobs && (r = ops->start(ctx, multi)) > 0)
			active++;
		if (r < 0)
			return r;
		if (active == 0)
			break;
		curl_multi_perform(multi, &running);
		while ((m = curl_multi_info_read(multi, &left)) != NULL) {
			if (m->msg != CURLMSG_DONE)
				continue;
			easy = m->easy_handle;
			curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
			res = m->data.result;	/* m is invalid after remove */
			curl_multi_remove_handle(multi, easy);
			if ((r = ops->done(ctx, multi, priv,
			    (CURLcode)res)) <= 0)
				active--;
			if (r < 0 && rc == 0)
				rc = r;
		}
		if (active > 0)
			curl_multi_poll(multi, NULL, 0, poll_ms, NULL);
		if (rc < 0)
			break;
		r = 0;
	}
	return rc;
}

/*
 * xfer: the one loop that drives the CLI's transfers on a libcurl multi
 * handle (`symhub upload`, `symhub prefetch`, `symhub perf`): at most
 * jobs at once, each started and ended by its caller's callbacks, which
 * keep the items, the reports, the progress and the counts.
 */
#ifndef SYMHUB_XFER_H
#define SYMHUB_XFER_H

#include <stddef.h>

#include <curl/curl.h>

struct xfer_ops {
	/*
	 * Start the next transfer: its easy handle, with CURLOPT_PRIVATE
	 * set, added to multi.
	 * @return 1 one started; 0 none to start now (asked again after
	 *         the next round); < 0 stop at once, with this.
	 */
	int	(*start)(void *ctx, CURLM *multi);
	/*
	 * A transfer ended with res; its handle, whose CURLOPT_PRIVATE is
	 * priv, is already removed from multi and is the callback's.
	 * @return 1 it goes on (a handle added to multi again); 0 it is
	 *         over; < 0 it is over, and the run stops with this (the
	 *         first such) once the round under way is read.
	 */
	int	(*done)(void *ctx, CURLM *multi, char *priv, CURLcode res);
};

/*
 * Run transfers on multi (the caller's, made and freed by it) until none
 * is left to start and none runs, waiting at most poll_ms for news at a
 * time (the progress is drawn as often).
 * @return 0; what a callback stopped the run with.
 */
int	xfer_run(CURLM *multi, size_t jobs, int poll_ms,
	    const struct xfer_ops *ops, void *ctx);

#endif

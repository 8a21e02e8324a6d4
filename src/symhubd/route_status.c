/*
 * route_status: GET / (who answers) and GET /metrics (Prometheus text:
 * the process's counters, the store's, the fetch engine's, the
 * converter's and the front's own).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "route.h"

enum MHD_Result
route_root(struct http *h, struct req *r)
{
	(void)h;
	r->type = METRICS_T_ROOT;
	return reply_text(r, REPLY_OK, "symhubd " PACKAGE_VERSION
	    ": a debuginfod-compatible symbol hub", "-");
}

enum MHD_Result
route_metrics(struct http *h, struct req *r)
{
	struct cache_stats	 st;
	FILE			*fp;
	char			*buf = NULL;
	size_t			 len = 0;
	int			 have;

	r->type = METRICS_T_METRICS;
	have = cache_stats(h->c, &st) == 0;
	if ((fp = open_memstream(&buf, &len)) == NULL)
		return MHD_NO;
	metrics_render(fp, have ? &st : NULL);
	if (h->f != NULL)
		fetch_metrics(h->f, fp);
	if (h->dv != NULL)
		derive_metrics(h->dv, fp);
	pthread_mutex_lock(&h->cmu);
	fprintf(fp, "# TYPE symhub_http_connections gauge\n"
	    "symhub_http_connections %u\n"
	    "# TYPE symhub_http_head_timeouts_total counter\n"
	    "symhub_http_head_timeouts_total %" PRIu64 "\n"
	    "# TYPE symhub_http_post_buffered_bytes gauge\n"
	    "symhub_http_post_buffered_bytes %" PRIu64 "\n", h->nconns,
	    h->head_timeouts, __atomic_load_n(&h->buffered, __ATOMIC_RELAXED));
	pthread_mutex_unlock(&h->cmu);
	fclose(fp);
	return reply_response(r, REPLY_OK, reply_buffer(buf, len,
	    "text/plain; version=0.0.4"), len, "-");
}

/*
 * test_routes: the HTTP front's route table (src/symhubd/route_table.c)
 * read directly: every URL the parser takes has one row, with the
 * methods, body limit, Allow and handler the front answered with before
 * the table, so that a row added or changed is seen here first.
 */
#include <stdio.h>
#include <string.h>

#include "common/webapi.h"
#include "symhubd/route.h"
#include "tap.h"

#define ID	"/buildid/0123456789abcdef0123456789abcdef01234567"

static const struct {
	const char	*url;
	unsigned	 methods;
	int		 body;		/* a POST body limit */
	const char	*allow;
	enum metrics_type type;
	enum MHD_Result	(*handler)(struct http *, struct req *);
} cases[] = {
	{ "/", ROUTE_GET, 0, "GET, HEAD", METRICS_T_ROOT, route_root },
	{ "/metrics", ROUTE_GET, 0, "GET, HEAD", METRICS_T_METRICS,
	    route_metrics },
	{ "/status", ROUTE_GET, 0, "GET, HEAD", METRICS_T_ROOT,
	    route_status_page },
	{ "/metadata", ROUTE_GET, 0, "GET, HEAD", METRICS_T_METADATA,
	    route_metadata },
	{ "/symbolize", ROUTE_POST, 1, "POST", METRICS_T_BATCH, route_batch },
	{ "/symbolicate/v5", ROUTE_POST, 1, "POST", METRICS_T_BATCH,
	    route_batch },
	{ "/source/v1", ROUTE_POST, 1, "POST", METRICS_T_PROFILER,
	    route_source_v1 },
	{ "/asm/v1", ROUTE_POST, 1, "POST", METRICS_T_PROFILER,
	    route_asm_v1 },
	{ ID "/debuginfo", ROUTE_GET | ROUTE_PUT, 0, "GET, HEAD",
	    METRICS_T_BUILDID, route_artifact },
	{ ID "/executable", ROUTE_GET | ROUTE_PUT, 0, "GET, HEAD",
	    METRICS_T_BUILDID, route_artifact },
	{ ID "/source/usr/src/a.c", ROUTE_GET, 0, "GET, HEAD",
	    METRICS_T_BUILDID, route_artifact },
	{ ID "/section/.debug_line", ROUTE_GET, 0, "GET, HEAD",
	    METRICS_T_BUILDID, route_section },
	{ ID "/gsym", ROUTE_GET, 0, "GET, HEAD", METRICS_T_BUILDID,
	    route_gsym },
	{ ID "/symbolize", ROUTE_POST, 1, "POST", METRICS_T_BUILDID,
	    route_gsym },
	{ "/fileid/0123456789abcdef0123456789abcdef/executable",
	    ROUTE_GET | ROUTE_PUT, 0, "GET, HEAD", METRICS_T_BUILDID,
	    route_artifact },
	{ "/symbolize/otlp", ROUTE_POST, 1, "POST", METRICS_T_BATCH,
	    route_otlp },
};

int
main(void)
{
	const struct route	*rt;
	struct webapi_req	 w;
	const char		*why;
	size_t			 i;
	int			 rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rc = webapi_parse(cases[i].url, &w, &why);
		rt = rc == 0 ? route_find(&w) : NULL;
		ok(rt != NULL, "%s: one row", cases[i].url);
		if (rt == NULL) {
			webapi_req_free(&w);
			continue;
		}
		ok(rt->methods == cases[i].methods, "%s: methods %#x",
		    cases[i].url, rt->methods);
		ok((rt->body_max != NULL) == cases[i].body &&
		    (rt->body_max != NULL) == !!(rt->methods & ROUTE_POST),
		    "%s: a body limit only with POST", cases[i].url);
		ok(strcmp(route_allow(rt), cases[i].allow) == 0,
		    "%s: Allow: %s", cases[i].url, route_allow(rt));
		ok(rt->type == cases[i].type, "%s: metrics type",
		    cases[i].url);
		ok(rt->handler == cases[i].handler, "%s: handler",
		    cases[i].url);
		ok((rt->post_hint != NULL) == (rt->methods == ROUTE_POST),
		    "%s: a POST-only route says what to POST", cases[i].url);
		webapi_req_free(&w);
	}
	ok(strcmp(route_allow(NULL), "GET, HEAD") == 0,
	    "no row: Allow: GET, HEAD");
	return done();
}

/*
 * route_table: the routes of the HTTP front, one row each (route.h).
 * http.c checks a head and dispatches by them, reply.c answers a 405's
 * Allow from them; the handlers live in route_*.c, one file a route.
 */
#include <stddef.h>

#include "route.h"

static const struct route routes[] = {
	{ WEBAPI_ROOT, 0, 0, ROUTE_GET, NULL, METRICS_T_ROOT,
	    route_root, NULL, ROUTE_MONITOR },
	{ WEBAPI_METRICS, 0, 0, ROUTE_GET, NULL, METRICS_T_METRICS,
	    route_metrics, NULL, ROUTE_MONITOR },
	{ WEBAPI_STATUS, 0, 0, ROUTE_GET, NULL, METRICS_T_ROOT,
	    route_status_page, NULL, ROUTE_MONITOR },
	{ WEBAPI_METADATA, 0, 0, ROUTE_GET, NULL, METRICS_T_METADATA,
	    route_metadata, NULL, ROUTE_READ },
	{ WEBAPI_BATCH, 0, 0, ROUTE_POST, route_body_max, METRICS_T_BATCH,
	    route_batch, "POST the modules and addresses to /symbolize",
	    ROUTE_READ },
	{ WEBAPI_TECKEN, 0, 0, ROUTE_POST, route_body_max, METRICS_T_BATCH,
	    route_batch, "POST the stacks to /symbolicate/v5", ROUTE_READ },
	{ WEBAPI_PPROF, 0, 0, ROUTE_POST, route_body_max, METRICS_T_BATCH,
	    route_pprof, "POST a pprof profile to /symbolize/pprof",
	    ROUTE_READ },
	{ WEBAPI_ARTIFACT, CACHE_DEBUGINFO, 0, ROUTE_GET | ROUTE_PUT, NULL,
	    METRICS_T_BUILDID, route_artifact, NULL, ROUTE_READ },
	{ WEBAPI_ARTIFACT, CACHE_EXECUTABLE, 0, ROUTE_GET | ROUTE_PUT, NULL,
	    METRICS_T_BUILDID, route_artifact, NULL, ROUTE_READ },
	{ WEBAPI_ARTIFACT, CACHE_SOURCE, 0, ROUTE_GET, NULL,
	    METRICS_T_BUILDID, route_artifact, NULL, ROUTE_READ },
	{ WEBAPI_ARTIFACT, CACHE_SECTION, 0, ROUTE_GET, NULL,
	    METRICS_T_BUILDID, route_section, NULL, ROUTE_READ },
	{ WEBAPI_ARTIFACT, CACHE_GSYM, 0, ROUTE_GET, NULL,
	    METRICS_T_BUILDID, route_gsym, NULL, ROUTE_READ },
	{ WEBAPI_ARTIFACT, CACHE_GSYM, 1, ROUTE_POST, route_body_max,
	    METRICS_T_BUILDID, route_gsym, "POST the addresses to /symbolize",
	    ROUTE_READ },
	{ WEBAPI_SOURCE_V1, 0, 0, ROUTE_POST, route_api_body_max,
	    METRICS_T_PROFILER, route_source_v1,
	    "POST the module and file to /source/v1", ROUTE_READ },
	{ WEBAPI_ASM_V1, 0, 0, ROUTE_POST, route_api_body_max,
	    METRICS_T_PROFILER, route_asm_v1,
	    "POST the module and address range to /asm/v1", ROUTE_READ },
	{ WEBAPI_ARTIFACT, CACHE_BUNDLE, 0, ROUTE_PUT, NULL,
	    METRICS_T_BUILDID, route_artifact, NULL, ROUTE_READ },
	{ WEBAPI_OTLP, 0, 0, ROUTE_POST, route_body_max, METRICS_T_BATCH,
	    route_otlp, "POST OTLP profiles to /symbolize/otlp",
	    ROUTE_READ },
};

const struct route *
route_find(const struct webapi_req *w)
{
	size_t i;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (routes[i].route == w->route &&
		    (w->route != WEBAPI_ARTIFACT ||
		    ((int)w->kind == routes[i].kind &&
		    !w->symbolize == !routes[i].symbolize)))
			return &routes[i];
	return NULL;
}

const char *
route_allow(const struct route *rt)
{
	unsigned m = rt != NULL ? rt->methods : ROUTE_GET;

	if ((m & ROUTE_GET) && (m & ROUTE_POST))
		return "GET, HEAD, POST";
	return m & ROUTE_POST ? "POST" : "GET, HEAD";
}

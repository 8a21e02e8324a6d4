/*
 * metrics: process-wide counters, rendered as Prometheus text for
 * /metrics.  Names follow elfutils debuginfod where one exists (ready,
 * http_responses_total, http_responses_transfer_bytes_*), so its tests can
 * be ported; ours are prefixed symhub_.  Counting is lock-free.
 */
#ifndef SYMHUB_METRICS_H
#define SYMHUB_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "cache/cache.h"

enum metrics_type {		/* the "type" label: what was asked for */
	METRICS_T_BUILDID,
	METRICS_T_METRICS,
	METRICS_T_ROOT,
	METRICS_T_OTHER,
	METRICS_T_METADATA,
	METRICS_T_BATCH,	/* POST /symbolize, /symbolicate/v5 */
	METRICS_T_PROFILER,	/* POST /source/v1, /asm/v1 */
	METRICS_T_N
};

enum metrics_result {		/* the "result" label: how it was answered */
	METRICS_R_FILE,		/* 200 from the store or a scanned file */
	METRICS_R_SECTION,	/* 200, a section extracted now */
	METRICS_R_NEGATIVE,	/* 404 from a negative entry */
	METRICS_R_NOTFOUND,	/* 404, nothing known */
	METRICS_R_ERROR,	/* any other 4xx/5xx */
	METRICS_R_TRANSIENT,	/* connection reset: nothing definite */
	METRICS_R_OTHER,	/* /, /metrics */
	METRICS_R_N
};

enum metrics_scan {
	METRICS_SCAN_INDEXED,	/* ELF file read and indexed */
	METRICS_SCAN_UNCHANGED,	/* skipped: same identity as last time */
	METRICS_SCAN_SKIPPED,	/* not ELF, no build-id, not readable */
	METRICS_SCAN_FORGOTTEN,	/* vanished since the last pass */
	METRICS_SCAN_N
};

enum metrics_pkg {		/* the "read" label: how a member was read */
	METRICS_PKG_SEEK,	/* from its xz block (pkga_extract_at()) */
	METRICS_PKG_SEQUENTIAL,	/* from the package's start */
	METRICS_PKG_N
};

/* A member extracted from a package; unpacked: bytes decompressed to get
 * it (counted for seeks only). */
void	metrics_package_member(enum metrics_pkg how, uint64_t unpacked);

/* Count one finished response. */
void	metrics_response(int code, enum metrics_type type,
	    enum metrics_result result, uint64_t bytes, uint64_t usec);

void	metrics_scan_file(enum metrics_scan what);
void	metrics_scan_pass(double seconds);
void	metrics_stale(void);	/* a scanned file changed under us */
void	metrics_set_ready(int ready);
void	metrics_set_offline(int offline);
/* The background verifier's pace, bytes a second (0: off). */
void	metrics_set_verify_rate(uint64_t bytes_per_s);

enum metrics_api {		/* the "api" label of symbolization */
	METRICS_API_BUILDID,	/* POST /buildid/ID/symbolize */
	METRICS_API_BATCH,	/* POST /symbolize */
	METRICS_API_TECKEN,	/* POST /symbolicate/v5 */
	METRICS_API_PPROF,	/* POST /symbolize/pprof: its locations */
	METRICS_API_OTLP,	/* POST /symbolize/otlp: its locations */
	METRICS_API_N
};

/* A symbolization request read whole, asking n addresses (Tecken:
 * frames); one refused for its body is not counted. */
void	metrics_symbolize(enum metrics_api api, uint64_t n);

/* The counts of metrics_symbolize(), for the status page. */
void	metrics_symbolize_get(uint64_t requests[METRICS_API_N],
	    uint64_t addresses[METRICS_API_N]);

enum metrics_bundle {		/* the "result" label of source bundles */
	METRICS_BUNDLE_STORED,	/* stored, or replaced another */
	METRICS_BUNDLE_SAME,	/* these very members were stored already */
	METRICS_BUNDLE_REFUSED,	/* hostile, corrupt, too big, no debuginfo */
	METRICS_BUNDLE_N
};

/* A source bundle upload ended in res; kept and dropped: its members
 * the DWARF names and does not, bytes: the bundle kept. */
void	metrics_bundle(enum metrics_bundle res, uint64_t kept,
	    uint64_t dropped, uint64_t bytes);
/* n sources put in the store from a bundle (bundle_expand()). */
void	metrics_bundle_expanded(uint64_t n);

#define METRICS_MINUTES	60

/*
 * Hits (a file or section served) and misses (404 or a reset) of /buildid/
 * requests in each of the last METRICS_MINUTES minutes up to now (wall
 * seconds), oldest first.
 */
void	metrics_history(int64_t now, uint64_t hits[METRICS_MINUTES],
	    uint64_t misses[METRICS_MINUTES]);

/*
 * Write the exposition text to fp.
 * @param cs  store statistics to include, or NULL.
 */
void	metrics_render(FILE *fp, const struct cache_stats *cs);

#endif

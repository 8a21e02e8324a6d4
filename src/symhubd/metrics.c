/*
 * metrics: relaxed atomic counters; a scrape reads them without locks, so
 * related counters may be a request apart, which Prometheus tolerates.
 */
#include <stdatomic.h>
#include <string.h>

#include "base/clock.h"
#include "base/counter.h"
#include "arena.h"
#include "metrics.h"

static const int codes[] = { 200, 206, 302, 304, 400, 404, 405, 406, 413,
    416, 500, 503 };
#define NCODES	(sizeof(codes) / sizeof(codes[0]))

static const char *const tnames[METRICS_T_N] = {
	"buildid", "metrics", "root", "other", "metadata", "symbolize",
	"profiler"
};
static const char *const rnames[METRICS_R_N] = {
	"file", "section", "negative", "notfound", "error", "transient",
	"other"
};
static const char *const anames[METRICS_API_N] = {
	"buildid", "batch", "tecken", "pprof", "otlp"
};
static const char *const bnames[METRICS_BUNDLE_N] = {
	"stored", "same", "refused"
};
static const char *const snames[METRICS_SCAN_N] = {
	"indexed", "unchanged", "skipped", "forgotten"
};
static const char *const pnames[METRICS_PKG_N] = {
	"seek", "sequential"
};

/* Buckets of the response duration histogram, in microseconds. */
static const uint64_t lbounds[] = { 100, 250, 500, 1000, 2500, 5000, 10000,
    50000, 250000, 1000000 };
#define NLB	(sizeof(lbounds) / sizeof(lbounds[0]))

static struct {
	atomic_uint_fast64_t	count[NCODES + 1][METRICS_T_N];
	atomic_uint_fast64_t	bytes[NCODES + 1][METRICS_T_N];
	atomic_uint_fast64_t	result[METRICS_R_N];
	atomic_uint_fast64_t	lat[NLB + 1];
	atomic_uint_fast64_t	lat_sum_us;
	atomic_uint_fast64_t	scan[METRICS_SCAN_N];
	atomic_uint_fast64_t	pkg[METRICS_PKG_N];
	atomic_uint_fast64_t	pkg_unpacked;
	atomic_uint_fast64_t	passes;
	atomic_uint_fast64_t	last_pass_us;
	atomic_uint_fast64_t	stale;
	atomic_int		ready;
	atomic_int		offline;
	atomic_uint_fast64_t	verify_rate;
	atomic_uint_fast64_t	sym_requests[METRICS_API_N];
	atomic_uint_fast64_t	sym_addresses[METRICS_API_N];
	atomic_uint_fast64_t	bundles[METRICS_BUNDLE_N];
	atomic_uint_fast64_t	bundle_kept, bundle_dropped, bundle_bytes;
	atomic_uint_fast64_t	bundle_expanded;
} m;

/*
 * Hits and misses of /buildid/ requests per minute, for the status page's
 * charts: slot minute % METRICS_MINUTES holds that minute's counts.  The
 * first request of a minute claims its slot and zeroes it; a count that
 * races with the claim may be lost, which a chart can bear.
 */
static struct {
	atomic_int_fast64_t	minute[METRICS_MINUTES];
	atomic_uint_fast64_t	hits[METRICS_MINUTES];
	atomic_uint_fast64_t	misses[METRICS_MINUTES];
} hist;


static void
hist_count(int hit)
{
	int_fast64_t	now = clock_wall_s() / 60, was;
	size_t		i = (size_t)(now % METRICS_MINUTES);

	was = GET(hist.minute[i]);
	if (was != now && atomic_compare_exchange_strong(&hist.minute[i],
	    &was, now)) {
		atomic_store(&hist.hits[i], 0);
		atomic_store(&hist.misses[i], 0);
	}
	if (hit)
		INC(hist.hits[i]);
	else
		INC(hist.misses[i]);
}

void
metrics_history(int64_t now, uint64_t hits[METRICS_MINUTES],
    uint64_t misses[METRICS_MINUTES])
{
	int64_t	minute;
	size_t	k, i;

	for (k = 0; k < METRICS_MINUTES; k++) {
		minute = now / 60 - (int64_t)(METRICS_MINUTES - 1 - k);
		i = (size_t)(minute % METRICS_MINUTES);
		if (minute >= 0 && GET(hist.minute[i]) == minute) {
			hits[k] = GET(hist.hits[i]);
			misses[k] = GET(hist.misses[i]);
		} else
			hits[k] = misses[k] = 0;
	}
}

void
metrics_response(int code, enum metrics_type type, enum metrics_result result,
    uint64_t bytes, uint64_t usec)
{
	size_t ci, li;

	for (ci = 0; ci < NCODES && codes[ci] != code; ci++)
		;
	INC(m.count[ci][type]);
	ADD(m.bytes[ci][type], bytes);
	INC(m.result[result]);
	for (li = 0; li < NLB && usec > lbounds[li]; li++)
		;
	INC(m.lat[li]);
	ADD(m.lat_sum_us, usec);
	if (type == METRICS_T_BUILDID && (result == METRICS_R_FILE ||
	    result == METRICS_R_SECTION))
		hist_count(1);
	else if (type == METRICS_T_BUILDID && (result == METRICS_R_NEGATIVE ||
	    result == METRICS_R_NOTFOUND || result == METRICS_R_TRANSIENT))
		hist_count(0);
}

void
metrics_scan_file(enum metrics_scan what)
{
	INC(m.scan[what]);
}

void
metrics_package_member(enum metrics_pkg how, uint64_t unpacked)
{
	INC(m.pkg[how]);
	atomic_fetch_add(&m.pkg_unpacked, unpacked);
}

void
metrics_scan_pass(double seconds)
{
	atomic_store(&m.last_pass_us, (uint64_t)(seconds * 1e6));
	INC(m.passes);
}

void
metrics_symbolize(enum metrics_api api, uint64_t n)
{
	INC(m.sym_requests[api]);
	ADD(m.sym_addresses[api], n);
}

void
metrics_symbolize_get(uint64_t requests[METRICS_API_N],
    uint64_t addresses[METRICS_API_N])
{
	size_t i;

	for (i = 0; i < METRICS_API_N; i++) {
		requests[i] = GET(m.sym_requests[i]);
		addresses[i] = GET(m.sym_addresses[i]);
	}
}

void
metrics_stale(void)
{
	INC(m.stale);
}

void
metrics_bundle(enum metrics_bundle res, uint64_t kept, uint64_t dropped,
    uint64_t bytes)
{
	INC(m.bundles[res]);
	atomic_fetch_add(&m.bundle_kept, kept);
	atomic_fetch_add(&m.bundle_dropped, dropped);
	atomic_fetch_add(&m.bundle_bytes, bytes);
}

void
metrics_bundle_expanded(uint64_t n)
{
	atomic_fetch_add(&m.bundle_expanded, n);
}

void
metrics_set_offline(int offline)
{
	atomic_store(&m.offline, offline);
}

void
metrics_set_verify_rate(uint64_t bytes_per_s)
{
	atomic_store(&m.verify_rate, bytes_per_s);
}

void
metrics_set_ready(int ready)
{
	atomic_store(&m.ready, ready);
}

void
metrics_render(FILE *fp, const struct cache_stats *cs)
{
	uint64_t	cum = 0, refused;
	size_t		i, j, held;

	fprintf(fp, "# TYPE ready gauge\nready %d\n", atomic_load(&m.ready));
	fprintf(fp, "# HELP symhub_offline 1: --offline, no upstream is "
	    "asked\n# TYPE symhub_offline gauge\nsymhub_offline %d\n",
	    atomic_load(&m.offline));
	fprintf(fp, "# HELP symhub_profile_kept_bytes large buffers of "
	    "pprof and OTLP profiles kept mapped for the next one\n"
	    "# TYPE symhub_profile_kept_bytes gauge\n"
	    "symhub_profile_kept_bytes %zu\n", arena_big_kept());
	arena_pool_stats(&held, &refused);
	fprintf(fp, "# HELP symhub_profile_bytes bytes pprof and OTLP "
	    "profiles hold now (--profile-memory-max)\n"
	    "# TYPE symhub_profile_bytes gauge\n"
	    "symhub_profile_bytes %zu\n"
	    "# HELP symhub_profile_busy_total buffers refused to a profile "
	    "being read past --profile-memory-max (answered 503)\n"
	    "# TYPE symhub_profile_busy_total counter\n"
	    "symhub_profile_busy_total %llu\n", held,
	    (unsigned long long)refused);

	fprintf(fp, "# TYPE http_responses_total counter\n");
	for (i = 0; i < METRICS_R_N; i++)
		fprintf(fp, "http_responses_total{result=\"%s\"} %llu\n",
		    rnames[i], (unsigned long long)GET(m.result[i]));

	fprintf(fp, "# TYPE http_responses_transfer_bytes_count counter\n");
	for (i = 0; i <= NCODES; i++)
		for (j = 0; j < METRICS_T_N; j++) {
			uint64_t n = GET(m.count[i][j]);

			if (n == 0)
				continue;
			if (i < NCODES)
				fprintf(fp, "http_responses_transfer_bytes_count"
				    "{code=\"%d\",type=\"%s\"} %llu\n"
				    "http_responses_transfer_bytes_sum"
				    "{code=\"%d\",type=\"%s\"} %llu\n",
				    codes[i], tnames[j], (unsigned long long)n,
				    codes[i], tnames[j],
				    (unsigned long long)GET(m.bytes[i][j]));
			else
				fprintf(fp, "http_responses_transfer_bytes_count"
				    "{code=\"other\",type=\"%s\"} %llu\n"
				    "http_responses_transfer_bytes_sum"
				    "{code=\"other\",type=\"%s\"} %llu\n",
				    tnames[j], (unsigned long long)n,
				    tnames[j],
				    (unsigned long long)GET(m.bytes[i][j]));
		}

	fprintf(fp, "# TYPE symhub_http_duration_seconds histogram\n");
	for (i = 0; i <= NLB; i++) {
		cum += GET(m.lat[i]);
		if (i < NLB)
			fprintf(fp, "symhub_http_duration_seconds_bucket"
			    "{le=\"%g\"} %llu\n", (double)lbounds[i] / 1e6,
			    (unsigned long long)cum);
		else
			fprintf(fp, "symhub_http_duration_seconds_bucket"
			    "{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
	}
	fprintf(fp, "symhub_http_duration_seconds_sum %.6f\n"
	    "symhub_http_duration_seconds_count %llu\n",
	    (double)GET(m.lat_sum_us) / 1e6, (unsigned long long)cum);

	fprintf(fp, "# HELP symhub_symbolize_requests_total Symbolization "
	    "requests read whole, by API (buildid: POST /buildid/ID/symbolize, "
	    "batch: POST /symbolize, tecken: /symbolicate/v5)\n"
	    "# TYPE symhub_symbolize_requests_total counter\n");
	for (i = 0; i < METRICS_API_N; i++)
		fprintf(fp, "symhub_symbolize_requests_total{api=\"%s\"} "
		    "%llu\n", anames[i],
		    (unsigned long long)GET(m.sym_requests[i]));
	fprintf(fp, "# HELP symhub_symbolize_addresses_total Addresses "
	    "(Tecken: frames) those requests asked\n"
	    "# TYPE symhub_symbolize_addresses_total counter\n");
	for (i = 0; i < METRICS_API_N; i++)
		fprintf(fp, "symhub_symbolize_addresses_total{api=\"%s\"} "
		    "%llu\n", anames[i],
		    (unsigned long long)GET(m.sym_addresses[i]));

	fprintf(fp, "# HELP symhub_source_bundles_total Source bundle uploads "
	    "(PUT /buildid/ID/sources), by result\n"
	    "# TYPE symhub_source_bundles_total counter\n");
	for (i = 0; i < METRICS_BUNDLE_N; i++)
		fprintf(fp, "symhub_source_bundles_total{result=\"%s\"} %llu\n",
		    bnames[i], (unsigned long long)GET(m.bundles[i]));
	fprintf(fp, "# HELP symhub_source_bundle_members_total Members of "
	    "bundles kept (the DWARF names them) and dropped\n"
	    "# TYPE symhub_source_bundle_members_total counter\n"
	    "symhub_source_bundle_members_total{result=\"kept\"} %llu\n"
	    "symhub_source_bundle_members_total{result=\"dropped\"} %llu\n"
	    "# HELP symhub_source_bundle_bytes_total Bytes of the bundles "
	    "stored (packed)\n"
	    "# TYPE symhub_source_bundle_bytes_total counter\n"
	    "symhub_source_bundle_bytes_total %llu\n"
	    "# HELP symhub_source_bundle_expanded_total Sources put in the "
	    "store from bundles\n"
	    "# TYPE symhub_source_bundle_expanded_total counter\n"
	    "symhub_source_bundle_expanded_total %llu\n",
	    (unsigned long long)GET(m.bundle_kept),
	    (unsigned long long)GET(m.bundle_dropped),
	    (unsigned long long)GET(m.bundle_bytes),
	    (unsigned long long)GET(m.bundle_expanded));

	fprintf(fp, "# TYPE symhub_scan_files_total counter\n");
	for (i = 0; i < METRICS_SCAN_N; i++)
		fprintf(fp, "symhub_scan_files_total{result=\"%s\"} %llu\n",
		    snames[i], (unsigned long long)GET(m.scan[i]));
	fprintf(fp, "# HELP symhub_package_members_total members extracted "
	    "from packages, by how they were read\n"
	    "# TYPE symhub_package_members_total counter\n");
	for (i = 0; i < METRICS_PKG_N; i++)
		fprintf(fp, "symhub_package_members_total{read=\"%s\"} %llu\n",
		    pnames[i], (unsigned long long)GET(m.pkg[i]));
	fprintf(fp, "# HELP symhub_package_seek_unpacked_bytes_total bytes "
	    "decompressed to extract members by seeking to their xz block\n"
	    "# TYPE symhub_package_seek_unpacked_bytes_total counter\n"
	    "symhub_package_seek_unpacked_bytes_total %llu\n",
	    (unsigned long long)GET(m.pkg_unpacked));
	fprintf(fp, "# TYPE symhub_scan_passes_total counter\n"
	    "symhub_scan_passes_total %llu\n"
	    "# TYPE symhub_scan_last_pass_seconds gauge\n"
	    "symhub_scan_last_pass_seconds %.6f\n"
	    "# TYPE symhub_stale_files_total counter\n"
	    "symhub_stale_files_total %llu\n",
	    (unsigned long long)GET(m.passes),
	    (double)GET(m.last_pass_us) / 1e6,
	    (unsigned long long)GET(m.stale));

	if (cs == NULL)
		return;
	fprintf(fp, "# TYPE symhub_cache_bytes gauge\nsymhub_cache_bytes %llu\n"
	    "# TYPE symhub_cache_blobs gauge\nsymhub_cache_blobs %llu\n"
	    "# TYPE symhub_cache_entries gauge\nsymhub_cache_entries %llu\n"
	    "# TYPE symhub_cache_negative_entries gauge\n"
	    "symhub_cache_negative_entries %llu\n"
	    "# TYPE symhub_cache_evictions_total counter\n"
	    "symhub_cache_evictions_total %llu\n"
	    "# TYPE symhub_cache_check_dropped_total counter\n"
	    "symhub_cache_check_dropped_total %llu\n"
	    "# TYPE symhub_cache_check_removed_total counter\n"
	    "symhub_cache_check_removed_total %llu\n"
	    "# TYPE symhub_cache_check_quarantined_total counter\n"
	    "symhub_cache_check_quarantined_total %llu\n"
	    "# TYPE symhub_cache_check_restored_total counter\n"
	    "symhub_cache_check_restored_total %llu\n"
	    "# TYPE symhub_cache_check_resorted_total counter\n"
	    "symhub_cache_check_resorted_total %llu\n"
	    "# TYPE symhub_cache_opened_clean gauge\n"
	    "symhub_cache_opened_clean %llu\n"
	    "# TYPE symhub_cache_verified_total counter\n"
	    "symhub_cache_verified_total %llu\n"
	    "# TYPE symhub_cache_verified_bytes_total counter\n"
	    "symhub_cache_verified_bytes_total %llu\n"
	    "# TYPE symhub_cache_verify_passes_total counter\n"
	    "symhub_cache_verify_passes_total %llu\n"
	    "# TYPE symhub_cache_verify_last_pass_seconds gauge\n"
	    "symhub_cache_verify_last_pass_seconds %llu\n"
	    "# TYPE symhub_cache_verify_last_pass_end_seconds gauge\n"
	    "symhub_cache_verify_last_pass_end_seconds %lld\n"
	    "# HELP symhub_cache_verify_rate_bytes the background "
	    "verifier's pace, bytes a second\n"
	    "# TYPE symhub_cache_verify_rate_bytes gauge\n"
	    "symhub_cache_verify_rate_bytes %llu\n"
	    "# HELP symhub_cache_first_verified_total blobs hashed when "
	    "first read after the start\n"
	    "# TYPE symhub_cache_first_verified_total counter\n"
	    "symhub_cache_first_verified_total %llu\n"
	    "# TYPE symhub_cache_first_failed_total counter\n"
	    "symhub_cache_first_failed_total %llu\n"
	    "# TYPE symhub_cache_verify_failed_total counter\n"
	    "symhub_cache_verify_failed_total %llu\n"
	    "# TYPE symhub_cache_quarantine_deleted_total counter\n"
	    "symhub_cache_quarantine_deleted_total %llu\n"
	    "# TYPE symhub_cache_mapsize_bytes gauge\n"
	    "symhub_cache_mapsize_bytes %llu\n",
	    (unsigned long long)cs->bytes, (unsigned long long)cs->blobs,
	    (unsigned long long)cs->records,
	    (unsigned long long)cs->negatives,
	    (unsigned long long)cs->evictions,
	    (unsigned long long)cs->check_dropped,
	    (unsigned long long)cs->check_removed,
	    (unsigned long long)cs->check_quarantined,
	    (unsigned long long)cs->check_restored,
	    (unsigned long long)cs->check_resorted,
	    (unsigned long long)cs->opened_clean,
	    (unsigned long long)cs->verified,
	    (unsigned long long)cs->verified_bytes,
	    (unsigned long long)cs->verify_passes,
	    (unsigned long long)cs->verify_last_pass,
	    (long long)cs->verify_last_end,
	    (unsigned long long)GET(m.verify_rate),
	    (unsigned long long)cs->first_verified,
	    (unsigned long long)cs->first_failed,
	    (unsigned long long)cs->verify_failed,
	    (unsigned long long)cs->quarantine_deleted,
	    (unsigned long long)cs->mapsize);
}

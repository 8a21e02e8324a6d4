/*
 * route_status: GET / and /status (the status page: the store, an hour of
 * hits and misses, the upstreams, the last misses, uploads and
 * conversions; plain HTML and SVG, no script), or what --home-html and
 * --home-redirect put at /; and GET /metrics (Prometheus text: the
 * process's counters, the store's, the fetch engine's, the converter's
 * and the front's own).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "log.h"
#include "recent.h"
#include "route.h"

/* HTML-escape s onto fp. */
static void
esc(FILE *fp, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		case '\'': fputs("&#39;", fp); break;
		default: fputc(*s, fp); break;
		}
	}
}

static void
utc(FILE *fp, int64_t t)
{
	char		buf[32];
	struct tm	tm;
	time_t		tt = (time_t)t;

	gmtime_r(&tt, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	fputs(buf, fp);
}

/* "1 hit", "2 hits": n and its noun, the plural an s. */
static void
count(FILE *fp, uint64_t n, const char *noun)
{
	fprintf(fp, "%" PRIu64 " %s%s", n, noun, n == 1 ? "" : "s");
}

static void
bytes(FILE *fp, uint64_t n)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double	v = (double)n;
	size_t	u = 0;

	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	fprintf(fp, u == 0 ? "%.0f %s" : "%.1f %s", v, unit[u]);
}

/*
 * Hits (green) and misses (red) of each of the last 60 minutes, stacked
 * bars, oldest on the left; each bar's <title> gives its figures.
 */
static void
chart(FILE *fp, int64_t now)
{
	uint64_t	hits[METRICS_MINUTES], misses[METRICS_MINUTES];
	uint64_t	max = 1, th = 0, tm = 0;
	size_t		k;
	double		hh, mh;

	metrics_history(now, hits, misses);
	for (k = 0; k < METRICS_MINUTES; k++) {
		if (hits[k] + misses[k] > max)
			max = hits[k] + misses[k];
		th += hits[k];
		tm += misses[k];
	}
	fprintf(fp, "<svg id=\"chart\" role=\"img\" width=\"%d\" "
	    "height=\"110\" viewBox=\"0 0 %d 110\" "
	    "xmlns=\"http://www.w3.org/2000/svg\">\n"
	    "<title>hits and misses a minute, the last hour</title>\n",
	    METRICS_MINUTES * 10 + 40, METRICS_MINUTES * 10 + 40);
	fprintf(fp, "<text x=\"0\" y=\"10\" font-size=\"10\">%" PRIu64
	    "</text><text x=\"0\" y=\"90\" font-size=\"10\">0</text>\n",
	    max);
	for (k = 0; k < METRICS_MINUTES; k++) {
		hh = 80.0 * (double)hits[k] / (double)max;
		mh = 80.0 * (double)misses[k] / (double)max;
		fprintf(fp, "<g><title>%zu min ago: ",
		    METRICS_MINUTES - 1 - k);
		count(fp, hits[k], "hit");
		fputs(", ", fp);
		count(fp, misses[k], "miss");
		fputs("</title>", fp);
		if (hits[k] > 0)
			fprintf(fp, "<rect class=\"hit\" x=\"%zu\" y=\"%.1f\" "
			    "width=\"8\" height=\"%.1f\"/>", 40 + k * 10,
			    90.0 - hh, hh);
		if (misses[k] > 0)
			fprintf(fp, "<rect class=\"miss\" x=\"%zu\" "
			    "y=\"%.1f\" width=\"8\" height=\"%.1f\"/>",
			    40 + k * 10, 90.0 - hh - mh, mh);
		fputs("</g>\n", fp);
	}
	fprintf(fp, "<line x1=\"38\" y1=\"90.5\" x2=\"%d\" y2=\"90.5\" "
	    "stroke=\"#888\"/>\n<text x=\"40\" y=\"104\" font-size=\"10\">"
	    "60 min ago</text><text x=\"%d\" y=\"104\" font-size=\"10\" "
	    "text-anchor=\"end\">now</text>\n</svg>\n",
	    METRICS_MINUTES * 10 + 40, METRICS_MINUTES * 10 + 38);
	fprintf(fp, "<p>In the last hour: <span id=\"hour-hits\">%" PRIu64
	    "</span> hit%s, <span id=\"hour-misses\">%" PRIu64 "</span> "
	    "miss%s%s", th, th == 1 ? "" : "s", tm, tm == 1 ? "" : "es",
	    th + tm > 0 ? ", " : ".</p>\n");
	if (th + tm > 0)
		fprintf(fp, "<span id=\"hour-hit-rate\">%.1f</span> %% hits."
		    "</p>\n", 100.0 * (double)th / (double)(th + tm));
}

static void
recent_table(FILE *fp, enum recent_kind k, const char *id,
    const char *title, const char *none)
{
	struct recent_event	ev[RECENT_MAX];
	size_t			n, i;

	n = recent_get(k, ev, RECENT_MAX);
	fprintf(fp, "<h2>%s</h2>\n", title);
	if (n == 0) {
		fprintf(fp, "<p id=\"%s\">%s</p>\n", id, none);
		return;
	}
	fprintf(fp, "<table id=\"%s\"><tr><th>UTC</th><th>build-id</th>"
	    "<th>type</th><th>answer</th></tr>\n", id);
	for (i = 0; i < n; i++) {
		fputs("<tr><td>", fp);
		utc(fp, ev[i].t);
		fputs("</td><td><code>", fp);
		esc(fp, ev[i].id);
		fputs("</code></td><td>", fp);
		esc(fp, ev[i].what);
		fputs("</td><td>", fp);
		esc(fp, ev[i].detail);
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

static void
upstreams(FILE *fp, struct http *h)
{
	static const char *const bstate[] = { "closed", "open", "half-open" };
	struct fetch_upstream	u;
	size_t			i, n = h->f != NULL ? fetch_upstreams(h->f) : 0;

	fputs("<h2>Upstreams</h2>\n", fp);
	if (n == 0) {
		fprintf(fp, "<p id=\"upstreams\">%s</p>\n",
		    h->cfg->offline ? "None: offline (--offline)." :
		    "None: a miss is a miss.");
		return;
	}
	fputs("<table id=\"upstreams\"><tr><th>name</th><th>URL</th>"
	    "<th>breaker</th><th class=\"num\">hits</th>"
	    "<th class=\"num\">not found</th><th class=\"num\">failures</th>"
	    "<th class=\"num\">received</th>"
	    "<th class=\"num\">first byte</th></tr>\n", fp);
	for (i = 0; i < n; i++) {
		if (fetch_upstream(h->f, i, &u) != 0)
			break;
		fputs("<tr><td>", fp);
		esc(fp, u.name);
		fputs("</td><td><code>", fp);
		esc(fp, u.url);
		fprintf(fp, "</code></td><td class=\"%s\">%s</td>"
		    "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">%"
		    PRIu64 "</td><td class=\"num\">%" PRIu64 "</td>"
		    "<td class=\"num\">", u.breaker == 0 ? "ok" : "bad",
		    bstate[u.breaker >= 0 && u.breaker <= 2 ? u.breaker : 1],
		    u.hits, u.notfound, u.failures);
		bytes(fp, u.bytes);
		fprintf(fp, "</td><td class=\"num\">%.1f ms</td></tr>\n",
		    u.first_byte_ms);
	}
	fputs("</table>\n", fp);
}

/* The scan directories: what the last pass found in each. */
static void
scan_dirs_table(FILE *fp, struct http *h)
{
	struct scan_dir_info	d[64];
	size_t			n, i;

	if (h->s == NULL)
		return;
	n = scan_dirs(h->s, d, sizeof(d) / sizeof(d[0]));
	fputs("<h2>Scan directories</h2>\n<table id=\"scan-dirs\"><tr>"
	    "<th>directory</th><th class=\"num\">files</th>"
	    "<th class=\"num\">new or changed</th><th>last pass (UTC)</th>"
	    "<th>state</th></tr>\n", fp);
	for (i = 0; i < n && i < sizeof(d) / sizeof(d[0]); i++) {
		fputs("<tr><td><code>", fp);
		esc(fp, d[i].path);
		fprintf(fp, "</code></td><td class=\"num\">%" PRIu64 "</td>"
		    "<td class=\"num\">%" PRIu64 "</td><td>", d[i].files,
		    d[i].changed);
		if (d[i].last > 0)
			utc(fp, d[i].last);
		else
			fputs("none yet", fp);
		fprintf(fp, "</td><td class=\"%s\">", d[i].err ? "bad" : "ok");
		esc(fp, d[i].err ? strerror(d[i].err) : "ok");
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n", fp);
	if (n > i)
		fprintf(fp, "<p>and %zu more.</p>\n", n - i);
}

/* Symbolization traffic since the start, from the metrics' counters. */
static void
symbolize_table(FILE *fp, struct http *h)
{
	static const char *const api[METRICS_API_N] = {
		"<code>POST /buildid/ID/symbolize</code>",
		"<code>POST /symbolize</code> (batches)",
		"<code>/symbolicate/v5</code> (Tecken)",
		"<code>POST /symbolize/pprof</code> (locations)",
		"<code>POST /symbolize/otlp</code> (locations)",
	};
	uint64_t	req[METRICS_API_N], addr[METRICS_API_N];
	uint64_t	nb, late, mods, ready;
	size_t		i;

	metrics_symbolize_get(req, addr);
	batches_stats(h->batches, &nb, &late, &mods, &ready);
	fputs("<h2>Symbolization since the start</h2>\n<table "
	    "id=\"symbolize\"><tr><th>API</th><th class=\"num\">requests"
	    "</th><th class=\"num\">addresses</th></tr>\n", fp);
	for (i = 0; i < METRICS_API_N; i++)
		fprintf(fp, "<tr><td>%s</td><td class=\"num\">%" PRIu64
		    "</td><td class=\"num\">%" PRIu64 "</td></tr>\n", api[i],
		    req[i], addr[i]);
	fputs("</table>\n<p id=\"symbolize-modules\">Batches and Tecken "
	    "requests named ", fp);
	count(fp, mods, "module");
	fprintf(fp, ", %" PRIu64 " of them ready in time; the deadline "
	    "passed first in %" PRIu64 ".</p>\n", ready, late);
}

static const char style[] =
"body{font:15px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:62em;"
"padding:0 1em;color:#222}h1{font-size:1.4em}h2{font-size:1.1em;"
"margin-top:1.6em}table{border-collapse:collapse}td,th{padding:.15em .7em;"
"text-align:left;border-bottom:1px solid #e4e4e4}.num{text-align:right}"
"code{font-size:.9em}.hit{fill:#3a7}.miss{fill:#d54}.ok{color:#3a7}"
".bad{color:#d54;font-weight:bold}svg{display:block}";

/* The status page: plain HTML, no script. */
static enum MHD_Result
status_page(struct http *h, struct req *r)
{
	struct cache_stats	 st;
	FILE			*fp;
	char			*buf = NULL;
	size_t			 len = 0;
	int64_t			 now = clock_wall_s();
	int			 have;

	have = cache_stats(h->c, &st) == 0;
	if ((fp = open_memstream(&buf, &len)) == NULL)
		return MHD_NO;
	fprintf(fp, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\"><title>symhubd status</title>"
	    "<meta name=\"viewport\" content=\"width=device-width\">"
	    "<link rel=\"icon\" href=\"data:,\"><style>%s</style></head>"
	    "<body>\n<h1>symhubd " PACKAGE_VERSION "</h1>\n<p>A "
	    "debuginfod-compatible symbol hub: point <code>DEBUGINFOD_URLS"
	    "</code> here.  Up since ", style);
	utc(fp, h->started);
	fputs(" UTC; now ", fp);
	utc(fp, now);
	fputs(" UTC.  <a href=\"/metrics\">/metrics</a></p>\n", fp);

	fputs("<h2>Store</h2>\n<table id=\"store\">\n<tr><td>where</td>"
	    "<td><code>", fp);
	esc(fp, h->cfg->store);
	fputs("</code></td></tr>\n", fp);
	if (have) {
		fputs("<tr><td>blob bytes</td><td id=\"store-bytes\">", fp);
		bytes(fp, st.bytes);
		fputs("</td></tr>\n<tr><td>budget</td><td>", fp);
		if (h->cfg->cache_max > 0) {
			bytes(fp, h->cfg->cache_max);
			fprintf(fp, ", <span id=\"store-fill\">%.1f</span> %% "
			    "full <svg width=\"200\" height=\"12\" "
			    "viewBox=\"0 0 200 12\" role=\"img\"><title>fill"
			    "</title><rect width=\"200\" height=\"12\" "
			    "fill=\"#eee\"/><rect class=\"hit\" width=\"%.0f\" "
			    "height=\"12\"/></svg>", 100.0 * (double)st.bytes /
			    (double)h->cfg->cache_max, st.bytes >=
			    h->cfg->cache_max ? 200.0 : 200.0 *
			    (double)st.bytes / (double)h->cfg->cache_max);
		} else
			fputs("none (--cache-max 0)", fp);
		fprintf(fp, "</td></tr>\n<tr><td>records</td>"
		    "<td id=\"store-records\">%" PRIu64 "</td></tr>\n"
		    "<tr><td>blobs</td><td>%" PRIu64 "</td></tr>\n"
		    "<tr><td>negative entries</td><td>%" PRIu64 "</td></tr>\n"
		    "<tr><td>evicted since start</td><td>%" PRIu64
		    "</td></tr>\n", st.records, st.blobs, st.negatives,
		    st.evictions);
	} else
		fputs("<tr><td>state</td><td>cannot be read</td></tr>\n", fp);
	fputs("</table>\n<h2>Requests for files, the last hour</h2>\n", fp);
	chart(fp, now);
	scan_dirs_table(fp, h);
	upstreams(fp, h);
	symbolize_table(fp, h);
	recent_table(fp, RECENT_MISS, "misses", "Recent misses",
	    "No miss since the start.");
	recent_table(fp, RECENT_UPLOAD, "uploads", "Recent uploads",
	    "No upload since the start.");
	recent_table(fp, RECENT_CONVERSION, "conversions",
	    "Recent conversions to GSYM", "No conversion since the start.");
	fputs("</body></html>\n", fp);
	if (fclose(fp) != 0) {
		free(buf);
		return MHD_NO;
	}
	return reply_response(r, REPLY_OK, reply_buffer(buf, len,
	    "text/html; charset=utf-8"), len, "-");
}

/* --home-html: the operator's page, read now (so an edit shows at once);
 * at most 1 MiB. */
static enum MHD_Result
home_file(struct req *r, const char *path)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > (1 << 20) ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		log_warn("home-html %s", path);
		if (fd >= 0)
			close(fd);
		return reply_text(r, REPLY_INTERNAL, "cannot read the home page",
		    "home");
	}
	n = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (n < 0) {
		log_warn("home-html %s", path);
		free(buf);
		return reply_text(r, REPLY_INTERNAL, "cannot read the home page",
		    "home");
	}
	return reply_response(r, REPLY_OK, reply_buffer(buf, (size_t)n,
	    "text/html; charset=utf-8"), (uint64_t)n, "home");
}

enum MHD_Result
route_root(struct http *h, struct req *r)
{
	struct MHD_Response *resp;

	if (h->cfg->home_redirect != NULL) {
		resp = MHD_create_response_from_buffer(0, NULL,
		    MHD_RESPMEM_PERSISTENT);
		if (resp == NULL)
			return MHD_NO;
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION,
		    h->cfg->home_redirect);
		return reply_response(r, REPLY_FOUND, resp, 0, "redirect");
	}
	if (h->cfg->home_html != NULL)
		return home_file(r, h->cfg->home_html);
	return status_page(h, r);
}

enum MHD_Result
route_status_page(struct http *h, struct req *r)
{
	return status_page(h, r);
}

enum MHD_Result
route_metrics(struct http *h, struct req *r)
{
	struct cache_stats	 st;
	FILE			*fp;
	char			*buf = NULL;
	size_t			 len = 0;
	int			 have;

	have = cache_stats(h->c, &st) == 0;
	if ((fp = open_memstream(&buf, &len)) == NULL)
		return MHD_NO;
	metrics_render(fp, have ? &st : NULL);
	if (h->f != NULL)
		fetch_metrics(h->f, fp);
	bucket_metrics(h->bucket, fp);
	if (h->dv != NULL)
		derive_metrics(h->dv, fp);
	batches_metrics(h->batches, fp);
	meta_metrics(h->meta, fp);
	if (h->enc != NULL)
		encode_metrics(h->enc, fp);
	if (h->hot != NULL) {
		uint64_t n, bytes, hits, misses;

		hot_stats(h->hot, &n, &bytes, &hits, &misses);
		fprintf(fp, "# HELP symhub_hot_entries small files kept in "
		    "memory (--hot-cache)\n"
		    "# TYPE symhub_hot_entries gauge\n"
		    "symhub_hot_entries %" PRIu64 "\n"
		    "# TYPE symhub_hot_bytes gauge\n"
		    "symhub_hot_bytes %" PRIu64 "\n"
		    "# HELP symhub_hot_hits_total answers from memory\n"
		    "# TYPE symhub_hot_hits_total counter\n"
		    "symhub_hot_hits_total %" PRIu64 "\n"
		    "# TYPE symhub_hot_misses_total counter\n"
		    "symhub_hot_misses_total %" PRIu64 "\n",
		    n, bytes, hits, misses);
	}
	pthread_mutex_lock(&h->cmu);
	fprintf(fp, "# TYPE symhub_http_connections gauge\n"
	    "symhub_http_connections %u\n"
	    "# TYPE symhub_http_head_timeouts_total counter\n"
	    "symhub_http_head_timeouts_total %" PRIu64 "\n"
	    "# TYPE symhub_http_body_timeouts_total counter\n"
	    "symhub_http_body_timeouts_total %" PRIu64 "\n"
	    "# TYPE symhub_http_memory_trims_total counter\n"
	    "symhub_http_memory_trims_total %" PRIu64 "\n"
	    "# TYPE symhub_http_post_buffered_bytes gauge\n"
	    "symhub_http_post_buffered_bytes %" PRIu64 "\n", h->nconns,
	    h->head_timeouts, h->body_timeouts, h->trims,
	    __atomic_load_n(&h->buffered, __ATOMIC_RELAXED));
	pthread_mutex_unlock(&h->cmu);
	access_metrics(h, fp);
	fprintf(fp, "# HELP symhub_log_warnings_dropped_total warnings over "
	    "the rate limits, not written\n"
	    "# TYPE symhub_log_warnings_dropped_total counter\n"
	    "symhub_log_warnings_dropped_total %" PRIu64 "\n",
	    log_dropped_total());
	fclose(fp);
	return reply_response(r, REPLY_OK, reply_buffer(buf, len,
	    "text/plain; version=0.0.4"), len, "-");
}

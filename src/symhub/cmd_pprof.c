/*
 * cmd_pprof: `symhub pprof` and `symhub otlp` (cmd_pprof.h).  The profile
 * goes to the hub as it is, compressed or not: the hub reads both, checks
 * it and answers the profile symbolized (pprof: gzip-compressed; OTLP:
 * compressed as it came, by Accept-Encoding), or a one-line reason this
 * command prints.  OUT is written through a temporary file and renamed,
 * so that a failure never leaves half a profile behind.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/buf.h"
#include "base/fs.h"
#include "cli.h"
#include "cmd_pprof.h"

static const char pprof_help[] =
"usage: symhub pprof [--url URL] [--token-file FILE] [--deadline MS] IN -o OUT\n"
"Symbolize the pprof profile IN (gzip-compressed or not) through a hub's\n"
"POST /symbolize/pprof and write the answer, gzip-compressed, to OUT:\n"
"every location of a module the hub has symbols for gets its functions,\n"
"inline frames and lines; the rest passes through unchanged.\n"
"\n"
"  -o, --output OUT   where the symbolized profile goes (- for stdout)\n"
"      --url URL      the hub, e.g. http://hub:8002 (default: the first\n"
"                     of $DEBUGINFOD_URLS)\n"
"      --token-file FILE  a read token, from the first line of FILE, for a\n"
"                     hub with --read-auth (default: $SYMHUB_TOKEN)\n"
"      --deadline MS  how long the hub may fetch and convert missing\n"
"                     modules (default: its --symbolize-deadline)\n"
"  -h, --help         this text\n";

static const char otlp_help[] =
"usage: symhub otlp [--url URL] [--token-file FILE] [--deadline MS] IN -o OUT\n"
"Symbolize the OpenTelemetry profiles IN (a ProfilesData or an\n"
"ExportProfilesServiceRequest in protobuf, gzip-compressed or not) through\n"
"a hub's POST /symbolize/otlp and write the answer to OUT, compressed as\n"
"IN is: every location of a module the hub has symbols for gets its\n"
"functions, inline frames and lines; the rest passes through unchanged.\n"
"\n"
"  -o, --output OUT   where the symbolized profiles go (- for stdout)\n"
"      --url URL      the hub, e.g. http://hub:8002 (default: the first\n"
"                     of $DEBUGINFOD_URLS)\n"
"      --token-file FILE  a read token, from the first line of FILE, for a\n"
"                     hub with --read-auth (default: $SYMHUB_TOKEN)\n"
"      --deadline MS  how long the hub may fetch and convert missing\n"
"                     modules (default: its --symbolize-deadline)\n"
"  -h, --help         this text\n";

/* What differs between the two commands. */
struct flavour {
	const char	*name;		/* "symhub pprof" */
	const char	*help;
	const char	*route;		/* "/symbolize/pprof" */
	const char	*ctype;		/* Content-Type sent */
	const char	*agent;		/* User-Agent */
	int		 otlp;		/* Content-Encoding as IN is */
};

static const struct flavour pprof_flavour = {
	"symhub pprof", pprof_help, "/symbolize/pprof",
	"Content-Type: application/vnd.google.protobuf",
	"symhub-pprof/" VERSION, 0
};

static const struct flavour otlp_flavour = {
	"symhub otlp", otlp_help, "/symbolize/otlp",
	"Content-Type: application/x-protobuf", "symhub-otlp/" VERSION, 1
};

static size_t
sink(char *p, size_t size, size_t n, void *ctx)
{
	return buf_add(ctx, p, size * n) == 0 ? size * n : 0;
}

static int
read_file(const char *path, struct buf *b)
{
	char	 chunk[65536];
	ssize_t	 n;
	int	 fd, rc = 0;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (buf_add(b, chunk, (size_t)n) != 0) {
			rc = -ENOMEM;
			break;
		}
	}
	if (fd != STDIN_FILENO)
		close(fd);
	return rc;
}

static int
write_out(const char *path, const struct buf *b)
{
	char	tmp[4096];
	int	fd, rc;

	if (strcmp(path, "-") == 0)
		return fs_write_all(STDOUT_FILENO, b->p, b->len);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	if ((fd = mkstemp(tmp)) < 0)
		return -errno;
	if ((rc = fs_write_all(fd, b->p, b->len)) == 0 &&
	    fchmod(fd, 0644) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

static int
send_profile(int argc, char **argv, const struct flavour *fl)
{
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, 'U' },
		{ "output", required_argument, NULL, 'o' },
		{ "deadline", required_argument, NULL, 'D' },
		{ "token-file", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static char		 prog[32];
	struct buf		 in = { 0 }, out = { 0 };
	struct curl_slist	*hdrs = NULL;
	CURL			*easy = NULL;
	CURLcode		 res;
	const char		*url = NULL, *outpath = NULL, *deadline = NULL;
	const char		*tfile = NULL;
	char			*tok = NULL;
	char			 ebuf[2048], full[4096], cerr[CURL_ERROR_SIZE];
	long			 status = 0;
	size_t			 n;
	int			 ch, rc, gz, st = 1;

	snprintf(prog, sizeof(prog), "%s", fl->name);
	argv[0] = prog;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'U':
			url = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'F':
			tfile = optarg;
			break;
		case 'D':
			if (optarg[0] == '\0' || optarg[strspn(optarg,
			    "0123456789")] != '\0') {
				fprintf(stderr, "%s: --deadline is "
				    "a number of milliseconds\n", prog);
				return 2;
			}
			deadline = optarg;
			break;
		case 'h':
			fputs(fl->help, stdout);
			return 0;
		default:
			fputs(fl->help, stderr);
			return 2;
		}
	}
	if (optind + 1 != argc || outpath == NULL) {
		fputs(fl->help, stderr);
		return 2;
	}
	if (url == NULL && (url = cli_env_url(ebuf, sizeof(ebuf))) == NULL) {
		fprintf(stderr, "%s: no hub: give --url or set "
		    "DEBUGINFOD_URLS\n", prog);
		return 2;
	}
	n = strlen(url);
	while (n > 0 && url[n - 1] == '/')
		n--;
	if ((strncmp(url, "http://", 7) != 0 && strncmp(url, "https://",
	    8) != 0) || (size_t)snprintf(full, sizeof(full),
	    "%.*s%s%s%s", (int)n, url, fl->route, deadline ?
	    "?deadline=" : "", deadline ? deadline : "") >= sizeof(full)) {
		fprintf(stderr, "%s: %s: a hub is http:// or "
		    "https://\n", prog, url);
		return 2;
	}
	if ((rc = read_file(argv[optind], &in)) != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[optind],
		    strerror(-rc));
		goto out;
	}
	/* OTLP/HTTP says gzip in Content-Encoding; the answer is asked
	 * compressed as IN is */
	gz = fl->otlp && in.len >= 2 && in.p[0] == 0x1f && in.p[1] == 0x8b;
	if ((easy = curl_easy_init()) == NULL ||
	    (hdrs = curl_slist_append(NULL, fl->ctype)) == NULL ||
	    (gz && ((hdrs = curl_slist_append(hdrs, "Content-Encoding: "
	    "gzip")) == NULL || (hdrs = curl_slist_append(hdrs,
	    "Accept-Encoding: gzip")) == NULL))) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto out;
	}
	if ((st = cli_read_token(fl->name, tfile, &tok, &hdrs)) != 0)
		goto out;
	st = 1;
	cerr[0] = '\0';
	curl_easy_setopt(easy, CURLOPT_URL, full);
	curl_easy_setopt(easy, CURLOPT_POST, 1L);
	curl_easy_setopt(easy, CURLOPT_POSTFIELDS, in.len ? (char *)in.p : "");
	curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)in.len);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, &out);
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(easy, CURLOPT_USERAGENT, fl->agent);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	if ((res = curl_easy_perform(easy)) != CURLE_OK) {
		fprintf(stderr, "%s: %s: %s\n", prog, full, cerr[0] ?
		    cerr : curl_easy_strerror(res));
		goto out;
	}
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		/* the hub's one line of why */
		for (n = out.len > 512 ? 512 : out.len; n > 0 &&
		    out.p[n - 1] == '\n'; n--)
			;
		fprintf(stderr, "%s: %s: %ld %.*s\n", prog, full, status,
		    (int)n, out.p ? (char *)out.p : "");
		goto out;
	}
	if ((rc = write_out(outpath, &out)) != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, outpath,
		    strerror(-rc));
		goto out;
	}
	st = 0;
out:
	if (tok != NULL) {
		explicit_bzero(tok, strlen(tok));
		free(tok);
	}
	cli_headers_free(hdrs);
	curl_easy_cleanup(easy);
	buf_free(&in);
	buf_free(&out);
	return st;
}

int
cmd_pprof(int argc, char **argv)
{
	return send_profile(argc, argv, &pprof_flavour);
}

int
cmd_otlp(int argc, char **argv)
{
	return send_profile(argc, argv, &otlp_flavour);
}

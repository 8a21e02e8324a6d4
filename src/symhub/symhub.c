/*
 * symhub: the command-line tool: ids and quality markers of ELF files
 * (buildid, fileid, info), upload tokens (token new), and uploads to a
 * hub (upload, see client.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hex.h"
#include "cli.h"
#include "client.h"
#include "cmd_export.h"
#include "cmd_gsym.h"
#include "cmd_import.h"
#include "cmd_perf.h"
#include "cmd_pprof.h"
#include "cmd_prefetch.h"
#include "cmd_store.h"
#include "common/auth.h"
#include "common/elfinfo.h"
#include "common/webapi.h"

static int
usage(FILE *fp)
{
	fprintf(fp, "usage: symhub buildid FILE...\n"
	    "       symhub fileid FILE...\n"
	    "       symhub info FILE...\n"
	    "       symhub token new NAME [SCOPES]\n"
	    "       symhub gsym convert FILE [-o OUT]\n"
	    "       symhub gsym lookup GSYM [ADDR...]\n"
	    "       symhub gsym dump GSYM\n"
	    "       symhub store rebuild DIR\n"
	    "       symhub store verify DIR\n"
	    "       symhub upload --url URL [OPTION...] -e DEPLOYED "
	    "[-d SYMBOLS]\n"
	    "       symhub upload --url URL [OPTION...] PATH...\n"
	    "       symhub prefetch [--url URL] [OPTION...] ARG...\n"
	    "       symhub perf [--url URL] [OPTION...] [PERF.DATA]\n"
	    "       symhub pprof [--url URL] [OPTION...] IN -o OUT\n"
	    "       symhub otlp [--url URL] [OPTION...] IN -o OUT\n"
	    "       symhub export [OPTION...] STORE DIR\n"
	    "       symhub import [-q] DIR STORE\n"
	    "       symhub --version\n"
	    "symhub COMMAND --help: the options of gsym, upload, prefetch, perf,\n"
	    "pprof, otlp, export and import; man symhub for all\n");
	return fp == stdout ? 0 : 2;
}

static const char upload_help[] =
"usage: symhub upload --url URL [OPTION...] -e DEPLOYED [-d SYMBOLS]\n"
"       symhub upload --url URL [OPTION...] PATH...\n"
"Send executables and debug files to a symhub hub, each only when the hub\n"
"has nothing as good: every (build-id, kind) is asked for first (HEAD),\n"
"so a re-run sends nothing new and still succeeds.\n"
"\n"
"  -e, --executable FILE  the deployed (stripped) binary; its build-id keys\n"
"                         the upload and its FileID goes with both files;\n"
"                         sent as the executable\n"
"  -d, --debuginfo FILE   the file with its symbols (the unstripped binary\n"
"                         or objcopy --only-keep-debug output), with the\n"
"                         build-id of -e; sent as the debuginfo (default:\n"
"                         -e itself, when it has DWARF or a symbol table)\n"
"  PATH...                instead of -e/-d: files and directories (searched\n"
"                         recursively, symbolic links inside not followed);\n"
"                         each ELF file with a build-id is sent as the\n"
"                         executable if it has code and as the debuginfo if\n"
"                         it has DWARF or a symbol table; other files are\n"
"                         skipped; of files with the same build-id and kind\n"
"                         only the best is sent\n"
"      --url URL          the hub, e.g. http://hub:8002\n"
"      --token TOKEN      the upload token (seen by ps: prefer the next two)\n"
"      --token-file FILE  read the token from the first line of FILE\n"
"                         (default: $SYMHUB_TOKEN; --dry-run needs none)\n"
"  -s, --sources          also the source files each debuginfo's DWARF\n"
"                         names (line tables and units, headers too), read\n"
"                         here and sent as one bundle after it (PUT\n"
"                         /buildid/ID/sources, kind \"sources\"); a file\n"
"                         that cannot be read is listed (\"unread\"), and\n"
"                         no failure\n"
"      --private          each upload private to the token's tenant\n"
"                         (X-Symhub-Private: 1; symhubd(8), ACCESS), whatever\n"
"                         the token's scopes say\n"
"  -f, --force            send even when the hub's copy is as good or better,\n"
"                         without asking first (PUT ?force=1)\n"
"  -n, --dry-run          ask the hub and print what would be sent; send\n"
"                         nothing\n"
"  -j, --jobs N           transfers at once (default 4, 1 to 64)\n"
"  -q, --quiet            print only failures and the summary\n"
"  -h, --help             this text\n"
"\n"
"One line per file and kind, \"RESULT KIND BUILD-ID PATH [DETAIL]\":\n"
"  stored    the hub had nothing for the build-id and kind\n"
"  replaced  the hub had a worse copy (or --force)\n"
"  same      the hub had these very bytes\n"
"  unread    (--sources) a source file the DWARF names that cannot be\n"
"            read here: not sent, and listed again in the summary's count\n"
"  skipped   the hub has one as good (\"already there (QUALITY)\"), a\n"
"            duplicate, or nothing to send (not ELF, no build-id)\n"
"  kept      the hub answered 409: it keeps its copy, as good or better\n"
"  would     --dry-run: would be sent\n"
"  failed    on stderr: refused (401, 403), invalid (422), too large (413),\n"
"            store full (507), server or network error, unreadable file\n"
"then \"N stored, N replaced, N unchanged, N skipped, N failed\" (same is\n"
"unchanged, kept is skipped; with --dry-run \"N would be sent, N skipped,\n"
"N failed (dry run)\").  A progress bar for files over 1 MiB goes to\n"
"stderr when it is a terminal (not with -q).\n"
"\n"
"Exit status: 0 when nothing failed (skipped and kept are not failures);\n"
"1 when anything failed, or -e/-d cannot be used (unreadable, not ELF, no\n"
"build-id, build-ids differ), in which case nothing is sent; 2 for usage\n"
"errors (no URL, no token, bad options).\n";

static int
upload(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, 'U' },
		{ "token", required_argument, NULL, 'T' },
		{ "token-file", required_argument, NULL, 'F' },
		{ "executable", required_argument, NULL, 'e' },
		{ "debuginfo", required_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'f' },
		{ "sources", no_argument, NULL, 's' },
		{ "private", no_argument, NULL, 'P' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static char		 prog[] = "symhub upload";
	struct client_opts	 o;
	struct client_counts	 n;
	struct client		*c = NULL;
	const char		*exe = NULL, *dbg = NULL, *tfile = NULL;
	char			*tok = NULL, msg[1024];
	int			 ch, i, rc, st = 2;

	memset(&o, 0, sizeof(o));
	memset(&n, 0, sizeof(n));
	o.jobs = 4;
	o.out = stdout;
	o.err = stderr;
	argv[0] = prog;		/* for getopt's messages */
	optind = 1;
	while ((ch = getopt_long(argc, argv, "e:d:fsnj:qh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'U':
			o.url = optarg;
			break;
		case 'T':
			o.token = optarg;
			break;
		case 'F':
			tfile = optarg;
			break;
		case 'e':
			exe = optarg;
			break;
		case 'd':
			dbg = optarg;
			break;
		case 'f':
			o.force = 1;
			break;
		case 's':
			o.sources = 1;
			break;
		case 'P':
			o.private = 1;
			break;
		case 'n':
			o.dry_run = 1;
			break;
		case 'j':
			if (cli_jobs(optarg, &o.jobs) < 0)
				return 2;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'h':
			fputs(upload_help, stdout);
			return 0;
		default:
			goto usage;
		}
	}
	argc -= optind;
	argv += optind;
	if (o.url == NULL) {
		fprintf(stderr, "symhub: upload needs --url\n");
		goto usage;
	}
	if (dbg != NULL && exe == NULL) {
		fprintf(stderr, "symhub: -d needs -e (or give the file as a "
		    "PATH)\n");
		goto usage;
	}
	if ((exe != NULL) == (argc > 0)) {
		fprintf(stderr, "symhub: upload wants either -e [-d] or "
		    "PATHs\n");
		goto usage;
	}
	if (o.token != NULL && tfile != NULL) {
		fprintf(stderr, "symhub: --token or --token-file, not both\n");
		goto usage;
	}
	if (tfile != NULL) {
		if ((tok = cli_token_file(tfile)) == NULL) {
			fprintf(stderr, "symhub: %s: %s\n", tfile,
			    errno == ENODATA ? "no token on the first line" :
			    strerror(errno));
			return 2;
		}
		o.token = tok;
	}
	if (o.token == NULL && (o.token = getenv("SYMHUB_TOKEN")) != NULL &&
	    *o.token == '\0')
		o.token = NULL;
	if (o.token == NULL && !o.dry_run) {
		fprintf(stderr, "symhub: upload needs a token: --token-file, "
		    "--token or SYMHUB_TOKEN\n");
		return 2;
	}
	o.progress = isatty(STDERR_FILENO);
	if (elfinfo_init() < 0) {
		fprintf(stderr, "symhub: libelf is too old\n");
		st = 1;
		goto out;
	}
	if ((rc = client_create(&o, &c)) < 0) {
		fprintf(stderr, "symhub: %s\n", rc == -ENAMETOOLONG ?
		    "--url is too long" : rc != -EINVAL ? strerror(-rc) :
		    strncmp(o.url, "http://", 7) != 0 &&
		    strncmp(o.url, "https://", 8) != 0 ?
		    "--url wants http:// or https://" :
		    "the token has blanks or control characters");
		st = rc == -EINVAL || rc == -ENAMETOOLONG ? 2 : 1;
		goto out;
	}
	if (exe != NULL) {
		if ((rc = client_add_pair(c, exe, dbg, msg, sizeof(msg))) < 0) {
			fprintf(stderr, "symhub: %s; nothing sent\n", msg);
			st = 1;
			goto out;
		}
	}
	for (i = 0; i < argc; i++)
		if ((rc = client_add_path(c, argv[i])) < 0) {
			fprintf(stderr, "symhub: %s\n", strerror(-rc));
			st = 1;
			goto out;
		}
	if ((rc = client_run(c, &n)) < 0) {
		fprintf(stderr, "symhub: %s\n", strerror(-rc));
		st = 1;
		goto out;
	}
	if (o.dry_run)
		printf("%u would be sent, %u skipped, %u failed (dry run)\n",
		    n.would, n.skipped, n.failed);
	else
		printf("%u stored, %u replaced, %u unchanged, %u skipped, "
		    "%u failed\n", n.stored, n.replaced, n.same, n.skipped,
		    n.failed);
	if (o.sources)
		printf("sources: %u file%s in bundles (%llu bytes sent), %u "
		    "named file%s could not be read here%s\n", n.src_files,
		    n.src_files == 1 ? "" : "s", n.src_bytes, n.src_unread,
		    n.src_unread == 1 ? "" : "s", n.src_unread > 0 ?
		    " (the \"unread\" lines)" : "");
	st = n.failed > 0;
out:
	client_free(c);
	if (tok != NULL) {
		explicit_bzero(tok, strlen(tok));
		free(tok);
	}
	return st;
usage:
	fprintf(stderr, "usage: symhub upload --url URL [OPTION...] "
	    "-e DEPLOYED [-d SYMBOLS]\n"
	    "       symhub upload --url URL [OPTION...] PATH...\n"
	    "(symhub upload --help for more)\n");
	return 2;
}

/* One file; returns 0 or 1 (an error was printed). */
static int
one(const char *cmd, const char *path, int many)
{
	struct elfinfo	ei;
	unsigned char	fid[16];
	char		hex[2 * ELFINFO_BUILDID_MAX + 1], q[128];
	int		fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "symhub: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (strcmp(cmd, "fileid") == 0) {
		if ((rc = elfinfo_fileid(fd, fid)) < 0)
			goto fail;
		hex_encode(fid, sizeof(fid), hex);
		printf(many ? "%s  %s\n" : "%s\n", hex, path);
		close(fd);
		return 0;
	}
	if ((rc = elfinfo_read(fd, &ei)) < 0)
		goto fail;
	if (strcmp(cmd, "buildid") == 0) {
		if (ei.buildid_len == 0) {
			fprintf(stderr, "symhub: %s: no GNU build-id note\n",
			    path);
			close(fd);
			return 1;
		}
		hex_encode(ei.buildid, ei.buildid_len, hex);
		printf(many ? "%s  %s\n" : "%s\n", hex, path);
		close(fd);
		return 0;
	}
	printf("file: %s\n", path);
	hex_encode(ei.buildid, ei.buildid_len, hex);
	printf("buildid: %s\n", ei.buildid_len ? hex : "(none)");
	if ((rc = elfinfo_fileid(fd, fid)) < 0)
		goto fail;
	hex_encode(fid, sizeof(fid), hex);
	printf("fileid: %s\n", hex);
	printf("kind:%s%s%s\n", ei.is_executable ? " executable" : "",
	    ei.is_debuginfo ? " debuginfo" : "",
	    !ei.is_executable && !ei.is_debuginfo ? " none" : "");
	elfinfo_quality_str(ei.quality, q, sizeof(q));
	printf("quality: %s\n", q);
	close(fd);
	return 0;
fail:
	fprintf(stderr, "symhub: %s: %s\n", path, rc == -ENOEXEC ?
	    "not an ELF file, or truncated" : strerror(-rc));
	close(fd);
	return 1;
}

/* symhub token new NAME [SCOPES]: a fresh token and its tokens-file line. */
static int
token(int argc, char **argv)
{
	char	tok[65], line[512];
	int	rc;

	if (argc < 4 || argc > 5 || strcmp(argv[2], "new") != 0)
		return usage(stderr);
	rc = auth_new_token(argv[3], argc == 5 ? argv[4] : "upload", tok,
	    line, sizeof(line));
	if (rc == -EINVAL) {
		fprintf(stderr, "symhub: token names have no spaces; scopes "
		    "are upload and admin, comma-separated\n");
		return 2;
	}
	if (rc < 0) {
		fprintf(stderr, "symhub: %s\n", strerror(-rc));
		return 1;
	}
	/* The token goes to stdout alone, so scripts can capture it; the
	 * line for the tokens file goes to stderr with a hint. */
	printf("%s\n", tok);
	fprintf(stderr, "add this line to the tokens file (symhubd --tokens):\n"
	    "%s\n", line);
	return 0;
}

int
main(int argc, char **argv)
{
	int i, bad = 0;

	if (argc < 2)
		return usage(stderr);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return usage(stdout);
	if (strcmp(argv[1], "--version") == 0) {
		printf("symhub %s\n", PACKAGE_VERSION);
		return 0;
	}
	/*
	 * The commands without a help text of their own would take --help
	 * for a name or a path (a token named "--help", a missing file).
	 */
	if (strcmp(argv[1], "token") == 0 || strcmp(argv[1], "store") == 0 ||
	    strcmp(argv[1], "buildid") == 0 || strcmp(argv[1], "fileid") == 0 ||
	    strcmp(argv[1], "info") == 0) {
		for (i = 2; i < argc; i++)
			if (strcmp(argv[i], "--help") == 0 ||
			    strcmp(argv[i], "-h") == 0)
				return usage(stdout);
	}
	if (strcmp(argv[1], "token") == 0)
		return token(argc, argv);
	if (strcmp(argv[1], "gsym") == 0)
		return cmd_gsym(argc - 1, argv + 1);
	if (strcmp(argv[1], "upload") == 0)
		return upload(argc - 1, argv + 1);
	if (strcmp(argv[1], "store") == 0)
		return cmd_store(argc - 1, argv + 1);
	if (strcmp(argv[1], "prefetch") == 0)
		return cmd_prefetch(argc - 1, argv + 1);
	if (strcmp(argv[1], "perf") == 0)
		return cmd_perf(argc - 1, argv + 1);
	if (strcmp(argv[1], "pprof") == 0)
		return cmd_pprof(argc - 1, argv + 1);
	if (strcmp(argv[1], "otlp") == 0)
		return cmd_otlp(argc - 1, argv + 1);
	if (strcmp(argv[1], "export") == 0)
		return cmd_export(argc - 1, argv + 1);
	if (strcmp(argv[1], "import") == 0)
		return cmd_import(argc - 1, argv + 1);
	if (strcmp(argv[1], "buildid") != 0 && strcmp(argv[1], "fileid") != 0 &&
	    strcmp(argv[1], "info") != 0) {
		fprintf(stderr, "symhub: unknown command '%s'\n", argv[1]);
		return usage(stderr);
	}
	if (argc < 3)
		return usage(stderr);
	if (elfinfo_init() < 0) {
		fprintf(stderr, "symhub: libelf is too old\n");
		return 1;
	}
	for (i = 2; i < argc; i++)
		bad |= one(argv[1], argv[i], argc > 3);
	return bad;
}

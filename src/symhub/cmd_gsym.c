/*
 * cmd_gsym: `symhub gsym convert|lookup|dump`, the GSYM subcommands.
 * lookup and dump print what llvm-gsymutil-19 prints, byte for byte, so
 * either tool can check the other.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_gsym.h"
#include "common/elfinfo.h"
#include "gsym/gsym.h"
#include "gsym/gsym_dwarf.h"

static const char gsym_usage[] =
"usage: symhub gsym convert FILE [-o OUT] [-j THREADS] [-v]\n"
"       symhub gsym lookup GSYM [ADDR...]\n"
"       symhub gsym dump GSYM\n"
"\n"
"  convert  write the GSYM of an ELF file's DWARF and .symtab (its .debug\n"
"           file, or the unstripped binary) to OUT (default FILE.gsym),\n"
"           atomically, on THREADS threads (default: one a CPU, at\n"
"           most 4; the output is the same); -v prints what was converted\n"
"  lookup   symbolize each ADDR (0x-hex, 0-octal, 0b-binary or decimal),\n"
"           or each line of standard input when none is given, as\n"
"           llvm-gsymutil GSYM --address=ADDR prints it\n"
"  dump     print the whole file as llvm-gsymutil GSYM does\n"
"\n"
"convert's options:\n"
"  -o, --out-file OUT  where the GSYM goes (default FILE.gsym)\n"
"  -j, --threads N     threads, 1 to 4 (default: one a CPU, at most 4)\n"
"  -v, --verbose       print what was converted\n"
"  -h, --help          this text\n";

static int
usage(FILE *fp)
{
	fputs(gsym_usage, fp);
	return fp == stdout ? 0 : 2;
}

/* stdout goes out in big blocks: lookups print one short line each. */
static char outbuf[1 << 16];

static int
flush_out(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "symhub: stdout: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * An address as LLVM's cl::opt<uint64_t> takes it (StringRef::
 * getAsInteger with radix 0): 0x/0X hex, 0b/0B binary, 0o or a leading 0
 * octal, else decimal; all of the string, no sign, no overflow.
 */
static int
parse_addr(const char *s, size_t len, uint64_t *out)
{
	unsigned radix = 10, d;
	uint64_t v = 0;
	size_t i = 0;
	char ch;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		radix = 16;
		i = 2;
	} else if (len >= 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
		radix = 2;
		i = 2;
	} else if (len >= 2 && s[0] == '0' && s[1] == 'o') {
		radix = 8;
		i = 2;
	} else if (len >= 2 && s[0] == '0' && s[1] >= '0' && s[1] <= '9') {
		radix = 8;
		i = 1;
	}
	if (i == len)
		return -1;
	for (; i < len; i++) {
		ch = s[i];
		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'z')
			d = (unsigned)(ch - 'a') + 10;
		else if (ch >= 'A' && ch <= 'Z')
			d = (unsigned)(ch - 'A') + 10;
		else
			return -1;
		if (d >= radix || v > (UINT64_MAX - d) / radix)
			return -1;
		v = v * radix + d;
	}
	*out = v;
	return 0;
}

/* Why a GSYM file does not open, in a sentence. */
static void
open_error(const char *path, int rc)
{
	unsigned char hd[GSYM_HEADER_SIZE];
	struct gsym_header h;
	ssize_t n = 0;
	int fd;

	if (rc != -EPROTONOSUPPORT && rc != -EBADMSG) {
		fprintf(stderr, "symhub: %s: %s\n", path, strerror(-rc));
		return;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		n = pread(fd, hd, sizeof(hd), 0);
		close(fd);
	}
	rc = gsym_read_header(hd, n > 0 ? (size_t)n : 0, &h);
	if (rc == -EPROTONOSUPPORT)
		fprintf(stderr, "symhub: %s: GSYM version %u is not supported "
		    "(only version 1)\n", path, (unsigned)h.version);
	else if (n < 4 || h.magic != GSYM_MAGIC)
		fprintf(stderr, "symhub: %s: not a GSYM file\n", path);
	else if (rc != 0)
		fprintf(stderr, "symhub: %s: invalid GSYM header\n", path);
	else
		fprintf(stderr, "symhub: %s: truncated or corrupt GSYM file "
		    "(its tables do not fit in it)\n", path);
}

static void
lookup_one(const struct gsym *g, uint64_t addr, struct gsym_result *res)
{
	int rc;

	rc = gsym_lookup(g, addr, res);
	gsym_print_result(stdout, addr, rc, res);
}

/* Addresses from standard input, one a line.  Reads with read(2) and
 * flushes what it printed before each read that may block, so a
 * program feeding addresses one at a time gets its answers at once,
 * and a pipe of thousands gets them in big writes. */
static int
lookup_stdin(const struct gsym *g, struct gsym_result *res)
{
	static char buf[1 << 16];
	size_t len = 0, start, i, a, b;
	unsigned long lineno = 0;
	uint64_t addr;
	ssize_t n;
	int eof = 0, bad = 0;

	while (!eof || len > 0) {
		if (!eof) {
			if (fflush(stdout) == EOF)
				return -1;
			n = read(STDIN_FILENO, buf + len, sizeof(buf) - len);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				fprintf(stderr, "symhub: stdin: %s\n",
				    strerror(errno));
				return -1;
			}
			if (n == 0)
				eof = 1;
			len += (size_t)n;
		}
		start = 0;
		for (;;) {
			char *nl = memchr(buf + start, '\n', len - start);

			if (nl != NULL)
				i = (size_t)(nl - buf);
			else if (start < len && (eof || (start == 0 &&
			    len == sizeof(buf))))
				i = len;	/* last line, or an overlong one */
			else
				break;
			lineno++;
			a = start;
			b = i;
			while (a < b && (buf[a] == ' ' || buf[a] == '\t' ||
			    buf[a] == '\r'))
				a++;
			while (b > a && (buf[b - 1] == ' ' ||
			    buf[b - 1] == '\t' || buf[b - 1] == '\r'))
				b--;
			if (a < b) {
				if (parse_addr(buf + a, b - a, &addr) == 0)
					lookup_one(g, addr, res);
				else {
					fprintf(stderr, "symhub: stdin line "
					    "%lu: invalid address '%.*s'\n",
					    lineno, (int)(b - a < 64 ? b - a :
					    64), buf + a);
					bad = 1;
				}
			}
			start = i < len ? i + 1 : len;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
	}
	return bad;
}

static int
cmd_lookup(int argc, char **argv)
{
	struct gsym_result *res;
	struct gsym *g;
	uint64_t addr;
	int i, rc, ret = 0;

	if (argc < 2)
		return usage(stderr);
	for (i = 2; i < argc; i++) {
		if (parse_addr(argv[i], strlen(argv[i]), &addr) != 0) {
			fprintf(stderr, "symhub: invalid address '%s'\n",
			    argv[i]);
			return 1;
		}
	}
	if ((rc = gsym_open(argv[1], &g)) != 0) {
		open_error(argv[1], rc);
		return 1;
	}
	if ((res = malloc(sizeof(*res))) == NULL) {
		fprintf(stderr, "symhub: %s\n", strerror(ENOMEM));
		gsym_free(g);
		return 1;
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	printf("Looking up addresses in \"%s\":\n", argv[1]);
	if (argc == 2) {
		if ((rc = lookup_stdin(g, res)) != 0)
			ret = 1;
	} else {
		for (i = 2; i < argc; i++) {
			parse_addr(argv[i], strlen(argv[i]), &addr);
			lookup_one(g, addr, res);
		}
	}
	if (flush_out() != 0)
		ret = 1;
	free(res);
	gsym_free(g);
	return ret;
}

static int
cmd_dump(int argc, char **argv)
{
	struct gsym *g;
	int rc, ret = 0;

	if (argc != 2)
		return usage(stderr);
	if ((rc = gsym_open(argv[1], &g)) != 0) {
		open_error(argv[1], rc);
		return 1;
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if ((rc = gsym_dump(stdout, g)) != 0) {
		fflush(stdout);
		fprintf(stderr, "symhub: %s: some function records could not "
		    "be decoded (the \"FunctionInfo:\" lines)\n", argv[1]);
		ret = 1;
	}
	if (flush_out() != 0)
		ret = 1;
	gsym_free(g);
	return ret;
}

static const char *
convert_error(int rc)
{
	switch (rc) {
	case -ENOEXEC:
		return "not an ELF file, or its DWARF or .gopclntab is "
		    "corrupt";
	case -ENODATA:
		return "no DWARF or symbol table functions (a stripped "
		    "binary? convert its .debug file)";
	case -EFBIG:
		return "the GSYM would pass 4 GiB";
	default:
		return strerror(-rc);
	}
}

static int
cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out-file",	required_argument,	NULL, 'o' },
		{ "threads",	required_argument,	NULL, 'j' },
		{ "verbose",	no_argument,		NULL, 'v' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 }
	};
	struct gsym_convert_stats st;
	const char *in, *out = NULL;
	char defout[PATH_MAX], tmp[PATH_MAX];
	int ch, verbose = 0, fd = -1, tfd = -1, have_tmp = 0, rc, ret = 1;
	unsigned threads = 0;
	mode_t mask;
	char *end;
	unsigned long ul;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:j:vh", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 'j':
			errno = 0;
			ul = strtoul(optarg, &end, 10);
			if (*optarg < '1' || *optarg > '9' || *end != '\0' ||
			    errno != 0 || ul > GSYM_THREADS_MAX) {
				fprintf(stderr, "symhub: -j %s: a number from 1 "
				    "to %d\n", optarg, GSYM_THREADS_MAX);
				return 2;
			}
			threads = (unsigned)ul;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			return usage(stdout);
		default:
			return usage(stderr);
		}
	}
	if (argc - optind != 1)
		return usage(stderr);
	in = argv[optind];
	if (out == NULL) {
		if ((size_t)snprintf(defout, sizeof(defout), "%s.gsym", in) >=
		    sizeof(defout)) {
			fprintf(stderr, "symhub: %s: name too long\n", in);
			return 1;
		}
		out = defout;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", out) >=
	    sizeof(tmp)) {
		fprintf(stderr, "symhub: %s: name too long\n", out);
		return 1;
	}
	if (elfinfo_init() != 0) {
		fprintf(stderr, "symhub: libelf is too old\n");
		return 1;
	}
	if ((fd = open(in, O_RDONLY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "symhub: %s: %s\n", in, strerror(errno));
		return 1;
	}
	if ((tfd = mkstemp(tmp)) == -1) {
		fprintf(stderr, "symhub: %s: %s\n", out, strerror(errno));
		goto out;
	}
	have_tmp = 1;
	/* mkstemp makes it 0600; give it what a plain create would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(tfd, 0666 & ~mask) == -1) {
		fprintf(stderr, "symhub: %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	if ((rc = gsym_dwarf_convert(fd, threads, gsym_fd_sink, &tfd,
	    &st)) != 0) {
		fprintf(stderr, "symhub: %s: %s\n", in, convert_error(rc));
		goto out;
	}
	if (fsync(tfd) == -1) {
		fprintf(stderr, "symhub: %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	rc = close(tfd);
	tfd = -1;
	if (rc == -1) {
		fprintf(stderr, "symhub: %s: %s\n", tmp, strerror(errno));
		goto out;
	}
	if (rename(tmp, out) == -1) {
		fprintf(stderr, "symhub: %s: %s\n", out, strerror(errno));
		goto out;
	}
	have_tmp = 0;
	/* The Go count only for Go programs: other output stays as it was. */
	if (verbose && st.go_funcs > 0)
		printf("%s: %zu functions from DWARF, %zu from .gopclntab, "
		    "%zu from .symtab, %zu written, %" PRIu64 " bytes to %s\n",
		    in, st.dwarf_funcs, st.go_funcs, st.symtab_funcs, st.funcs,
		    st.bytes, out);
	else if (verbose)
		printf("%s: %zu functions from DWARF, %zu from .symtab, %zu "
		    "written, %" PRIu64 " bytes to %s\n", in, st.dwarf_funcs,
		    st.symtab_funcs, st.funcs, st.bytes, out);
	ret = flush_out();
out:
	if (tfd != -1)
		close(tfd);
	if (have_tmp)
		unlink(tmp);
	close(fd);
	return ret;
}

int
cmd_gsym(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0)
		return usage(stdout);
	if (strcmp(argv[1], "convert") == 0)
		return cmd_convert(argc - 1, argv + 1);
	if (strcmp(argv[1], "lookup") == 0)
		return cmd_lookup(argc - 1, argv + 1);
	if (strcmp(argv[1], "dump") == 0)
		return cmd_dump(argc - 1, argv + 1);
	fprintf(stderr, "symhub: unknown gsym command '%s'\n", argv[1]);
	return usage(stderr);
}

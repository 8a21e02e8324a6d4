/* Made by man/options.sh from man/options.txt: edit that, then `make options`. */
static const struct opt_doc opt_docs[] = {
	{ "listen", 'l', "ADDR:PORT", 0,
	    "address and port to listen on ([ADDR6]:PORT for IPv6)" },
	{ "port", 'p', "PORT", 1,
	    "listen on 127.0.0.1:PORT (shorthand for --listen)" },
	{ "store", 'd', "DIR", 0,
	    "store directory (default $XDG_CACHE_HOME/symhub, else "
	    "~/.cache/symhub, else ./symhub-store)" },
	{ "scan-dir", 'F', "DIR", 0,
	    "index ELF files (and, with -R, -U or -Z, packages) under DIR in "
	    "place (repeatable; a DIR after the options is one too)" },
	{ "scan-rpm", 'R', NULL, 0,
	    "index the debuginfo, executables and sources inside .rpm "
	    "packages in the scan directories (elfutils' -R)" },
	{ "scan-deb", 'U', NULL, 0,
	    "the same for .deb and .ddeb packages (elfutils' -U)" },
	{ "scan-archive", 'Z', "EXT[=CMD]", 0,
	    "the same for files named *EXT (.tar.xz, .zip, ...), read by "
	    "libarchive, or from the output of `CMD FILE` (elfutils' -Z; "
	    "repeatable)" },
	{ "archive-ratio-max", '\0', "N", 0,
	    "stop reading a package that unpacks to more than N times its "
	    "size (a decompression bomb); 0: no limit" },
	{ "archive-member-max", '\0', "SIZE", 0,
	    "index no package member larger than this; 0: no limit" },
	{ "source-root", '\0', "DIR", 0,
	    "serve /source files found under DIR only (repeatable)" },
	{ "rescan", 't', "SECONDS", 0,
	    "seconds between rescans of the scan directories; 0: once" },
	{ "verify-period", '\0', "SECONDS", 0,
	    "re-read every stored blob against its SHA-256 once in this long, "
	    "at an even pace; 0: never" },
	{ "verify-rate", '\0', "SIZE", 0,
	    "re-read stored blobs at this many bytes a second instead (k, M, "
	    "G suffixes); 0: as fast as --verify-period needs, at least 200k" },
	{ "verify-first-max", '\0', "SIZE", 0,
	    "hash a stored blob of at most this size against its SHA-256 the "
	    "first time it is read after a start, before it is served (a "
	    "rotten one is a miss); larger ones are left to the background "
	    "verifier; 0: none" },
	{ "quarantine-keep", '\0', "SECONDS", 0,
	    "delete the files of the store's quarantine/ this long after they "
	    "were moved there; 0: keep them" },
	{ "cache-max", '\0', "SIZE", 0,
	    "bytes of cached blobs to keep (k, M, G, T suffixes); 0: no limit" },
	{ "threads", '\0', "N", 0,
	    "HTTP worker threads; 0: two per CPU" },
	{ "connections", '\0', "N", 0,
	    "concurrent client connections at most" },
	{ "timeout", '\0', "SECONDS", 0,
	    "close client connections idle this long" },
	{ "connections-per-address", '\0', "N", 0,
	    "concurrent connections from one client address at most; 0: no "
	    "limit" },
	{ "head-timeout", '\0', "SECONDS", 0,
	    "close a connection whose request head has not arrived whole this "
	    "long after it opened or after its last answer (1 s while 3/4 of "
	    "--connections are taken); 0: no limit" },
	{ "body-timeout", '\0', "SECONDS", 0,
	    "close a connection whose request body pauses this long, or falls "
	    "this far behind --body-min-rate (1 s behind while 3/4 of "
	    "--connections are taken); 0: no limit" },
	{ "body-min-rate", '\0', "BYTES", 0,
	    "a request body must arrive at this many bytes a second on "
	    "average, after --body-timeout; below it, it is the first to make "
	    "room at the --connections budget; 0: any" },
	{ "post-buffer-max", '\0', "SIZE", 0,
	    "bytes of POST bodies (/symbolize) held in memory by all "
	    "connections together; beyond it, 503; 0: no limit" },
	{ "forwarded-ttl-limit", '\0', "N", 0,
	    "ask no upstream for requests that went through N or more hubs; "
	    "0: no limit" },
	{ "offline", '\0', NULL, 0,
	    "open no outbound connection: no upstream is asked (those "
	    "configured, and $DEBUGINFOD_URLS, are ignored), a miss is "
	    "answered 404 at once" },
	{ "upstream", 'u', "URL [KEY=VALUE]...", 0,
	    "ask this debuginfod server on a miss (repeatable; default: "
	    "$DEBUGINFOD_URLS); keys: name, connect-timeout, "
	    "first-byte-timeout, timeout, max-size, header-file, tls-verify, "
	    "ca-path, kinds, accept-encoding" },
	{ "upstream-connect-timeout", '\0', "SECONDS", 0,
	    "give up connecting to an upstream after this long" },
	{ "upstream-first-byte-timeout", '\0', "SECONDS", 0,
	    "give up on an upstream that has not answered after this long; 0: "
	    "no limit" },
	{ "upstream-timeout", '\0', "SECONDS", 0,
	    "give up on a transfer from an upstream after this long" },
	{ "upstream-max-size", '\0', "SIZE", 0,
	    "fetch nothing larger from upstreams (a transfer is cut as it "
	    "passes this); 0: no limit" },
	{ "store-queue-max", '\0', "N", 0,
	    "fetched files waiting to be stored at most; past it (or "
	    "--store-queue-bytes) they are stored before fetching more" },
	{ "store-queue-bytes", '\0', "SIZE", 0,
	    "bytes of fetched files waiting to be stored at most" },
	{ "negative-ttl", '\0', "SECONDS,...", 0,
	    "how long a miss every upstream answered 404 is remembered; the "
	    "Nth miss in a row uses the Nth value" },
	{ "breaker-failures", '\0', "N", 0,
	    "skip an upstream after N transport failures in a row; 0: never" },
	{ "breaker-cooldown", '\0', "SECONDS", 0,
	    "then try it again after this long" },
	{ "s3", '\0', "URL", 0,
	    "keep everything in this S3-compatible bucket too, shared by "
	    "replicas (http[s]://HOST[:PORT]/BUCKET[?region=R]); the store is "
	    "its cache: asked first, then the bucket, then the upstreams; an "
	    "upload answers 201 once it is in the bucket" },
	{ "s3-credentials", '\0', "FILE", 0,
	    "the bucket's keys, from an AWS credentials file ([default] "
	    "aws_access_key_id, aws_secret_access_key); default: "
	    "$AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY" },
	{ "s3-writers", '\0', "N", 0,
	    "threads writing to the bucket (uploads first, then what "
	    "upstreams sent)" },
	{ "s3-queue-max", '\0', "N", 0,
	    "files fetched from upstreams waiting to be written to the bucket "
	    "at most; past it they are not (a later miss fetches them again)" },
	{ "s3-staging-keep", '\0', "SECONDS", 0,
	    "delete objects under the bucket's staging/ (writes cut short by "
	    "a crash) this long after they were written; 0: keep them" },
	{ "tokens", '\0', "FILE", 0,
	    "accept uploads and deletions from the bearer tokens in FILE "
	    "(lines: NAME SHA256HEX SCOPES); none: uploads refused" },
	{ "max-upload-size", '\0', "SIZE", 0,
	    "refuse uploads larger than this" },
	{ "bundle-max-unpacked", '\0', "SIZE", 0,
	    "refuse source bundles that unpack to more than this" },
	{ "bundle-max-files", '\0', "N", 0,
	    "refuse source bundles with more members than this" },
	{ "gsym-workers", '\0', "N", 0,
	    "DWARF to GSYM conversions run at once, off the HTTP threads" },
	{ "gsym-threads", '\0', "N", 0,
	    "threads each conversion to GSYM walks the DWARF on (0: one a "
	    "CPU, at most 4)" },
	{ "gsym-on-upload", '\0', NULL, 0,
	    "convert each uploaded debuginfo to GSYM at once, not on the "
	    "first /gsym or /symbolize request" },
	{ "gsym-ahead", '\0', NULL, 0,
	    "convert every new debuginfo (scanned, fetched or uploaded) to "
	    "GSYM in the background, after the conversions requests wait for" },
	{ "symbolize-max-addresses", '\0', "N", 0,
	    "most addresses one /symbolize request may ask" },
	{ "symbolize-max-modules", '\0', "N", 0,
	    "most modules one POST /symbolize or /symbolicate/v5 request may "
	    "name" },
	{ "profile-memory-max", '\0', "SIZE", 0,
	    "bytes all pprof and OTLP profiles being read may hold at once; "
	    "past it, 503; 0: no limit" },
	{ "symbolize-max-answer", '\0', "SIZE", 0,
	    "most bytes of one /symbolize or /symbolicate/v5 answer: a "
	    "request whose answer must be larger is refused (413), one that "
	    "turns out larger is cut; 0: no limit" },
	{ "symbolize-deadline", '\0', "SECONDS", 0,
	    "how long a multi-module request waits for fetches and "
	    "conversions, and the most it may ask for" },
	{ "compress", '\0', "CODINGS", 0,
	    "send debuginfo and executables compressed to clients that accept "
	    "one of these codings (zstd, gzip; comma-separated), compressing "
	    "each file once and keeping the copy; none: never" },
	{ "compress-min", '\0', "SIZE", 0,
	    "send smaller files as they are" },
	{ "compress-level", '\0', "N", 0,
	    "zstd's compression level for the first copy, made while a client "
	    "waits (1-19; gzip's is this, at most 9)" },
	{ "compress-best-level", '\0', "N", 0,
	    "then make each copy again at this level, in the background at "
	    "the lowest priority, and keep it if smaller; 0 or not above "
	    "compress-level: no second pass" },
	{ "hot-cache", '\0', "SIZE", 0,
	    "keep the small files asked most in memory, this many bytes of "
	    "them, and answer from there; 0: none" },
	{ "hot-file-max", '\0', "SIZE", 0,
	    "keep no larger file in memory (larger ones go with sendfile)" },
	{ "metadata-maxtime", '\0', "SECONDS", 0,
	    "a /metadata query looks through the index this long at most; "
	    "what it found by then is answered, \"complete\": false; 0: no "
	    "limit" },
	{ "metadata-upstream-timeout", '\0', "SECONDS", 0,
	    "wait this long at most for the upstreams' /metadata answers (one "
	    "missing makes the answer incomplete); 0: upstreams are not asked "
	    "for /metadata" },
	{ "metadata-ttl", '\0', "SECONDS", 0,
	    "keep an upstream's complete /metadata answer, or its 404, this "
	    "long; 0: ask every time" },
	{ "home-html", '\0', "FILE", 0,
	    "answer GET / with FILE (HTML, read on each request) instead of "
	    "the status page, which stays at /status" },
	{ "home-redirect", '\0', "URL", 0,
	    "answer GET / with a redirect (302) to URL" },
	{ "cors", '\0', "ORIGIN", 0,
	    "let web pages from ORIGIN (* for any) call the hub: "
	    "Access-Control-Allow-Origin on every answer, and OPTIONS "
	    "preflights answered (as elfutils' --cors, which allows *)" },
	{ "read-auth", '\0', NULL, 0,
	    "every read route (artifacts, GSYM, /symbolize, Tecken, /metadata) "
	    "needs a token with the read scope, Bearer or Basic (see ACCESS)" },
	{ "metrics-auth", '\0', NULL, 0,
	    "/metrics, /status and the home page need a token with read" },
	{ "behind-tls", '\0', NULL, 0,
	    "a TLS proxy is in front: allow --read-auth on any address" },
	{ "rate-per-token", '\0', "N", 0,
	    "requests a second a token may make (beyond --rate-burst); 0: any" },
	{ "rate-per-address", '\0', "N", 0,
	    "requests a second one client address may make; 0: any" },
	{ "rate-burst", '\0', "N", 0,
	    "requests at once beyond the rate (the bucket's size)" },
	{ "rate-addresses", '\0', "N", 0,
	    "client addresses remembered for --rate-per-address" },
	{ "log-file", 'L', "FILE", 0,
	    "log file, reopened on SIGHUP; - for standard error" },
	{ "verbose", 'v', NULL, 0,
	    "log more (repeatable on the command line)" },
	{ "config", 'c', "FILE", 1,
	    "read options from FILE first (command line wins)" },
	{ "check", 'n', NULL, 1,
	    "check the configuration, print it, and exit" },
	{ "help", 'h', NULL, 1,
	    "show this help" },
	{ "version", 'V', NULL, 1,
	    "show the version" },
};

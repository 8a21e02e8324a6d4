# options.awk: one output of man/options.txt (see its head for the
# format), chosen by -v out=:
#   c     the C table of symhubd's --help (src/symhubd/opthelp.h)
#   man8  the entries of symhubd.8's OPTIONS
#   man5  the entries of symhubd.conf.5's OPTIONS: the options a file may
#         set, \-\-NAME references made NAME
# POSIX awk; run by man/options.sh.

function roffname(s) {
	gsub(/-/, "\\-", s)
	return s
}

function cstr(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/"/, "\\\"", s)
	return "\"" s "\""
}

# The man pages' form of option i's argument.
function marg(i) {
	if (MARG[i] != "")
		return MARG[i]
	return "\\fI" roffname(ARG[i]) "\\fR"
}

function head8(i,	h) {
	if (SHORT[i] != "")
		h = ".BR \\-" SHORT[i] " \", \" \\-\\-" roffname(NAME[i])
	else if (ARG[i] != "")
		h = ".BR \\-\\-" roffname(NAME[i])
	else
		return ".B \\-\\-" roffname(NAME[i])
	if (ARG[i] != "")
		h = h " \" " marg(i) "\""
	return h
}

function head5(i,	v) {
	if (FARG[i] != "")
		v = FARG[i]
	else if (ARG[i] == "")
		v = "0|1"
	else if (MARG[i] != "")
		v = "\"" MARG[i] "\""
	else
		v = roffname(ARG[i])
	return ".BI \"" roffname(NAME[i]) " = \" " v
}

# A body line for symhubd.conf.5: \-\-NAME of a file option made NAME.
function conf5(line,	out, name, n) {
	out = ""
	while (match(line, /\\-\\-[a-z0-9]+(\\-[a-z0-9]+)*/)) {
		name = substr(line, RSTART + 4, RLENGTH - 4)
		n = name
		gsub(/\\-/, "-", n)
		if (n in FILEOPT)
			out = out substr(line, 1, RSTART - 1) name
		else
			out = out substr(line, 1, RSTART + RLENGTH - 1)
		line = substr(line, RSTART + RLENGTH)
	}
	return out line
}

function field(s) {
	sub(/^@[a-z]+[ \t]*/, "", s)
	return s
}

BEGIN {
	n = 0		# options
	ne = 0		# entries
	inbody = 1
}

/^#/ && ne == 0 { next }

/^@option[ \t]/ {
	if (inbody) {
		ne++
		FIRST[ne] = n + 1
		NBODY[ne] = 0
		inbody = 0
	}
	n++
	NAME[n] = field($0)
	ENTRY[n] = ne
	next
}
/^@short[ \t]/ { SHORT[n] = field($0); next }
/^@arg[ \t]/ { ARG[n] = field($0); next }
/^@marg[ \t]/ { MARG[n] = field($0); next }
/^@farg[ \t]/ { FARG[n] = field($0); next }
/^@cli$/ { CLI[n] = 1; next }
/^@help[ \t]/ {
	HELP[n, ++NHELP[n]] = field($0)
	next
}
/^@/ {
	printf "options.txt:%d: unknown field %s\n", NR, $1 > "/dev/stderr"
	bad = 1
	exit 1
}
ne > 0 && /^$/ && !inbody { next }
ne > 0 {
	inbody = 1
	if ($0 == "")
		next
	BODY[ne, ++NBODY[ne]] = $0
}

END {
	if (bad)
		exit 1
	for (i = 1; i <= n; i++) {
		if (!NHELP[i]) {
			printf "options.txt: %s has no @help\n", NAME[i] \
			    > "/dev/stderr"
			exit 1
		}
		if (!CLI[i])
			FILEOPT[NAME[i]] = 1
	}
	if (out == "c") {
		print "/* Made by man/options.sh from man/options.txt: edit that," \
		    " then `make options`. */"
		print "static const struct opt_doc opt_docs[] = {"
		for (i = 1; i <= n; i++) {
			printf "\t{ %s, '%s', %s, %d,", cstr(NAME[i]),
			    SHORT[i] == "" ? "\\0" : SHORT[i],
			    ARG[i] == "" ? "NULL" : cstr(ARG[i]), CLI[i] ? 1 : 0
			for (k = 1; k <= NHELP[i]; k++)
				printf "\n\t    %s", cstr(HELP[i, k] \
				    (k < NHELP[i] ? " " : ""))
			print " },"
		}
		print "};"
		exit 0
	}
	for (e = 1; e <= ne; e++) {
		shown = 0
		for (i = FIRST[e]; i <= n && ENTRY[i] == e; i++) {
			if (out == "man5" && CLI[i])
				continue
			print shown ? ".TQ" : ".TP"
			print out == "man5" ? head5(i) : head8(i)
			shown++
		}
		if (!shown)
			continue
		for (j = 1; j <= NBODY[e]; j++)
			print out == "man5" ? conf5(BODY[e, j]) : BODY[e, j]
	}
}

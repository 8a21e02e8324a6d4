/*
 * cmd_pprof: `symhub pprof IN -o OUT`, a pprof profile taken where no
 * symbols are (a production machine) sent to a hub's POST
 * /symbolize/pprof, and the symbolized profile it answers written to
 * OUT, for `go tool pprof` to read with names, inline frames and lines.
 */
#ifndef SYMHUB_CMD_PPROF_H
#define SYMHUB_CMD_PPROF_H

/* argv[0] is "pprof".  @return the exit status (symhub(1)). */
int	cmd_pprof(int argc, char **argv);

/* `symhub otlp IN -o OUT`: the same for OpenTelemetry profiles, through
 * POST /symbolize/otlp.  argv[0] is "otlp". */
int	cmd_otlp(int argc, char **argv);

#endif

/*
 * cmd_gsym: the `symhub gsym` subcommands (convert, lookup, dump).
 */
#ifndef SYMHUB_SYMHUB_GSYM_H
#define SYMHUB_SYMHUB_GSYM_H

/* argv[0] is "gsym".  @return the exit status. */
int	cmd_gsym(int argc, char **argv);

#endif

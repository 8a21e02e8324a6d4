/*
 * demangle: see demangle.h.
 */
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "demangle.h"

char *
demangle(const char *name)
{
	/* Names come from files anyone may upload: a bound on the work.
	 * (libiberty also bounds its recursion.) */
	if (strnlen(name, DEMANGLE_MAX + 1) > DEMANGLE_MAX)
		return NULL;
	/* DMGL_AUTO: Rust's rules first (legacy names look like C++ ones
	 * with a hash), then the Itanium ABI's; as c++filt does. */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

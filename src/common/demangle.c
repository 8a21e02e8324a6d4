/*
 * demangle: see demangle.h.
 */
#include <stdlib.h>

#include <libiberty/demangle.h>

#include "demangle.h"

char *
demangle(const char *name)
{
	/* DMGL_AUTO: Rust's rules first (legacy names look like C++ ones
	 * with a hash), then the Itanium ABI's; as c++filt does. */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

/*
 * demangle: the names a person reads, from the symbol names compilers
 * write: C++ (Itanium ABI), Rust (legacy and v0), and the rest libiberty
 * knows (D, Ada).  libiberty does the work, as binutils' c++filt and
 * gdb do; no I/O.
 */
#ifndef SYMHUB_DEMANGLE_H
#define SYMHUB_DEMANGLE_H

/* Longer names are left as they are (the longest C++ names of libstdc++
 * and LLVM are a few KiB). */
#define DEMANGLE_MAX	(32u << 10)

/*
 * @return name demangled, with parameters (malloc'd: the caller frees),
 *         or NULL when name is not a mangled name libiberty reads (a C
 *         name, say) or on no memory.
 */
char	*demangle(const char *name);

#endif

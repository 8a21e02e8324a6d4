/*
 * The libFuzzer entry point every harness under tests/fuzz/ defines.
 * Built with clang -fsanitize=fuzzer by `make fuzz`, or with replay.c's
 * main() by `make check`, which runs every corpus and regression file.
 */
#ifndef SYMHUB_FUZZ_H
#define SYMHUB_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif

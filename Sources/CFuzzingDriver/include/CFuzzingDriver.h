#ifndef CFUZZINGDRIVER_H
#define CFUZZINGDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// One fuzz input: the bytes, their count. Returns 0 (libFuzzer's convention).
typedef int (*af_fuzz_callback)(const uint8_t *data, size_t size);

/// Whether libFuzzer is linked in (a build with `-sanitize=fuzzer`).
int af_fuzz_is_instrumented(void);

/// Runs libFuzzer with `argc`/`argv` when it is linked in; otherwise replays every file named in
/// `argv` (a directory: each file in it) through `callback` once, and returns 0 if all were read.
int af_fuzz_main(int argc, char **argv, af_fuzz_callback callback);

#endif

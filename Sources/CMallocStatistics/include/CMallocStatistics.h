#ifndef C_MALLOC_STATISTICS_H
#define C_MALLOC_STATISTICS_H

#include <stddef.h>

/// The bytes the C allocator has handed out and not had back, across every arena, mapped blocks
/// included: what a leak adds to, without the page rounding and fragmentation resident memory has.
/// 0 where the allocator does not report it (not glibc).
size_t c_malloc_bytes_in_use(void);

#endif

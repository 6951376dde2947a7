// glibc's heap statistics, which Swift's Glibc module does not import (it leaves out malloc.h).
#pragma once
#include <stddef.h>

/// Bytes in chunks malloc has handed out (arena and mmapped chunks); 0 where glibc is not used.
size_t memory_shims_heap_in_use(void);

/// Hands free memory at the top of the heap and in free chunks back to the system, where it can.
void memory_shims_trim(void);

#include "MemoryShims.h"

#if defined(__linux__)
#include <features.h>
#endif

#if defined(__GLIBC__)
#include <malloc.h>

size_t memory_shims_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

void memory_shims_trim(void) {
    malloc_trim(0);
}
#else
size_t memory_shims_heap_in_use(void) { return 0; }
void memory_shims_trim(void) {}
#endif

// Counts the process's heap allocations, for Scripts/allocations.py: loaded with LD_PRELOAD into the
// profile executable, it answers every allocating call of the C library (malloc, calloc, realloc,
// posix_memalign, aligned_alloc, memalign, valloc), adds one to a counter and passes the call on to
// glibc's own allocator, whose `free` then takes the memory back as usual. The profile executable reads
// the counter through `ssk_allocation_count`, found with dlsym, at the edges of each measured window.
//
// glibc only (its `__libc_*` entry points, which, unlike dlsym(RTLD_NEXT), never allocate themselves).
// One relaxed atomic add per allocation: this is a measuring tool, and the counts, not the times, are
// what it reports. Built by the script: cc -O2 -shared -fPIC allocation-counter.c -o …
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);

static _Atomic unsigned long allocations = 0;

static inline void counted(void) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

// Every allocation since the process started.
unsigned long ssk_allocation_count(void) {
    return atomic_load_explicit(&allocations, memory_order_relaxed);
}

void *malloc(size_t size) {
    counted();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    counted();
    return __libc_calloc(count, size);
}

// A resize is an allocation request, as package-benchmark's interposer counts it; a resize to zero
// bytes of an existing block is a free.
void *realloc(void *pointer, size_t size) {
    if (pointer == NULL || size != 0) {
        counted();
    }
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    counted();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    counted();
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    counted();
    return __libc_valloc(size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // What glibc checks: a power of two and a multiple of the pointer size.
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
        return EINVAL;
    }
    counted();
    void *memory = __libc_memalign(alignment, size);
    if (memory == NULL) {
        return ENOMEM;
    }
    *result = memory;
    return 0;
}

// Counts the Swift runtime's type look-ups and dynamic casts that a process makes, for the `lookups`
// check (Scripts/lookups.sh loads it with LD_PRELOAD). Each entry point forwards to the runtime's own.
// These look-ups go through process-wide caches whose reader counts every calling thread writes, so a
// look-up per value makes unrelated subscriptions on different cores contend.
//
// The runtime declares these functions with Swift's calling convention; on x86-64 and arm64 it passes
// these arguments and returns these two-word results in the same registers as C does, and the
// registers that differ are ones C preserves.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

typedef struct {
    const void *metadata;
    uintptr_t state;
} Response;

enum { GENERIC, TUPLE, CAST, KINDS };
static long counts[KINDS];

long lookup_counter_read(int kind) {
    return kind >= 0 && kind < KINDS ? __atomic_load_n(&counts[kind], __ATOMIC_RELAXED) : -1;
}

static void count(int kind) {
    __atomic_fetch_add(&counts[kind], 1, __ATOMIC_RELAXED);
}

#define FORWARD(kind, result, name, parameters, arguments) \
    result name parameters { \
        static result(*real) parameters; \
        if (!real) real = (result(*) parameters)dlsym(RTLD_NEXT, #name); \
        count(kind); \
        return real arguments; \
    }

FORWARD(GENERIC, Response, swift_getGenericMetadata,
        (uintptr_t request, const void *arguments, const void *description), (request, arguments, description))
FORWARD(TUPLE, Response, swift_getTupleTypeMetadata,
        (uintptr_t request, uintptr_t flags, const void *const *elements, const char *labels, const void *proposed),
        (request, flags, elements, labels, proposed))
FORWARD(TUPLE, Response, swift_getTupleTypeMetadata2,
        (uintptr_t request, const void *a, const void *b, const char *labels, const void *proposed),
        (request, a, b, labels, proposed))
FORWARD(TUPLE, Response, swift_getTupleTypeMetadata3,
        (uintptr_t request, const void *a, const void *b, const void *c, const char *labels, const void *proposed),
        (request, a, b, c, labels, proposed))
FORWARD(CAST, _Bool, swift_dynamicCast,
        (void *destination, void *source, const void *sourceType, const void *targetType, uintptr_t flags),
        (destination, source, sourceType, targetType, flags))

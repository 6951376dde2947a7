// See include/CSwiftSignalKitLockTracing.h, and the comment above `withLock` in
// Sources/SwiftSignalKit/Internal/Lock.swift for why the lock tells ThreadSanitizer anything.
//
// SwiftPM, and Xcode, compile this file with -fsanitize=thread exactly when they build the Swift targets
// with ThreadSanitizer, so the answer here is the answer for the whole build.

#include "CSwiftSignalKitLockTracing.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SWIFTSIGNALKIT_THREAD_SANITIZER 1
#endif
#endif
#if !defined(SWIFTSIGNALKIT_THREAD_SANITIZER) && defined(__SANITIZE_THREAD__)
#define SWIFTSIGNALKIT_THREAD_SANITIZER 1
#endif

#ifdef SWIFTSIGNALKIT_THREAD_SANITIZER

// ThreadSanitizer's annotation interface (compiler-rt's sanitizer/tsan_interface.h, which not every
// toolchain ships): an acquire and a release on an address, the edge an instrumented mutex gives.
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

const unsigned char swiftsignalkit_lock_tracing_enabled = 1;

void swiftsignalkit_lock_acquired(void *object) {
    __tsan_acquire(object);
}

void swiftsignalkit_lock_releasing(void *object) {
    __tsan_release(object);
}

#else

const unsigned char swiftsignalkit_lock_tracing_enabled = 0;

void swiftsignalkit_lock_acquired(void *object) {
    (void)object;
}

void swiftsignalkit_lock_releasing(void *object) {
    (void)object;
}

#endif

// What the library's lock (Sources/SwiftSignalKit/Internal/Lock.swift) tells ThreadSanitizer, written in C
// for the one thing Swift cannot say: whether this build is instrumented. Not API: the library imports it,
// and no other module should.

#ifndef C_SWIFT_SIGNAL_KIT_LOCK_TRACING_H
#define C_SWIFT_SIGNAL_KIT_LOCK_TRACING_H

#ifdef __cplusplus
extern "C" {
#endif

/// 1 if this target was compiled with ThreadSanitizer, 0 otherwise. A constant, set by the compiler: it
/// is never written, so reading it is one load from any thread, with no initialisation to wait for.
extern const unsigned char swiftsignalkit_lock_tracing_enabled;

/// The calling thread has just locked the mutex of the object at `object`: `__tsan_acquire(object)`
/// when compiled with ThreadSanitizer, nothing otherwise.
void swiftsignalkit_lock_acquired(void *object);

/// The calling thread is about to unlock the mutex of the object at `object`: `__tsan_release(object)`
/// when compiled with ThreadSanitizer, nothing otherwise.
void swiftsignalkit_lock_releasing(void *object);

#ifdef __cplusplus
}
#endif

#endif

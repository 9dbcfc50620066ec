#ifndef C_THREAD_SANITIZER_H
#define C_THREAD_SANITIZER_H

// ThreadSanitizer's annotations, declared weak: they exist only when the TSan runtime is linked
// (`--sanitize=thread`); otherwise they are null and these helpers do nothing.
void __tsan_acquire(void *address) __attribute__((weak));
void __tsan_release(void *address) __attribute__((weak));

/// Tells ThreadSanitizer the calling thread now holds what `address` guards (after taking a lock).
static inline void cthreadsanitizer_acquire(void *address) {
    if (__tsan_acquire) __tsan_acquire(address);
}

/// Tells ThreadSanitizer the calling thread lets go of what `address` guards (before releasing a lock).
static inline void cthreadsanitizer_release(void *address) {
    if (__tsan_release) __tsan_release(address);
}

#endif

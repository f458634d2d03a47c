#ifndef CSWITCHYARD_STDIO_H
#define CSWITCHYARD_STDIO_H
// What the plugin SDK needs from C: C's `stdout` (a global Swift 6 will not touch), and the few syscalls of its
// stdio loop, as plain C so the Swift side stays memory-safe (the SDK does not link libuv, where the host's live).

#include <stdint.h>

/// Points C stdio's `stdout` at `stderr` (an unbuffered stream on fd 2). Swift's `print`, `printf` and `puts` then
/// reach the host log instead of the protocol stream, while fd 1 stays the protocol's and the plugin holds no
/// descriptor besides 0, 1 and 2. Call once at start-up, before any other thread exists.
void switchyard_redirect_stdout_to_stderr(void);

/// Whether the calling thread is the process's main thread (the one the main actor runs on).
int switchyard_is_main_thread(void);

/// The descriptor libdispatch signals when the main queue has work (the handle CoreFoundation's run loop waits
/// on), or -1 where there is none (not Linux): the caller then keeps `dispatchMain()`.
int switchyard_main_queue_handle(void);

/// Runs what the main queue holds (main-actor jobs, `DispatchQueue.main` blocks), on the calling thread, which
/// must be the main thread; clears `handle` first, so work queued meanwhile signals it again.
void switchyard_main_queue_drain(int handle);

/// Waits until `input` is readable (or at end of file) or `queue` is signalled: bit 1 for `input`, bit 2 for
/// `queue`; -errno on failure. EINTR is retried.
int switchyard_stdio_wait(int input, int queue);

/// `read(2)` with EINTR retried: the byte count, 0 at end of file, -errno on failure.
long switchyard_stdio_read(int fd, uint8_t *buffer, long capacity);

#endif

#ifndef CSWITCHYARD_STDIO_H
#define CSWITCHYARD_STDIO_H
// What the plugin SDK needs from C: C's `stdout` (a global Swift 6 will not touch), and the read of its stdin loop,
// as plain C so the Swift side stays memory-safe (the SDK does not link libuv, where the host's syscalls live).

#include <stdint.h>

/// Points C stdio's `stdout` at `stderr` (an unbuffered stream on fd 2). Swift's `print`, `printf` and `puts` then
/// reach the host log instead of the protocol stream, while fd 1 stays the protocol's and the plugin holds no
/// descriptor besides 0, 1 and 2. Call once at start-up, before any other thread exists.
void switchyard_redirect_stdout_to_stderr(void);

/// `read(2)` with EINTR retried: the byte count, 0 at end of file, -errno on failure.
long switchyard_stdio_read(int fd, uint8_t *buffer, long capacity);

/// `write(2)` until all `count` bytes are written (partial writes continued, EINTR retried): `count`, or -errno.
long switchyard_stdio_write_all(int fd, const uint8_t *buffer, long count);

/// ``switchyard_stdio_read`` into `buffer[offset..<capacity]` (the stdin loop appends after a partial line).
long switchyard_stdio_read_at(int fd, uint8_t *buffer, long offset, long capacity);

/// The index of the first `\n` in `buffer[from..<to]`, or -1: `memchr`, which scans a word at a time where a Swift
/// loop with bounds checks cost ten instructions a byte, a tenth of a route's cost in the plugin.
long switchyard_find_newline(const uint8_t *buffer, long from, long to);

#endif

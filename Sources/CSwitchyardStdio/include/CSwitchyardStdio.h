#ifndef CSWITCHYARD_STDIO_H
#define CSWITCHYARD_STDIO_H
// C's `stdout` is a global Swift 6 will not touch (shared mutable state); this does the one thing the plugin SDK
// needs from it.

/// Points C stdio's `stdout` at `stderr` (an unbuffered stream on fd 2). Swift's `print`, `printf` and `puts` then
/// reach the host log instead of the protocol stream, while fd 1 stays the protocol's and the plugin holds no
/// descriptor besides 0, 1 and 2. Call once at start-up, before any other thread exists.
void switchyard_redirect_stdout_to_stderr(void);

#endif

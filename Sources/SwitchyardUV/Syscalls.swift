import Glibc

// The two loops every blocking syscall here needs, written once: a call interrupted by a signal (EINTR) is tried
// again, since nothing went wrong; and a write goes on until every byte is out, since a pipe or socket may take
// part of a buffer.

/// Calls `call` again while it fails with `EINTR`, and returns its first other result (`errno` intact on failure).
func retryingEINTR<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}

/// Writes all of `bytes` through `call` (`write` or `send` on one descriptor), after partial writes and EINTR too.
/// - Returns: 0 once everything is written, else the `errno` of the call that failed.
func writeFully(_ bytes: [UInt8], _ call: (UnsafeRawPointer, Int) -> Int) -> Int32 {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { raw in retryingEINTR { call(raw.baseAddress! + offset, raw.count - offset) } }
        if written < 0 { return errno }
        offset += written
    }
    return 0
}

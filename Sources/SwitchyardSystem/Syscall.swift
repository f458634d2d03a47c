import CSwitchyardSystem
public import Glibc

// The loops every blocking syscall needs, written once (swift-nio's System.swift does the same): a call interrupted
// by a signal (EINTR) is tried again, since nothing went wrong; a failure becomes a typed error carrying `errno`,
// read right after the call; and a write goes on until every byte is out, since a pipe or socket may take part of a
// buffer.

/// Calls `call` again while it fails with `EINTR`, and returns its first other result (`errno` intact on failure).
@inlinable
package func retryingEINTR<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}

/// Calls `call` (retrying `EINTR`) and returns its result, or throws its `errno` as a ``SystemError`` naming
/// `operation`.
@inlinable
package func syscall<Result: BinaryInteger>(
    _ operation: @autoclosure () -> String, _ call: () -> Result
) throws(SystemError) -> Result {
    let result = retryingEINTR(call)
    if result < 0 { throw SystemError.last(operation()) }
    return result
}

/// Writes all of `bytes[offset...]` through `call` (`write` or `send` on one descriptor), after partial writes and
/// EINTR too.
/// - Returns: 0 once everything is written, else the `errno` of the call that failed.
@inlinable
package func writeFully(_ bytes: [UInt8], _ call: (UnsafeRawPointer, Int) -> Int) -> Int32 {
    bytes.withUnsafeBytes { raw in
        guard let base = raw.baseAddress else { return 0 }
        var offset = 0
        while offset < raw.count {
            let written = retryingEINTR { call(base + offset, raw.count - offset) }
            if written < 0 { return errno }
            offset += written
        }
        return 0
    }
}

/// Plain descriptor I/O for the modules without pointers: the Swift SDK's stdio, helpers' pipes.
public enum Descriptor {
    /// Reads what is available (blocking until something is) into `buffer[offset...]`: the count, 0 at end of file.
    /// `offset` must be inside the buffer.
    @inlinable
    public static func read(_ fd: Int32, into buffer: inout [UInt8], at offset: Int) throws(SystemError) -> Int {
        guard offset >= 0, offset < buffer.count else { throw SystemError(errno: EINVAL, operation: "read") }
        return try syscall("read") {
            buffer.withUnsafeMutableBytes { raw in
                Glibc.read(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
        }
    }

    /// Writes all of `bytes` (partial writes continued, EINTR retried).
    @inlinable
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        let failure = writeFully(bytes) { Glibc.write(fd, $0, $1) }
        if failure != 0 { throw SystemError(errno: failure, operation: "write") }
    }

    /// Closes `fd`; an error is ignored (the descriptor is released either way on Linux).
    public static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// A close-on-exec pipe (`pipe2`): no thread's fork sees its ends as inheritable, not even for an instant.
    public static func pipe(nonBlocking: Bool = false) throws(SystemError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        let flags = O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0)
        _ = try syscall("pipe2") { fds.withUnsafeMutableBufferPointer { pipe2($0.baseAddress, flags) } }
        return (fds[0], fds[1])
    }

    /// Whether `fd` is a terminal.
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }
}

/// Byte searches the standard library has no fast form of.
public enum Bytes {
    /// The index of the first `byte` in `buffer[from..<to]`, or nil: `memchr`, which scans a word at a time, where a
    /// Swift loop with bounds checks cost ten instructions a byte (a tenth of a route's cost in the Swift SDK, which
    /// searches every line it reads for its newline).
    @inlinable
    public static func firstIndex(of byte: UInt8, in buffer: [UInt8], from: Int, to: Int) -> Int? {
        guard from >= 0, from < to, to <= buffer.count else { return nil }
        return buffer.withUnsafeBytes { raw -> Int? in
            guard let base = raw.baseAddress, let found = memchr(base + from, Int32(byte), to - from) else {
                return nil
            }
            return base.distance(to: UnsafeRawPointer(found))
        }
    }
}

import CLibUV
public import SwitchyardSystem

/// A libuv (or errno) failure, with the operation that produced it.
///
/// `UV_EOF` is never thrown: end of stream is an event (``UVPipe/ReadEvent/eof``).
/// `EPIPE` on a write to a dead plugin is an ordinary `UVError`, not a signal.
public struct UVError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The negative libuv error code (`UV_E*`), which on Unix is `-errno`.
    public let code: Int32
    /// What was being attempted, e.g. `"uv_spawn"`.
    public let operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// An error from a raw `errno` value (positive), as returned by POSIX calls.
    public init(errno value: Int32, operation: String) {
        self.init(code: -value, operation: operation)
    }

    /// A failed syscall made through ``SwitchyardSystem``: on Unix libuv's codes are `-errno`, so nothing is lost.
    public init(_ error: SystemError) {
        self.init(errno: error.errno, operation: error.operation)
    }

    /// `uv_err_name`, e.g. `"EPIPE"`.
    public var name: String {
        guard let cString = uv_err_name(code) else { return "UNKNOWN" }
        return String(cString: cString)
    }

    public var description: String {
        guard let cString = uv_strerror(code) else { return "\(operation): error \(code)" }
        return "\(operation): \(name) (\(String(cString: cString)))"
    }

    public var isBrokenPipe: Bool { code == UV_EPIPE.rawValue || code == UV_ECONNRESET.rawValue }
    public var isNotFound: Bool { code == UV_ENOENT.rawValue }
    public var alreadyExists: Bool { code == UV_EEXIST.rawValue }
    public var isAddressInUse: Bool { code == UV_EADDRINUSE.rawValue }
    public var isConnectionRefused: Bool { code == UV_ECONNREFUSED.rawValue }
    public var isPermissionDenied: Bool { code == UV_EACCES.rawValue || code == UV_EPERM.rawValue }
    public var isTimeout: Bool { code == UV_ETIMEDOUT.rawValue }

    /// A failure that says the system is short of something (descriptors, processes, memory) rather than that the
    /// request is wrong: worth retrying once resources come back. `ENOENT` or `EACCES` are not.
    public var isResourceExhaustion: Bool {
        [UV_EMFILE.rawValue, UV_ENFILE.rawValue, UV_EAGAIN.rawValue, UV_ENOMEM.rawValue, UV_ENOBUFS.rawValue].contains(
            code)
    }

    /// The error a closed handle raises, instead of touching freed memory.
    public static func closed(_ operation: String) -> UVError {
        UVError(code: UV_EBADF.rawValue, operation: operation)
    }

    /// Throws when a libuv call returned a negative status. The operation's name is built only then: an
    /// interpolated enum goes through reflection, and an idle handle restarted per job paid 9,500 instructions a
    /// start for a message never shown (a sixth of a deep link's cost).
    @inline(__always)
    static func check(_ status: Int32, _ operation: @autoclosure () -> String) throws(UVError) {
        if status < 0 { throw UVError(code: status, operation: operation()) }
    }
}

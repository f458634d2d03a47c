import Glibc

/// A failed system call: its `errno` and the operation it served, worded as libuv words errors
/// (`connect /run/user/1000/switchyard/demo.sock: ENOENT (no such file or directory)`), so messages read the same
/// whether a libuv call or a plain syscall failed, and the CLI's and tests' expectations hold for both.
public struct SystemError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The `errno` value (positive).
    public let errno: Int32
    /// What was being attempted, e.g. `open /etc/switchyard.json`.
    public let operation: String

    /// The failure `errno` (positive) of `operation`.
    public init(errno: Int32, operation: String) {
        self.errno = errno
        self.operation = operation
    }

    /// The errno's symbolic name, e.g. `ENOENT`.
    public var name: String { Self.words(errno)?.name ?? "UNKNOWN" }

    /// `operation: NAME (message)`, e.g. `open /nowhere: ENOENT (no such file or directory)`.
    public var description: String {
        "\(operation): \(name) (\(Self.words(errno)?.message ?? "unknown error \(errno)"))"
    }

    /// `ENOENT`: nothing at the path.
    public var isNotFound: Bool { errno == ENOENT }
    /// `EEXIST`: something is at the path already.
    public var alreadyExists: Bool { errno == EEXIST }
    /// `EPIPE` or `ECONNRESET`: the peer is gone.
    public var isBrokenPipe: Bool { errno == EPIPE || errno == ECONNRESET }
    /// `ECONNREFUSED`: nothing accepts connections there (a stale socket file).
    public var isConnectionRefused: Bool { errno == ECONNREFUSED }
    /// `EACCES` or `EPERM`.
    public var isPermissionDenied: Bool { errno == EACCES || errno == EPERM }
    /// `ETIMEDOUT`: a bounded wait ended first.
    public var isTimeout: Bool { errno == ETIMEDOUT }

    /// A failure that says the system is short of something (descriptors, processes, memory) rather than that the
    /// request is wrong: worth retrying once resources come back. `ENOENT` or `EACCES` are not.
    public var isResourceExhaustion: Bool { [EMFILE, ENFILE, EAGAIN, ENOMEM, ENOBUFS].contains(errno) }

    /// The current thread's `errno` for `operation`: read right after the call that failed, before anything else
    /// can overwrite it.
    @usableFromInline
    static func last(_ operation: String) -> SystemError { SystemError(errno: Glibc.errno, operation: operation) }

    /// libuv's names and messages for the errors it maps (uv.h's `UV_ERRNO_MAP`).
    private static func words(_ code: Int32) -> (name: String, message: String)? {
        switch code {
        case E2BIG: ("E2BIG", "argument list too long")
        case EACCES: ("EACCES", "permission denied")
        case EADDRINUSE: ("EADDRINUSE", "address already in use")
        case EADDRNOTAVAIL: ("EADDRNOTAVAIL", "address not available")
        case EAFNOSUPPORT: ("EAFNOSUPPORT", "address family not supported")
        case EAGAIN: ("EAGAIN", "resource temporarily unavailable")
        case EALREADY: ("EALREADY", "connection already in progress")
        case EBADF: ("EBADF", "bad file descriptor")
        case EBUSY: ("EBUSY", "resource busy or locked")
        case ECANCELED: ("ECANCELED", "operation canceled")
        case ECONNABORTED: ("ECONNABORTED", "software caused connection abort")
        case ECONNREFUSED: ("ECONNREFUSED", "connection refused")
        case ECONNRESET: ("ECONNRESET", "connection reset by peer")
        case EDESTADDRREQ: ("EDESTADDRREQ", "destination address required")
        case EEXIST: ("EEXIST", "file already exists")
        case EFAULT: ("EFAULT", "bad address in system call argument")
        case EFBIG: ("EFBIG", "file too large")
        case EHOSTUNREACH: ("EHOSTUNREACH", "host is unreachable")
        case EINTR: ("EINTR", "interrupted system call")
        case EINVAL: ("EINVAL", "invalid argument")
        case EIO: ("EIO", "i/o error")
        case EISCONN: ("EISCONN", "socket is already connected")
        case EISDIR: ("EISDIR", "illegal operation on a directory")
        case ELOOP: ("ELOOP", "too many symbolic links encountered")
        case EMFILE: ("EMFILE", "too many open files")
        case EMSGSIZE: ("EMSGSIZE", "message too long")
        case ENAMETOOLONG: ("ENAMETOOLONG", "name too long")
        case ENETDOWN: ("ENETDOWN", "network is down")
        case ENETUNREACH: ("ENETUNREACH", "network is unreachable")
        case ENFILE: ("ENFILE", "file table overflow")
        case ENOBUFS: ("ENOBUFS", "no buffer space available")
        case ENODEV: ("ENODEV", "no such device")
        case ENOENT: ("ENOENT", "no such file or directory")
        case ENOMEM: ("ENOMEM", "not enough memory")
        case ENONET: ("ENONET", "machine is not on the network")
        case ENOPROTOOPT: ("ENOPROTOOPT", "protocol not available")
        case ENOSPC: ("ENOSPC", "no space left on device")
        case ENOSYS: ("ENOSYS", "function not implemented")
        case ENOTCONN: ("ENOTCONN", "socket is not connected")
        case ENOTDIR: ("ENOTDIR", "not a directory")
        case ENOTEMPTY: ("ENOTEMPTY", "directory not empty")
        case ENOTSOCK: ("ENOTSOCK", "socket operation on non-socket")
        case ENOTSUP: ("ENOTSUP", "operation not supported on socket")
        case EOVERFLOW: ("EOVERFLOW", "value too large for defined data type")
        case EPERM: ("EPERM", "operation not permitted")
        case EPIPE: ("EPIPE", "broken pipe")
        case EPROTO: ("EPROTO", "protocol error")
        case EPROTONOSUPPORT: ("EPROTONOSUPPORT", "protocol not supported")
        case EPROTOTYPE: ("EPROTOTYPE", "protocol wrong type for socket")
        case ERANGE: ("ERANGE", "result too large")
        case EROFS: ("EROFS", "read-only file system")
        case ESHUTDOWN: ("ESHUTDOWN", "cannot send after transport endpoint shutdown")
        case ESPIPE: ("ESPIPE", "invalid seek")
        case ESRCH: ("ESRCH", "no such process")
        case ETIMEDOUT: ("ETIMEDOUT", "connection timed out")
        case ETXTBSY: ("ETXTBSY", "text file is busy")
        case EXDEV: ("EXDEV", "cross-device link not permitted")
        case ENXIO: ("ENXIO", "no such device or address")
        case EMLINK: ("EMLINK", "too many links")
        case EHOSTDOWN: ("EHOSTDOWN", "host is down")
        case EREMOTEIO: ("EREMOTEIO", "remote I/O error")
        case ENOTTY: ("ENOTTY", "inappropriate ioctl for device")
        case EILSEQ: ("EILSEQ", "illegal byte sequence")
        case ESOCKTNOSUPPORT: ("ESOCKTNOSUPPORT", "socket type not supported")
        default: nil
        }
    }
}

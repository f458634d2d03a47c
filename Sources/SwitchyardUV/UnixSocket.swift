import CLibUV
import Glibc

/// Calls `bind` or `connect` on `fd` with `path` as a `sockaddr_un`. Returns the call's status; a path too long for
/// `sun_path` fails with `ENAMETOOLONG` in `errno`, like the kernel would, instead of being cut.
func unixAddressCall(
    _ fd: Int32, _ path: String, _ name: String,
    _ call: (Int32, UnsafePointer<sockaddr>?, socklen_t) -> Int32
) -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        errno = ENAMETOOLONG
        return -1
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in bytes.enumerated() { raw[index] = byte }
        raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

/// A blocking Unix-domain stream socket client (for the CLI's control commands and for probing stale sockets).
public final class UnixSocket {
    private var fd: Int32

    /// Connects to a listening socket at `path`.
    ///
    /// With `requireSameUser` (the default) the server's credentials (`SO_PEERCRED`) must be this process's
    /// effective uid, whoever that is (root included): a socket another user put at a path this client trusts is an
    /// impostor, and the request (and its answer) must not go to it. The refusal is `EPERM`, naming both uids.
    public init(connectingTo path: String, requireSameUser: Bool = true) throws(UVError) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw UVError(errno: errno, operation: "socket") }
        if unixAddressCall(fd, path, "connect", Glibc.connect) != 0 {
            let error = UVError(errno: errno, operation: "connect \(path)")
            Glibc.close(fd)
            throw error
        }
        guard requireSameUser else { return }
        var uid: UInt32 = 0
        var pid: Int32 = 0
        if switchyard_peer_uid(fd, &uid, &pid) != 0 {
            let error = UVError(errno: errno, operation: "getsockopt(SO_PEERCRED) \(path)")
            Glibc.close(fd)
            throw error
        }
        if uid != geteuid() {
            Glibc.close(fd)
            throw UVError(
                code: UV_EPERM.rawValue,
                operation: "connect \(path): the server there runs as \(FileSystem.describeOwner(uid)) (pid \(pid)), not as this user (\(FileSystem.describeOwner(geteuid()))); refusing to talk to it")
        }
    }

    deinit { close() }

    /// Whether something accepts connections at `path` (a stale socket file does not), whoever runs it.
    public static func isListening(_ path: String) -> Bool {
        (try? UnixSocket(connectingTo: path, requireSameUser: false)) != nil
    }

    /// Who listens at `path` (`SO_PEERCRED` of a connection to it: the process that called `listen`), or nil when
    /// nothing accepts connections there.
    public static func listener(at path: String) -> (pid: Int32, uid: UInt32)? {
        guard let socket = try? UnixSocket(connectingTo: path, requireSameUser: false) else { return nil }
        var uid: UInt32 = 0
        var pid: Int32 = 0
        guard switchyard_peer_uid(socket.fd, &uid, &pid) == 0 else { return (0, 0) }
        return (pid, uid)
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8]) throws(UVError) {
        let failure = writeFully(bytes) { Glibc.send(fd, $0, $1, Int32(MSG_NOSIGNAL)) }
        if failure != 0 { throw UVError(errno: failure, operation: "send") }
    }

    /// Reads what is available (blocking until something is); empty at end of stream.
    public func read(timeoutMilliseconds: Int32 = -1) throws(UVError) -> [UInt8] {
        if timeoutMilliseconds >= 0 {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready == 0 { throw UVError(code: UV_ETIMEDOUT.rawValue, operation: "read") }
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = retryingEINTR { buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) } }
        if count < 0 { throw UVError(errno: errno, operation: "recv") }
        return Array(buffer[0..<count])
    }

    /// Half-closes the write side (the peer reads EOF).
    public func shutdownWrite() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}

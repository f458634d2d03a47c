import CSwitchyardSocket

/// A failed socket call: the errno and the operation, worded as the libuv-based client worded it
/// (`connect /path: ENOENT (no such file or directory)`), since the CLI prints it and tests match it.
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The errno (positive).
    public let code: Int32
    /// What was being attempted, e.g. `connect /run/user/1000/switchyard/demo.sock`.
    public let operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// The errno's symbolic name, e.g. `ENOENT`.
    public var name: String { unsafe String(cString: switchyard_socket_error_name(code)) }

    public var description: String {
        unsafe "\(operation): \(name) (\(String(cString: switchyard_socket_error_message(code))))"
    }

    var isNotFound: Bool { code == ENOENT }
    var isConnectionRefused: Bool { code == ECONNREFUSED }
    var isTimeout: Bool { code == ETIMEDOUT }

    static func timedOut(_ operation: String) -> SocketError { SocketError(code: ETIMEDOUT, operation: operation) }
    static func permissionDenied(_ operation: String) -> SocketError { SocketError(code: EPERM, operation: operation) }
}

/// A blocking Unix-domain stream socket connected to a host's control socket.
///
/// `Sendable`: the descriptor never changes after init (``close()`` only once, by the owner, after every user is
/// done), and concurrent `send`/`recv` on one socket are safe in the kernel.
final class ControlSocket: Sendable {
    let fd: Int32

    /// Connects to a listening socket at `path`.
    ///
    /// With `requireSameUser` (the default) the server's credentials (`SO_PEERCRED`) must be this process's
    /// effective uid, whoever that is (root included): a socket another user put at a path this client trusts is an
    /// impostor, and the request (and its answer) must not go to it. The refusal is `EPERM`, naming both uids.
    init(connectingTo path: String, requireSameUser: Bool = true) throws(SocketError) {
        let fd = unsafe switchyard_socket_connect(path)
        if fd < 0 { throw SocketError(code: -fd, operation: "connect \(path)") }
        self.fd = fd
        guard requireSameUser else { return }
        var uid: UInt32 = 0
        var pid: Int32 = 0
        let status = unsafe switchyard_socket_peer(fd, &uid, &pid)
        if status < 0 {
            switchyard_socket_close(fd)
            throw SocketError(code: -status, operation: "getsockopt(SO_PEERCRED) \(path)")
        }
        let own = switchyard_socket_euid()
        if uid != own {
            switchyard_socket_close(fd)
            throw SocketError.permissionDenied(
                "connect \(path): the server there runs as \(Self.describeOwner(uid)) (pid \(pid)), not as this user (\(Self.describeOwner(own))); refusing to talk to it")
        }
    }

    /// `uid 1000 (alice)`, or `uid 1000` when the user has no name.
    static func describeOwner(_ uid: UInt32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard unsafe switchyard_socket_user_name(uid, &buffer, buffer.count) == 0 else { return "uid \(uid)" }
        return "uid \(uid) (\(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))"
    }

    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8]) throws(SocketError) {
        let status = unsafe switchyard_socket_send_all(fd, bytes, bytes.count)
        if status < 0 { throw SocketError(code: -status, operation: "send") }
    }

    /// Reads what is available (blocking up to `timeoutMilliseconds`, -1 forever); empty at end of stream.
    func read(timeoutMilliseconds: Int32 = -1) throws(SocketError) -> [UInt8] {
        if timeoutMilliseconds >= 0 {
            let ready = switchyard_socket_wait(fd, -1, timeoutMilliseconds)
            if ready == 0 { throw .timedOut("read") }
            if ready < 0 { throw SocketError(code: -ready, operation: "poll") }
        }
        return try receive()
    }

    /// Reads what is available, blocking; empty at end of stream.
    func receive() throws(SocketError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = unsafe switchyard_socket_recv(fd, &buffer, buffer.count)
        if count < 0 { throw SocketError(code: Int32(-count), operation: "recv") }
        buffer.removeSubrange(Int(count)...)
        return buffer
    }

    /// Ends both directions without releasing the descriptor: a reader blocked on it wakes up to end of stream.
    func shutdown() { switchyard_socket_shutdown(fd) }

    /// Releases the descriptor. Call once, when no thread uses the socket any more.
    func close() { switchyard_socket_close(fd) }
}

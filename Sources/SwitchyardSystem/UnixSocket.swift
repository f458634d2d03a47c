import CSwitchyardSystem
import Glibc
import Synchronization

/// A blocking Unix-domain stream socket connected to a server: the control client's connection, the CLI's probes of
/// a socket path. The host's own listener is non-blocking, on the loop (``UnixSocket/listen(at:mode:backlog:)``).
///
/// `Sendable`: the descriptor is atomic and closed once (``close()``, or `deinit`); concurrent `send` and `recv` on
/// one socket are safe in the kernel, and an operation after ``close()`` fails with `EBADF` instead of reaching a
/// descriptor number reused by someone else.
public final class UnixSocket: Sendable {
    private let fd: Atomic<Int32>

    /// The descriptor (-1 once closed), for `poll` and diagnostics.
    public var descriptor: Int32 { fd.load(ordering: .acquiring) }

    /// Connects to a listening socket at `path`.
    ///
    /// With `requireSameUser` (the default) the server's credentials (`SO_PEERCRED`) must be this process's
    /// effective uid, whoever that is (root included): a socket another user put at a path this client trusts is an
    /// impostor, and the request (and its answer) must not go to it. The refusal is `EPERM`, naming both uids.
    public init(connectingTo path: String, requireSameUser: Bool = true) throws(SystemError) {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if socket < 0 { throw SystemError.last("socket") }
        fd = Atomic(socket)
        do throws(SystemError) {
            _ = try syscall("connect \(path)") { Self.withAddress(path) { Glibc.connect(socket, $0, $1) } }
            guard requireSameUser else { return }
            let peer = try Self.peerCredentials(socket, "getsockopt(SO_PEERCRED) \(path)")
            let own = geteuid()
            guard peer.uid == own else {
                throw SystemError(
                    errno: EPERM,
                    operation:
                        "connect \(path): the server there runs as \(FileSystem.describeOwner(peer.uid)) (pid \(peer.pid)), not as this user (\(FileSystem.describeOwner(own))); refusing to talk to it"
                )
            }
        } catch {
            close()
            throw error
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
        return (try? peerCredentials(socket.descriptor, "getsockopt(SO_PEERCRED)")) ?? (0, 0)
    }

    /// Writes all of `bytes` (no SIGPIPE: a closed peer is `EPIPE`).
    public func write(_ bytes: [UInt8]) throws(SystemError) {
        let socket = descriptor
        let failure = writeFully(bytes) { Glibc.send(socket, $0, $1, Int32(MSG_NOSIGNAL)) }
        if failure != 0 { throw SystemError(errno: failure, operation: "send") }
    }

    /// Reads what is available, waiting up to `timeoutMilliseconds` (-1: forever) for something to be; empty at
    /// end of stream. `ETIMEDOUT` when nothing came in time.
    public func read(timeoutMilliseconds: Int32 = -1) throws(SystemError) -> [UInt8] {
        if timeoutMilliseconds >= 0 {
            let ready = try waitReadable(waking: nil, timeoutMilliseconds: timeoutMilliseconds)
            if !ready.readable { throw SystemError(errno: ETIMEDOUT, operation: "read") }
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let socket = descriptor
        let count = try syscall("recv") {
            buffer.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
        }
        buffer.removeSubrange(count...)
        return buffer
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) until the socket is readable or `wake` was poked. A hang-up
    /// or error counts as readable: the read that follows reports it.
    public func waitReadable(
        waking wake: WakePipe?, timeoutMilliseconds: Int32
    ) throws(SystemError) -> (readable: Bool, woken: Bool) {
        var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        if let wake { descriptors.append(pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)) }
        let ready = try syscall("poll") { poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds) }
        guard ready > 0 else { return (false, false) }
        return (descriptors[0].revents != 0, descriptors.count > 1 && descriptors[1].revents != 0)
    }

    /// Ends both directions without releasing the descriptor: a reader blocked on it wakes up to end of stream.
    public func shutdown() { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }

    /// Half-closes the write side (the peer reads EOF).
    public func shutdownWrite() { _ = Glibc.shutdown(descriptor, Int32(SHUT_WR)) }

    /// Releases the descriptor (once; later calls do nothing). Call when no thread uses the socket any more.
    public func close() {
        let socket = fd.exchange(-1, ordering: .acquiringAndReleasing)
        if socket >= 0 { Glibc.close(socket) }
    }

    // MARK: - The listening side, for the libuv wrapper's listener

    /// A non-blocking, close-on-exec listening socket at `path`, the file's mode set to `mode` between `bind` and
    /// `listen` (so no client can connect before it holds).
    package static func listen(at path: String, mode: UInt32, backlog: Int32) throws(SystemError) -> Int32 {
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let socket = Glibc.socket(AF_UNIX, kind, 0)
        if socket < 0 { throw SystemError.last("socket") }
        if withAddress(path, { Glibc.bind(socket, $0, $1) }) != 0 {
            let error = SystemError.last("bind \(path)")
            Glibc.close(socket)
            throw error
        }
        if chmod(path, mode) != 0 || Glibc.listen(socket, backlog) != 0 {
            let error = SystemError.last("listen \(path)")
            Glibc.close(socket)
            unlink(path)
            throw error
        }
        return socket
    }

    /// A waiting connection on the listening `socket`, non-blocking and close-on-exec from birth (`accept4`), or
    /// nil when none is waiting (`EAGAIN`).
    package static func accept(_ socket: Int32) throws(SystemError) -> Int32? {
        let client = retryingEINTR {
            accept4(socket, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
        }
        if client >= 0 { return client }
        if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
        throw SystemError.last("accept4")
    }

    /// The peer's process id and user id of a connected Unix socket (`SO_PEERCRED`).
    package static func peerCredentials(
        _ socket: Int32, _ operation: String
    ) throws(SystemError) -> (pid: Int32, uid: UInt32) {
        var credentials = switchyard_ucred()
        var length = socklen_t(MemoryLayout<switchyard_ucred>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            throw SystemError.last(operation)
        }
        return (credentials.pid, credentials.uid)
    }

    /// Calls `call` (`bind` or `connect`) with `path` as a `sockaddr_un`. A path too long for `sun_path` fails with
    /// `ENAMETOOLONG` in `errno`, as the kernel would, instead of being cut.
    private static func withAddress(_ path: String, _ call: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
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
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                call($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}

/// Wakes a thread blocked in ``UnixSocket/waitReadable(waking:timeoutMilliseconds:)`` (a pipe: the self-pipe
/// trick), for a reader that must also notice a new deadline or a close.
public final class WakePipe: Sendable {
    /// What a waiter polls.
    let readEnd: Int32
    private let writeEnd: Int32

    /// A non-blocking, close-on-exec pipe.
    public init() throws(SystemError) {
        (readEnd, writeEnd) = try Descriptor.pipe(nonBlocking: true)
    }

    deinit {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }

    /// Wakes the waiter (one pending wake-up is enough: a full pipe is ignored).
    public func poke() {
        var byte: UInt8 = 1
        _ = Glibc.write(writeEnd, &byte, 1)
    }

    /// Takes every pending wake-up.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ Glibc.read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
    }
}

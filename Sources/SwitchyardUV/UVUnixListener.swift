import CLibUV
import Glibc
import SwitchyardSystem

/// A listening Unix-domain socket that survives running out of descriptors.
///
/// libuv's own listener (`uv_listen`) retries `accept` in a loop when it fails with `EMFILE`: once its reserve
/// descriptor is gone too, that loop never returns and the whole host spins at 100 % CPU, serving nothing (not even
/// the plugin pipes whose closing would free descriptors). Here the socket is watched with a `uv_poll_t` that this
/// class can stop: when `accept4` fails for lack of descriptors, memory or buffers, watching stops and resumes after a
/// backoff (50 ms doubling to 1 s). Waiting clients stay in the kernel's backlog and are served once descriptors come
/// back. Every descriptor is close-on-exec from birth (`SOCK_CLOEXEC`, `accept4`).
///
/// - Important: Loop thread only.
public final class UVUnixListener: UVHandle {
    private var fd: Int32
    private var handler: ((UVPipe) -> Void)?
    private var retryTimer: UVTimer?
    private var backoffMs: UInt64 = 0
    /// Called when accepting paused for lack of resources, with the error and the delay before the next attempt.
    public var onPause: ((UVError, UInt64) -> Void)?

    /// Creates the socket file at `path` with `mode` (applied between `bind` and `listen`, so no client can connect
    /// before it holds) and listens.
    public init(loop: UVLoop, path: String, mode: UInt32 = 0o600, backlog: Int32 = 64) throws(UVError) {
        do { fd = try UnixSocket.listen(at: path, mode: mode, backlog: backlog) } catch { throw UVError(error) }
        super.init(loop: loop, type: UV_POLL)
        guard let raw else {
            Glibc.close(fd)
            throw UVError.closed("uv_poll_init")
        }
        let status = uv_poll_init(loop.raw, raw.assumingMemoryBound(to: uv_poll_t.self), fd)
        if status < 0 {
            abandon()
            Glibc.close(fd)
            unlink(path)
            throw UVError(code: status, operation: "uv_poll_init")
        }
        adopt()
    }

    /// Starts accepting; `handler` gets each connection as an open ``UVPipe``.
    public func start(_ handler: @escaping (UVPipe) -> Void) throws(UVError) {
        self.handler = handler
        try watch()
    }

    private func watch() throws(UVError) {
        guard isOpen, let raw else { throw UVError.closed("uv_poll_start") }
        try UVError.check(
            uv_poll_start(
                raw.assumingMemoryBound(to: uv_poll_t.self), Int32(UV_READABLE.rawValue), listenerPollCallback),
            "uv_poll_start")
    }

    fileprivate func readable(_ status: Int32) {
        if status < 0 {
            pause(UVError(code: status, operation: "poll"))
            return
        }
        // A bounded batch per wake-up: a flood of connections must not starve the plugins' pipes.
        for _ in 0..<32 {
            guard isOpen else { return }
            let client: Int32
            do throws(SystemError) {
                guard let accepted = try UnixSocket.accept(fd) else {
                    backoffMs = 0
                    return
                }
                client = accepted
            } catch {
                if error.errno == ECONNABORTED { continue }
                pause(UVError(error))
                return
            }
            backoffMs = 0
            do {
                let pipe = try UVPipe(loop: loop)
                do { try pipe.open(fileDescriptor: client) } catch {
                    pipe.close()
                    Glibc.close(client)
                    continue
                }
                handler?(pipe)
            } catch {
                Glibc.close(client)
            }
        }
    }

    /// Stops watching (so the loop does not spin on a socket it cannot accept from) and tries again after a backoff.
    private func pause(_ error: UVError) {
        guard isOpen, let raw else { return }
        uv_poll_stop(raw.assumingMemoryBound(to: uv_poll_t.self))
        backoffMs = backoffMs == 0 ? 50 : min(backoffMs * 2, 1_000)
        onPause?(error, backoffMs)
        guard let timer = retryTimer ?? (try? UVTimer(loop: loop)) else {
            try? watch()
            return
        }
        retryTimer = timer
        do {
            try timer.start(after: backoffMs) { [weak self] in try? self?.watch() }
        } catch {
            try? watch()
        }
    }

    override func willClose() {
        handler = nil
        onPause = nil
        retryTimer?.close()
        retryTimer = nil
    }

    override func didClose() {
        // Only now: a descriptor must outlive the poll handle watching it.
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    override var kindName: String { "listener" }
}

private let listenerPollCallback: uv_poll_cb = { handle, status, _ in
    wrapper(handle?.pointee.data, as: UVUnixListener.self)?.readable(status)
}

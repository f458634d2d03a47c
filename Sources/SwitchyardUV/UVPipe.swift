import CLibUV
import Glibc
import SwitchyardSystem

/// A pipe or Unix-domain socket stream (`uv_pipe_t`).
///
/// Child stdio created by ``UVProcess/spawn(loop:options:onExit:)`` is an `AF_UNIX` socketpair, so
/// ``shutdown(_:)`` half-closes it: the child sees EOF on stdin while its stdout stays readable.
///
/// Writes try `uv_try_write` first (no allocation in the common case, and it refuses with `EAGAIN` while older writes
/// are queued, so ordering holds), then queue the rest in one allocation that lives until the write callback.
/// ``queuedBytes`` lets the caller bound its write queue in bytes.
public final class UVPipe: UVHandle {
    /// What a read produced.
    public enum ReadEvent {
        /// Bytes, at an arbitrary boundary.
        case data([UInt8])
        /// The peer closed its end. Reading has stopped.
        case eof
        /// A read error. Reading has stopped.
        case error(UVError)
    }

    private var readHandler: ((ReadEvent) -> Void)?
    /// Between a (re)start and a stop of reading.
    private var reading = false
    private var connectionHandler: ((UVError?) -> Void)?

    /// Bytes handed to ``write(_:)`` that the kernel has not accepted yet (corked ones included).
    public var queuedBytes: Int { queued }
    // The write path's state is touched several times per message, on the loop thread only, and never across a
    // call that could touch it again: the runtime's exclusivity bookkeeping (~80 instructions per access) is
    // not paid for it.
    @exclusivity(unchecked) private var queued = 0
    /// While corked (``cork()``), writes gather here and leave together at ``uncork()``.
    @exclusivity(unchecked) private var corked: [UInt8] = []
    @exclusivity(unchecked) private var corkDepth = 0
    private static let corkLimit = 64 * 1024
    /// The write queue drained while corked bytes waited: ``onDrain`` is due once they have left.
    private var drainOwed = false
    /// Called when a queued write fails (for example `EPIPE` after the peer exited).
    public var onWriteError: ((UVError) -> Void)?
    /// Called when ``queuedBytes`` drops back to 0 after a queued write completed.
    public var onDrain: (() -> Void)?

    /// A new, unconnected pipe. `ipc` must be false for child stdio.
    public init(loop: UVLoop, ipc: Bool = false) throws(UVError) {
        super.init(loop: loop, type: UV_NAMED_PIPE)
        guard let raw else { throw UVError.closed("uv_pipe_init") }
        let status = uv_pipe_init(loop.raw, raw.assumingMemoryBound(to: uv_pipe_t.self), ipc ? 1 : 0)
        if status < 0 {
            abandon()
            throw UVError(code: status, operation: "uv_pipe_init")
        }
        adopt()
    }

    var stream: UnsafeMutablePointer<uv_stream_t>? {
        raw?.assumingMemoryBound(to: uv_stream_t.self)
    }

    // MARK: Reading

    /// Starts delivering reads to `handler` until EOF, an error, ``stopReading()`` or close.
    public func startReading(_ handler: @escaping (ReadEvent) -> Void) throws(UVError) {
        assertOnLoopThread()
        guard isOpen, let stream else { throw UVError.closed("uv_read_start") }
        readHandler = handler
        try UVError.check(uv_read_start(stream, pipeAllocCallback, pipeReadCallback), "uv_read_start")
        reading = true
    }

    /// Stops reading; the kernel buffer then fills and the peer's writes block (backpressure).
    public func stopReading() {
        assertOnLoopThread()
        guard isOpen, let stream else { return }
        uv_read_stop(stream)
        reading = false
    }

    /// Starts reading again after ``stopReading()``, with the handler given to ``startReading(_:)``. Does nothing
    /// once the stream has ended (EOF or an error: the handler is gone).
    public func resumeReading() {
        assertOnLoopThread()
        guard isOpen, let stream, readHandler != nil else { return }
        reading = uv_read_start(stream, pipeAllocCallback, pipeReadCallback) == 0
    }

    /// Reads, without waiting, what is already buffered on the descriptor (up to `maxBytes`) and hands it to the read
    /// handler as ordinary data, as if libuv had read it. For a reader that must see one stream's bytes before it acts
    /// on another's: a plugin's stderr, written before the answer being handled on its stdout. End of stream and
    /// errors are left to the regular read path. Does nothing while reading is stopped (the reader's own
    /// back-pressure stays in force), and stops as soon as the handler stops it. Loop thread only, like every read.
    public func readBuffered(maxBytes: Int = 1 << 16) {
        var remaining = maxBytes
        while remaining > 0, reading, isOpen, readHandler != nil, let fd = fileDescriptor {
            let (buffer, size) = allocate()
            // MSG_DONTWAIT: never blocks, whatever the descriptor's flags (plugin stdio are AF_UNIX sockets).
            let count = retryingEINTR { recv(fd, buffer, min(size, remaining), Int32(MSG_DONTWAIT)) }
            guard count > 0 else { return }
            remaining -= count
            didRead(count, buffer)
        }
    }

    /// The loop's read buffer: ``didRead(_:_:)`` copies the bytes out before the handler runs.
    fileprivate func allocate() -> (UnsafeMutableRawPointer, Int) { (loop.sharedReadBuffer(), UVLoop.readBufferSize) }

    fileprivate func didRead(_ count: Int, _ base: UnsafeMutableRawPointer?) {
        if count > 0, let base {
            // From a buffer pointer, not `init(unsafeUninitializedCapacity:)`: that one runs unspecialised and looks
            // up the array's generic metadata on every read (~500 instructions, a read per message when idle).
            let bytes = Array(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count))
            // Handling what a peer sent is running time, not a stall of the loop (see UVLoopClock).
            let started = uv_hrtime()
            readHandler?(.data(bytes))
            loop.clock?.addInputWork(uv_hrtime() &- started)
        } else if count < 0 {
            stopReading()
            let handler = readHandler
            readHandler = nil
            if count == Int(UV_EOF.rawValue) {
                handler?(.eof)
            } else {
                handler?(.error(UVError(code: Int32(truncatingIfNeeded: count), operation: "read")))
            }
        }
    }

    // MARK: Writing

    /// Writes `bytes`, queueing what the kernel does not take at once.
    ///
    /// - Throws: an immediate failure such as `EPIPE` (the peer is gone). A failure of a queued write is reported
    ///   through ``onWriteError`` instead.
    public func write(_ bytes: [UInt8]) throws(UVError) {
        assertOnLoopThread()
        guard isOpen, let stream else { throw UVError.closed("uv_write") }
        if bytes.isEmpty { return }
        if corkDepth > 0 {
            if corked.isEmpty { corked = bytes } else { corked.append(contentsOf: bytes) }
            queued += bytes.count
            // Bounded: a long batch leaves in pieces of this size, so what waits here stays small.
            if corked.count >= Self.corkLimit { flushCorked() }
            return
        }
        try send(bytes, on: stream)
    }

    /// Holds writes back until the matching ``uncork()``, which sends them in one write: the answers to a batch of
    /// lines read at once (a pipelined burst) leave in one syscall, not one each. Nests. A failure of the gathered
    /// write is reported through ``onWriteError``, like a queued one's.
    public func cork() { corkDepth += 1 }

    /// Ends a ``cork()``; the outermost sends what was gathered.
    public func uncork() {
        assertOnLoopThread()
        guard corkDepth > 0 else { return }
        corkDepth -= 1
        if corkDepth == 0 { flushCorked() }
    }

    private func flushCorked() {
        guard !corked.isEmpty else { return }
        let bytes = corked
        corked = []
        queued -= bytes.count
        guard isOpen, let stream else { return }
        do throws(UVError) { try send(bytes, on: stream) } catch {
            onWriteError?(error)
            return
        }
        if drainOwed && queued == 0 {
            drainOwed = false
            onDrain?()
        }
    }

    private func send(_ bytes: [UInt8], on stream: UnsafeMutablePointer<uv_stream_t>) throws(UVError) {
        var offset = 0
        if queued == 0 {
            let written = bytes.withUnsafeBytes { buffer -> Int32 in
                var descriptor = uv_buf_init(
                    UnsafeMutablePointer(mutating: buffer.baseAddress?.assumingMemoryBound(to: CChar.self)),
                    UInt32(buffer.count))
                return uv_try_write(stream, &descriptor, 1)
            }
            if written >= 0 {
                offset = Int(written)
                if offset == bytes.count { return }
            } else if written != UV_EAGAIN.rawValue {
                throw UVError(code: written, operation: "uv_try_write")
            }
        }
        try enqueue(bytes, from: offset, on: stream)
    }

    private func enqueue(
        _ bytes: [UInt8], from offset: Int, on stream: UnsafeMutablePointer<uv_stream_t>
    )
        throws(UVError)
    {
        let count = bytes.count - offset
        // One allocation: [uv_write_t][payload]. libuv advances req->bufs while writing, so the length is kept
        // in WriteRequestHeader rather than read back from the request in the callback (libuv-swift-notes §3).
        let headerSize = MemoryLayout<WriteRequestHeader>.stride
        let memory = UnsafeMutableRawPointer.allocate(byteCount: headerSize + count, alignment: 16)
        let header = memory.bindMemory(to: WriteRequestHeader.self, capacity: 1)
        header.initialize(to: WriteRequestHeader(request: uv_write_t(), length: count))
        let payload = memory + headerSize
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress {
                payload.copyMemory(from: base + offset, byteCount: count)
            }
        }
        let request = UnsafeMutableRawPointer(header).assumingMemoryBound(to: uv_write_t.self)
        request.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        var descriptor = uv_buf_init(payload.assumingMemoryBound(to: CChar.self), UInt32(count))
        let status = uv_write(request, stream, &descriptor, 1, pipeWriteCallback)
        if status < 0 {
            memory.deallocate()
            throw UVError(code: status, operation: "uv_write")
        }
        queued += count
    }

    fileprivate func writeCompleted(length: Int, status: Int32) {
        queued -= length
        if status < 0 && status != UV_ECANCELED.rawValue {
            onWriteError?(UVError(code: status, operation: "uv_write"))
        }
        if queued == 0 && status >= 0 {
            onDrain?()
        } else if queued == corked.count && status >= 0 {
            drainOwed = true
        }
    }

    /// Half-closes the write side once queued writes have drained (the peer reads EOF).
    public func shutdown(_ completion: ((UVError?) -> Void)? = nil) throws(UVError) {
        assertOnLoopThread()
        guard isOpen, let stream else { throw UVError.closed("uv_shutdown") }
        // What is corked was written before the half-close: it leaves first.
        flushCorked()
        let request = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        request.initialize(to: uv_shutdown_t())
        let box = ShutdownBox(completion)
        request.pointee.data = Unmanaged.passRetained(box).toOpaque()
        let status = uv_shutdown(request, stream, pipeShutdownCallback)
        if status < 0 {
            Unmanaged<ShutdownBox>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            throw UVError(code: status, operation: "uv_shutdown")
        }
    }

    // MARK: File descriptor and credentials

    /// The underlying descriptor, for diagnostics and `SO_PEERCRED`.
    public var fileDescriptor: Int32? {
        guard isOpen, let raw else { return nil }
        var fd: uv_os_fd_t = -1
        guard uv_fileno(handlePointer(raw), &fd) == 0 else { return nil }
        return fd
    }

    /// The peer's process id and user id of a connected Unix socket (`SO_PEERCRED`).
    public func peerCredentials() throws(UVError) -> (pid: Int32, uid: UInt32) {
        guard let fd = fileDescriptor else { throw UVError.closed("getsockopt(SO_PEERCRED)") }
        do { return try UnixSocket.peerCredentials(fd, "getsockopt(SO_PEERCRED)") } catch { throw UVError(error) }
    }

    /// Wraps an existing descriptor (for example stdin) in this pipe.
    public func open(fileDescriptor fd: Int32) throws(UVError) {
        guard isOpen, let raw else { throw UVError.closed("uv_pipe_open") }
        try UVError.check(uv_pipe_open(raw.assumingMemoryBound(to: uv_pipe_t.self), fd), "uv_pipe_open")
    }

    // MARK: Server and client

    /// Binds a listening socket to a filesystem path.
    public func bind(path: String) throws(UVError) {
        guard isOpen, let raw else { throw UVError.closed("uv_pipe_bind") }
        try UVError.check(uv_pipe_bind(raw.assumingMemoryBound(to: uv_pipe_t.self), path), "uv_pipe_bind")
    }

    /// Starts listening; `handler` runs once per incoming connection (call ``accept()`` in it).
    public func listen(backlog: Int32 = 64, _ handler: @escaping (UVError?) -> Void) throws(UVError) {
        guard isOpen, let stream else { throw UVError.closed("uv_listen") }
        connectionHandler = handler
        try UVError.check(uv_listen(stream, backlog, pipeConnectionCallback), "uv_listen")
    }

    /// Accepts a pending connection into a new pipe.
    public func accept() throws(UVError) -> UVPipe {
        guard isOpen, let stream else { throw UVError.closed("uv_accept") }
        let client = try UVPipe(loop: loop)
        guard let clientStream = client.stream else { throw UVError.closed("uv_accept") }
        let status = uv_accept(stream, clientStream)
        if status < 0 {
            client.close()
            throw UVError(code: status, operation: "uv_accept")
        }
        return client
    }

    fileprivate func incomingConnection(_ status: Int32) {
        connectionHandler?(status < 0 ? UVError(code: status, operation: "uv_listen") : nil)
    }

    /// Connects to a listening socket at `path`.
    public func connect(path: String, _ completion: @escaping (UVError?) -> Void) throws(UVError) {
        guard isOpen, let raw else { throw UVError.closed("uv_pipe_connect") }
        let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        request.initialize(to: uv_connect_t())
        request.pointee.data = Unmanaged.passRetained(ConnectBox(completion)).toOpaque()
        uv_pipe_connect(request, raw.assumingMemoryBound(to: uv_pipe_t.self), path, pipeConnectCallback)
    }

    override func willClose() {
        readHandler = nil
        connectionHandler = nil
        onDrain = nil
        // Closing cancels whatever has not left, corked or queued.
        queued -= corked.count
        corked = []
    }

    override func didClose() {
        onWriteError = nil
    }

    override var kindName: String { "pipe" }
}

private struct WriteRequestHeader {
    var request: uv_write_t
    var length: Int
}

private final class ShutdownBox {
    let completion: ((UVError?) -> Void)?
    init(_ completion: ((UVError?) -> Void)?) { self.completion = completion }
}

private final class ConnectBox {
    let completion: (UVError?) -> Void
    init(_ completion: @escaping (UVError?) -> Void) { self.completion = completion }
}

private let pipeAllocCallback: uv_alloc_cb = { handle, _, buffer in
    guard let buffer else { return }
    guard let pipe = wrapper(handle?.pointee.data, as: UVPipe.self) else {
        buffer.pointee = uv_buf_init(nil, 0)
        return
    }
    let (base, size) = pipe.allocate()
    buffer.pointee = uv_buf_init(base.assumingMemoryBound(to: CChar.self), UInt32(size))
}

private let pipeReadCallback: uv_read_cb = { stream, nread, buffer in
    guard let pipe = wrapper(stream?.pointee.data, as: UVPipe.self) else { return }
    pipe.didRead(nread, UnsafeMutableRawPointer(buffer?.pointee.base))
}

private let pipeWriteCallback: uv_write_cb = { request, status in
    guard let request else { return }
    let header = UnsafeMutableRawPointer(request).assumingMemoryBound(to: WriteRequestHeader.self)
    let length = header.pointee.length
    let owner = request.pointee.data
    header.deinitialize(count: 1)
    UnsafeMutableRawPointer(request).deallocate()
    // Pending writes are cancelled (ECANCELED) before a stream's close callback, so the owner is still alive.
    if let owner {
        Unmanaged<UVPipe>.fromOpaque(owner).takeUnretainedValue().writeCompleted(length: length, status: status)
    }
}

private let pipeShutdownCallback: uv_shutdown_cb = { request, status in
    guard let request else { return }
    let box = request.pointee.data.map { Unmanaged<ShutdownBox>.fromOpaque($0).takeRetainedValue() }
    request.deallocate()
    box?.completion?(status < 0 ? UVError(code: status, operation: "uv_shutdown") : nil)
}

private let pipeConnectionCallback: uv_connection_cb = { server, status in
    wrapper(server?.pointee.data, as: UVPipe.self)?.incomingConnection(status)
}

private let pipeConnectCallback: uv_connect_cb = { request, status in
    guard let request else { return }
    let box = request.pointee.data.map { Unmanaged<ConnectBox>.fromOpaque($0).takeRetainedValue() }
    request.deallocate()
    box?.completion(status < 0 ? UVError(code: status, operation: "uv_pipe_connect") : nil)
}

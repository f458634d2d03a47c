import CLibUV
import Glibc
import Synchronization

/// One libuv event loop. Everything attached to it runs on the thread that calls ``run()``.
///
/// The loop is deliberately not `Sendable`: handles and the state built on them are confined to the loop thread,
/// and the compiler rejects moving them into a `Task`. The only cross-thread entry is ``remote``.
///
/// Creating the first loop ignores `SIGPIPE` (a write to a dead plugin then fails with `EPIPE` instead of killing
/// the host) and asks libuv to stop stdio inheritance.
public final class UVLoop {
    let raw: UnsafeMutablePointer<uv_loop_t>
    private(set) var openHandleCount = 0
    private var remoteHandle: RemoteAsync?
    /// Read on every message (``activeNow``, each read's input work); set at init and close, on the loop thread:
    /// exempt from the runtime's exclusivity bookkeeping like the clock's own fields.
    @exclusivity(unchecked) private(set) var clock: UVLoopClock?
    private var ownerThread: uv_thread_t?
    private var closed = false
    /// One read buffer for every stream of the loop: each read is copied out before its handler runs, so no two
    /// reads ever need one at a time, and a buffer per stream (two per plugin) would mostly sit idle.
    private var readBuffer: UnsafeMutableRawPointer?
    static let readBufferSize = 64 * 1024

    /// The thread-safe face of this loop.
    public let remote: UVLoopRemote

    public init() throws(UVError) {
        ProcessSetup.once()
        raw = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        let status = uv_loop_init(raw)
        if status < 0 {
            raw.deallocate()
            throw UVError(code: status, operation: "uv_loop_init")
        }
        let queue = RemoteQueue()
        remote = UVLoopRemote(queue: queue)
        let async = RemoteAsync(loop: self, queue: queue)
        try async.start()
        remoteHandle = async
        async.keepsLoopAlive = false
        let clock = try UVLoopClock(loop: self)
        self.clock = clock
        clock.drainRemote = { [unowned async] in async.drain() }
        queue.wakeOnLoopThread = { [unowned clock] in clock.wakeForLocalJobs() }
    }

    deinit {
        // Handles hold the loop strongly, so deinit only runs after close() or when nothing was ever attached.
        // An unclosed loop's memory is leaked on purpose: libuv may still point into it.
        if closed { raw.deallocate() }
        readBuffer?.deallocate()  // no stream is left to read into it
    }

    /// The buffer streams of this loop read into (``readBufferSize`` bytes). Loop thread only.
    func sharedReadBuffer() -> UnsafeMutableRawPointer {
        if let readBuffer { return readBuffer }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.readBufferSize, alignment: 16)
        readBuffer = buffer
        return buffer
    }

    /// Runs until no referenced handle is active or ``stop()`` is called.
    ///
    /// - Important: Never call this on a Swift-concurrency pool thread: it blocks. Use a `SystemThread`.
    public func run() {
        claimThread()
        uv_run(raw, UV_RUN_DEFAULT)
    }

    /// Runs one iteration, blocking for I/O if there is nothing pending.
    @discardableResult
    public func runOnce() -> Bool {
        claimThread()
        return uv_run(raw, UV_RUN_ONCE) != 0
    }

    /// Runs ready callbacks without blocking.
    @discardableResult
    public func runNoWait() -> Bool {
        claimThread()
        return uv_run(raw, UV_RUN_NOWAIT) != 0
    }

    private func claimThread() {
        let current = uv_thread_self()
        ownerThread = current
        remote.queue.state.withLock { $0.owner = UInt(current) }
    }

    /// Makes ``run()`` return after the current iteration.
    public func stop() { uv_stop(raw) }

    /// The loop's cached time in milliseconds (`uv_now`), cheap and monotonic.
    public var now: UInt64 { uv_now(raw) }

    /// Refreshes ``now`` from the clock.
    public func updateTime() { uv_update_time(raw) }

    /// A high-resolution monotonic clock in nanoseconds (`uv_hrtime`).
    public static var hrtime: UInt64 { uv_hrtime() }

    /// Whether the caller runs on the thread that runs this loop (true before the loop first runs).
    public var inLoopThread: Bool {
        guard let ownerThread else { return true }
        var current = uv_thread_self()
        var owner = ownerThread
        return uv_thread_equal(&current, &owner) != 0
    }

    /// Number of handles still open, not counting the loop's own (wake-up and clock) handles.
    public var liveHandleCount: Int {
        openHandleCount - (remoteHandle == nil ? 0 : 1) - (clock?.handles.count ?? 0)
    }

    // MARK: - Stall-aware time

    /// Milliseconds of *running* time: a monotonic clock that advances by only 50 ms for each stall of the loop
    /// (see ``UVLoopClock``). Deadlines that condemn a plugin are measured on it, so the host's own stall never counts
    /// against a plugin. Read it in an ``afterNextPoll(_:)`` job for a verdict: only there is the current
    /// iteration's stall already accounted.
    public var activeNow: UInt64 {
        (uv_hrtime() &- (clock?.stalledNanoseconds ?? 0)) / 1_000_000
    }

    /// The longest stretch, in milliseconds, during which the loop did not poll for I/O since it was created.
    public var maxLagMilliseconds: UInt64 { (clock?.maxBlindNanoseconds ?? 0) / 1_000_000 }

    /// Total time in milliseconds excluded from ``activeNow`` (each stall's length beyond the 50 ms threshold).
    public var stalledMilliseconds: UInt64 { (clock?.stalledNanoseconds ?? 0) / 1_000_000 }

    /// Called on the loop thread with the length in ms of every stall (a stretch of over 50 ms without polling I/O).
    public var onStall: ((UInt64) -> Void)? {
        get { clock?.onStall }
        set { clock?.onStall = newValue }
    }

    /// Runs `job` on the loop thread after the loop has next polled for I/O and accounted its blind time: the
    /// place for a verdict on a peer, which must first see whatever the peer already sent.
    public func afterNextPoll(_ job: @escaping () -> Void) {
        guard let clock else { return }
        clock.afterNextPoll(job)
    }

    func handleOpened() { openHandleCount += 1 }
    func handleClosed() { openHandleCount -= 1 }

    /// Closes every handle still open, runs their close callbacks and closes the loop.
    ///
    /// - Returns: the number of handles that were still open besides the loop's own (a leak count tests assert is
    ///   0, as libuv's `MAKE_VALGRIND_HAPPY` does).
    @discardableResult
    public func close() -> Int {
        guard !closed else { return 0 }
        remote.queue.state.withLock { $0.closed = true }
        // Jobs already accepted still run, on this thread while the handles are open: an accepted job is a promise
        // (a task suspended on this loop's executor would otherwise never resume).
        remoteHandle?.drain()
        let leaked = liveHandleCount
        remoteHandle?.close()
        remoteHandle = nil
        clock?.close()
        clock = nil
        uv_walk(raw, closeWalker, nil)
        // Process handles close only after their exit callback; SIGKILLed children exit promptly.
        var spins = 0
        while uv_loop_alive(raw) != 0 && spins < 10_000 {
            uv_run(raw, UV_RUN_ONCE)
            spins += 1
        }
        if uv_loop_close(raw) == 0 {
            closed = true
        }
        return leaked
    }
}

private let closeWalker: uv_walk_cb = { handle, _ in
    guard let handle, uv_is_closing(handle) == 0, let data = handle.pointee.data else { return }
    Unmanaged<UVHandle>.fromOpaque(data).takeUnretainedValue().close()
}

// MARK: - Cross-thread execution

/// The job queue shared by ``UVLoopRemote`` (any thread) and the loop's async handle (loop thread).
final class RemoteQueue: Sendable {
    struct State: Sendable {
        var jobs: [@Sendable () -> Void] = []
        /// The `uv_async_t*` as an integer while the handle is open, 0 otherwise.
        var asyncAddress: UInt = 0
        var closed = false
        /// The thread that runs the loop (`uv_thread_t`), 0 before it first runs.
        var owner: UInt = 0
    }

    let state = Mutex(State())
    /// Makes the loop run jobs queued from its own thread in the current iteration (set once, by the loop, before
    /// anyone can queue; called only on the loop's thread).
    nonisolated(unsafe) var wakeOnLoopThread: (() -> Void)?
}

/// The `Sendable` face of a loop: schedules work onto the loop thread from any thread.
///
/// Like NIO's `EventLoop.execute`, this is the only way in from another thread. It is safe to keep after the loop
/// closed: ``execute(_:)`` then returns `false`.
public struct UVLoopRemote: Sendable {
    let queue: RemoteQueue

    /// Runs `job` on the loop thread soon.
    /// - Returns: `false` if the loop is closed and the job will never run.
    @discardableResult
    public func execute(_ job: @Sendable @escaping () -> Void) -> Bool {
        let current = UInt(uv_thread_self())
        let queued = queue.state.withLock { state -> Queued in
            guard !state.closed, state.asyncAddress != 0,
                let pointer = UnsafeMutablePointer<uv_async_t>(bitPattern: state.asyncAddress)
            else { return .refused }
            state.jobs.append(job)
            // From the loop's own thread (a task resumed by a read callback, say): no wake-up through the kernel,
            // the loop runs the job after this iteration's poll.
            if state.owner == current { return .local }
            // uv_async_send coalesces wake-ups; holding the lock keeps close() from freeing the handle under us.
            uv_async_send(pointer)
            return .woken
        }
        if queued == .local { queue.wakeOnLoopThread?() }
        return queued != .refused
    }

    private enum Queued { case refused, woken, local }

    /// CPU time the loop's thread has used, in nanoseconds (nil before the loop first ran, or once it has closed).
    /// Unlike a round trip's wall time it does not grow while the machine runs something else, so it tells the
    /// host's own work from a busy machine.
    public var threadCPUNanoseconds: UInt64? {
        queue.state.withLock { state -> UInt64? in
            // Under the lock: close() marks the queue closed before the thread can end.
            guard state.owner != 0, !state.closed else { return nil }
            var clock = clockid_t()
            guard pthread_getcpuclockid(pthread_t(state.owner), &clock) == 0 else { return nil }
            var time = timespec()
            guard clock_gettime(clock, &time) == 0 else { return nil }
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }
    }
}

/// The async handle that wakes the loop for ``UVLoopRemote/execute(_:)``.
final class RemoteAsync: UVHandle {
    private let queue: RemoteQueue

    init(loop: UVLoop, queue: RemoteQueue) {
        self.queue = queue
        super.init(loop: loop, type: UV_ASYNC)
    }

    func start() throws(UVError) {
        guard let raw else { throw UVError.closed("uv_async_init") }
        let status = uv_async_init(loop.raw, raw.assumingMemoryBound(to: uv_async_t.self), remoteAsyncCallback)
        if status < 0 {
            abandon()
            throw UVError(code: status, operation: "uv_async_init")
        }
        adopt()
        queue.state.withLock { $0.asyncAddress = UInt(bitPattern: raw) }
    }

    override func willClose() {
        queue.state.withLock {
            $0.closed = true
            $0.asyncAddress = 0
        }
    }

    func drain() {
        let jobs = queue.state.withLock { state -> [@Sendable () -> Void] in
            let jobs = state.jobs
            state.jobs.removeAll(keepingCapacity: true)
            return jobs
        }
        for job in jobs { job() }
    }

    override var kindName: String { "async" }
}

private let remoteAsyncCallback: uv_async_cb = { handle in
    wrapper(handle?.pointee.data, as: RemoteAsync.self)?.drain()
}

import CLibUV
import Synchronization

/// The loop as a Swift `SerialExecutor`: a job enqueued on it runs on the loop's thread, between libuv callbacks,
/// in the order enqueued. An actor whose `unownedExecutor` is this one is isolated to the loop, so the compiler
/// keeps what the actor owns on that thread (the host's `HostIsolation`).
///
/// Jobs travel through ``UVLoopRemote/execute(_:)`` (a mutex-guarded queue and `uv_async_send`), as every other way
/// into the loop does. After the loop has closed, jobs still run, one at a time, on the thread that enqueues them
/// (nothing else can touch the loop's state any more): a task suspended on this executor must never be stranded.
///
/// An executor is never freed. The concurrency runtime refers to executors without owning them
/// (`UnownedSerialExecutor`, `UnownedTaskExecutor`): a task that once ran with this loop as its task executor may
/// enqueue on it long after the actor that named it is gone (seen: a segfault in a test runner whose hosts had
/// stopped). Swift asks that an executor outlive every task that can reach it; a few hundred bytes per loop created
/// is the price, and a process creates loops rarely (one per host).
public final class UVLoopExecutor: SerialExecutor, TaskExecutor {
    /// The loop's thread-safe face.
    public let remote: UVLoopRemote

    private struct AfterClose {
        var jobs: [UnownedJob] = []
        /// The thread draining them (0: none), so only one does, and ``checkIsolated()`` knows it.
        var drainer: UInt = 0
    }

    private let afterClose = Mutex(AfterClose())

    /// The executor of `loop`; it lives as long as the process (see above).
    public init(_ loop: UVLoop) {
        remote = loop.remote
        _ = Unmanaged.passRetained(self)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        let taskExecutor = asUnownedTaskExecutor()
        if remote.execute({ job.runSynchronously(isolatedTo: executor, taskExecutor: taskExecutor) }) { return }
        runAfterClose(job, on: executor)
    }

    private func runAfterClose(_ job: UnownedJob, on executor: UnownedSerialExecutor) {
        let this = UInt(uv_thread_self())
        let drains = afterClose.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.drainer == 0 else { return false }
            state.drainer = this
            return true
        }
        guard drains else { return }
        while let next = afterClose.withLock({ state -> UnownedJob? in
            if state.jobs.isEmpty {
                state.drainer = 0
                return nil
            }
            return state.jobs.removeFirst()
        }) {
            next.runSynchronously(on: executor)
        }
    }

    /// Whether the caller runs on the loop's thread (or drains jobs after the close).
    public var isIsolatingCurrentThread: Bool {
        let this = UInt(uv_thread_self())
        let owner = remote.queue.state.withLock { $0.owner }
        return owner == 0 || owner == this || afterClose.withLock { $0.drainer } == this
    }

    public func checkIsolated() {
        // A programming error in the host, never something a plugin or a user can cause.
        precondition(isIsolatingCurrentThread, "not on the loop's thread")
    }
}

/// An actor isolated to a loop: its jobs run on the loop's thread, between libuv callbacks. The owner of a loop (the
/// host) is one, so the compiler keeps what it owns (the loop's handles among them) on that thread; other threads
/// reach it only by awaiting it, and the loop's own thread enters it with `assumeIsolated`, which checks the thread.
public protocol UVLoopActor: Actor {
    /// The loop this actor runs on, as an executor.
    nonisolated var executor: UVLoopExecutor { get }
}

extension UVLoopActor {
    // The executor outlives the actor (the actor holds it strongly): the unowned reference cannot dangle.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
}

import CSwitchyardSystem
import Glibc

/// A plain OS thread (pthread), for work that blocks: a libuv loop, a writer waiting for the disk, a reader waiting
/// for a child's pipe. Never a Swift-concurrency pool thread: the cooperative pool has as many threads as cores (2
/// here), and one blocked in `uv_run` or `read` can stall a whole test run.
public final class SystemThread: Sendable {
    private let handle: pthread_t

    private init(handle: pthread_t) { self.handle = handle }

    /// Starts `body` on a new thread with an 8 MiB stack (more than the 2 MiB default: deeply nested but valid
    /// trees render recursively on a host's loop thread). `body` is sent to that thread, which then owns it and
    /// everything it captured: nothing else may use them.
    public static func spawn(_ body: sending @escaping () -> Void) throws(SystemError) -> SystemThread {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 8 << 20)
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, threadEntry, box)
        guard status == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            throw SystemError(errno: status, operation: "pthread_create")
        }
        return SystemThread(handle: thread)
    }

    /// Waits for the thread to finish. Call at most once.
    public func join() { pthread_join(handle, nil) }

    /// Lets the thread release its resources when it ends, for a thread nobody joins. Call at most once, and never
    /// with ``join()``.
    public func detach() { pthread_detach(handle) }
}

/// The body on its way to the new thread (through `pthread_create`'s opaque argument), owned by that thread.
private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

private let threadEntry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { argument in
    guard let argument else { return nil }
    Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue().body()
    return nil
}

/// A one-shot-per-wait wake-up between threads: ``signal()`` sets a flag and wakes a waiter; ``wait(timeoutMs:)``
/// returns once the flag is set (clearing it), so a signal sent before the wait is not lost.
package final class WakeSignal: @unchecked Sendable {
    // @unchecked: `pending` is only read or written with `mutex` held, and the mutex and condition are used as
    // pthreads' contract says (initialised once here, destroyed in deinit when no thread can hold them).
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var pending = false

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Timed waits measure on the monotonic clock: a wall-clock step must not stretch or cut them.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func signal() {
        pthread_mutex_lock(mutex)
        pending = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// - Returns: false if `timeoutMs` passed without a signal (nil: wait for as long as it takes).
    package func wait(timeoutMs: UInt64?) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let deadline = timeoutMs.map { MonotonicClock.nanoseconds + $0 * 1_000_000 }
        while !pending {
            if let deadline {
                if MonotonicClock.nanoseconds >= deadline { return false }
                var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                _ = pthread_cond_timedwait(condition, mutex, &until)
            } else {
                pthread_cond_wait(condition, mutex)
            }
        }
        pending = false
        return true
    }
}

import CLibUV

/// A plain OS thread (`uv_thread_t`), for running a loop off the Swift-concurrency pool.
///
/// The cooperative pool has as many threads as cores (2 here); a blocked `uv_run` on one of them can stall a whole
/// test run, so every in-process host gets its own thread.
public final class UVThread: Sendable {
    private let handle: UInt

    private init(handle: UInt) { self.handle = handle }

    /// Starts `body` on a new thread.
    public static func spawn(_ body: @Sendable @escaping () -> Void) throws(UVError) -> UVThread {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        let thread = UnsafeMutablePointer<uv_thread_t>.allocate(capacity: 1)
        defer { thread.deallocate() }
        // A bigger stack than the 2 MiB default: deeply nested but valid trees render recursively.
        var options = uv_thread_options_t(flags: UInt32(UV_THREAD_HAS_STACK_SIZE.rawValue), stack_size: 8 << 20)
        let status = uv_thread_create_ex(thread, &options, threadEntry, box)
        if status < 0 {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            throw UVError(code: status, operation: "uv_thread_create")
        }
        return UVThread(handle: UInt(thread.pointee))
    }

    /// Waits for the thread to finish.
    public func join() {
        var thread = uv_thread_t(handle)
        uv_thread_join(&thread)
    }
}

private final class ThreadBody {
    let body: @Sendable () -> Void
    init(_ body: @Sendable @escaping () -> Void) { self.body = body }
}

private let threadEntry: @convention(c) (UnsafeMutableRawPointer?) -> Void = { argument in
    guard let argument else { return }
    let body = Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue()
    body.body()
}

import CLibUV

/// Base of every handle wrapper: owns the `uv_*_t` memory and the retain that keeps the Swift object alive while
/// libuv holds its pointer.
///
/// Lifetime rules (libuv `design.rst`, uvloop's `handle.pyx`):
/// 1. After `uv_*_init` succeeds the handle is *adopted*: `data` holds a +1 retain of `self`.
/// 2. `close()` is idempotent; the close callback clears `data`, releases the retain and frees the memory.
/// 3. Every operation checks `isOpen` first and throws instead of touching a closed handle.
///
/// - Important: Not thread-safe. Every method must be called on the loop's thread.
public class UVHandle {
    /// The raw `uv_handle_t*`; `nil` once closed. Subclasses read it through typed accessors.
    private(set) var raw: UnsafeMutableRawPointer?
    private let size: Int
    final let loop: UVLoop
    private var closing = false
    /// Called once the handle is fully closed and its memory is gone.
    public final var onClose: (() -> Void)?

    init(loop: UVLoop, type: uv_handle_type) {
        self.loop = loop
        self.size = uv_handle_size(type)
        self.raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        raw?.initializeMemory(as: UInt8.self, repeating: 0, count: size)
    }

    /// Call right after `uv_*_init` succeeded: from now on libuv owns a reference to `self`.
    final func adopt() {
        guard let raw else { return }
        handlePointer(raw).pointee.data = Unmanaged.passRetained(self).toOpaque()
        loop.handleOpened()
    }

    /// Call when `uv_*_init` failed: the memory was never registered with the loop and can go now.
    final func abandon() {
        raw?.deallocate()
        raw = nil
    }

    /// Whether the handle can still be used.
    public final var isOpen: Bool { raw != nil && !closing }

    /// Whether the handle keeps the loop alive (`uv_ref`/`uv_unref`).
    public final var keepsLoopAlive: Bool {
        get {
            guard let raw, !closing else { return false }
            return uv_has_ref(handlePointer(raw)) != 0
        }
        set {
            guard let raw, !closing else { return }
            if newValue { uv_ref(handlePointer(raw)) } else { uv_unref(handlePointer(raw)) }
        }
    }

    /// A programming error caught in debug builds (swift-nio's `preconditionInEventLoop`): libuv handles are not
    /// thread-safe, and every operation must come from the loop's thread. Costs nothing in release builds.
    @inline(__always)
    final func assertOnLoopThread(_ operation: StaticString = #function) {
        assert(!isOpen || loop.inLoopThread, "\(operation) on a libuv handle off its loop's thread")
    }

    /// Starts closing the handle. Idempotent. The memory is released in the close callback.
    public func close() {
        guard let raw, !closing else { return }
        assertOnLoopThread()
        closing = true
        willClose()
        let handle = handlePointer(raw)
        if uv_is_closing(handle) == 0 {
            uv_close(handle, uvHandleCloseCallback)
        }
    }

    /// Hook for subclasses to drop user closures before the close completes (breaks retain cycles).
    func willClose() {}

    /// Hook for subclasses after the close callback, before `onClose`.
    func didClose() {}

    fileprivate final func closeCompleted() {
        raw?.deallocate()
        raw = nil
        loop.handleClosed()
        didClose()
        let callback = onClose
        onClose = nil
        callback?()
    }

    /// A human-readable kind for leak reports.
    var kindName: String { "handle" }
}

@inline(__always)
func handlePointer(_ raw: UnsafeMutableRawPointer) -> UnsafeMutablePointer<uv_handle_t> {
    raw.assumingMemoryBound(to: uv_handle_t.self)
}

/// Recovers the Swift wrapper from a handle's `data` slot without changing its retain count.
/// A `nil` slot (already closed) yields `nil`, as uvloop's `__ensure_handle_data` does. Each C callback is
/// registered on one handle type only, so the type is known and no dynamic cast is paid on the hot path.
@inline(__always)
func wrapper<T: UVHandle>(_ data: UnsafeMutableRawPointer?, as: T.Type) -> T? {
    guard let data else { return nil }
    return Unmanaged<T>.fromOpaque(data).takeUnretainedValue()
}

private let uvHandleCloseCallback: uv_close_cb = { handle in
    guard let handle, let data = handle.pointee.data else { return }
    handle.pointee.data = nil
    let unmanaged = Unmanaged<UVHandle>.fromOpaque(data)
    let owner = unmanaged.takeUnretainedValue()
    owner.closeCompleted()
    unmanaged.release()
}

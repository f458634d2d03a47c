import CLibUV

/// A signal watcher (`uv_signal_t`). Callbacks run on the loop thread, not in signal context.
///
/// Watchers do not keep the loop alive (libuv-swift-notes §3: a referenced watcher keeps `uv_run` running forever).
public final class UVSignal: UVHandle {
    private var callback: ((Int32) -> Void)?

    public init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, type: UV_SIGNAL)
        guard let raw else { throw UVError.closed("uv_signal_init") }
        let status = uv_signal_init(loop.raw, raw.assumingMemoryBound(to: uv_signal_t.self))
        if status < 0 {
            abandon()
            throw UVError(code: status, operation: "uv_signal_init")
        }
        adopt()
        keepsLoopAlive = false
    }

    public func start(signal signalNumber: Int32, _ callback: @escaping (Int32) -> Void) throws(UVError) {
        assertOnLoopThread()
        guard isOpen, let raw else { throw UVError.closed("uv_signal_start") }
        self.callback = callback
        try UVError.check(
            uv_signal_start(raw.assumingMemoryBound(to: uv_signal_t.self), uvSignalCallback, signalNumber),
            "uv_signal_start")
    }

    public func stop() {
        guard isOpen, let raw else { return }
        uv_signal_stop(raw.assumingMemoryBound(to: uv_signal_t.self))
    }

    fileprivate func fire(_ number: Int32) { callback?(number) }

    override func willClose() { callback = nil }
    override var kindName: String { "signal" }
}

private let uvSignalCallback: uv_signal_cb = { handle, number in
    wrapper(handle?.pointee.data, as: UVSignal.self)?.fire(number)
}

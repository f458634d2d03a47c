import CLibUV

/// A one-shot or repeating timer (`uv_timer_t`). Times are in milliseconds of loop time.
public final class UVTimer: UVHandle {
    private var callback: (() -> Void)?

    public init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, type: UV_TIMER)
        guard let raw else { throw UVError.closed("uv_timer_init") }
        let status = uv_timer_init(loop.raw, raw.assumingMemoryBound(to: uv_timer_t.self))
        if status < 0 {
            abandon()
            throw UVError(code: status, operation: "uv_timer_init")
        }
        adopt()
    }

    /// Starts (or restarts) the timer. `repeatEvery` of 0 means one shot.
    public func start(
        after timeout: UInt64, repeatEvery: UInt64 = 0, _ callback: @escaping () -> Void
    )
        throws(UVError)
    {
        guard isOpen, let raw else { throw UVError.closed("uv_timer_start") }
        assertOnLoopThread()
        self.callback = callback
        try UVError.check(
            uv_timer_start(raw.assumingMemoryBound(to: uv_timer_t.self), uvTimerCallback, timeout, repeatEvery),
            "uv_timer_start")
    }

    /// Stops the timer; its callback will not run until started again.
    public func stop() {
        assertOnLoopThread()
        guard isOpen, let raw else { return }
        uv_timer_stop(raw.assumingMemoryBound(to: uv_timer_t.self))
    }

    /// Whether the timer is armed.
    public var isActive: Bool {
        guard isOpen, let raw else { return false }
        return uv_is_active(handlePointer(raw)) != 0
    }

    /// Loop time at which the timer fires next (`uv_timer_get_due_in` relative to now).
    public var dueIn: UInt64 {
        guard isOpen, let raw else { return 0 }
        return uv_timer_get_due_in(raw.assumingMemoryBound(to: uv_timer_t.self))
    }

    fileprivate func fire() { callback?() }

    override func willClose() { callback = nil }
    override var kindName: String { "timer" }
}

private let uvTimerCallback: uv_timer_cb = { handle in
    wrapper(handle?.pointee.data, as: UVTimer.self)?.fire()
}

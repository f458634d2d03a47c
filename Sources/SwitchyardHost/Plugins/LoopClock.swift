import SwitchyardUV

/// A session's clock on the host's loop: the running clock (``UVLoop/activeNow``, which excludes the loop's own
/// stalls), the loop's wall clock, one libuv timer per ``SessionTimer`` (created on first use), and the loop's
/// after-poll queue for verdicts.
///
/// - Important: Loop thread only.
final class LoopClock: PluginClock {
    private let loop: UVLoop
    private var timers: [SessionTimer: UVTimer] = [:]
    private var closed = false
    var onFire: (SessionTimer) -> Void = { _ in }

    init(loop: UVLoop) { self.loop = loop }

    var runningNow: UInt64 { loop.activeNow }

    var wallNow: UInt64 { loop.now }

    var nanoseconds: UInt64 { UVLoop.hrtime }

    func arm(_ timer: SessionTimer, afterMs milliseconds: UInt64, repeatMs: UInt64?) {
        guard !closed else { return }
        if timers[timer] == nil { timers[timer] = try? UVTimer(loop: loop) }
        guard let handle = timers[timer] else { return }
        try? handle.start(after: milliseconds, repeatEvery: repeatMs ?? 0) { [weak self] in self?.onFire(timer) }
    }

    func cancel(_ timer: SessionTimer) { timers[timer]?.stop() }

    func afterNextPoll(_ job: @escaping () -> Void) { loop.afterNextPoll(job) }

    func close() {
        closed = true
        for timer in timers.values { timer.close() }
        timers.removeAll()
    }
}

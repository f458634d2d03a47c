import CLibUV

/// The loop's own stall accounting, and a place to run work right after the loop has polled for I/O.
///
/// Fault detection must judge a plugin by evidence about the plugin, not by the host's clock alone: after a stall of
/// the host (CPU starvation, a long callback, SIGSTOP, swap, a paused VM) libuv runs due timers *before* it polls
/// I/O again, so a timer-based verdict would see "no answer for too long" while the answer already waits in the
/// pipe. Two tools fix that:
///
/// - **Blind time.** Every iteration measures how long the loop could not see I/O: from the end of one poll to the
///   start of the next (callbacks, timers), plus whatever the poll overslept its timeout (the process was stopped
///   or not scheduled). A stretch longer than ``stallThresholdNanoseconds`` is a *stall*: only the threshold's worth
///   of it counts towards ``UVLoop/activeNow``, the clock verdicts are measured on. Shorter blind stretches are
///   ordinary work and count in full, so a hung plugin is still caught on a busy host. Time spent handling input
///   that was read (a plugin's lines, a client's requests) is the plugin's or the client's doing, not a stall: it
///   counts as running time however long it takes, so a plugin flooding the host does not freeze its own
///   deadlines (nor a shutdown ladder that must end it). And since every iteration
///   advances the clock by at least the threshold, a loop that is starved or busy in every iteration (a flood
///   being read on a machine with ten busy processes per core) stretches its deadlines but never freezes them: a
///   shutdown ladder still ends.
/// - **After-poll jobs.** ``afterNextPoll(_:)`` runs a job in the check phase of the iteration that follows, after
///   the poll has read every readable descriptor and after this iteration's blind time has been accounted. A timer
///   that wants to condemn a plugin defers the verdict there: an answer that was already in the pipe is seen first.
///
/// The handles behind it are internal to the loop and never keep it alive.
final class UVLoopClock {
    /// A stretch without I/O longer than this is a stall, not work (50 ms: far above a healthy iteration, far
    /// below any timeout a plugin is judged by).
    static let stallThresholdNanoseconds: UInt64 = 50_000_000

    private let prepare: LoopPhaseHandle
    private let check: LoopPhaseHandle
    private let idle: LoopPhaseHandle

    // Read and written on every iteration and every read, on the loop thread only, never across a call that could
    // touch them again: the runtime's exclusivity bookkeeping (~80 instructions per access) is not paid for them.
    /// End of the previous poll (hrtime), 0 before the first.
    @exclusivity(unchecked) private var lastPollEnd: UInt64 = 0
    @exclusivity(unchecked) private var pollStart: UInt64 = 0
    /// The poll's timeout in ms as libuv will compute it (-1: infinite).
    @exclusivity(unchecked) private var pollTimeout: Int32 = -1
    @exclusivity(unchecked) private(set) var stalledNanoseconds: UInt64 = 0
    @exclusivity(unchecked) private(set) var maxBlindNanoseconds: UInt64 = 0
    /// Time spent this iteration in handlers of input read from pipes (``UVPipe``), which counts as running time.
    @exclusivity(unchecked) private var inputWorkNanoseconds: UInt64 = 0
    @exclusivity(unchecked) private var jobs: [() -> Void] = []
    /// Runs the jobs other code queued on ``UVLoopRemote`` (set by the loop).
    var drainRemote: (() -> Void)?
    /// Jobs were queued on the remote from the loop's own thread: drain it after this poll.
    @exclusivity(unchecked) private var remotePending = false
    /// Called on the loop thread with each stall's length in ms, once it has ended.
    var onStall: ((UInt64) -> Void)?

    init(loop: UVLoop) throws(UVError) {
        prepare = try LoopPhaseHandle(loop: loop, phase: .prepare)
        check = try LoopPhaseHandle(loop: loop, phase: .check)
        idle = try LoopPhaseHandle(loop: loop, phase: .idle)
        try prepare.start { [weak self, unowned loop] in self?.beforePoll(loop) }
        try check.start { [weak self] in self?.afterPoll() }
        prepare.keepsLoopAlive = false
        check.keepsLoopAlive = false
    }

    var handles: [UVHandle] { [prepare, check, idle] }

    private func beforePoll(_ loop: UVLoop) {
        pollStart = uv_hrtime()
        pollTimeout = uv_backend_timeout(loop.raw)
    }

    private func afterPoll() {
        let now = uv_hrtime()
        if lastPollEnd != 0 && pollStart >= lastPollEnd {
            let between = pollStart - lastPollEnd
            var blind = between
            var stalled = between
            if pollTimeout >= 0 {
                let polling = now &- pollStart
                let allowed = UInt64(pollTimeout) * 1_000_000
                if polling > allowed { blind += polling - allowed }
                let sleeping = polling > inputWorkNanoseconds ? polling - inputWorkNanoseconds : 0
                if sleeping > allowed { stalled += sleeping - allowed }
            }
            if blind > maxBlindNanoseconds { maxBlindNanoseconds = blind }
            if stalled > Self.stallThresholdNanoseconds {
                stalledNanoseconds += stalled - Self.stallThresholdNanoseconds
            }
            if blind > Self.stallThresholdNanoseconds { onStall?(blind / 1_000_000) }
        }
        inputWorkNanoseconds = 0
        lastPollEnd = now
        guard remotePending || !jobs.isEmpty else { return }
        let remote = remotePending
        remotePending = false
        let ready = jobs
        jobs.removeAll(keepingCapacity: true)
        idle.stopPhase()
        if remote { drainRemote?() }
        for job in ready { job() }
    }

    /// Jobs were queued on the loop's remote from its own thread: run them after this iteration's poll, without a
    /// wake-up through the kernel, and do not let the poll block meanwhile.
    func wakeForLocalJobs() {
        guard !remotePending else { return }
        remotePending = true
        try? idle.start {}
    }

    /// Adds the time a handler of input took (called by ``UVPipe`` around each read's handler).
    func addInputWork(_ nanoseconds: UInt64) { inputWorkNanoseconds &+= nanoseconds }

    func afterNextPoll(_ job: @escaping () -> Void) {
        jobs.append(job)
        // An active idle handle makes the coming poll non-blocking: the verdict is not delayed by a sleep.
        if jobs.count == 1 { try? idle.start {} }
    }

    func close() {
        jobs.removeAll()
        for handle in handles { handle.close() }
    }
}

/// A prepare, check or idle handle: a callback at one fixed point of every loop iteration.
final class LoopPhaseHandle: UVHandle {
    enum Phase: String { case prepare, check, idle }
    private let phase: Phase
    private var callback: (() -> Void)?

    init(loop: UVLoop, phase: Phase) throws(UVError) {
        self.phase = phase
        let type: uv_handle_type =
            switch phase {
            case .prepare: UV_PREPARE
            case .check: UV_CHECK
            case .idle: UV_IDLE
            }
        super.init(loop: loop, type: type)
        guard let raw else { throw UVError.closed("uv_\(phase)_init") }
        let status: Int32 =
            switch phase {
            case .prepare: uv_prepare_init(loop.raw, raw.assumingMemoryBound(to: uv_prepare_t.self))
            case .check: uv_check_init(loop.raw, raw.assumingMemoryBound(to: uv_check_t.self))
            case .idle: uv_idle_init(loop.raw, raw.assumingMemoryBound(to: uv_idle_t.self))
            }
        if status < 0 {
            abandon()
            throw UVError(code: status, operation: "uv_\(phase)_init")
        }
        adopt()
    }

    func start(_ callback: @escaping () -> Void) throws(UVError) {
        guard isOpen, let raw else { throw UVError.closed("uv_\(phase.rawValue)_start") }
        self.callback = callback
        let status: Int32 =
            switch phase {
            case .prepare: uv_prepare_start(raw.assumingMemoryBound(to: uv_prepare_t.self), phasePrepareCallback)
            case .check: uv_check_start(raw.assumingMemoryBound(to: uv_check_t.self), phaseCheckCallback)
            case .idle: uv_idle_start(raw.assumingMemoryBound(to: uv_idle_t.self), phaseIdleCallback)
            }
        try UVError.check(status, "uv_\(phase.rawValue)_start")
    }

    func stopPhase() {
        guard isOpen, let raw else { return }
        switch phase {
        case .prepare: uv_prepare_stop(raw.assumingMemoryBound(to: uv_prepare_t.self))
        case .check: uv_check_stop(raw.assumingMemoryBound(to: uv_check_t.self))
        case .idle: uv_idle_stop(raw.assumingMemoryBound(to: uv_idle_t.self))
        }
    }

    fileprivate func fire() { callback?() }
    override func willClose() { callback = nil }
    override var kindName: String { phase.rawValue }
}

private let phasePrepareCallback: uv_prepare_cb = { handle in
    wrapper(handle?.pointee.data, as: LoopPhaseHandle.self)?.fire()
}
private let phaseCheckCallback: uv_check_cb = { handle in
    wrapper(handle?.pointee.data, as: LoopPhaseHandle.self)?.fire()
}
private let phaseIdleCallback: uv_idle_cb = { handle in
    wrapper(handle?.pointee.data, as: LoopPhaseHandle.self)?.fire()
}

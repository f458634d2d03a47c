import Logging
import SwitchyardProtocol
import SwitchyardUV

/// Whether a plugin has a process, or waits for a need without one (spec §20.3).
public enum PluginResidency: String, Sendable, Equatable {
    /// It has a process (starting, serving or stopping).
    case running
    /// `"start": "lazy"`: not started yet.
    case lazy
    /// Stopped while idle; the host keeps its instances' state and starts it again on need.
    case hibernated
}

/// A plugin's last upgrade (spec §20.1): from which version to which, and how far it got.
public struct PluginUpgradeStatus: Sendable, Equatable {
    public enum Phase: String, Sendable {
        /// The new version is starting beside the old one (and its contract is checked once it answers).
        case starting
        /// The old version takes no new request; its requests in flight finish.
        case holding
        /// The instances are created in the new version.
        case migrating
        /// The new version serves; a crash now brings the old one back.
        case probation
        /// The new version serves for good.
        case upgraded
        /// The new version crashed within its probation; the old one serves again.
        case rolledBack
        /// Its contract did not support what the app uses: the old version never stopped serving.
        case refused
        /// Something failed before the switch: the new version was stopped, nothing changed.
        case failed
    }

    public let from: String?
    public let to: String?
    public let phase: Phase
}

/// What lazy start, hibernation and upgrades keep per plugin (spec §20), in one place so the supervisor's own file
/// stays about supervision.
struct LifecycleState {
    /// Resumed with nil when the plugin serves (the caller takes its session then), or with why it will not.
    typealias Waiter = CheckedContinuation<ResponseError?, Never>

    /// Requests waiting for the plugin: held by an upgrade, or for a lazy or hibernated plugin to start.
    var gate = RequestGate<Waiter>()
    var gateTimer: UVTimer?
    /// The plugin is being started because something needs it: requests wait through its start and restore.
    var waking = false
    /// Being stopped to hibernate, and what it becomes once stopped (`hibernated`, or `lazy` after a start that
    /// only read its table).
    var hibernating: PluginState?
    /// Stop it when idle for this long (`hibernateAfterMs`); nil: never.
    var hibernateAfterMs: Int?
    /// The bound on the state the host keeps for it while hibernated (`maxHibernatedStateBytes`).
    var maxStateBytes = 1 << 20
    /// Per step of the shutdown ladder when it hibernates (the host's `shutdownGraceMs`).
    var graceMs = 2_000
    var idleTimer: UVTimer?
    /// The session's request count at the last idle check: unchanged over a whole period means no request.
    var requestsAtLastCheck = -1
    /// Requests the gate let go whose tasks have not yet taken the session. The plugin is not idle while one is on
    /// its way: on a busy machine such a task can run after a whole idle period, and the plugin would hibernate
    /// under the very request that woke it.
    var released = 0
    /// Its state was over the bound at the last idle check (logged once per crossing).
    var overStateBound = false
    /// The route table came from its contract file, not from a process: checked against the first one it declares.
    var tableFromContract = false
    /// The last upgrade, for status.
    var upgrade: PluginUpgradeStatus?
    /// An upgrade is in progress (from its start to its switch or failure).
    var upgrading = false
    /// The new version while an upgrade runs, until the switch.
    var candidate: PluginSession?
    /// Old versions after a switch, until their shutdown ladder ends.
    var retired: [PluginSession] = []
    /// Whoever waits for the candidate's handshake.
    var candidateWaiter: CheckedContinuation<Result<InitializeRequest.Result, ResponseError>, Never>?
    /// After a switch: what brings the old version back if the new one crashes (spec §20.1).
    var probation: Probation?
    /// A failed probation, while the old version is brought back; and why it failed.
    var rollingBack: Probation?
    var rollbackReason: String?
    /// Tells the host's observers of a change that is not a state change (an upgrade's phase).
    var onPublish: (PluginSupervisor) -> Void = { _ in }
    /// A process that no longer serves has ended (a host that stops waits for all of them).
    var onProcessGone: (PluginSupervisor) -> Void = { _ in }
    /// The host checks whether the plugin is idle (no chain consults it, none of its instances on the selected
    /// path, its state within the bound); set by the host.
    var isIdle: (PluginSupervisor) -> Bool = { _ in false }

    mutating func detach() {
        isIdle = { _ in false }
        onPublish = { _ in }
        onProcessGone = { _ in }
    }
}

/// An upgraded plugin's way back while its probation runs.
struct Probation {
    /// Loop time at which the probation ends.
    let until: UInt64
    let milliseconds: Int
    /// The old version: how it was started, and what it declared.
    let previous: ResolvedPlugin
    let previousTable: InitializeRequest.Result?
    /// The states the instances had before the switch, and the ones the switch gave them: an instance whose state
    /// is still the switch's gets its old state back.
    let statesBefore: [InstanceID: JSONValue?]
    let statesAfter: [InstanceID: JSONValue?]
    /// The new version's version, for the old one's migration hook (`fromVersion`) of states changed since.
    let newVersion: String?
    var timer: UVTimer?
    /// Whoever waits for the end of the probation (`waitForProbation`): passed, or rolled back with why.
    var waiters: [CheckedContinuation<String?, Never>] = []
}

// MARK: - Waiting for a plugin that will serve shortly

extension PluginSupervisor {
    /// What a request reaches the plugin through (spec §20): the ready session at once; or, while an upgrade holds
    /// the plugin or while a lazy or hibernated plugin starts, the session once it serves, waiting at most
    /// `timeoutMs`. A lazy or hibernated plugin is woken by this. `bypassHold`: the request belongs to a chain that
    /// already consulted this version, and finishes there (an upgrade waits for it). Otherwise a plugin that does not
    /// serve fails the request at once, as before (§16).
    func session(waitingUpTo timeoutMs: Int, bypassHold: Bool) async -> Result<PluginSession, ResponseError> {
        if case .serve(let session) = admission(bypassHold: bypassHold) { return .success(session) }
        let deadline = loop.now + UInt64(max(0, timeoutMs))
        while true {
            var waited = false
            // Decided again where the waiter is registered: the task may resume there after other work on the loop
            // (an upgrade's switch, a wake's end), which must not slip between the decision and the registration.
            let refusal: ResponseError? = await withCheckedContinuation { continuation in
                switch admission(bypassHold: bypassHold) {
                case .serve: continuation.resume(returning: nil)
                case .refuse(let error): continuation.resume(returning: error)
                case .wait:
                    logger.debug(
                        "a request to plugin '\(name)' waits (at most \(timeoutMs) ms): \(lifecycle.gate.isHeld ? "held by an upgrade" : "the plugin starts (\(state))")"
                    )
                    lifecycle.gate.wait(continuation, deadline: deadline)
                    armGateTimer()
                    waited = true
                }
            }
            // Let go by `settleWaiters` (the only resumption without an error): no longer on its way.
            if waited && refusal == nil { lifecycle.released -= 1 }
            if let refusal { return .failure(refusal) }
            if state == .ready, let session, session.state == .ready { return .success(session) }
            // Released, but the plugin stopped again before this task ran (a busy loop let it hibernate): it is
            // started again on this need, within the same deadline (admission decides again).
            guard serves else {
                return .failure(.pluginUnavailable(name, lastError?.message ?? "it is \(state)"))
            }
        }
    }

    private enum Admission {
        case serve(PluginSession)
        case wait
        case refuse(ResponseError)
    }

    /// Whether a request goes to the plugin now, waits for it, or fails; wakes a lazy or hibernated plugin.
    private func admission(bypassHold: Bool) -> Admission {
        if state == .ready, let session, session.state == .ready, !lifecycle.gate.isHeld || bypassHold {
            return .serve(session)
        }
        switch state {
        case _ where lifecycle.gate.isHeld:
            return .wait  // an upgrade: the new version serves it (a lazy plugin is not started as its old version)
        case .lazy, .hibernated:
            wake()
            // A spawn can fail at once: the plugin is failed then, and says why.
            return state == .failed || state == .stopped ? refusal : .wait
        case .stopping where lifecycle.hibernating != nil:
            return .wait  // started again once stopped (see `hibernated(as:)`)
        case .starting where lifecycle.waking, .restarting where lifecycle.waking:
            return .wait
        default:
            return refusal
        }
    }

    private var refusal: Admission { .refuse(.pluginUnavailable(name, lastError?.message ?? "it is \(state)")) }

    /// Starts a lazy or hibernated plugin because something needs it; it is restored before it serves.
    func wake() {
        guard state == .lazy || state == .hibernated else { return }
        logger.info("waking plugin '\(name)' (\(state)): a request needs it")
        lifecycle.waking = true
        lifecycle.requestsAtLastCheck = -1
        start()
    }

    /// Lets the waiting requests go when the plugin serves (and no upgrade holds it), or fails them when it will not.
    func settleWaiters() {
        switch state {
        case .ready:
            lifecycle.waking = false
            armIdleTimer()
            guard !lifecycle.gate.isHeld else { return }
            let released = lifecycle.gate.releaseAll()
            // The released tasks run later: the first idle check must not count the time before they do.
            if !released.isEmpty { lifecycle.requestsAtLastCheck = -1 }
            lifecycle.released += released.count
            for waiter in released { waiter.resume(returning: nil) }
        case .failed, .stopped:
            lifecycle.waking = false
            let error = lastError ?? .pluginUnavailable(name, "it is \(state)")
            for waiter in lifecycle.gate.releaseAll() { waiter.resume(returning: error) }
            finishRollback()
        case .starting, .restarting, .stopping, .lazy, .hibernated:
            lifecycle.idleTimer?.stop()
        }
        if lifecycle.gate.count == 0 { lifecycle.gateTimer?.stop() }
    }

    private func armGateTimer() {
        guard let deadline = lifecycle.gate.nextDeadline else { return }
        if lifecycle.gateTimer == nil { lifecycle.gateTimer = try? UVTimer(loop: loop) }
        let now = loop.now
        try? lifecycle.gateTimer?.start(after: deadline > now ? deadline - now : 0) { [weak self] in
            self?.expireWaiters()
        }
    }

    private func expireWaiters() {
        let timeoutMs = plugin.limits.requestTimeoutMs
        let why = lifecycle.gate.isHeld ? "being upgraded" : "starting (\(state))"
        for waiter in lifecycle.gate.expire(now: loop.now) {
            waiter.resume(
                returning: ResponseError(
                    .timeout, "plugin '\(name)' did not serve within \(timeoutMs) ms: it was \(why)",
                    data: ["plugin": .string(name), "timeoutMs": .int(Int64(timeoutMs))]))
        }
        armGateTimer()
    }

    /// Whether requests to it are answered: it is ready, or lazy or hibernated (started on need), or held by an
    /// upgrade. Its instances are `ok` in snapshots then (spec §11, §20).
    var serves: Bool {
        switch state {
        case .ready, .lazy, .hibernated: true
        case .stopping: lifecycle.hibernating != nil
        case .starting: lifecycle.waking
        case .restarting, .stopped, .failed: false
        }
    }

    /// Has a process, or waits for a need without one.
    var residency: PluginResidency? {
        switch state {
        case .lazy: .lazy
        case .hibernated: .hibernated
        case .starting, .ready, .stopping: .running
        case .restarting, .stopped, .failed: nil
        }
    }
}

// MARK: - Hibernation

extension PluginSupervisor {
    /// Checks every `hibernateAfterMs` whether the plugin has been idle since the last check (no request either way,
    /// and the host's conditions: no chain consults it, none of its instances on the selected path); if so it
    /// hibernates. So it hibernates between one and two periods after its last request.
    func armIdleTimer() {
        guard let period = lifecycle.hibernateAfterMs, period > 0, state == .ready else { return }
        if lifecycle.idleTimer == nil { lifecycle.idleTimer = try? UVTimer(loop: loop) }
        lifecycle.requestsAtLastCheck = session?.requestCount ?? -1
        try? lifecycle.idleTimer?.start(after: UInt64(period), repeatEvery: UInt64(period)) { [weak self] in
            self?.checkIdle()
        }
    }

    private func checkIdle() {
        guard state == .ready, let session, !lifecycle.upgrading, lifecycle.gate.count == 0, lifecycle.released == 0
        else { return }
        let requests = session.requestCount
        defer { lifecycle.requestsAtLastCheck = requests }
        guard requests == lifecycle.requestsAtLastCheck, session.pendingRequestCount == 0, lifecycle.isIdle(self)
        else { return }
        hibernate(as: .hibernated)
    }

    /// Stops the plugin with the shutdown ladder to wait without a process; it becomes `target` once stopped.
    func hibernate(as target: PluginState) {
        guard state == .ready, let session, !lifecycle.upgrading else { return }
        logger.notice("plugin '\(name)' \(target == .lazy ? "stops until it is needed" : "hibernates: idle")")
        lifecycle.hibernating = target
        setState(.stopping)
        session.stop(graceMs: lifecycle.graceMs)
    }

    /// The hibernating plugin has stopped: it waits for a need, and is woken at once if one came meanwhile.
    func hibernated(as target: PluginState) {
        lifecycle.hibernating = nil
        setState(target)
        if lifecycle.gate.count > 0 { wake() }
    }

    /// The host stops: timers, the candidate of an upgrade and the retired old versions go too; waiting requests
    /// fail.
    func endLifecycle(graceMs: Int) {
        lifecycle.hibernating = nil
        lifecycle.waking = false
        lifecycle.idleTimer?.close()
        lifecycle.idleTimer = nil
        lifecycle.probation?.timer?.close()
        for waiter in lifecycle.probation?.waiters ?? [] { waiter.resume(returning: "the host is shutting down") }
        lifecycle.probation = nil
        finishRollback()
        lifecycle.candidateWaiter?.resume(
            returning: .failure(ResponseError(.shuttingDown, "the host is shutting down")))
        lifecycle.candidateWaiter = nil
        lifecycle.candidate?.stop(graceMs: graceMs)
        for retired in lifecycle.retired { retired.stop(graceMs: graceMs) }
        lifecycle.gate.open()
        let error = ResponseError(.shuttingDown, "the host is shutting down")
        for waiter in lifecycle.gate.releaseAll() { waiter.resume(returning: error) }
        lifecycle.gateTimer?.close()
        lifecycle.gateTimer = nil
    }

    /// Whether any process of this plugin still runs: the serving one, an upgrade's candidate, a retired old one.
    var hasLiveProcesses: Bool {
        let sessions = [session, lifecycle.candidate].compactMap { $0 } + lifecycle.retired
        return sessions.contains { $0.state != .terminated }
    }
}

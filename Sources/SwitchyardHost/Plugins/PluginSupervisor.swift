import DequeModule
import Logging
public import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// A plugin's state as the host reports it.
public enum PluginState: Sendable, Equatable, CustomStringConvertible {
    /// Spawned, handshake in progress.
    case starting
    /// Handshake done; serving requests.
    case ready
    /// Waiting before a restart (backoff).
    case restarting
    /// Stopping (shutdown ladder).
    case stopping
    /// Stopped on purpose, or exited and not restarted by policy.
    case stopped
    /// Gave up: the handshake failed, it was excluded by the composition check, or it restarted too often.
    case failed
    /// Not started yet: `"start": "lazy"`, started on first need (spec §20.3).
    case lazy
    /// Stopped while idle (`hibernateAfterMs`), its instances' state kept by the host; started again on need.
    case hibernated

    public var description: String {
        switch self {
        case .starting: "starting"
        case .ready: "ready"
        case .restarting: "restarting"
        case .stopping: "stopping"
        case .stopped: "stopped"
        case .failed: "failed"
        case .lazy: "lazy"
        case .hibernated: "hibernated"
        }
    }
}

/// A snapshot of one plugin for status displays and tests.
public struct PluginStatus: Sendable, Equatable {
    public let name: String
    public let state: PluginState
    public let pid: Int32?
    /// Why the plugin is failed or unavailable, as a typed error.
    public let error: ResponseError?
    public let restarts: Int
    public let version: String?
    /// Spawn to handshake done, in microseconds, for the last start.
    public let startupMicroseconds: UInt64?
    /// Whether it has a process, or waits for a need without one (spec §20); nil when neither (stopped, failed).
    public var residency: PluginResidency? = nil
    /// Its last upgrade (spec §20.1).
    public var upgrade: PluginUpgradeStatus? = nil
}

extension PluginStatus {
    /// The status as `host/status` and `plugin/changed` carry it.
    public var wire: HostStatusRequest.Plugin {
        HostStatusRequest.Plugin(
            name: name, state: state.description, pid: pid, version: version, restarts: restarts, error: error,
            startupMicroseconds: startupMicroseconds, residency: residency?.rawValue,
            upgrade: upgrade.map { .init(from: $0.from, to: $0.to, phase: $0.phase.rawValue) })
    }
}

/// Owns one plugin's process over its lifetime: spawn, handshake, restart per policy, stop.
///
/// Erlang/OTP's supervisor, per plugin: `permanent` restarts after any exit, `transient` after an abnormal one,
/// `temporary` never; more than `maxRestarts` within `windowSeconds` marks the plugin failed. The first restart in a
/// window is immediate (a crash costs one spawn, not a backoff), later ones back off exponentially with jitter.
/// A plugin that fails its very first handshake is failed at once: at start-up that is a configuration problem
/// (wrong version, wrong path), not a fault worth retrying, and the app should start without waiting for it.
///
/// After a restart the plugin is `starting` until the host has restored every instance it owned (`onRestarted`);
/// only then is it `ready` again, so no route reaches a plugin that has not rebuilt its state.
///
/// - Important: Loop thread only.
final class PluginSupervisor {
    /// How the plugin is started: its manifest entry, resolved. Replaced by an upgrade or a reload (spec §20).
    var plugin: ResolvedPlugin
    let loop: UVLoop
    let logger: Logger
    let trace: ProtocolTrace
    private(set) weak var guardian: Guardian?
    var session: PluginSession?
    private(set) var state = PluginState.starting
    var lastError: ResponseError?
    var restarts = 0
    var routeTable: InitializeRequest.Result?
    /// Bumped at every spawn (and at an upgrade's switch): a chain that consulted an earlier incarnation must not
    /// commit.
    var incarnation = 0
    private var stopping = false
    var everReady = false
    /// Lazy start, hibernation and upgrades (spec §20): PluginSupervisor+Lifecycle.swift, +Upgrade.swift.
    var lifecycle = LifecycleState()
    /// The guardian generation the running process was spawned under (see ``Guardian/lostNamespace(since:)``).
    private var guardianGeneration = 0
    private var handshakeError: ResponseError?
    private var restartTimes = Deque<UInt64>()
    private var backoffTimer: UVTimer?
    /// Spawns in a row that failed for lack of resources (reset once the plugin is ready).
    private var exhaustedAttempts = 0
    /// Loop time of the last unexpected termination, for "time to detect" and "time to restore" figures.
    private(set) var lastCrashAt: UInt64?
    /// Milliseconds from the last crash to ready again (restore included).
    private(set) var lastRecoveryMs: UInt64?

    /// Called whenever ``state`` changes.
    var onStateChange: (PluginSupervisor) -> Void = { _ in }
    /// Requests and notifications from the plugin, for the navigator.
    var onRequest: (PluginSupervisor, RequestID, String, JSONValue?) -> Void = { _, _, _, _ in }
    var onNotification: (PluginSupervisor, String, JSONValue?) -> Void = { _, _, _ in }
    /// A restarted plugin completed its handshake: restore its instances, then call the completion.
    var onRestarted: (PluginSupervisor, PluginSession, @escaping () -> Void) -> Void = { _, _, done in done() }

    var name: String { plugin.name }

    /// What carries the plugin instead of a child process, if anything (``HostOptions/transports``).
    private let transports: PluginTransportFactory?
    /// On a host that takes faults: what a fault experiment put on the plugin's pipes (each start is relayed through
    /// a ``ToxicTransport``).
    var pipeFaults: PipeFaults?
    /// On a host that takes faults: the resource limits a fault experiment put on the running process.
    var resourceFaults: ResourceFaults?

    init(
        plugin: ResolvedPlugin, loop: UVLoop, logger: Logger, trace: ProtocolTrace, guardian: Guardian?,
        transports: PluginTransportFactory? = nil
    ) {
        self.transports = transports
        self.plugin = plugin
        self.loop = loop
        self.logger = logger
        self.trace = trace
        self.guardian = guardian
    }

    var status: PluginStatus {
        let live = session.flatMap { $0.state == .terminated ? nil : $0 }
        let startup: UInt64? = live.flatMap { $0.readyAt > 0 ? ($0.readyAt - $0.spawnedAt) / 1_000 : nil }
        var status = PluginStatus(
            name: name, state: state, pid: live.map(\.pid).flatMap { $0 > 0 ? $0 : nil }, error: lastError,
            restarts: restarts, version: live?.routeTable?.plugin.version ?? routeTable?.plugin.version,
            startupMicroseconds: startup)
        status.residency = residency
        status.upgrade = lifecycle.upgrade
        return status
    }

    /// A session for `plugin`, not started (the upgrade's candidate is one too).
    func makeSession(for plugin: ResolvedPlugin) -> PluginSession {
        let carrier =
            transports?(plugin.manifest, loop)
            ?? ProcessTransport(loop: loop, options: plugin.spawn, guardian: guardian)
        // With fault injection on, the pipes go through the toxic relay (§22.1), an upgrade's new version's too.
        let transport = pipeFaults.map { ToxicTransport(inner: carrier, loop: loop, faults: $0) } ?? carrier
        return PluginSession(
            plugin: plugin, transport: transport, clock: LoopClock(loop: loop), logger: logger, trace: trace,
            restarts: restarts)
    }

    func start() {
        incarnation += 1
        handshakeError = nil
        let session = makeSession(for: plugin)
        self.session = session
        listen(to: session)
        setState(.starting)
        guardianGeneration = guardian?.generation ?? 0
        session.start()
    }

    func handle(_ event: PluginSession.Event, from session: PluginSession) {
        switch event {
        case .ready(let table):
            if let previous = routeTable, previous.coordinators != table.coordinators {
                logger.warning(
                    "plugin '\(name)' came back with a different route table; the composed tables keep the first one")
            }
            routeTable = routeTable ?? table
            if exhaustedAttempts > 0 {
                logger.notice("plugin '\(name)' started after \(exhaustedAttempts) attempts that ran out of resources")
                exhaustedAttempts = 0
            }
            // A plugin woken from lazy or hibernated (spec §20.3) is restored, like one restarted, before it serves.
            guard everReady || lifecycle.waking else {
                everReady = true
                lastError = nil
                setState(.ready)
                return
            }
            everReady = true
            let current = incarnation
            onRestarted(self, session) { [weak self] in
                guard let self, self.incarnation == current, self.state == .starting, session.state == .ready else {
                    return
                }
                self.lastError = nil
                if let crashed = self.lastCrashAt { self.lastRecoveryMs = self.loop.now &- crashed }
                self.setState(.ready)
            }
        case .handshakeFailed(let error):
            handshakeError = error
            lastError = error
        case .request(let id, let method, let params):
            onRequest(self, id, method, params)
        case .notification(let method, let params):
            onNotification(self, method, params)
        case .violation, .requestTimedOut:
            break
        case .terminated(let termination):
            if session.pid > 0 { guardian?.release(processGroup: session.pid) }
            resourceFaults?.processEnded(session.pid)
            terminated(termination)
            // What piled up for it (requests, queued writes, a flood's buffers) is free now: give it back, so the
            // host stays as lean as before the fault (and uv_spawn, which forks the host, stays cheap).
            if termination.isAbnormal { SystemProcess.returnFreeMemory() }
        }
    }

    private func terminated(_ termination: PluginTermination) {
        if let target = lifecycle.hibernating {
            hibernated(as: target)
            return
        }
        if state == .failed {
            onStateChange(self)  // still failed; the process is gone now
            return
        }
        if stopping {
            setState(.stopped)
            return
        }
        if case .failedToStart = termination.cause, let failure = session?.startFailure, failure.isResourceExhaustion {
            retryAfterExhaustion(failure)
            return
        }
        let wasStarting = state == .starting
        if !(wasStarting && handshakeError != nil) {
            lastError = .pluginUnavailable(name, "\(termination)")
        }
        guard everReady else {
            // The first handshake failed: the app starts without this plugin.
            setState(.failed)
            return
        }
        if let handshakeError,
            [.unsupportedProtocolVersion, .invalidAnswer, .invalidParams].contains(handshakeError.code)
        {
            // It came back speaking something else: restarting again will not change that.
            setState(.failed)
            return
        }
        lastCrashAt = loop.now
        if rollBackIfOnProbation(after: termination) { return }
        if let guardian, guardian.lostNamespace(since: guardianGeneration) {
            // Killed with its PID namespace because the guardian died: not the plugin's fault, so it restarts at
            // once and the restart does not count toward its intensity (its spawn starts the next guardian).
            restarts += 1
            logger.notice(
                "plugin '\(name)' ended with its PID namespace (\(termination)); restarting (restart \(restarts), not counted)"
            )
            setState(.restarting)
            start()
            return
        }
        let abnormal = termination.isAbnormal || wasStarting
        switch plugin.restart.policy {
        case .temporary:
            setState(abnormal ? .failed : .stopped)
        case .transient where !abnormal:
            setState(.stopped)
        case .transient, .permanent:
            scheduleRestart(after: termination)
        }
    }

    private func scheduleRestart(after termination: PluginTermination) {
        let policy = plugin.restart
        let now = loop.now
        while let first = restartTimes.first, now &- first > policy.effectiveWindowMs { restartTimes.removeFirst() }
        guard restartTimes.count < policy.effectiveMaxRestarts else {
            lastError = ResponseError(
                .pluginUnavailable,
                "plugin '\(name)' failed: restarted \(restartTimes.count) times within \(policy.effectiveWindowMs / 1_000) s; giving up (last: \(termination))",
                data: ["plugin": .string(name), "restarts": .int(Int64(restarts))])
            logger.error("\(lastError?.message ?? "")")
            setState(.failed)
            return
        }
        let recent = restartTimes.count
        restartTimes.append(now)
        restarts += 1
        var delay: UInt64 = 0
        if recent > 0 {
            let base = min(policy.effectiveMaxBackoffMs, policy.effectiveBackoffMs << min(recent - 1, 20))
            delay = UInt64(max(0, Double(base) * Double.random(in: 0.8...1.2)))
        }
        logger.notice("restarting plugin '\(name)' (\(termination); restart \(restarts), in \(delay) ms)")
        setState(.restarting)
        guard delay > 0 else {
            start()
            return
        }
        startAfter(delay)
    }

    /// The spawn failed for lack of descriptors, processes or memory (`EMFILE`, `ENFILE`, `EAGAIN`, `ENOMEM`): the
    /// system's fault, not the plugin's. Retried with backoff (50 ms doubling to 2 s) for as long as it lasts, and not
    /// counted against the restart intensity, so the plugin is served again once resources come back instead of
    /// being failed for good. At start-up the app waits for it like for any plugin still starting.
    private func retryAfterExhaustion(_ failure: UVError) {
        exhaustedAttempts += 1
        handshakeError = nil
        let base = min(UInt64(2_000), UInt64(50) << UInt64(min(exhaustedAttempts - 1, 6)))
        let delay = UInt64(Double(base) * Double.random(in: 0.8...1.2))
        lastError = .pluginUnavailable(name, "cannot start: \(failure.name) (out of resources); retrying")
        if exhaustedAttempts == 1 || exhaustedAttempts % 20 == 0 {
            logger.warning(
                "cannot start plugin '\(name)': \(failure.name) (\(failure)); out of resources, retrying in \(delay) ms (attempt \(exhaustedAttempts); not counted as a restart)"
            )
        }
        setState(.restarting)
        startAfter(delay)
    }

    /// Starts the plugin again after `delay` ms, unless it was stopped meanwhile.
    private func startAfter(_ delay: UInt64) {
        if backoffTimer == nil { backoffTimer = try? UVTimer(loop: loop) }
        do {
            try backoffTimer?.start(after: delay) { [weak self] in
                guard let self, self.state == .restarting, !self.stopping else { return }
                self.start()
            }
        } catch {
            start()
        }
    }

    func setState(_ new: PluginState) {
        guard new != state || new == .starting else { return }
        state = new
        settleWaiters()
        onStateChange(self)
    }

    /// Stops the plugin with the shutdown ladder; `.stopped` follows.
    func stop(graceMs: Int) {
        stopping = true
        backoffTimer?.close()
        backoffTimer = nil
        // A process held by a CPU limit's duty cycle would answer its shutdown late: released first.
        resourceFaults?.heal()
        endLifecycle(graceMs: graceMs)
        guard let session, session.state != .terminated else {
            if state != .failed { setState(.stopped) }
            return
        }
        setState(.stopping)
        session.stop(graceMs: graceMs)
    }

    /// Starts a plugin that is not running (failed or stopped) again, on request (`plugin/start`): a restart that
    /// does not count toward the restart intensity, since someone fixed what made it fail. The first handshake's rule
    /// applies if it never served (a failed handshake fails it at once); if it served before, it is restored as after
    /// any restart. Returns false if it is running (starting, ready, restarting or stopping).
    func startAgain() -> Bool {
        guard state == .failed || state == .stopped, session == nil || session?.state == .terminated else {
            return false
        }
        stopping = false
        restartTimes.removeAll()
        exhaustedAttempts = 0
        restarts += 1
        logger.notice("starting plugin '\(name)' again on request (restart \(restarts))")
        start()
        return true
    }

    /// Drops the owner's closures (they hold the host) once the loop has closed.
    func detach() {
        lifecycle.detach()
        onStateChange = { _ in }
        onRequest = { _, _, _, _ in }
        onNotification = { _, _, _ in }
        onRestarted = { _, _, done in done() }
    }

    /// Marks the plugin failed without a process (e.g. excluded by the composition check).
    func fail(_ error: ResponseError) {
        lastError = error
        stopping = true
        lifecycle.waking = false
        backoffTimer?.close()
        backoffTimer = nil
        session?.kill(reason: error.message)
        setState(.failed)
    }
}

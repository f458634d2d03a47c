import Glibc
public import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem
import Synchronization

/// A fault experiment running against a started host: the load of an ``ExperimentSpec`` from its clients, its
/// schedule of faults with their healing steps, and a monitor of what the host publishes, all recorded as a
/// ``History`` that the checkers then judge.
///
/// The host runs an app whose victim is played by the misbehaving test plugin (see ``app(_:victim:defect:)``), so it
/// can flood and carry a seeded defect. Choices (requests, targets) follow the seed; timings are the machine's.
public final class ChaosExperiment: Sendable {
    let host: HostHandle
    let spec: ExperimentSpec
    let schedule: [ScheduledFault]
    let plugins: [String]
    let progress: (@Sendable (ChaosProgress) -> Void)?

    struct State {
        var history = History()
        var started: ContinuousClock.Instant?
        var startRevision: UInt64 = 0
        var lastRevision: UInt64 = 0
        var statuses: [String: PluginStatus] = [:]
        /// Plugins a fault killed, with the restart count that shows the host has seen it.
        var killed: [String: Int] = [:]
        /// Operations without a completion yet: op → (client, f, invoked at).
        var inFlight: [Int: (client: Int, f: String, at: ContinuousClock.Instant)] = [:]
        var nextOp = 0
        var loadEnded = false
        /// Clients that have not sent the load's `minimumRequests` yet.
        var owing = 0
    }

    let state = Mutex(State())

    /// An experiment of `spec` against `host`, whose app has `plugins` (manifest order, for random targets);
    /// `progress` is called every few seconds while the load runs (``ChaosProgress``).
    public init(
        host: HostHandle, spec: ExperimentSpec, plugins: [String],
        progress: (@Sendable (ChaosProgress) -> Void)? = nil
    ) {
        self.host = host
        self.spec = spec
        self.schedule = spec.schedule(plugins: plugins)
        self.plugins = plugins
        self.progress = progress
    }

    /// `app` with its plugin `victim` played by the misbehaving plugin (ready to flood on SIGUSR1, its `sample`
    /// screens closable, and with `defect`, wrong one route in `wrongAnswerEvery`), or nil if the app has no such
    /// plugin. The `misbehave` executable must sit next to the host's other plugins.
    public static func app(_ app: Manifest, victim: String, defect: ExperimentSpec.Defect? = nil) -> Manifest? {
        guard let index = app.plugins.firstIndex(where: { $0.name == victim }) else { return nil }
        var replaced = app
        var args = [
            "--name", victim, "--type", victim, "--flood-on-sigusr1", "--flood-lines", "100000", "--sample-actions",
        ]
        if let defect {
            args += [
                "--wrong-answer-every", String(defect.wrongAnswerEvery), "--wrong-answer-phase",
                String(defect.phase ?? 0),
            ]
        }
        replaced.plugins[index] = PluginManifest(name: victim, product: "misbehave", args: args)
        return replaced
    }

    /// The outcome of a run: the history, each checker's result, and the report's figures.
    public struct Outcome: Sendable {
        public let history: History
        public let results: [CheckerResult]
        public let report: ChaosReport
        public let schedule: [ScheduledFault]
        /// The app's plugins, in manifest order.
        public let plugins: [String]

        /// Whether every checker passed.
        public var passed: Bool { results.allSatisfy(\.passed) }
    }

    /// Warms up, runs the load and the schedule, lets every fault settle, and checks the history.
    public func run() async -> Outcome {
        let events = host.events()
        for status in await host.status() { state.withLock { $0.statuses[status.name] = status } }
        let monitor = Task { for await event in events { self.observe(event) } }
        _ = try? await host.navigate([.setRoot("authenticated", ["user": "chaos"])])
        let begin = await host.snapshot()
        let rssBefore = SystemProcess.residentBytes()
        state.withLock { state in
            state.started = ContinuousClock.now
            state.startRevision = begin.revision
            state.lastRevision = begin.revision
            var first = HistoryEvent(type: .tree, time: 0)
            first.revision = begin.revision
            first.instance = begin.instances.first { $0.plugin == spec.victimName }
            state.history.events.append(first)
        }
        let reporter = progress.map { progress in Task { await self.reportProgress(every: .seconds(2), progress) } }
        await runLoad()
        reporter?.cancel()
        await settle()
        // The end state is the last revision published; wait for the monitor to have recorded it.
        let end = await host.snapshot()
        let caughtUp = ContinuousClock.now + .seconds(5)
        while !Task.isCancelled, ContinuousClock.now < caughtUp, state.withLock({ $0.lastRevision < end.revision }) {
            try? await Task.sleep(for: .milliseconds(10))
        }
        let statuses = await host.status()
        monitor.cancel()
        let history = state.withLock { $0.history }
        let registry = await host.routeRegistry()
        let results = Self.check(
            history, checkers: spec.enabledCheckers,
            model: VictimModel(plugin: spec.victimName, type: spec.victimName, registry: registry))
        var report = ChaosReport(history: history, spec: spec)
        report.rssBefore = rssBefore
        report.rssAfter = SystemProcess.residentBytes()
        report.restarts = statuses.map(\.restarts).reduce(0, +)
        report.failedPlugins = statuses.filter { $0.state == .failed }.map(\.name)
        report.finalTreeServed = end.instances.allSatisfy { $0.status == .ok }
        report.instancesAtEnd = end.instances.count
        return Outcome(history: history, results: results, report: report, schedule: schedule, plugins: plugins)
    }

    /// Runs `checkers` over `history`: the library's entry point for a history read back from `history.jsonl`.
    public static func check(
        _ history: History, checkers: [ExperimentSpec.Checker], model: VictimModel
    ) -> [CheckerResult] {
        checkers.map { checker in
            switch checker {
            case .lost: HistoryCheckers.lost(history)
            case .revisions: HistoryCheckers.revisions(history)
            case .verdicts: HistoryCheckers.verdicts(history)
            case .latency: HistoryCheckers.latency(history)
            case .model: model.check(history)
            }
        }
    }

    // MARK: - Recording

    /// Milliseconds since the load began.
    func elapsed(_ instant: ContinuousClock.Instant, in state: State) -> Double {
        guard let started = state.started else { return 0 }
        let duration = instant - started
        return Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }

    func record(_ make: (Double) -> HistoryEvent) {
        let now = ContinuousClock.now
        state.withLock { state in state.history.events.append(make(elapsed(now, in: state))) }
    }

    private func observe(_ event: HostEvent) {
        let now = ContinuousClock.now
        switch event {
        case .treeChanged(let change):
            let victim = spec.victimName
            // The snapshot is built only when some monitor reads it; the victim's instance is all the model needs.
            let instance = change.snapshot.instances.first { $0.plugin == victim }
            state.withLock { state in
                guard state.started != nil, change.revision > state.startRevision else { return }
                var tree = HistoryEvent(type: .tree, time: elapsed(now, in: state))
                tree.revision = change.revision
                tree.instance = instance
                state.history.events.append(tree)
                state.lastRevision = max(state.lastRevision, change.revision)
            }
        case .pluginChanged(let status):
            state.withLock { state in
                state.statuses[status.name] = status
                guard state.started != nil else { return }
                var changed = HistoryEvent(type: .plugin, time: elapsed(now, in: state))
                changed.plugin = status.name
                changed.state = status.state.description
                changed.restarts = status.restarts
                changed.reason = status.state == .ready ? nil : status.error?.message
                state.history.events.append(changed)
            }
        default: break
        }
    }

    // MARK: - Faults

    /// Injects each fault of the schedule at its time and runs its healing step at its own.
    func runFaults(from start: ContinuousClock.Instant) async {
        let steps =
            schedule.map { ($0.startMs, $0, false) }
            + schedule.compactMap { fault in fault.healMs.map { ($0, fault, true) } }
        for (at, fault, heal) in steps.sorted(by: { ($0.0, $0.2 ? 0 : 1) < ($1.0, $1.2 ? 0 : 1) }) {
            try? await Task.sleep(until: start + .milliseconds(at), clock: ContinuousClock())
            record { time in
                var event = HistoryEvent(type: heal ? .heal : .fault, time: time)
                event.fault = fault.index
                event.kind = fault.kind.rawValue
                event.plugins = fault.plugins
                return event
            }
            for plugin in fault.plugins {
                // A kill is over once the host has seen the process end: a loaded machine can deliver the last
                // fault of a run just before its load ends, and the run must not settle (and stop watching) while
                // the plugin still looks ready.
                let restarts = state.withLock { $0.statuses[plugin]?.restarts ?? 0 }
                defer { if !heal && fault.kind.kills { seen(restartOf: plugin, after: restarts) } }
                switch (fault.kind, heal) {
                case (.kill, _): await host.signal(plugin: plugin, SIGKILL)
                case (.stop, false): await host.signal(plugin: plugin, SIGSTOP)
                case (.stop, true): await host.signal(plugin: plugin, SIGCONT)
                case (.flood, _): await host.signal(plugin: plugin, SIGUSR1)
                case (.pipes, false):
                    _ = try? await host.setToxics(.init(plugin: plugin, toxics: fault.toxics, seed: spec.seed))
                case (.pipes, true), (.slowStart, true):
                    _ = try? await host.setToxics(.init(plugin: plugin, toxics: []))
                case (.slowStart, false):
                    _ = try? await host.setToxics(
                        .init(plugin: plugin, toxics: [], startDelayMs: fault.startDelayMs, seed: spec.seed))
                    await host.signal(plugin: plugin, SIGKILL)
                case (.limits, false):
                    _ = try? await host.setLimits(.init(plugin: plugin, fault.limits))
                case (.limits, true):
                    _ = try? await host.setLimits(.init(plugin: plugin))
                case (.crashOnRestore, _):
                    _ = try? await host.setToxics(.init(plugin: plugin, toxics: [], crashOnRestore: true))
                    await host.signal(plugin: plugin, SIGKILL)
                }
            }
        }
    }

    /// Notes that `plugin` was killed: ``settle()`` waits until the host has seen it end (its restarts past
    /// `restarts`, or a state other than ready).
    private func seen(restartOf plugin: String, after restarts: Int) {
        state.withLock { $0.killed[plugin] = max($0.killed[plugin] ?? 0, restarts + 1) }
    }

    /// Waits (at most 15 s) until every plugin a fault hit is ready again.
    private func settle() async {
        let targets = Set(schedule.flatMap(\.plugins))
        let deadline = ContinuousClock.now + .seconds(15)
        while !Task.isCancelled, ContinuousClock.now < deadline {
            let waiting = state.withLock { state in
                targets.contains { plugin in
                    guard let status = state.statuses[plugin] else { return false }
                    let unseen = status.state == .ready && status.restarts < (state.killed[plugin] ?? 0)
                    return unseen || (status.state != .ready && status.state != .failed)
                }
            }
            if !waiting { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}

extension ExperimentSpec.Fault.Kind {
    /// Whether the fault starts with a SIGKILL of its targets (which the host must see before the run settles).
    fileprivate var kills: Bool {
        switch self {
        case .kill, .slowStart, .crashOnRestore: true
        default: false
        }
    }
}

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
    let host: any ExperimentHost
    /// The host as a child process, for the host's own faults (nil: it runs in this process).
    let child: ChildHost?
    let spec: ExperimentSpec
    let schedule: [ScheduledFault]
    let plugins: [String]
    let progress: (@Sendable (ChaosProgress) -> Void)?

    struct State {
        var history = History()
        var started: ContinuousClock.Instant?
        var startRevision: UInt64 = 0
        var lastRevision: UInt64 = 0
        var statuses: [String: HostStatusRequest.Plugin] = [:]
        /// A child host's published trees by revision, the newest ``publishedKept``: what a restored tree must be.
        var published: [UInt64: TreeSnapshot] = [:]
        var publishedOrder: [UInt64] = []
        /// Times the experiment started the host again after killing it.
        var hostRestarts = 0
        /// Plugin restarts counted by the hosts the experiment killed (a new host counts from 0).
        var earlierRestarts = 0
        /// Each `diskFull` fault's file-size limit from before it, to put back.
        var diskLimits: [Int: UInt64?] = [:]
        /// Plugins a fault killed, with the restart count that shows the host has seen it.
        var killed: [String: Int] = [:]
        /// Operations without a completion yet: op → (client, f, invoked at).
        var inFlight: [Int: (client: Int, f: String, at: ContinuousClock.Instant)] = [:]
        var nextOp = 0
        var loadEnded = false
        /// Clients that have not sent the load's `minimumRequests` yet (or, with host faults, their requests after the
        /// last fault step).
        var owing = 0
        /// Every fault step has run.
        var faultsDone = false
    }

    let state = Mutex(State())

    /// An experiment of `spec` against `host`, whose app has `plugins` (manifest order, for random targets);
    /// `progress` is called every few seconds while the load runs (``ChaosProgress``).
    public convenience init(
        host: HostHandle, spec: ExperimentSpec, plugins: [String],
        progress: (@Sendable (ChaosProgress) -> Void)? = nil
    ) {
        self.init(host: InProcessHost(handle: host), child: nil, spec: spec, plugins: plugins, progress: progress)
    }

    /// A child host keeps this many of its published trees, what a restored state file is compared with: a file
    /// written normally is at most a few revisions behind (§17); one left behind by a full disk may be older, and is
    /// then held to the written-revision bound alone.
    static let publishedKept = 128

    init(
        host: any ExperimentHost, child: ChildHost?, spec: ExperimentSpec, plugins: [String],
        progress: (@Sendable (ChaosProgress) -> Void)?
    ) {
        self.host = host
        self.child = child
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
        let events = host.events(victim: spec.victimName)
        child?.resume()
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
        let registry = await host.registry()
        monitor.cancel()
        for exit in child?.unexpectedExits ?? [] {
            state.withLock { state in
                var event = HistoryEvent(type: .host, time: elapsed(exit.at, in: state))
                event.state = "exited"
                event.reason = exit.reason
                state.history.events.append(event)
            }
        }
        let history = state.withLock { $0.history }
        let results = Self.check(
            history, checkers: spec.enabledCheckers,
            model: VictimModel(plugin: spec.victimName, type: spec.victimName, registry: registry))
        var report = ChaosReport(history: history, spec: spec)
        report.rssBefore = rssBefore
        report.rssAfter = SystemProcess.residentBytes()
        report.restarts = statuses.map(\.restarts).reduce(0, +) + state.withLock { $0.earlierRestarts }
        report.failedPlugins = statuses.filter { $0.state == "failed" }.map(\.name)
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
            case .host: HistoryCheckers.host(history)
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

    private func observe(_ event: ExperimentEvent) {
        let now = ContinuousClock.now
        switch event {
        case .tree(let revision, let instance, let whole):
            state.withLock { state in
                if let whole { Self.keep(whole, in: &state) }
                guard state.started != nil, revision > state.startRevision || state.hostRestarts > 0 else {
                    return
                }
                var tree = HistoryEvent(type: .tree, time: elapsed(now, in: state))
                tree.revision = revision
                tree.instance = instance
                state.history.events.append(tree)
                state.lastRevision = revision
            }
        case .flushed(let done):
            done()
        case .plugin(let status):
            state.withLock { state in
                state.statuses[status.name] = status
                guard state.started != nil else { return }
                var changed = HistoryEvent(type: .plugin, time: elapsed(now, in: state))
                changed.plugin = status.name
                changed.state = status.state
                changed.restarts = status.restarts
                changed.reason = status.state == "ready" ? nil : status.error?.message
                state.history.events.append(changed)
            }
        }
    }

    static func keep(_ tree: TreeSnapshot, in state: inout State) {
        if state.published.updateValue(tree, forKey: tree.revision) == nil {
            state.publishedOrder.append(tree.revision)
        }
        if state.publishedOrder.count > publishedKept { state.published[state.publishedOrder.removeFirst()] = nil }
    }

    // MARK: - Faults

    /// Injects each fault of the schedule at its time and runs its healing step at its own.
    func runFaults(from start: ContinuousClock.Instant) async {
        let steps =
            schedule.map { ($0.startMs, $0, false) }
            + schedule.compactMap { fault in fault.healMs.map { ($0, fault, true) } }
        // At one moment: the healing of faults that began earlier, then the faults, then the healing of a fault that
        // lasts no time (a host started again at once after its kill).
        func order(_ step: (Int, ScheduledFault, Bool)) -> (Int, Int) {
            (step.0, !step.2 ? 1 : step.1.startMs < step.0 ? 0 : 2)
        }
        var watches: [Task<Void, Never>] = []
        defer { for watch in watches { watch.cancel() } }
        for (at, fault, heal) in steps.sorted(by: { order($0) < order($1) }) {
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
                case (.kill, _): await host.signal(plugin: plugin, .kill)
                case (.stop, false): await host.signal(plugin: plugin, .stop)
                case (.stop, true): await host.signal(plugin: plugin, .cont)
                case (.flood, _): await host.signal(plugin: plugin, .usr1)
                case (.pipes, false):
                    await host.setToxics(.init(plugin: plugin, toxics: fault.toxics, seed: spec.seed))
                case (.pipes, true), (.slowStart, true):
                    await host.setToxics(.init(plugin: plugin, toxics: []))
                case (.slowStart, false):
                    await host.setToxics(
                        .init(plugin: plugin, toxics: [], startDelayMs: fault.startDelayMs, seed: spec.seed))
                    await host.signal(plugin: plugin, .kill)
                case (.limits, false):
                    await host.setLimits(.init(plugin: plugin, fault.limits))
                case (.limits, true):
                    await host.setLimits(.init(plugin: plugin))
                case (.crashOnRestore, _):
                    await host.setToxics(.init(plugin: plugin, toxics: [], crashOnRestore: true))
                    await host.signal(plugin: plugin, .kill)
                case (.hostKill, _), (.diskFull, _): break
                }
            }
            if fault.kind.isHostFault, let child {
                if let watch = await hostFault(fault, heal: heal, child) { watches.append(watch) }
            }
        }
        for watch in watches { await watch.value }
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
                    let unseen = status.state == "ready" && status.restarts < (state.killed[plugin] ?? 0)
                    return unseen || (status.state != "ready" && status.state != "failed")
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
